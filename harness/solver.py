"""The solver contract and the registry.

A solver is a function ``solve(start, goal, grid, *, counters, heuristic)`` that
returns the blank's moves (``"ulrd..."``) or ``None`` when the goal is unreachable.
It fills the :class:`Counters` it is handed and never reads a clock, prints or logs:
measurement belongs to the runner. Register it with :func:`register`; every module
in the ``solvers`` package is imported by :func:`all_solvers`.

A solver may take parameters (:class:`Param`, e.g. a weight ``w``): they are keyword
arguments of ``solve``, part of the config (``wastar[manhattan,w=1.5]``), parsed once
by :func:`harness.configs.parse_config` into values that travel as such. A solver
declares its guarantee: optimal, bounded by one of its parameters (``bounded_by="w"``:
every path at most w times the optimum), or none; the judge checks the claim.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from harness.core.costs import tile_costs  # noqa: F401 (solvers import it from here)
from harness.core.defaults import BUDGET_SECONDS
from harness.core.registries import NameClash, add, registry, scope, source
# format_value: solvers print parameter values with it, and import only this module
from harness.core.values import format_value, number  # noqa: F401
from harness.heuristics import Heuristic, all_heuristics
from harness.heuristics.registry import Capability, capabilities, registration_order
from harness.puzzle import Board, Grid, Moves

ENTRY_POINT_GROUP = "npuzzle_harness.solvers"
#: Which configs of a solver ``--solvers all`` takes (:attr:`SolverSpec.in_all`).
IN_ALL = ("heuristics", "default", "none")


@dataclass(slots=True)
class Counters:
    """Filled by the solver, owned by the runner.

    expanded: boards whose successors were generated (IDA*: every visit that
    generates children, summed over iterations). generated: successors produced.
    max_frontier: largest open list / queue / recursion stack seen.
    iterations: IDA* bound iterations, bidirectional layers, etc. (0 if unused).
    extra: per-algorithm counters, by name.
    """

    expanded: int = 0
    generated: int = 0
    max_frontier: int = 0
    iterations: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        return {
            "expanded": self.expanded,
            "generated": self.generated,
            "max_frontier": self.max_frontier,
            "iterations": self.iterations,
            **{f"extra_{k}": v for k, v in sorted(self.extra.items())},
        }


class SolveFn(Protocol):
    def __call__(
        self,
        start: Board,
        goal: Board,
        grid: Grid,
        *,
        counters: Counters,
        heuristic: Heuristic | None,
    ) -> Moves | None: ...


class SolveManyFn(Protocol):
    """A whole batch in one call: ``starts`` is an int8 array (boards, cells); the
    answers are what ``solve`` returns for each board, and ``counts`` an int64
    array (boards, 4) of what it counts: expanded, generated, max_frontier,
    iterations (no ``extra``)."""

    def __call__(
        self, starts: Any, goal: Board, grid: Grid, *, heuristic: Heuristic | None
    ) -> tuple[list[Moves | None], Any]: ...


#: refuses(grid, optimal_depth_or_None, heuristic_name_or_None, goal=None, **params)
#: -> reason or None. A plugin's refuses may leave out ``goal``: :func:`register`
#: adapts it; the parameters are passed to solvers that declare some.
Refusal = Callable[..., "str | None"]
#: prepare(grid, goal, heuristic) -> None: compile kernels, build tables (set-up time)
Prepare = Callable[[Grid, Board, "Heuristic | None"], None]


def _accepts_all(
    grid: Grid, depth: int | None, heuristic: str | None, goal: Board | None = None,
    **params: Any,
) -> str | None:
    return None


def _with_goal(refuses: Callable[..., str | None]) -> Refusal:
    """``refuses`` callable as ``(grid, depth, heuristic, goal=...)``: one that takes
    a ``goal`` parameter (or ``**kwargs``) as it is, a three-argument one (the
    original contract) wrapped so that the goal is not passed to it."""
    try:
        params = inspect.signature(refuses).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: the old contract
        params = ()
    if any(p.name == "goal" or p.kind is p.VAR_KEYWORD for p in params):
        return refuses

    def refusal(grid, depth, heuristic, goal=None, **values):
        return refuses(grid, depth, heuristic, **values)  # a solver's parameters

    return refusal


@dataclass(frozen=True, slots=True)
class Param:
    """A solver parameter: its name in labels (``w``), its default value, and
    ``parse(text) -> value`` (ValueError with the reason for a bad text). Values
    are numbers (int or :class:`~fractions.Fraction`, exact) or strings; a label
    shows them through :func:`format_value`."""

    name: str
    default: Any
    parse: Callable[[str], Any]
    help: str = ""


def weight_param(default: Fraction | int = 2, name: str = "w") -> Param:
    """The weight of weighted searches: f = g + w * h, 1 <= w <= 100 (w = 1:
    plain A*), two decimals at most (or a fraction such as 4/3); the path is then
    at most w times the optimum."""
    return Param(
        name, Fraction(default), number(1, 100),
        "weight of h in f = g + w*h (>= 1); paths at most w x optimal",
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class SolverSpec:
    """A registered solver and what it declares about itself."""

    name: str
    solve: SolveFn
    optimal: bool
    #: Heuristics named by the solver (a fixed list); empty when it uses ``needs``.
    listed: tuple[str, ...] = ()
    default_heuristic: str | None = None
    description: str = ""
    refuses: Refusal = _accepts_all
    prepare: Prepare | None = None
    #: Sensible per-instance time budget in seconds (the runner's default timeout).
    budget_seconds: float = BUDGET_SECONDS
    sizes: str = "any"  # human-readable summary of accepted board sizes
    module: str = ""
    #: An external program (:class:`harness.measure.external.Program`): the worker runs
    #: and measures the child process instead of calling ``solve``.
    external: Any = None
    #: Capabilities a heuristic must provide (``harness.heuristics.EVALUATE``,
    #: ``TILE_COST``, ``kernel("ida")``, ...): every registered heuristic that
    #: provides them all is taken, plugins' included. Empty: ``listed`` or blind.
    needs: tuple[Capability, ...] = ()
    #: Optional batch entry point (``harness solve`` uses it): the same answers
    #: and counters as ``solve`` board by board, without a Python call per board.
    solve_many: SolveManyFn | None = None
    #: False for a solver that looks its answer up (``table``: a precomputed table
    #: of every board's distance) instead of searching: the findings name the
    #: fastest search apart from it.
    search: bool = True
    #: Parameters ``solve`` takes as keyword arguments (and ``refuses`` too).
    params: tuple[Param, ...] = ()
    #: The parameter bounding its paths (at most that times the optimum), when
    #: it is not optimal but bounded; None: optimal, or no bound at all.
    bounded_by: str | None = None
    #: Which of its configs ``--solvers all`` takes: ``"heuristics"`` (each
    #: heuristic it takes, at the default parameters) or ``"default"`` (its
    #: default config only: a family of bounded variants with every heuristic
    #: would swamp the main job; the others are named, or swept in a file) or
    #: ``"none"`` (only when named: the main job's time was not measured with it).
    in_all: str = "heuristics"
    #: True when ``solve`` takes ``cost_model=`` (a tile cost model other than
    #: unit, :mod:`harness.core.costs`) and then finds paths by cost; a solver
    #: without it is refused (``skipped``) on tasks with tile costs.
    costs: bool = False

    @property
    def guarantee(self) -> str:
        """``optimal``, ``bounded by w`` or ``none``: what it promises of a path."""
        if self.optimal:
            return "optimal"
        return f"bounded by {self.bounded_by}" if self.bounded_by else "none"

    def param(self, name: str) -> Param:
        """Its parameter ``name``; KeyError naming the ones it takes otherwise."""
        for p in self.params:
            if p.name == name:
                return p
        takes = ", ".join(p.name for p in self.params) or "no parameters"
        raise KeyError(f"solver {self.name!r} has no parameter {name!r}; it takes: "
                       f"{takes}")  # fmt: skip

    @property
    def heuristics(self) -> tuple[str, ...]:
        """The heuristics it takes: ``listed``, or every registered one meeting
        ``needs`` (the default first, then in registration order)."""
        if self.listed or not self.needs:
            return self.listed
        infos = all_heuristics()
        names = [n for n in registration_order() if infos[n].meets(self.needs)]
        if self.default_heuristic in names:
            names.remove(self.default_heuristic)
            names.insert(0, self.default_heuristic)
        return tuple(names)

    @property
    def uses_heuristic(self) -> bool:
        return bool(self.listed or self.needs)

    def source_sha256(self) -> str:
        """Hash of the solver's source file, to tell results of changed code apart;
        the private helper modules of its package it uses (``solvers/_*.py``, the
        search several solvers share) are hashed with it."""
        if self.external is not None:
            return self.external.source_sha256()
        try:
            path = inspect.getsourcefile(self.solve)
            if not path:
                return ""
            digest = hashlib.sha256(Path(path).read_bytes())
            for helper in _helper_files(self.solve):
                digest.update(helper.read_bytes())
            return digest.hexdigest()
        except (TypeError, OSError):
            return ""


def _helper_files(solve: Callable) -> list[Path]:
    """Source files of the private modules (a name starting with ``_``) of the
    solver's package whose functions its module uses, sorted."""
    module = sys.modules.get(solve.__module__)
    package = solve.__module__.rpartition(".")[0]
    found = set()
    for value in vars(module).values() if module is not None else ():
        owner = getattr(value, "__module__", None)
        if (
            isinstance(owner, str) and package and owner.startswith(package + "._")
            and owner != solve.__module__ and owner in sys.modules
        ):
            found.add(Path(inspect.getfile(sys.modules[owner])))
    return sorted(found)


