"""Compare two stored runs: exact counter changes, status changes, noise-aware time.

Cells are matched on (solver, heuristic, dataset, instance). Counters of a
deterministic solver are compared exactly: any difference is a *change*; more
nodes expanded or generated, a longer path, or a worse status is a *regression*.
Time is compared per solver config as the geometric mean over instances of
``median(new repeats) / median(base repeats)``, on CPU time when both runs have it,
*normalized*: each repeat divided by the reference solve the runner timed next to
it in the same worker on the same core (:mod:`harness.compare.noise`), with the raw CPU
ratio shown beside. Several runs per side (``A1,A2`` vs ``B1,B2``, best alternated
A B A B) are bootstrapped over runs and instances; one run per side over instances
and repeats. A slowdown is a regression only when it is significant (the interval
excludes 1), at least ``min_ratio`` and above the calibrated noise floor, over at
least 5 timed instances.

Exit codes: 0 nothing regressed, 1 a regression, 2 the runs cannot be compared.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.results import ANSWERED, READABLE_VERSIONS, SEVERITY

if TYPE_CHECKING:  # pandas is imported lazily: this module is reached from the CLI
    import pandas as pd

    from harness.analysis import Run

EXIT_OK, EXIT_REGRESSION, EXIT_INCOMPARABLE = 0, 1, 2
SUPPORTED_SCHEMAS = READABLE_VERSIONS  # the reader migrates older ones
CELL_KEY = ["solver", "heuristic", "dataset", "instance"]
COUNTERS = [
    "expanded",
    "generated",
    "max_frontier",
    "iterations",
    "path_length",
    "h_start",  # the heuristic at the start board: moves when the heuristic changes
]
#: A rise in these is a regression; a change in the others is only reported.
WORSE_WHEN_HIGHER = {"expanded", "generated", "path_length"}
#: Higher is worse (harness.results.SEVERITY); a cell missing from one run ranks as
#: a refusal.
STATUS_SEVERITY = {**SEVERITY, "missing": SEVERITY["skipped"]}
GOOD_STATUSES = set(ANSWERED)


class Incomparable(Exception):
    """The two runs cannot be compared; the message is the one-line reason."""


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What counts as a regression; every field is a ``harness compare`` option."""

    #: A config's time ratio must reach this (and be significant) to be a
    #: regression. None: 1.10 on normalized times, 1.80 on raw CPU time
    #: (harness.compare.noise.DEFAULT_MIN_RATIO / DEFAULT_MIN_RATIO_RAW).
    min_ratio: float | None = None
    #: Instances whose median time is below this (seconds) in both runs are left
    #: out of the time ratio: at microseconds, timer and cache noise dominate.
    time_threshold: float = 1e-4
    #: Two-sided confidence level of the bootstrap interval of the geomean ratio.
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0
    #: False: report counters and statuses only (e.g. runs from two machines).
    check_time: bool = True
    #: A config whose ratio every other config's ratio is divided by: a reference
    #: workload that absorbs a machine-wide drift between the two runs (for runs
    #: without the per-cell reference solve, i.e. schema 1).
    reference: str | None = None
    #: Fewer timed instances than this: "too few instances", never significant.
    min_instances: int = 5
    #: The noise floor calibrated on this machine (None: not calibrated).
    calibration: Any = None
    #: False: compare raw CPU time even when both runs have the reference solve.
    normalize: bool = True

    def threshold(self, normalized: bool) -> float:
        """The ratio a slowdown must reach: the larger of min_ratio (or its
        default) and the calibrated floor."""
        from harness.compare.noise import DEFAULT_MIN_RATIO, DEFAULT_MIN_RATIO_RAW

        base = self.min_ratio
        if base is None:
            base = DEFAULT_MIN_RATIO if normalized else DEFAULT_MIN_RATIO_RAW
        cal = self.calibration
        if cal is not None:
            floor = cal.floor if normalized else cal.raw_floor
            if floor:
                base = max(base, floor)
        return base


@dataclass(frozen=True, slots=True)
class CounterChange:
    config: str
    dataset: str
    instance: str
    counter: str
    base: float | None
    new: float | None
    regression: bool

    @property
    def text(self) -> str:
        b, n = _fmt_int(self.base), _fmt_int(self.new)
        delta = ""
        if self.base is not None and self.new is not None:
            diff = self.new - self.base
            pct = f", {100 * diff / self.base:+.1f}%" if self.base else ""
            delta = f" ({diff:+,.0f}{pct})"
        return f"{self.counter} {b} -> {n}{delta}"


