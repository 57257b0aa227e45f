"""Solver configs by name: ``astar_dict[manhattan]``, ``wastar[manhattan,w=1.5]``
or ``all`` parsed once into :class:`SolverConfig` values, which then
travel as values (to workers, into rows). The registry the names resolve in is
:mod:`harness.solver`'s."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from typing import Any

from harness.core.costs import UNIT
from harness.core.names import did_you_mean
from harness.core.numbers import NumberError
from harness.core.values import format_value
from harness.heuristics import COSTS, all_heuristics
from harness.puzzle import Board, Grid
from harness.solver import SolveFn, SolverSpec, all_solvers, load_entry_point


def config_label(
    solver: str, heuristic: str | None, params: tuple[tuple[str, Any], ...] = ()
) -> str:
    """``solver[heuristic,name=value,...]``, ``solver[heuristic]`` or ``solver``:
    what tables, rows and files call a config."""
    inside = ([heuristic] if heuristic else []) + [
        f"{name}={format_value(value)}" for name, value in params
    ]
    return f"{solver}[{','.join(inside)}]" if inside else solver


@dataclass(frozen=True, slots=True)
class SolverConfig:
    """One solver with one heuristic and its parameter values: the unit the runner
    measures. ``params`` holds every parameter of the solver, in its order."""

    spec: SolverSpec
    heuristic: str | None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        return config_label(self.spec.name, self.heuristic, self.params)

    @property
    def heuristic_column(self) -> str:
        return self.heuristic or "none"

    @property
    def key(self) -> ConfigKey:
        """The config as a value (names and parameter values) for other processes."""
        return ConfigKey(self.spec.name, self.heuristic, self.params)

    @property
    def bound(self) -> Fraction | None:
        """The claimed bound on path length / optimum: 1 for an optimal solver,
        the bounding parameter's value for a bounded one, None for no bound."""
        if self.spec.optimal:
            return Fraction(1)
        if self.spec.bounded_by:
            return Fraction(dict(self.params)[self.spec.bounded_by])
        return None

    @property
    def solve(self) -> SolveFn:
        """The solver's ``solve`` with this config's parameters bound: the function
        itself when it has none (nothing added to a timed call), else a partial."""
        if not self.params:
            return self.spec.solve
        return partial(self.spec.solve, **dict(self.params))

    def solve_for(self, cost_model: str) -> SolveFn:
        """:attr:`solve` for a task with tile costs ``cost_model``: unit calls it
        as it is (nothing added to a unit solve), another model passes it (a
        solver without tile costs, run anyway by ``--force``, counts moves)."""
        if cost_model == UNIT or not self.spec.costs:
            return self.solve
        return partial(self.solve, cost_model=cost_model)

    def refuses(
        self, grid: Grid, depth: int | None, goal: Board | None = None,
        cost_model: str = UNIT,
    ) -> str | None:  # fmt: skip
        """Why the solver declines ``grid`` at this optimal depth toward ``goal``
        under ``cost_model`` (None: it takes it), asked with this config's
        heuristic and parameters."""
        if cost_model != UNIT:
            reason = _refuses_costs(self, cost_model)
            if reason:
                return reason
        return self.spec.refuses(
            grid, depth, self.heuristic, goal=goal, **dict(self.params)
        )


def _refuses_costs(config: SolverConfig, cost_model: str) -> str | None:
    """Why ``config`` cannot search by ``cost_model``'s tile costs, or None."""
    if not config.spec.costs:
        return (f"{config.spec.name} does not take tile costs ({cost_model}): it "
                "would find the fewest moves, not the cheapest path")  # fmt: skip
    info = all_heuristics().get(config.heuristic) if config.heuristic else None
    if info is not None and not info.meets((COSTS,)):
        return (f"heuristic {config.heuristic} has no form for tile costs "
                f"({cost_model}): it bounds moves, not their cost")  # fmt: skip
    return None


@dataclass(frozen=True, slots=True)
class ConfigKey:
    """A parsed config as a plain value: what a task carries to a worker process.
    :meth:`resolve` looks it up in the registry (after the worker has loaded the
    plugins) without parsing a label again. ``params``: (name, value) pairs."""

    solver: str
    heuristic: str | None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def label(self) -> str:
        return config_label(self.solver, self.heuristic, self.params)

    def __str__(self) -> str:
        return self.label

    def resolve(self) -> SolverConfig:
        """The registered config; KeyError when the solver or heuristic is unknown
        here, the solver does not take the heuristic or a parameter."""
        config = _resolve(self.solver, self.heuristic, self.label)
        return _with_params(config, dict(self.params), self.label)

    def stored(self) -> list:
        """The key as JSON (meta.json ``options.configs``): ``[solver, heuristic]``,
        plus ``{name: text}`` when it has parameters."""
        if not self.params:
            return [self.solver, self.heuristic]
        texts = {name: format_value(value) for name, value in self.params}
        return [self.solver, self.heuristic, texts]

    @classmethod
    def from_stored(cls, entry: Sequence[Any]) -> ConfigKey:
        """The key :meth:`stored` wrote (parameter texts parsed by the solver's
        own parameters); KeyError with a one-line reason otherwise."""
        if not isinstance(entry, list | tuple) or len(entry) not in (2, 3):
            raise KeyError(f"stored config {entry!r} is not [solver, heuristic, ...]")
        solver, heuristic = entry[0], entry[1]
        texts = entry[2] if len(entry) == 3 else {}
        if not texts:
            return cls(solver, heuristic)
        label = config_label(solver, heuristic, tuple(texts.items()))
        spec = _resolve(solver, heuristic, label).spec
        return cls(solver, heuristic, _parse_params(spec, texts, label))


