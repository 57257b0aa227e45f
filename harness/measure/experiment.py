"""Experiment files: ``harness run --config experiment.toml``.

An experiment file names what to run (solvers, heuristics, datasets) and how
(repeats, limits, executor) in TOML::

    # compare three heuristics with IDA* and A* on 8-strata and 15-walks
    solvers = ["ida_star", "astar_dict"]
    heuristics = ["manhattan", "linear_conflict", "misplaced"]
    datasets = ["8-strata", "15-walks"]
    repeats = 1
    timeout = 10

List values are grid axes: every solver with every heuristic (that it takes) on
every dataset. ``params = { w = [1, 1.5, 2] }`` makes solver parameters axes too:
every value for each solver that takes the parameter (a solver without it runs
with its own parameters, noted as not formed for the values it cannot take).
``configs = ["ida_star_jit[pdb663]"]`` adds configs as they are. ``cost = ["unit",
"heavy"]`` is the tile cost axis (:mod:`harness.core.costs`): every dataset of
the grid under each model (``8-strata@heavy``: another dataset of the run).
Several ``[[grid]]`` tables make a union of grids: the top-level ``solvers`` /
``configs`` (with ``heuristics`` and ``datasets``) form one grid, each
``[[grid]]`` table another; a ``[[grid]]`` without ``datasets`` or ``heuristics``
takes the top-level ones. A
combination a solver cannot form (a heuristic it does not take) is not an error:
it is listed as not formed, with the reason. Unknown keys, wrong types and
unknown names are errors naming the file and line.
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.core.costs import COST_MODELS
from harness.core.names import did_you_mean
from harness.core.options import OPTIONS
from harness.measure.executors.registry import (
    DEFAULT_EXECUTOR,
    all_executors,
    executor_kind,
    executor_names,
)
from harness.measure.plan import MAX_CELLS, too_many_cells

if TYPE_CHECKING:
    from harness.configs import SolverConfig
    from harness.results import RunMeta

#: The keys an experiment file may set besides its grid: the run options it may
#: set (harness.core.options, by their one names), and these.
FILE_KEYS: dict[str, str] = {
    "name": "a string",
    "description": "a string",
    "executor": "a registered executor's name",
    "scheduler": 'a Dask scheduler address such as "tls://HOST:8786"',
    "tls_ca": "the path of the cluster's CA certificate (PEM)",
    "tls_cert": "the path of the client's certificate (PEM)",
    "tls_key": "the path of the client's private key (PEM)",
}
#: The run options an experiment file may set.
FILE_OPTIONS = {o.name: o for o in OPTIONS if o.in_file}
GRID_KEYS = ("solvers", "heuristics", "params", "configs", "datasets", "cost")


def _executor_choice() -> str:
    """``one of "local", "dask" or "inline"``: the registered executors."""
    names = [f'"{n}"' for n in executor_names()]
    return "one of " + (", ".join(names[:-1]) + " or " if names[1:] else "") + names[-1]


class ExperimentError(ValueError):
    """A bad experiment file; the message names the file and line."""


@dataclass(slots=True)
class Experiment:
    """A parsed experiment: the (config, dataset) pairs to run and the options."""

    path: Path
    sha256: str
    text: str
    #: config labels in first-seen order, each with the datasets it runs on
    pairs: dict[str, list[str]] = field(default_factory=dict)
    #: the parsed config of each label (what the run is given, not the labels)
    values: dict[str, SolverConfig] = field(default_factory=dict)
    datasets: list[str] = field(default_factory=list)
    #: what to load each dataset by (its name, or the absolute path of a .jsonl)
    dataset_specs: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    #: combinations that were not formed, with the reason
    not_formed: list[str] = field(default_factory=list)
    #: dataset name -> its number of instances (what a config's cells number)
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def cells(self) -> int:
        """Cells (config x instance) of the union of grids."""
        return sum(self.sizes[d] for ds in self.pairs.values() for d in ds)

    @property
    def configs(self) -> list[str]:
        return list(self.pairs)

    def pair_set(self) -> set[tuple[str, str]]:
        return {(c, d) for c, ds in self.pairs.items() for d in ds}

    def scheduler_error(self, message: str) -> str:
        """A ``--scheduler ADDRESS: ...`` error about this file's scheduler, said
        of the file and line that chose it."""
        address = self.options.get("scheduler")
        prefix = f"--scheduler {address}:"
        if address is None or not message.startswith(prefix):
            return message
        return (
            f"{self.path}: line {_line_of(self.text, 'scheduler', None)}: scheduler "
            f"= {address!r}:{message[len(prefix):]}"
        )


def _line_of(text: str, key: str, table: int | None) -> int:
    """Line number of ``key =`` at the top level (``table`` None) or in the
    ``table``-th ``[[grid]]`` (0-based); 1 if not found."""
    current: int | None = None
    grids = -1
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("[[") or stripped.startswith("["):
            if re.match(r"\[\[\s*grid\s*\]\]", stripped):
                grids += 1
                current = grids
            else:
                current = -1  # another table
            if key == "" and current == table:
                return number
            continue
        if current == table and re.match(rf"{re.escape(key)}\s*=", stripped):
            return number
        if current is None and table is None and re.match(
            rf"['\"]?{re.escape(key)}['\"]?\s*=", stripped
        ):
            return number
    return 1


def load(path: Path | str) -> Experiment:
    """Read and check an experiment file (names resolved against the registry and
    the dataset folders). ExperimentError (one line: file, line, what) otherwise."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ExperimentError(f"{path}: cannot read ({err.strerror})") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ExperimentError(f"{path}: not valid TOML: {err}") from None
    exp = Experiment(path, hashlib.sha256(raw).hexdigest(), text)

    def fail(key: str, table: int | None, what: str) -> ExperimentError:
        return ExperimentError(f"{path}: line {_line_of(text, key, table)}: {what}")

    top = {k: v for k, v in data.items() if k not in ("grid",)}
    for key, value in top.items():
        if key in GRID_KEYS:
            continue
        known = [*GRID_KEYS, *FILE_OPTIONS, *FILE_KEYS]
        if key not in known:
            hint = did_you_mean(key, known)
            raise fail(key, None, f"unknown key {key!r}{hint} (known: "
                       f"{', '.join([*known, '[[grid]]'])})")  # fmt: skip
        if key in FILE_OPTIONS:
            # the checks the command line makes, said of this file and line
            problem = FILE_OPTIONS[key].problem(value)
            if problem:
                raise fail(key, None, f"{key} = {value!r}: {problem}")
        elif key == "executor" and (
            not isinstance(value, str) or value not in executor_names()
        ):
            raise fail(key, None, f"{key} = {value!r}: must be {_executor_choice()}")
        elif not isinstance(value, str) or (
            key == "scheduler" and (not value.strip() or " " in value.strip())
        ):
            raise fail(key, None, f"{key} = {value!r}: must be {FILE_KEYS[key]}")
        if key == "scheduler":
            from harness.measure.executors.dask.address import (
                AddressError,
                parse_address,
            )

            try:
                parse_address(value)
            except AddressError as err:
                raise fail(key, None, f"{key} = {value!r}: {err.reason}") from None
        exp.options[key] = value
    _check_executor(exp.options, fail)
    for key in ("tls_ca", "tls_cert", "tls_key"):  # relative to the file
        if key in exp.options:
            exp.options[key] = str((path.parent / exp.options[key]).resolve())
            if not Path(exp.options[key]).is_file():
                raise fail(key, None, f"{key}: no such file {exp.options[key]}")
    if "plugins" in exp.options:
        exp.options["plugins"] = [
            str((path.parent / p).resolve())
            if p.endswith(".py") and (path.parent / p).exists()
            else p
            for p in exp.options["plugins"]
        ]
        from harness.measure.external import load_plugin

        for target in exp.options["plugins"]:
            try:
                load_plugin(target)
            except ImportError as err:
                raise fail("plugins", None, f"plugin {target}: {err}") from None

    grids = data.get("grid", [])
    if "grid" in data and not (
        isinstance(grids, list) and all(isinstance(g, dict) for g in grids)
    ):
        raise fail("grid", None, "grid must be written as [[grid]] tables")
    defaults = {k: top[k] for k in GRID_KEYS if k in top}
    inherited = {
        k: top[k] for k in ("datasets", "heuristics", "params", "cost") if k in top
    }
    tables = [(None, defaults)] if not grids or (
        "solvers" in top or "configs" in top
    ) else []
    tables += [(i, {**inherited, **g}) for i, g in enumerate(grids)]
    for i, g in enumerate(grids):
        for key in g:
            if key not in GRID_KEYS:
                raise fail(
                    key, i, f"unknown key {key!r} in [[grid]]"
                    f"{did_you_mean(key, GRID_KEYS)} (known: {', '.join(GRID_KEYS)})"
                )  # fmt: skip
    for index, grid in tables:
        _expand(exp, grid, index, fail)
    if not exp.pairs:
        raise fail("", None, "the experiment names no solver config and dataset")
    if exp.cells > MAX_CELLS:
        raise ExperimentError(f"{path}: {too_many_cells(exp.cells)}")
    return exp