_REGISTRY: dict[str, SolverSpec] = registry()
_builtins_loaded = False


def register(
    name: str,
    *,
    optimal: bool,
    heuristics: tuple[str, ...] = (),
    needs: tuple[Capability | str, ...] = (),
    default_heuristic: str | None = None,
    refuses: Refusal | None = None,
    prepare: Prepare | None = None,
    budget_seconds: float = BUDGET_SECONDS,
    sizes: str = "any",
    many: SolveManyFn | None = None,
    search: bool = True,
    params: tuple[Param, ...] = (),
    bounded_by: str | None = None,
    in_all: str = "heuristics",
    costs: bool = False,
) -> Callable[[SolveFn], SolveFn]:
    """Decorator adding a solver under ``name`` (module stem == registry key).

    ``needs`` names the capabilities it needs from a heuristic (e.g.
    ``(EVALUATE,)``: any ``h(board)``); it then takes every registered heuristic
    that provides them; a name outside :class:`Capability` is a ValueError here.
    ``heuristics`` instead lists names (a fixed list); neither: blind search.
    ``default_heuristic`` is used when the user names the solver bare (default:
    the first listed). ``refuses(grid, depth, heuristic, goal)`` declines cells
    (``goal`` may be left out of its signature). ``many``: a batch entry point
    (:class:`SolveManyFn`) giving the same answers and counters as ``solve``.
    ``search=False``: it looks answers up rather than searching. The description
    is the first line of ``solve``'s docstring, else its module's. ``params``: the
    keyword parameters ``solve`` (and ``refuses``) take; ``bounded_by``: the one
    whose value bounds a path's length over the optimum (not with ``optimal``).
    ``in_all``: ``"heuristics"``, ``"default"`` or ``"none"``
    (:attr:`SolverSpec.in_all`).
    ``costs``: ``solve`` takes ``cost_model=`` (:attr:`SolverSpec.costs`).
    """
    if heuristics and needs:
        raise ValueError(f"solver {name!r}: give heuristics or needs, not both")
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"solver name {name!r}: use lower-case letters, digits, _")
    _check_params(name, optimal, params, bounded_by)
    if in_all not in IN_ALL:
        raise ValueError(f"solver {name!r}: in_all={in_all!r} is not one of "
                         f"{', '.join(map(repr, IN_ALL))}")  # fmt: skip
    if heuristics and default_heuristic is None:
        default_heuristic = heuristics[0]
    needed = capabilities(f"solver {name!r} needs", needs)

    def wrap(solve: SolveFn) -> SolveFn:
        # the function's own docstring first: two solvers in one file differ there
        doc = inspect.getdoc(solve) or inspect.getdoc(sys.modules.get(solve.__module__))
        _add(name, SolverSpec(
            name=name,
            solve=solve,
            optimal=optimal,
            listed=tuple(heuristics),
            needs=needed,
            default_heuristic=default_heuristic,
            description=(doc or "").strip().splitlines()[0] if doc else "",
            refuses=_with_goal(refuses) if refuses else _accepts_all,
            prepare=prepare,
            budget_seconds=budget_seconds,
            sizes=sizes,
            module=solve.__module__,
            solve_many=many,
            search=search,
            params=tuple(params),
            bounded_by=bounded_by,
            in_all=in_all,
            costs=costs,
        ), source(solve.__module__))
        return solve

    return wrap