@dataclass(frozen=True, slots=True)
class StatusChange:
    config: str
    dataset: str
    instance: str
    base: str
    new: str
    regression: bool


@dataclass(frozen=True, slots=True)
class TimeVerdict:
    """Time of one config, new relative to base, over the instances both timed."""

    config: str
    metric: str  # "cpu_seconds" or "seconds" (normalized: divided by the reference)
    instances: int  # instances in the ratio
    dropped_fast: int  # instances left out: below time_threshold in both runs
    ratio: float | None  # geometric mean of per-instance median ratios (new/base)
    low: float | None  # bootstrap confidence interval of ratio
    high: float | None
    has_noise_estimate: bool  # False with one instance and one repeat per run
    significant: bool
    regression: bool
    improvement: bool
    verdict: str
    normalized: bool = False  # divided by the per-cell reference solve
    raw_ratio: float | None = None  # the same geomean on raw CPU (or wall) time
    threshold: float | None = None  # what a slowdown had to reach
    runs: tuple[int, int] = (1, 1)  # runs per side in the estimate
    run_spread: float | None = None  # largest ratio between same-side runs


@dataclass(slots=True)
class ConfigSummary:
    config: str
    cells: int = 0
    counter_changes: int = 0
    counter_regressions: int = 0
    status_changes: int = 0
    status_regressions: int = 0
    source_changed: bool | None = None
    time: TimeVerdict | None = None


@dataclass(slots=True)
class Comparison:
    """Everything ``harness compare`` reports; :attr:`exit_code` is its verdict."""

    base_id: str
    new_id: str
    thresholds: Thresholds
    metric: str | None = None
    normalized: bool = False
    matched_cells: int = 0
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    configs: dict[str, ConfigSummary] = field(default_factory=dict)
    counter_changes: list[CounterChange] = field(default_factory=list)
    status_changes: list[StatusChange] = field(default_factory=list)
    #: The same time verdict per (config, dataset, "solvable" | "unsolvable"), for
    #: tables that show datasets separately (``harness report A B``).
    parts: dict[tuple[str, str, str], TimeVerdict] = field(default_factory=dict)

    @property
    def regressions(self) -> list[str]:
        """One line per regressed config, naming what regressed."""
        out = []
        for s in self.configs.values():
            what = []
            if s.counter_regressions:
                what.append(f"{s.counter_regressions} counter increase(s)")
            if s.status_regressions:
                what.append(f"{s.status_regressions} status(es) worse")
            if s.time is not None and s.time.regression:
                what.append(s.time.verdict)
            if what:
                out.append(f"{s.config}: {', '.join(what)}")
        return out

    @property
    def exit_code(self) -> int:
        return EXIT_REGRESSION if self.regressions else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparable": True,
            "base": self.base_id,
            "new": self.new_id,
            "exit_code": self.exit_code,
            "regressions": self.regressions,
            "thresholds": asdict(self.thresholds),
            "metric": self.metric,
            "normalized": self.normalized,
            "matched_cells": self.matched_cells,
            "warnings": self.warnings,
            "notes": self.notes,
            "configs": {
                k: {**asdict(v), "time": asdict(v.time) if v.time else None}
                for k, v in self.configs.items()
            },
            "counter_changes": [asdict(c) for c in self.counter_changes],
            "status_changes": [asdict(c) for c in self.status_changes],
        }


# ------------------------------------------------------------------- reading runs


def resolve_run(text: str, results_dir: Path) -> Path:
    """A run directory given as a path or as a run id under ``results_dir``."""
    from harness.results import ResultsError, find_run_dir

    try:
        return find_run_dir(text, results_dir)
    except ResultsError as err:
        raise Incomparable(str(err)) from None