def _check_executor(options: dict[str, Any], fail) -> None:
    """The executor choices ``harness run`` refuses on its command line
    (``--executor``, ``--scheduler``, ``--jobs``), refused here with the line."""
    executor, jobs = options.get("executor", DEFAULT_EXECUTOR), options.get("jobs")
    kind = executor_kind(executor)
    if kind is not None and kind.fixed_jobs is not None and jobs not in (
        None, kind.fixed_jobs,
    ):  # fmt: skip
        raise fail(
            "executor", None,
            f'executor = "{executor}" runs with jobs = {kind.fixed_jobs}, not {jobs}',
        )  # fmt: skip
    tls = [k for k in ("tls_ca", "tls_cert", "tls_key") if k in options]
    if tls and not str(options.get("scheduler", "")).startswith("tls://"):
        raise fail(tls[0], None, f"{tls[0]} needs scheduler = \"tls://HOST:PORT\"")
    if "scheduler" in options and not (kind is not None and kind.on_cluster):
        clusters = [n for n, k in all_executors().items() if k.on_cluster]
        raise fail(
            "scheduler", None,
            f"scheduler = {options['scheduler']!r} needs executor = "
            + " or ".join(f'"{n}"' for n in clusters),
        )  # fmt: skip
    if kind is not None and kind.sets_jobs and jobs == 0:
        raise fail(
            "jobs", None, f"jobs = 0: the {executor} executor needs at least 1 worker"
        )
    if "scheduler" in options and jobs is not None:
        raise fail(
            "jobs", None,
            f"jobs = {jobs} applies to the local Dask cluster the harness starts; "
            "with a scheduler the cluster's workers decide (start them with "
            "--nthreads 1)",
        )  # fmt: skip