def _add(name: str, spec: SolverSpec, origin: str) -> None:
    """Register ``spec``; NameClash naming both sources when a solver of another
    source has the name. The built-ins are loaded first, so a plugin that takes a
    built-in's name is refused whichever of the two is imported first."""
    if not origin.startswith("built-in solvers."):
        _load_builtins()
    add(_REGISTRY, "solver", name, spec, origin)


def _check_params(
    name: str, optimal: bool, params: tuple[Param, ...], bounded_by: str | None
) -> None:
    names = [p.name for p in params]
    for p in names:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", p) or names.count(p) > 1:
            raise ValueError(f"solver {name!r}: parameter {p!r} is not a unique "
                             "lower-case name")  # fmt: skip
    if bounded_by is not None and (optimal or bounded_by not in names):
        raise ValueError(
            f"solver {name!r}: bounded_by={bounded_by!r} must name one of its "
            "parameters, and an optimal solver needs no bound"
        )


def register_spec(name: str, **fields: Any) -> SolverSpec:
    """Add a solver described by its fields rather than a decorated function (the
    external programs of :mod:`harness.measure.external`)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ValueError(f"solver name {name!r}: use lower-case letters, digits, _")
    if "heuristics" in fields:
        fields["listed"] = tuple(fields.pop("heuristics"))
    if "needs" in fields:
        fields["needs"] = capabilities(f"solver {name!r} needs", fields["needs"])
    if "refuses" in fields:
        fields["refuses"] = _with_goal(fields["refuses"])
    spec = SolverSpec(name=name, module=fields.pop("module", "harness.measure.external"),
                      **fields)  # fmt: skip
    program = getattr(spec.external, "command", None)
    origin = f"external program {' '.join(program)}" if program else source(spec.module)
    _add(name, spec, origin)
    return spec


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    import solvers

    for info in sorted(pkgutil.iter_modules(solvers.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"solvers.{info.name}")


def all_solvers() -> dict[str, SolverSpec]:
    """Every built-in solver plus any plugin loaded so far, sorted by name."""
    _load_builtins()
    return dict(sorted(_REGISTRY.items()))


@contextmanager
def scoped_registry() -> Iterator[None]:
    """Solvers, heuristics, dataset generators and report plots registered inside
    the block (plugins) are forgotten when it ends, so a long-lived process does
    not carry one caller's plugins into the next (:mod:`harness.core.registries`)."""
    all_solvers()  # built-ins belong to every scope
    all_heuristics()
    with scope():
        yield