def resolve_runs(text: str, results_dir: Path) -> list[Path]:
    """One side of a comparison: a run, or several separated by commas."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise Incomparable(f"run {text!r}: no run named")
    return [resolve_run(p, results_dir) for p in parts]


def read_run(run_dir: Path) -> tuple[dict, pd.DataFrame]:
    """(meta, rows) of a stored run; Incomparable with the reason if unreadable."""
    from harness.analysis import read_run as read_stored_run
    from harness.results import ResultsError

    try:
        return read_stored_run(run_dir)
    except ResultsError as err:  # already one line naming the file
        raise Incomparable(str(err)) from None


def compare_runs(
    base: Path | list[Path],
    new: Path | list[Path],
    thresholds: Thresholds = Thresholds(),
) -> Comparison:
    """Compare two run directories, or two lists of runs of the same code (each
    side's runs pooled; time bootstrapped over runs); raises Incomparable with a
    one-line reason."""
    import pandas as pd

    sides = []
    for runs in (base, new):
        runs = [runs] if isinstance(runs, str | Path) else list(runs)
        metas, frames = [], []
        for i, run in enumerate(runs):
            meta, rows = read_run(run)
            rows = rows.copy()
            rows["_run"] = i
            metas.append(meta)
            frames.append(rows)
        sides.append((metas, pd.concat(frames, ignore_index=True)))
    (base_metas, base_rows), (new_metas, new_rows) = sides
    comp = compare_frames(
        base_metas[0],
        base_rows,
        new_metas[0],
        new_rows,
        thresholds,
        base_metas=base_metas,
        new_metas=new_metas,
    )
    return comp


def compare(base: Run, new: Run, thresholds: Thresholds = Thresholds()) -> Comparison:
    """The comparer: ``new`` against ``base``, two runs loaded by
    :func:`harness.analysis.load_run` (``harness compare`` and ``harness report``
    both come here). Raises Incomparable with a one-line reason."""
    return compare_frames(base.meta, base.stored, new.meta, new.stored, thresholds)


# -------------------------------------------------------------------- comparing


def compare_frames(
    base_meta: dict,
    base_rows: pd.DataFrame,
    new_meta: dict,
    new_rows: pd.DataFrame,
    thresholds: Thresholds = Thresholds(),
    *,
    base_metas: list[dict] | None = None,
    new_metas: list[dict] | None = None,
) -> Comparison:
    """Compare two runs already read (``_run`` in the rows numbers several runs
    of one side; their metas in ``base_metas`` / ``new_metas``); raises
    Incomparable with a one-line reason."""
    base_metas = base_metas or [base_meta]
    new_metas = new_metas or [new_meta]
    comp = Comparison(
        base_id=",".join(str(m.get("run_id", "base")) for m in base_metas),
        new_id=",".join(str(m.get("run_id", "new")) for m in new_metas),
        thresholds=thresholds,
    )
    for meta in base_metas + new_metas:
        _check_schema(meta, meta)
    _schema_notes(base_metas + new_metas, comp)
    for rows, which in ((base_rows, "base"), (new_rows, "new")):
        missing = [
            c
            for c in CELL_KEY + ["measure", "status", "repeat"]
            if c not in rows.columns
        ]
        if missing:
            raise Incomparable(
                f"{which} run rows.csv lacks column(s) {', '.join(missing)}"
            )
    common_datasets = _check_datasets(base_meta, new_meta, base_rows, new_rows, comp)
    _environment_warnings(base_meta, new_meta, comp)
    _host_warnings(base_metas, new_metas, comp)
    _load_warnings(base_metas, new_metas, comp)
    for metas in (base_metas, new_metas):
        for other in metas[1:]:
            _environment_warnings(metas[0], other, comp)

    base_cells = _cells(base_rows[base_rows.dataset.isin(common_datasets)])
    new_cells = _cells(new_rows[new_rows.dataset.isin(common_datasets)])
    base_configs, new_configs = set(base_cells.config), set(new_cells.config)
    common_configs = base_configs & new_configs
    if not common_configs:
        raise Incomparable(
            "no solver config in common: base has "
            f"{_names(base_configs)}; new has {_names(new_configs)}"
        )
    for label, only in (
        ("base", base_configs - new_configs),
        ("new", new_configs - base_configs),
    ):
        if only:
            comp.notes.append(f"only in {label} (not compared): {_names(only)}")

    merged = base_cells.merge(
        new_cells, on=CELL_KEY, how="outer", suffixes=("_b", "_n"), indicator=True
    )
    merged = merged[
        merged.config_b.isin(common_configs) | merged.config_n.isin(common_configs)
    ]
    merged["config"] = merged.config_b.fillna(merged.config_n)
    both = merged[merged._merge == "both"]
    if both.empty:
        raise Incomparable("no (solver, heuristic, dataset, instance) cell in common")
    comp.matched_cells = len(both)
    _missing_cells(merged, base_meta, new_meta, comp)
    for config in sorted(common_configs):  # report order: by config label
        comp.configs[config] = ConfigSummary(config)
    _source_changes(base_meta, new_meta, common_configs, comp)
    for config, group in both.groupby("config", sort=True):
        summary = comp.configs[config]
        summary.cells = len(group)
        _compare_cells(group, comp, summary)
    for which, cells in (("base", base_cells), ("new", new_cells)):
        varying = cells[cells.counters_vary & cells.config.isin(common_configs)]
        if len(varying):
            comp.warnings.append(
                f"{which} run: counters differ between repeats in {len(varying)} "
                f"cell(s) (nondeterministic solver?), e.g. {varying.config.iloc[0]} "
                f"on {varying.instance.iloc[0]}"
            )
    if thresholds.check_time:
        _compare_times(base_rows, new_rows, both, comp)
    return comp


def _check_schema(base_meta: dict, new_meta: dict) -> None:
    versions = [m.get("schema_version") for m in (base_meta, new_meta)]
    for which, v in zip(("base", "new"), versions, strict=True):
        if v not in SUPPORTED_SCHEMAS:
            raise Incomparable(
                f"{which} run has schema version {v!r}; this harness reads "
                f"{', '.join(map(str, SUPPORTED_SCHEMAS))}"
            )


def _schema_notes(metas: list[dict], comp: Comparison) -> None:
    """What an older run lacks, once per run id."""
    from harness.results import schema_gaps

    for meta in metas:
        gaps = schema_gaps(meta)
        if gaps:
            comp.notes.append(f"run {meta.get('run_id', '?')}: " + "; ".join(gaps))


def _check_datasets(
    base_meta: dict,
    new_meta: dict,
    base_rows: pd.DataFrame,
    new_rows: pd.DataFrame,
    comp: Comparison,
) -> list[str]:
    """Names of the datasets both runs used with identical boards."""
    b = _dataset_hashes(base_meta, base_rows)
    n = _dataset_hashes(new_meta, new_rows)
    common = sorted(set(b) & set(n))
    if not common:
        raise Incomparable(
            f"no dataset in common: base used {_names(b)}; new used {_names(n)}"
        )
    for name in common:
        if b[name] and n[name] and b[name] != n[name]:
            raise Incomparable(
                f"dataset {name!r} has different boards: sha256 {b[name][:12]} "
                f"(base) vs {n[name][:12]} (new)"
            )
        if not (b[name] and n[name]):
            comp.warnings.append(
                f"dataset {name!r}: no checksum in meta.json; assuming the same boards"
            )
    for label, only in (("base", set(b) - set(n)), ("new", set(n) - set(b))):
        if only:
            comp.notes.append(
                f"dataset(s) only in {label} (not compared): {_names(only)}"
            )
    return common


def _dataset_hashes(meta: dict, rows: pd.DataFrame) -> dict[str, str]:
    info = meta.get("datasets") or {}
    names = set(info) | set(rows["dataset"].dropna().unique())
    return {name: str((info.get(name) or {}).get("sha256") or "") for name in names}


def _host_warnings(base_metas: list[dict], new_metas: list[dict], comp) -> None:
    """Where the cells ran (meta.json placement; a Dask run's hosts): cells per
    host and a run measured on several CPU models (notes), cells measured on other
    models (a warning) or other hosts of one model (a note) in the two runs, and
    batches whose cells were lost with their Dask worker (a warning)."""
    from harness.results import placement

    for which, metas in (("base", base_metas), ("new", new_metas)):
        for meta in metas:
            label = f"{which} run {meta.get('run_id', '')}"
            # (each cell is compared with itself: only a cell measured on another
            # model in the other run is a warning, below)
            comp.notes += [
                n.rstrip(".") for n in placement.mixed_models_warning(meta, label)
            ]
            comp.notes += [n.rstrip(".") for n in placement.hosts_sentence(meta, label)]
            comp.warnings += [
                f"{label}: {s.rstrip('.')}"
                for s in placement.lost_batch_sentences(meta)
                if "recorded as errors" in s
            ]
    for base in base_metas:
        for new in new_metas:
            warnings, notes = placement.model_differences(base, new)
            comp.warnings += warnings
            comp.notes += notes


def _placed(meta: dict) -> bool:
    from harness.results.placement import cell_hosts

    return bool(cell_hosts(meta))


def _environment_warnings(base_meta: dict, new_meta: dict, comp: Comparison) -> None:
    for key, what in (
        ("python", "Python version"),
        ("cpu_model", "CPU model"),
        ("platform", "platform"),
        ("cpu_count", "CPU count"),
    ):
        if key == "cpu_model" and _placed(base_meta) and _placed(new_meta):
            continue  # the hosts that measured, not the client: _host_warnings
        b, n = base_meta.get(key), new_meta.get(key)
        if b is not None and n is not None and b != n:
            comp.warnings.append(
                f"{what} differs: {_short(b)} vs {_short(n)}; time ratios mix "
                "code and machine changes"
            )
    bp, np_ = base_meta.get("packages") or {}, new_meta.get("packages") or {}
    for name in sorted(set(bp) & set(np_)):
        if name == "npuzzle-harness":
            continue  # the code under comparison
        if bp[name] and np_[name] and bp[name] != np_[name]:
            comp.warnings.append(
                f"package {name} differs: {bp[name]} vs {np_[name]}; time ratios "
                "mix code and environment changes"
            )
    b_opt, n_opt = base_meta.get("options") or {}, new_meta.get("options") or {}
    for key in sorted(set(b_opt) | set(n_opt)):
        if key in (
            "repeats",
            "timeout",
            "memory_limit_mb",
            "warmup",
            "jobs",
        ) and b_opt.get(key) != n_opt.get(key):
            comp.notes.append(
                f"option {key} differs: {b_opt.get(key)} vs {n_opt.get(key)}"
            )
    for which, meta in (("base", base_meta), ("new", new_meta)):
        if meta.get("complete") is False:
            comp.warnings.append(f"{which} run {meta.get('run_id', '')} is incomplete")


def _load_warnings(base_metas: list[dict], new_metas: list[dict], comp) -> None:
    """A load above half the cores at the start or end of a run: other processes
    competed for the cores, and the times are noisier than the floor assumes."""
    for which, metas in (("base", base_metas), ("new", new_metas)):
        for meta in metas:
            cores = meta.get("cpu_count") or 0
            loads = [
                (when, (meta.get(f"load_average_{when}") or [None])[0])
                for when in ("start", "end")
            ]
            high = [
                (w, x) for w, x in loads if x is not None and cores and x > cores / 2
            ]
            if high:
                seen = ", ".join(f"{x:.1f} at the {w}" for w, x in high)
                comp.warnings.append(
                    f"{which} run {meta.get('run_id', '')}: load average {seen} on "
                    f"{cores} cores (above half): other work competed for the CPU"
                )


def _missing_cells(
    merged: pd.DataFrame, base_meta: dict, new_meta: dict, comp: Comparison
) -> None:
    """Cells of a compared config that only one run has."""
    for side, which, meta in (
        ("left_only", "new", new_meta),
        ("right_only", "base", base_meta),
    ):
        lost = merged[merged._merge == side]
        if len(lost):
            why = " (that run is incomplete)" if meta.get("complete") is False else ""
            first = lost.iloc[0]
            comp.warnings.append(
                f"{len(lost)} cell(s) missing from the {which} run{why}, e.g. "
                f"{first.config} on {first.dataset}/{first.instance}"
            )


def _source_changes(
    base_meta: dict, new_meta: dict, configs: Iterable[str], comp: Comparison
) -> None:
    b, n = base_meta.get("solvers") or {}, new_meta.get("solvers") or {}
    for config in sorted(configs):
        hb = (b.get(config) or {}).get("source_sha256")
        hn = (n.get(config) or {}).get("source_sha256")
        if hb and hn:
            comp.configs.setdefault(config, ConfigSummary(config)).source_changed = (
                hb != hn
            )


def _cells(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: its worst status, its counters, whether repeats disagree.

    Timed rows are preferred; a cell with only a memory row still has a status.
    """
    import pandas as pd

    rows = rows.copy()
    rows["_timed"] = rows.measure == "time"
    rows["_sev"] = rows.status.map(STATUS_SEVERITY).fillna(3)
    out = []
    for key, g in rows.groupby(CELL_KEY, sort=False):
        timed = g[g._timed] if g._timed.any() else g
        worst = timed.loc[timed._sev.idxmax()]
        good = timed[timed.status.isin(GOOD_STATUSES)]
        counted = good if len(good) else timed
        first = counted.iloc[0]
        vary = bool(len(good) > 1 and (good[COUNTERS].nunique(dropna=False) > 1).any())
        out.append(
            {
                **dict(zip(CELL_KEY, key, strict=True)),
                "config": first.config,
                "status": worst.status,
                "counters_vary": vary,
                **{c: first[c] for c in COUNTERS},
                "extra": first.extra,
            }
        )
    return pd.DataFrame(
        out,
        columns=CELL_KEY + ["config", "status", "counters_vary"] + COUNTERS + ["extra"],
    )


def _compare_cells(
    group: pd.DataFrame, comp: Comparison, summary: ConfigSummary
) -> None:
    for cell in group.itertuples(index=False):
        where = (cell.config, cell.dataset, cell.instance)
        sb, sn = cell.status_b, cell.status_n
        if sb != sn:
            worse = STATUS_SEVERITY.get(sn, 3) > STATUS_SEVERITY.get(sb, 3)
            comp.status_changes.append(StatusChange(*where, sb, sn, worse))
            summary.status_changes += 1
            summary.status_regressions += worse
            continue  # counters of different outcomes are not comparable
        if sb not in GOOD_STATUSES:
            continue
        for counter in COUNTERS:
            b, n = (
                _num(getattr(cell, f"{counter}_b")),
                _num(getattr(cell, f"{counter}_n")),
            )
            if b == n:
                continue
            worse = (
                counter in WORSE_WHEN_HIGHER
                and b is not None
                and n is not None
                and n > b
            )
            comp.counter_changes.append(CounterChange(*where, counter, b, n, worse))
            summary.counter_changes += 1
            summary.counter_regressions += worse
        # per-algorithm extras (e.g. stale heap pops): reported, never a regression
        xb, xn = _extras(cell.extra_b), _extras(cell.extra_n)
        for name in sorted(set(xb) | set(xn)):
            if xb.get(name) != xn.get(name):
                comp.counter_changes.append(
                    CounterChange(
                        *where, f"extra.{name}", xb.get(name), xn.get(name), False
                    )
                )
                summary.counter_changes += 1


def _extras(text: object) -> dict[str, float]:
    """The ``extra`` column's JSON object of counters ({} when empty or malformed)."""
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


# ------------------------------------------------------------------------- time


def _compare_times(
    base_rows: pd.DataFrame,
    new_rows: pd.DataFrame,
    both: pd.DataFrame,
    comp: Comparison,
) -> None:
    """Fill each config's TimeVerdict from the cells solved alike in both runs
    (and the same per dataset part in ``comp.parts``)."""
    import numpy as np

    from harness.compare import noise

    th = comp.thresholds
    same_good = both[
        (both.status_b == both.status_n) & both.status_b.isin(GOOD_STATUSES)
    ]
    keys = same_good[CELL_KEY]
    b_t = base_rows[base_rows.measure == "time"].merge(keys, on=CELL_KEY)
    n_t = new_rows[new_rows.measure == "time"].merge(keys, on=CELL_KEY)
    metric = (
        "cpu_seconds"
        if _has_all(b_t, "cpu_seconds") and _has_all(n_t, "cpu_seconds")
        else "seconds"
    )
    comp.metric = metric
    if metric == "seconds":
        comp.notes.append("timing on wall time: cpu_seconds missing in a run")
    normalized = bool(
        th.normalize
        and metric == "cpu_seconds"
        and _has_all(b_t, "ref_cpu_seconds")
        and _has_all(n_t, "ref_cpu_seconds")
    )
    comp.normalized = normalized
    if not normalized and th.normalize:
        comp.notes.append(
            "times are raw (a run has no reference solve beside its cells): "
            "ratios carry the machine's drift between runs, so the threshold is "
            f"{th.threshold(False):.2f}x"
        )

    def per_run(rows: pd.DataFrame, norm: bool) -> list[dict[tuple, np.ndarray]]:
        if "_run" not in rows.columns:
            rows = rows.assign(_run=0)
        return [
            noise.cell_values(g, metric, norm, CELL_KEY)
            for _, g in rows.groupby("_run", sort=True)
        ]

    b_runs, n_runs = per_run(b_t, normalized), per_run(n_t, normalized)
    b_raw, n_raw = (
        (per_run(b_t, False), per_run(n_t, False)) if normalized else (b_runs, n_runs)
    )

    def estimate(cells: pd.DataFrame, rng) -> tuple:
        """(Estimate, dropped, raw ratio, run spread) over ``cells``' instances."""
        timed, dropped = [], 0
        for k in sorted(map(tuple, cells[CELL_KEY].itertuples(index=False))):
            if not all(k in r for r in b_runs + n_runs):
                continue
            raw_b = np.median(np.concatenate([r[k] for r in b_raw]))
            raw_n = np.median(np.concatenate([r[k] for r in n_raw]))
            if max(raw_b, raw_n) < th.time_threshold:
                dropped += 1
                continue
            timed.append(k)
        est = noise.estimate(
            b_runs,
            n_runs,
            timed,
            confidence=th.confidence,
            resamples=th.resamples,
            rng=rng,
        )
        raw = (
            noise.estimate(b_raw, n_raw, timed, resamples=1, rng=rng).ratio
            if normalized
            else est.ratio
        )
        spread = [noise.run_spread(side, timed) for side in (b_runs, n_runs)]
        return est, dropped, raw, max((x for x in spread if x), default=None)

    rng = np.random.default_rng(th.seed)
    per_config = {
        config: estimate(cells, rng)
        for config, cells in same_good.groupby("config", sort=True)
    }
    ref_ratio = None
    if th.reference:
        ref = per_config.get(th.reference)
        if ref is None or ref[0].ratio is None:
            comp.warnings.append(
                f"reference config {th.reference!r} has no timed cells in common; "
                "ratios are not normalised"
            )
        else:
            ref_ratio = ref[0].ratio
            comp.notes.append(
                f"time ratios divided by reference {th.reference}'s {ref_ratio:.3f}"
            )
    if th.calibration is not None:
        comp.notes.append(th.calibration.describe())

    def verdict_of(config: str, found: tuple) -> TimeVerdict:
        est, dropped, raw, spread = found
        ratio, low, high = est.ratio, est.low, est.high
        if ref_ratio and config != th.reference and ratio is not None:
            ratio, low, high = ratio / ref_ratio, low / ref_ratio, high / ref_ratio
        verdict = _verdict(
            config,
            metric,
            est.instances,
            dropped,
            ratio,
            low,
            high,
            est.has_noise_estimate,
            th,
            normalized,
        )
        verdict = replace(verdict, raw_ratio=raw, runs=est.runs, run_spread=spread)
        if ref_ratio and config == th.reference:
            # the yardstick measures the machine, not the code: never a regression
            verdict = replace(
                verdict,
                regression=False,
                improvement=False,
                verdict=f"reference (machine drift {ratio:.2f}x)",
            )
        return verdict

    for config, found in per_config.items():
        comp.configs[config].time = verdict_of(config, found)

    # The same verdict per dataset part, from its own random stream (the configs'
    # verdicts above do not depend on it).
    first = b_t.groupby(CELL_KEY)["solvable"].first()
    unsolvable = {k for k, v in first.items() if str(v) == "False"}  # NA: solvable
    kinds = same_good.assign(
        boards=[
            "unsolvable" if k in unsolvable else "solvable"
            for k in map(tuple, same_good[CELL_KEY].itertuples(index=False))
        ]
    )
    rng = np.random.default_rng(th.seed)
    for (config, dataset, boards), cells in kinds.groupby(
        ["config", "dataset", "boards"], sort=True
    ):
        comp.parts[(config, dataset, boards)] = verdict_of(
            config, estimate(cells, rng)
        )


def _verdict(
    config: str,
    metric: str,
    instances: int,
    dropped: int,
    ratio: float | None,
    low: float | None,
    high: float | None,
    noisy: bool,
    th: Thresholds,
    normalized: bool = False,
) -> TimeVerdict:
    threshold = th.threshold(normalized)
    significant = slow = fast = False
    if ratio is None:
        why = (
            f"all {dropped} instance(s) under {th.time_threshold:g} s"
            if dropped
            else "no instance timed in both runs"
        )
        instances, low, high, noisy = 0, None, None, False
        text = f"not timed ({why})"
    else:
        if 1 / 1.005 < ratio < 1.005:
            size = "same speed"
        else:
            size = f"{ratio:.2f}x slower" if ratio >= 1 else f"{1 / ratio:.2f}x faster"
        if instances < th.min_instances:
            # a handful of instances cannot tell a change from the run's drift
            text = (f"too few instances ({instances} timed, need "
                    f"{th.min_instances}; {size})")  # fmt: skip
        elif not noisy:  # cannot happen with >= min_instances; for min_instances=1
            slow, fast = ratio >= threshold, ratio <= 1 / threshold
            text = f"{size}, no noise estimate (1 instance, 1 repeat)"
        else:
            significant = low > 1 or high < 1
            slow = significant and ratio >= threshold
            fast = significant and ratio <= 1 / threshold
            if slow or fast:
                text = f"{size}, significant"
            elif significant:
                text = f"{size}, significant but under the {threshold:.2f}x threshold"
            else:
                text = f"within noise ({size})"
    return TimeVerdict(
        config, metric, instances=instances, dropped_fast=dropped, ratio=ratio,
        low=low, high=high, has_noise_estimate=noisy, significant=significant,
        regression=slow, improvement=fast, verdict=text, normalized=normalized,
        threshold=threshold,
    )  # fmt: skip


# ------------------------------------------------------------------- rendering


def render(comp: Comparison, fmt: str = "table", max_changes: int = 20) -> str:
    """The comparison as ``table`` (plain text), ``markdown`` or ``json``."""
    if fmt == "json":
        return json.dumps(comp.to_dict(), indent=2, default=_json_default)
    md = fmt == "markdown"
    out: list[str] = []
    title = f"compare {comp.base_id} (base) -> {comp.new_id} (new)"
    out.append(f"## {title}" if md else title)
    out.append("")
    for w in comp.warnings:
        out.append(f"- **warning:** {w}" if md else f"warning: {w}")
    for n in comp.notes:
        out.append(f"- note: {n}" if md else f"note: {n}")
    ci = f"{100 * comp.thresholds.confidence:g}% CI"
    metric = comp.metric or "not compared"
    if comp.metric and comp.normalized:
        metric += " / reference solve timed beside each repeat (normalized)"
    elif comp.metric:
        metric += " (raw)"
    th = comp.thresholds
    runs = f"{comp.base_id.count(',') + 1} vs {comp.new_id.count(',') + 1} runs"
    out.append(
        f"{'- ' if md else ''}matched {comp.matched_cells} cells ({runs}); time "
        f"metric: {metric}; median of repeats, geomean over the 'timed' instances "
        f"(over {th.time_threshold:g} s); regression: significant, over at least "
        f"{th.min_instances} instances, and >= {th.threshold(comp.normalized):.2f}x"
    )
    out.append("")
    header = [
        "config",
        "cells",
        "counters",
        "status",
        "timed",
        "new/base",
        ci,
        "raw cpu",
        "verdict",
    ]
    body = []
    for s in comp.configs.values():
        t = s.time
        counters = (
            "="
            if not s.counter_changes
            else (
                f"{s.counter_changes} changed"
                + (f", {s.counter_regressions} worse" if s.counter_regressions else "")
            )
        )
        status = (
            "="
            if not s.status_changes
            else (
                f"{s.status_changes} changed"
                + (f", {s.status_regressions} worse" if s.status_regressions else "")
            )
        )
        ratio = f"{t.ratio:.3f}" if t and t.ratio is not None else "-"
        timed = str(t.instances) if t else "-"
        interval = f"{t.low:.3f}-{t.high:.3f}" if t and t.has_noise_estimate else "-"
        raw = f"{t.raw_ratio:.3f}" if t and t.raw_ratio is not None else "-"
        verdict = t.verdict if t else "time not compared"
        if t and t.regression:
            verdict = f"REGRESSION: {verdict}"
        if s.source_changed:
            verdict += " [source changed]"
        body.append(
            [
                s.config,
                str(s.cells),
                counters,
                status,
                timed,
                ratio,
                interval,
                raw,
                verdict,
            ]
        )
    out += _table(header, body, md)
    for title, items, fmt_item in (
        (
            "counter changes (exact)",
            comp.counter_changes,
            lambda c: (
                f"{c.config}  {c.dataset}/{c.instance}  {c.text}"
                + ("  [regression]" if c.regression else "")
            ),
        ),
        (
            "status changes",
            comp.status_changes,
            lambda c: (
                f"{c.config}  {c.dataset}/{c.instance}  {c.base} -> {c.new}"
                + ("  [regression]" if c.regression else "")
            ),
        ),
    ):
        if not items:
            continue
        out += ["", f"### {title}" if md else f"{title}:"]
        for item in items[:max_changes]:
            out.append(f"- {fmt_item(item)}" if md else f"  {fmt_item(item)}")
        if len(items) > max_changes:
            more = f"... and {len(items) - max_changes} more (--format json lists all)"
            out.append(f"- {more}" if md else f"  {more}")
    out.append("")
    regressions = comp.regressions
    if regressions:
        out.append(
            f"{'**' if md else ''}result: {len(regressions)} regression(s)"
            f"{'**' if md else ''} (exit 1)"
        )
        out += [f"- {r}" if md else f"  {r}" for r in regressions]
    else:
        out.append("result: no regression (exit 0)")
    return "\n".join(out)


def _table(header: list[str], body: list[list[str]], md: bool) -> list[str]:
    if md:
        esc = [[c.replace("|", "\\|") for c in row] for row in [header, *body]]
        lines = [
            "| " + " | ".join(esc[0]) + " |",
            "|" + "|".join("---" for _ in header) + "|",
        ]
        return lines + ["| " + " | ".join(r) + " |" for r in esc[1:]]
    from harness.core.tables import table_text  # the harness's one table style

    return table_text(header, body).splitlines()


# ---------------------------------------------------------------------- helpers


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v


def _fmt_int(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"


def _has_all(rows: pd.DataFrame, col: str) -> bool:
    return col in rows.columns and len(rows) > 0 and bool(rows[col].notna().all())


def _names(items: Iterable[str]) -> str:
    items = sorted(items)
    shown = ", ".join(items[:6]) + (
        f" (+{len(items) - 6} more)" if len(items) > 6 else ""
    )
    return shown or "nothing"


def _short(value: Any) -> str:
    text = str(value)
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