def run_arguments(exp: Experiment) -> dict[str, Any]:
    """The experiment as :class:`harness.measure.session.RunOptions` fields (the
    session applies them under the options given, and decides on the scheduler)."""
    o = exp.options
    out: dict[str, Any] = {
        "solvers": list(exp.values.values()),  # parsed once, here
        "datasets": exp.dataset_specs,
        "pairs": exp.pair_set(),
    }
    out |= {key: o[key] for key in FILE_OPTIONS if key in o}  # the same names
    if "scheduler" in o:
        out["scheduler"] = o["scheduler"]
    if any(k in o for k in ("tls_ca", "tls_cert", "tls_key")):
        out["tls"] = (o.get("tls_ca"), o.get("tls_cert"), o.get("tls_key"))
    if o.get("executor") == "inline":
        out["jobs"] = 0  # as --jobs 0: a --jobs given on the command line wins
    elif o.get("executor") not in (None, DEFAULT_EXECUTOR):
        out["executor"] = o["executor"]
    return out


def record(exp: Experiment, run_dir: Path, meta: RunMeta) -> None:
    """Copy the experiment file into the run directory; its sha256 in meta.json."""
    from harness.core.files import write_atomic
    from harness.results import write_meta

    write_atomic(Path(run_dir) / "experiment.toml", exp.text)
    meta.experiment = {
        "file": "experiment.toml",
        "source": str(exp.path.resolve()),
        "sha256": exp.sha256,
        "not_formed": exp.not_formed,
    }
    write_meta(run_dir, meta)


def _names(value: Any, key: str, index: int | None, fail) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(key, index, f"{key} = {value!r}: must be a list of names")
    if not value:
        raise fail(key, index, f"{key} is empty")
    return value


def _note(exp: Experiment, text: str) -> None:
    if text not in exp.not_formed:
        exp.not_formed.append(text)