def load_plugin(target: str) -> list[str]:
    """Import a plugin module by dotted name or ``.py`` path; return the solver
    names it registered. Raises ImportError with a one-line reason. (External
    programs, ``exec:`` and ``.toml`` targets: :func:`harness.measure.external.load_plugin`.)"""
    before = set(_REGISTRY)
    path = Path(target)
    try:
        if target.endswith(".py") or path.is_file():
            if not path.is_file():
                raise ImportError(f"plugin file {target!r} does not exist")
            digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
            mod_name = f"harness_plugin_{path.stem}_{digest}"
            spec = importlib.util.spec_from_file_location(mod_name, path)
            if spec is None or spec.loader is None:
                raise ImportError(f"plugin file {target!r} cannot be imported")
            module = importlib.util.module_from_spec(spec)
            sys.modules[mod_name] = module
            spec.loader.exec_module(module)
        else:
            importlib.import_module(target)
    except ModuleNotFoundError as err:  # what the plugin imports is not installed
        if err.name == target:
            raise ImportError(f"no plugin module {target!r} is installed") from err
        raise ImportError(
            f"plugin {target!r} could not import module {err.name!r} (not "
            "installed in this environment?)"
        ) from err
    except NameClash as err:  # already one line naming both sources
        raise ImportError(str(err)) from None
    except ImportError as err:
        if str(err).startswith(("plugin ", "cannot import plugin")):
            raise
        raise ImportError(
            f"plugin {target!r} failed to import: {type(err).__name__}: {err}"
        ) from err
    except Exception as err:  # a broken plugin must not take the harness down
        raise ImportError(
            f"plugin {target!r} failed to load: {type(err).__name__}: {err}"
        ) from err
    return sorted(set(_REGISTRY) - before)


def entry_point_names() -> list[str]:
    """Solver names offered by installed packages (group ``npuzzle_harness.solvers``);
    not loaded until a user names one."""
    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def load_entry_point(name: str) -> bool:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            ep.load()
            return name in _REGISTRY
    return False


