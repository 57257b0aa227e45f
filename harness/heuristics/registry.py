"""The heuristic registry: lower bounds on the number of moves from a board to a goal.

A :class:`Heuristic` is bound to one goal and grid when it is made, so solvers just
call ``h(board)``. Families register with :func:`register_heuristic`; the modules of
this package (tiles, linear conflict, walking distance, pattern databases) do so when
:mod:`harness.heuristics` is imported. Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from harness.puzzle import Board, Grid


@dataclass(frozen=True, slots=True)
class Heuristic:
    """A lower bound bound to ``goal`` on ``grid``; call it with a board."""

    name: str
    goal: Board
    grid: Grid
    estimate: Callable[[Board], int] = field(repr=False)
    #: tile_cost[tile][cell]: the tile's share of h when it stands on cell (blank: 0).
    #: Present only when h is the sum of these shares, so it can be updated per move.
    tile_cost: tuple[tuple[int, ...], ...] | None = field(default=None, repr=False)
    #: Anything a compiled solver needs to evaluate the same bound (e.g. PDB arrays).
    data: object = field(default=None, repr=False, compare=False)

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


_REGISTRY: dict[str, HeuristicInfo] = {}


def register_heuristic(
    name: str,
    description: str,
    refuses: Callable[[Grid], str | None] | None = None,
    *,
    setup_estimate: Callable[[Board, Grid], float | None] | None = None,
    prebuild: Callable[..., None] | None = None,
) -> Callable[[Callable[[Board, Grid], Heuristic]], Callable[[Board, Grid], Heuristic]]:
    """Decorator: add a heuristic factory ``make(goal, grid) -> Heuristic``."""

    def wrap(make: Callable[[Board, Grid], Heuristic]):
        _REGISTRY[name] = HeuristicInfo(
            name, make, description, refuses or (lambda g: None), setup_estimate,
            prebuild,
        )
        return make

    return wrap


def all_heuristics() -> dict[str, HeuristicInfo]:
    """Every registered heuristic family, by name (sorted)."""
    return dict(sorted(_REGISTRY.items()))


def make_heuristic(name: str, goal: Board, g: Grid) -> Heuristic:
    """Bind heuristic ``name`` to a goal; KeyError for an unknown name,
    ValueError when it does not apply to the grid."""
    if name not in _REGISTRY:
        raise KeyError(
            f"unknown heuristic {name!r}; known: {', '.join(sorted(_REGISTRY))}"
        )
    info = _REGISTRY[name]
    reason = info.refuses(g)
    if reason:
        raise ValueError(f"heuristic {name!r} does not apply to {g.label}: {reason}")
    return info.make(goal, g)