_CONFIG = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[([^\[\]]*)\])?\s*$")


_HEURISTIC = re.compile(r"^[A-Za-z0-9_\-]*$")


def parse_config(token: str) -> SolverConfig:
    """``"astar_dict[manhattan]"``, ``"bfs"`` or, with parameters,
    ``"wastar[manhattan,w=1.5]"`` / ``"wastar[w=1.5]"`` -> SolverConfig; KeyError
    with a one-line reason for an unknown solver, a heuristic it does not take, or
    a bad parameter. Parameters left out take their defaults."""
    m = _CONFIG.match(token)
    if not m:
        raise KeyError(f"{token!r} is not NAME, NAME[HEURISTIC] or NAME[HEURISTIC,"
                       "PARAM=VALUE,...]")  # fmt: skip
    name, inside = m.group(1), m.group(2)
    heuristic: str | None = None
    texts: dict[str, str] = {}
    if inside is not None:
        items = [item.strip() for item in inside.split(",")]
        if "=" not in items[0]:
            heuristic = items.pop(0)
            if not _HEURISTIC.match(heuristic):
                raise KeyError(f"{token!r}: {heuristic!r} is not a heuristic name")
        for item in items:
            key, eq, text = (part.strip() for part in item.partition("="))
            if not eq or not key or not text:
                raise KeyError(f"{token!r}: {item!r} is not PARAM=VALUE")
            if key in texts:
                raise KeyError(f"{token!r}: parameter {key!r} given twice")
            texts[key] = text
    config = _resolve(name, heuristic, token)
    return _with_params(config, _parse_params(config.spec, texts, token), token)


def _parse_params(spec: SolverSpec, texts: dict[str, str], token: str) -> tuple:
    """``texts`` ({name: text}) parsed by the solver's parameters, in its order."""
    out = []
    for name, text in texts.items():
        try:
            out.append((name, spec.param(name).parse(text)))
        except KeyError as err:
            raise KeyError(f"{token!r}: {err.args[0]}") from None
        except NumberError as err:
            raise KeyError(str(err.at(where=repr(token), field=name))) from None
        except ValueError as err:
            raise KeyError(f"{token!r}: {name}={err}") from None
    return tuple(out)


def _with_params(config: SolverConfig, given: Any, token: str) -> SolverConfig:
    """``config`` with every parameter of its solver: the ``given`` (name, value)
    pairs, the defaults for the rest; KeyError for a name it does not take."""
    given = dict(given)
    spec = config.spec
    for name in given:
        try:
            spec.param(name)
        except KeyError as err:
            raise KeyError(f"{token!r}: {err.args[0]}") from None
    if not spec.params:
        return config
    values = tuple((p.name, given.get(p.name, p.default)) for p in spec.params)
    return SolverConfig(spec, config.heuristic, values)


def _resolve(name: str, heuristic: str | None, token: str) -> SolverConfig:
    solvers = all_solvers()
    if name not in solvers and not load_entry_point(name):
        raise KeyError(
            f"unknown solver {name!r}{did_you_mean(name, all_solvers())}; known: "
            f"{', '.join(all_solvers())}"
        )
    spec = all_solvers()[name]
    if heuristic == "":
        raise KeyError(f"{token!r}: empty heuristic name")
    if heuristic is None:
        heuristic = spec.default_heuristic or next(iter(spec.heuristics), None)
    elif not spec.heuristics:
        raise KeyError(f"solver {name!r} is blind and takes no heuristic ({token!r})")
    elif heuristic not in spec.heuristics:
        raise KeyError(
            f"solver {name!r} does not take heuristic {heuristic!r}"
            f"{did_you_mean(heuristic, spec.heuristics)}; "
            f"it takes: {', '.join(spec.heuristics)}"
        )
    if heuristic is not None and heuristic not in all_heuristics():
        raise KeyError(f"heuristic {heuristic!r} of {name!r} is not registered")
    return SolverConfig(spec, heuristic)


def select_solvers(text: str) -> list[SolverConfig]:
    """``"all"`` (every solver with every heuristic it takes, at its default
    parameters; a solver registered ``in_all="default"`` with its default config
    only, one registered ``in_all="none"`` not at all) or a comma list of NAME / NAME[HEURISTIC,PARAM=VALUE]. Duplicates are
    dropped; order is kept."""
    if text.strip() == "all":
        return [
            config
            for config in every_config()
            if config.spec.in_all == "heuristics"
            or (config.spec.in_all == "default"
                and config.heuristic == _default_heuristic(config.spec))
        ]
    out: list[SolverConfig] = []
    for token in _split_top_level(text):
        config = parse_config(token)
        if config not in out:
            out.append(config)
    if not out:
        raise KeyError(
            f"{text!r} names no solver; name 'all' or some of: "
            f"{', '.join(all_solvers())} (see `harness solvers`)"
        )
    return out


def every_config() -> list[SolverConfig]:
    """Every solver with every heuristic it takes, at its default parameters
    (what the shared solver tests and the counters gate cover)."""
    return [
        _with_params(SolverConfig(spec, h), (), spec.name)
        for spec in all_solvers().values()
        for h in (spec.heuristics or (None,))
    ]


def _default_heuristic(spec: SolverSpec) -> str | None:
    return spec.default_heuristic or next(iter(spec.heuristics), None)


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets (``a[x],b`` -> ``a[x]``, ``b``)."""
    parts, depth, cur = [], 0, []
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]