def _expand(exp: Experiment, grid: dict, index: int | None, fail) -> None:
    from harness import datasets as ds
    from harness.configs import ConfigKey, parse_config
    from harness.heuristics import all_heuristics
    from harness.solver import all_solvers

    where = "" if index is None else f" (grid {index + 1})"
    if "datasets" not in grid:
        raise fail("", index, f"no datasets{where}")
    if "solvers" not in grid and "configs" not in grid:
        raise fail("", index, f"no solvers or configs{where}")
    dataset_names = []
    # no cost key: each dataset's own model (unit, or what its file declares)
    models = _names(grid["cost"], "cost", index, fail) if "cost" in grid else [None]
    for model in models if "cost" in grid else ():
        if model not in COST_MODELS:
            raise fail("cost", index, f"cost {model!r}: not one of "
                       f"{', '.join(COST_MODELS)}{did_you_mean(model, COST_MODELS)}")
    for model, name in ((m, n) for m in models
                        for n in _names(grid["datasets"], "datasets", index, fail)):
        target = name
        if name.endswith(".jsonl") and (exp.path.parent / name).exists():
            target = str((exp.path.parent / name).resolve())
        try:
            found = ds.select_datasets(target, cost_model=model)
        except (ValueError, OSError) as err:
            raise fail("datasets", index, f"dataset {name!r}: {err}") from None
        for d in found:
            dataset_names.append(d.name)
            exp.sizes[d.name] = len(d.instances)
            if d.name not in exp.datasets:
                exp.datasets.append(d.name)
                # a file is loaded by its path (a relative one made absolute),
                # under its cost model (harness.datasets.costs)
                spec = target if target.endswith(".jsonl") else d.name
                if target.endswith(".jsonl") and d.cost_model != "unit":
                    spec += f"@{d.cost_model}"
                exp.dataset_specs.append(spec)
    found: list[SolverConfig] = []
    per_config = max(1, sum(exp.sizes[d] for d in dict.fromkeys(dataset_names)))
    solvers = all_solvers()
    known_h = all_heuristics()
    heuristics = (
        _names(grid["heuristics"], "heuristics", index, fail)
        if "heuristics" in grid
        else None
    )
    params = grid.get("params")
    if params is not None and not (
        isinstance(params, dict)
        and all(
            isinstance(v, list | str | int | float) and not isinstance(v, bool)
            for v in params.values()
        )
    ):
        raise fail("params", index, f"params = {params!r}: must be a table of value "
                   "lists, e.g. params = { w = [1, 1.5, 2] }")  # fmt: skip
    for h in heuristics or ():
        if h not in known_h:
            raise fail(
                "heuristics", index,
                f"unknown heuristic {h!r}{did_you_mean(h, known_h)}; known: "
                f"{', '.join(sorted(known_h))}",
            )  # fmt: skip
    for name in _names(grid.get("solvers", []) or [], "solvers", index, fail) if (
        "solvers" in grid
    ) else []:
        if name not in solvers:
            try:
                parse_config(name)  # a plugin's entry point, or a full label
            except KeyError as err:
                raise fail("solvers", index, str(err.args[0])) from None
        spec = all_solvers().get(name)
        if spec is None:  # "ida_star[pdb663]" under solvers: take it as a config
            found.append(parse_config(name))
            continue
        choices = _param_choices(exp, spec, params, index, fail, per_config)
        taken = [h for h in heuristics or () if h in spec.heuristics] or [None]
        at_least = (len(found) + len(choices) * len(taken)) * per_config
        if at_least > MAX_CELLS:
            # each (heuristic, parameters) is its own config: refused before
            # forming them (10^6 configs took minutes and gigabytes)
            raise fail("solvers", index, f"at least {too_many_cells(at_least)}")
        if heuristics is None or not spec.heuristics:
            if heuristics is not None:
                _note(exp, f"{name} x {', '.join(heuristics)}: {name} is blind (no "
                      f"heuristic); run as {name}")
            found += [ConfigKey(name, None, c).resolve() for c in choices]
            continue
        for h in heuristics:
            if h in spec.heuristics:
                found += [ConfigKey(name, h, c).resolve() for c in choices]
            else:
                _note(exp, f"{name}[{h}]: {name} does not take {h} "
                      f"(it takes {', '.join(spec.heuristics)})")
    for token in _names(grid["configs"], "configs", index, fail) if (
        "configs" in grid
    ) else []:
        try:
            found.append(parse_config(token))
        except KeyError as err:
            raise fail("configs", index, str(err.args[0])) from None
    for config in found:
        exp.values.setdefault(config.label, config)
        have = exp.pairs.setdefault(config.label, [])
        have.extend(d for d in dataset_names if d not in have)


