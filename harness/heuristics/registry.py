"""The heuristic registry: lower bounds on the number of moves from a board to a goal.

A :class:`Heuristic` is bound to one goal and grid when it is made, so solvers just
call ``h(board)``. Families register with :func:`register_heuristic`; the modules of
this package (tiles, linear conflict, walking distance, pattern databases) do so when
:mod:`harness.heuristics` is imported, plugins when loaded (``--plugin`` or the entry
point group ``npuzzle_harness.heuristics``). Standard library only.

A heuristic declares what it PROVIDES (capabilities, below) and a solver what it
NEEDS (``harness.solver.register(needs=...)``): a new heuristic runs with every
solver whose needs it meets, without being named by any solver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from dataclasses import dataclass, field
from enum import StrEnum

from harness.puzzle import Board, Grid
from harness.core.names import did_you_mean
from harness.core.registries import add, load_entry_points, registry, source

ENTRY_POINT_GROUP = "npuzzle_harness.heuristics"


class Capability(StrEnum):
    """What a heuristic provides and a solver needs: a closed vocabulary, so a
    misspelt name fails at registration instead of matching nothing."""

    #: Every heuristic can be evaluated as ``h(board)``.
    EVALUATE = "h(board)"
    #: Made from the goal alone, with no tables to build (the pure-Python solvers
    #: need this: tables such as walking distance or PDBs are for compiled ones).
    NO_TABLES = "no tables"
    #: ``Heuristic.tile_cost`` is set: h is a sum of per-tile shares, updatable per
    #: move.
    TILE_COST = "tile_cost"
    #: A compiled kernel for ``ida_star_jit`` / ``astar_cantor_jit`` (:func:`kernel`),
    #: and for the weighted and greedy best-first searches (``wastar_jit``...).
    KERNEL_IDA = "kernel:ida"
    KERNEL_ASTAR_CANTOR = "kernel:astar_cantor"
    KERNEL_BEST_FIRST = "kernel:best_first"
    #: Made for a tile cost model too (``make(goal, grid, cost_model=...)``): a
    #: lower bound on the cheapest path's cost (:mod:`harness.core.costs`), with
    #: ``Heuristic.tile_cost`` in those costs when it has one.
    COSTS = "tile costs"


EVALUATE = Capability.EVALUATE
NO_TABLES = Capability.NO_TABLES
TILE_COST = Capability.TILE_COST
COSTS = Capability.COSTS
#: The compiled solvers' kernel interfaces (keys of ``kernels=``).
KERNEL_INTERFACES = tuple(
    c.value.removeprefix("kernel:") for c in Capability if c.startswith("kernel:")
)


def kernel(interface: str) -> Capability:
    """The capability "has a compiled kernel for ``interface``" (e.g. ``"ida"``)."""
    if interface not in KERNEL_INTERFACES:
        raise ValueError(
            f"unknown kernel interface {interface!r}; valid: "
            f"{', '.join(KERNEL_INTERFACES)}"
        )
    return Capability(f"kernel:{interface}")


def capabilities(owner: str, names: Iterable[str]) -> tuple[Capability, ...]:
    """``names`` as capabilities; ValueError naming ``owner`` (``"solver 'x'"``),
    the unknown name and the valid ones otherwise."""
    out = []
    for name in names:
        try:
            out.append(Capability(name))
        except ValueError:
            raise ValueError(
                f"{owner}: unknown capability {name!r}; valid: "
                f"{', '.join(repr(c.value) for c in Capability)} (harness.heuristics: "
                "EVALUATE, NO_TABLES, TILE_COST, kernel(...))"
            ) from None
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Kernel:
    """How a compiled solver evaluates a heuristic: the kernel function's name in
    :mod:`harness.kernels`, the heuristic's arrays it takes, and (when the kernel
    needs them) arguments computed from each start board, passed first;
    ``start_args_many`` computes them for an int8 array of boards at once (one
    array per argument), for batch entry points."""

    function: str
    args: tuple
    start_args: Callable[[Board], tuple] | None = None
    start_args_many: Callable[[Any], tuple] | None = None


#: kernel builder: heuristic -> Kernel. Called once per goal and grid, at set-up.
KernelBuilder = Callable[["Heuristic"], Kernel]
#: Kernels every tile-additive heuristic has (its cost table is all they need).
#: Filled by :mod:`harness.heuristics.tiles`.
ADDITIVE_KERNELS: dict[str, KernelBuilder] = {}


@dataclass(frozen=True, slots=True)
class Heuristic:
    """A lower bound bound to ``goal`` on ``grid``; call it with a board."""

    name: str
    goal: Board
    grid: Grid
    estimate: Callable[[Board], int] = field(repr=False)
    #: tile_cost[tile][square]: the tile's share of h when it stands on square
    #: (blank: 0).
    #: Present only when h is the sum of these shares, so it can be updated per move.
    tile_cost: tuple[tuple[int, ...], ...] | None = field(default=None, repr=False)
    #: Anything a compiled solver needs to evaluate the same bound (e.g. PDB arrays).
    data: object = field(default=None, repr=False, compare=False)
    #: The tile cost model it bounds (``harness.core.costs``): "unit", the number
    #: of moves, or another model, the cheapest path's cost (float shares).
    cost_model: str = "unit"

    def __call__(self, board: Board) -> int:
        return self.estimate(board)


@dataclass(frozen=True, slots=True)
class HeuristicInfo:
    """A registered heuristic family: how to make it and where it applies."""

    name: str
    make: Callable[[Board, Grid], Heuristic]
    description: str
    #: None when it accepts the grid, else the reason it does not.
    refuses: Callable[[Grid], str | None] = lambda g: None
    #: Rough seconds ``make(goal, grid)`` would take here when that is long (tables
    #: to build, not cached); None when it is quick. The runner skips a config whose
    #: estimate exceeds --setup-timeout, and otherwise runs ``prebuild`` once.
    setup_estimate: Callable[[Board, Grid], float | None] | None = None
    #: ``prebuild(goal, grid, report)``: build and cache the tables, calling
    #: ``report(fraction_done, seconds_left)`` along the way.
    prebuild: Callable[..., None] | None = None
    #: Capabilities it provides (EVALUATE, NO_TABLES, TILE_COST, kernel(...)).
    provides: frozenset[Capability] = frozenset({EVALUATE, NO_TABLES})
    #: Compiled kernels, by interface (``"ida"``, ``"astar_cantor"``).
    kernels: dict[str, KernelBuilder] = field(default_factory=dict, compare=False)

    def meets(self, needs: tuple[Capability, ...]) -> bool:
        """True when it provides every capability in ``needs``."""
        return set(needs) <= self.provides

    def kernel(self, interface: str, h: Heuristic) -> Kernel:
        """The compiled kernel of ``h`` for ``interface``; ValueError if none."""
        if interface not in self.kernels:
            raise ValueError(f"heuristic {self.name!r} has no {interface!r} kernel")
        return self.kernels[interface](h)


_REGISTRY: dict[str, HeuristicInfo] = registry()


def register_heuristic(
    name: str,
    description: str,
    refuses: Callable[[Grid], str | None] | None = None,
    *,
    setup_estimate: Callable[[Board, Grid], float | None] | None = None,
    prebuild: Callable[..., None] | None = None,
    tile_cost: bool = False,
    tables: bool = False,
    kernels: dict[str, KernelBuilder] | None = None,
    costs: bool = False,
) -> Callable[[Callable[[Board, Grid], Heuristic]], Callable[[Board, Grid], Heuristic]]:
    """Decorator: add a heuristic factory ``make(goal, grid) -> Heuristic``.

    Declare what it provides: ``tile_cost=True`` when the heuristics it makes carry
    ``tile_cost`` (then the additive compiled kernels come with it); ``tables=True``
    when making it builds tables (pure-Python solvers then leave it out);
    ``kernels={interface: builder}`` for its own compiled kernels (interfaces:
    :data:`KERNEL_INTERFACES`; another name is a ValueError here);
    ``costs=True`` when ``make`` also takes ``cost_model=`` (a tile cost model
    other than unit) and then bounds the cheapest path's cost.
    """
    for interface in kernels or ():
        if interface not in KERNEL_INTERFACES:
            raise ValueError(
                f"heuristic {name!r}: unknown kernel interface {interface!r} in "
                f"kernels; valid: {', '.join(KERNEL_INTERFACES)}"
            )

    def wrap(make: Callable[[Board, Grid], Heuristic]):
        own = dict(ADDITIVE_KERNELS) if tile_cost else {}
        own.update(kernels or {})
        provides = {EVALUATE, *(kernel(i) for i in own)}
        if tile_cost:
            provides.add(TILE_COST)
        if not tables:
            provides.add(NO_TABLES)
        if costs:
            provides.add(COSTS)
        info = HeuristicInfo(
            name, make, description, refuses or (lambda g: None), setup_estimate,
            prebuild, frozenset(provides), own,
        )  # fmt: skip
        add(_REGISTRY, "heuristic", name, info, source(make.__module__))
        return make

    return wrap


def all_heuristics() -> dict[str, HeuristicInfo]:
    """Every registered heuristic family, by name (sorted); installed packages'
    entry points (group ``npuzzle_harness.heuristics``) are loaded first."""
    load_entry_points(ENTRY_POINT_GROUP)
    return dict(sorted(_REGISTRY.items()))


def registration_order() -> list[str]:
    """Heuristic names in the order they were registered."""
    load_entry_points(ENTRY_POINT_GROUP)
    return list(_REGISTRY)


def build_tables(
    info: HeuristicInfo, goal: Board, g: Grid, say: Callable[[str], None],
    estimate: float | None = None,
) -> bool:
    """Build and cache ``info``'s tables for ``goal`` and ``g`` when they take long
    and are not cached (``setup_estimate``; ``estimate``: its answer, when known),
    saying what, how far (every 5 s) and how long it took through ``say``; False
    when there is nothing to build."""
    import time

    if estimate is None and info.setup_estimate is not None:
        estimate = info.setup_estimate(goal, g)
    if estimate is None or info.prebuild is None:
        return False
    say(f"set-up: building the {info.name} tables for {g.label} (not cached yet): "
        f"~{estimate:.0f} s estimated")  # fmt: skip
    last = [time.monotonic()]

    def report(fraction: float, left: float | None) -> None:
        now = time.monotonic()
        if now - last[0] >= 5.0:
            last[0] = now
            eta = f", ~{left:.0f} s left" if left is not None else ""
            say(f"set-up: {info.name} {fraction:.0%}{eta}")

    t0 = time.monotonic()
    info.prebuild(goal, g, report)
    say(f"set-up: {info.name} built and cached in {time.monotonic() - t0:.0f} s")
    return True


def make_heuristic(
    name: str, goal: Board, g: Grid, cost_model: str = "unit"
) -> Heuristic:
    """Bind heuristic ``name`` to a goal (and a tile cost model); KeyError for an
    unknown name, ValueError when it does not apply to the grid or has no form
    for the cost model."""
    load_entry_points(ENTRY_POINT_GROUP)
    if name not in _REGISTRY:
        raise KeyError(
            f"unknown heuristic {name!r}{did_you_mean(name, _REGISTRY)}; known: "
            f"{', '.join(sorted(_REGISTRY))}"
        )
    info = _REGISTRY[name]
    reason = info.refuses(g)
    if reason:
        raise ValueError(f"heuristic {name!r} does not apply to {g.label}: {reason}")
    if cost_model != "unit":
        if COSTS not in info.provides:
            raise ValueError(f"heuristic {name!r} has no form for {cost_model} tile "
                             "costs (it bounds moves, not their cost)")  # fmt: skip
        return info.make(goal, g, cost_model=cost_model)
    return info.make(goal, g)