def _param_choices(
    exp: Experiment, spec, params: dict | None, index: int | None, fail,
    per_config: int = 1,
) -> list[tuple]:
    """Every combination of the ``params`` values the solver takes, parsed by its
    parameters ((name, value) tuples); [()] (its defaults) when it takes none of
    them. The values it cannot take are noted as not formed. ExperimentError
    before the product is formed when its configs, of ``per_config`` cells each,
    would pass MAX_CELLS."""
    from itertools import product

    if not params:
        return [()]
    axes = []
    for key, values in params.items():
        values = values if isinstance(values, list) else [values]
        if not values:
            raise fail("params", index, f"params.{key} is empty")
        try:
            param = spec.param(key)
        except KeyError:
            shown = ", ".join(str(v) for v in values)
            _note(exp, f"{spec.name} x {key} = {shown}: {spec.name} has no parameter "
                  f"{key!r}; run with its own")  # fmt: skip
            continue
        parsed = []
        for value in values:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise fail("params", index, f"params.{key}: {value!r} is not a value")
            try:
                parsed.append((key, param.parse(str(value))))
            except ValueError as err:
                raise fail("params", index, f"params.{key}: {err}") from None
        axes.append(list(dict.fromkeys(parsed)))
    combos = math.prod(len(axis) for axis in axes)
    if combos * per_config > MAX_CELLS:
        raise fail("params", index, f"{spec.name}: {combos:,} parameter combinations, "
                   f"{too_many_cells(combos * per_config)}")  # fmt: skip
    return [tuple(combo) for combo in product(*axes)] if axes else [()]


def matrix(exp: Experiment, cells, reused: dict | None = None) -> list[str]:
    """What ``--dry-run`` prints: a table of configs x datasets with the cells to
    run in each (``run/skip``, and ``+N reused`` with ``--reuse``), totals, the
    skip reasons and the combinations not formed. ``cells``: the runner's cells
    for this experiment (objects with ``config.label``, ``dataset.name``,
    ``refusal``); ``reused``: (config, dataset) -> cells copied from earlier runs."""
    reused = reused or {}
    counts: dict[tuple[str, str], list[int]] = {}
    reasons: dict[tuple[str, str], dict[str, int]] = {}
    for cell in cells:
        key = (cell.config.label, cell.dataset.name)
        c = counts.setdefault(key, [0, 0])
        if cell.refusal is None:
            c[0] += 1
        else:
            c[1] += 1
            why = reasons.setdefault(key, {})
            why[cell.refusal] = why.get(cell.refusal, 0) + 1
    datasets = list(dict.fromkeys(d for _, d in counts))
    configs = list(dict.fromkeys(c for c, _ in counts))
    head = ["config", *datasets]
    body = []
    for config in configs:
        line = [config]
        for d in datasets:
            if (config, d) not in counts:
                line.append("-")
                continue
            run, skip = counts[(config, d)]
            again = reused.get((config, d), 0)
            text = f"{run - again} run" + (f" +{again} reused" if again else "")
            line.append(text + (f", {skip} skip" if skip else ""))
        body.append(line)
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    lines = [
        (f"experiment {exp.path} (sha256 {exp.sha256[:12]})" if exp.text
         else "run") + f": {len(configs)} configs, "
        f"{len(datasets)} datasets, {sum(sum(v) for v in counts.values())} cells",
        "  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += [
        "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()
        for r in body
    ]
    to_run = sum(v[0] for v in counts.values()) - sum(reused.values())
    skipped = sum(v[1] for v in counts.values())
    lines.append(
        f"total: {to_run} cells to run, {sum(reused.values())} reused, "
        f"{skipped} skipped (declined by the solver); nothing was run (--dry-run)"
    )
    if reasons:
        lines.append("skipped, and why:")
        for (config, d), why in reasons.items():
            for reason, n in sorted(why.items(), key=lambda kv: -kv[1])[:3]:
                lines.append(f"  {config} on {d}: {n} cells: {reason}")
            if len(why) > 3:
                lines.append(f"  {config} on {d}: {len(why) - 3} more reasons")
    if exp.not_formed:
        lines.append("not formed (not cells):")
        lines += [f"  {t}" for t in exp.not_formed]
    return lines
