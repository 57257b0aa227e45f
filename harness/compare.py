"""Compare two stored runs: exact counter changes, status changes, noise-aware time.

Cells are matched on (solver, heuristic, dataset, instance). Counters of a
deterministic solver are compared exactly: any difference is a *change*; more
nodes expanded or generated, a longer path, or a worse status is a *regression*.
Time is compared per solver config as the geometric mean over instances of
``median(new repeats) / median(base repeats)``, on CPU time when both runs have it;
its noise is a two-level bootstrap (instances, then repeats within each instance).
A slowdown is a regression only when it is significant (the confidence interval
excludes 1) *and* at least ``min_ratio``: on shared machines an unchanged rerun
can drift as a whole, which no within-run statistic can see.

Exit codes: 0 nothing regressed, 1 a regression, 2 the runs cannot be compared.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.results import ANSWERED, SEVERITY

if TYPE_CHECKING:  # pandas is imported lazily: this module is reached from the CLI
    import pandas as pd

    from harness.analysis import Run

EXIT_OK, EXIT_REGRESSION, EXIT_INCOMPARABLE = 0, 1, 2
SUPPORTED_SCHEMAS = (1, 2)
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

    #: A config's time ratio must reach this (and be significant) to be a regression.
    min_ratio: float = 1.25
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
    #: workload that absorbs a machine-wide drift between the two runs.
    reference: str | None = None


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
    metric: str  # "cpu_seconds" or "seconds"
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
    candidates = list(dict.fromkeys((Path(text), results_dir / text)))
    for candidate in candidates:
        if (candidate / "meta.json").is_file():
            return candidate
    looked = " or ".join(str(c) for c in candidates)
    raise Incomparable(f"run {text!r}: no meta.json in {looked}")


def read_run(run_dir: Path) -> tuple[dict, pd.DataFrame]:
    """(meta, rows) of a stored run; Incomparable with the reason if unreadable."""
    from harness.analysis import read_run as read_stored_run
    from harness.results import ResultsError

    try:
        return read_stored_run(run_dir)
    except ResultsError as err:  # already one line naming the file
        raise Incomparable(str(err)) from None


def compare_runs(
    base: Path, new: Path, thresholds: Thresholds = Thresholds()
) -> Comparison:
    """Compare two run directories; raises Incomparable with a one-line reason."""
    base_meta, base_rows = read_run(base)
    new_meta, new_rows = read_run(new)
    return compare_frames(base_meta, base_rows, new_meta, new_rows, thresholds)


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
) -> Comparison:
    """Compare two runs already read; raises Incomparable with a one-line reason."""
    comp = Comparison(
        base_id=str(base_meta.get("run_id", "base")),
        new_id=str(new_meta.get("run_id", "new")),
        thresholds=thresholds,
    )
    _check_schema(base_meta, new_meta)
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
    if versions[0] != versions[1]:
        raise Incomparable(f"schema versions differ: {versions[0]} vs {versions[1]}")


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


def _environment_warnings(base_meta: dict, new_meta: dict, comp: Comparison) -> None:
    for key, what in (
        ("python", "Python version"),
        ("cpu_model", "CPU model"),
        ("platform", "platform"),
        ("cpu_count", "CPU count"),
    ):
        b, n = base_meta.get(key), new_meta.get(key)
        if b is not None and n is not None and b != n:
            comp.warnings.append(
                f"{what} differs: {_short(b)} vs {_short(n)}; time ratios mix "
                "code and machine changes"
            )
    b_opt, n_opt = base_meta.get("options") or {}, new_meta.get("options") or {}
    for key in sorted(set(b_opt) | set(n_opt)):
        if key in ("repeats", "timeout", "memory_limit_mb") and b_opt.get(
            key
        ) != n_opt.get(key):
            comp.notes.append(
                f"option {key} differs: {b_opt.get(key)} vs {n_opt.get(key)}"
            )
    for which, meta in (("base", base_meta), ("new", new_meta)):
        if meta.get("complete") is False:
            comp.warnings.append(f"{which} run {meta.get('run_id', '')} is incomplete")


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
    """Fill each config's TimeVerdict from the cells solved alike in both runs."""
    import numpy as np

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
    rng = np.random.default_rng(th.seed)
    b_by_cell = {
        k: g[metric].dropna().to_numpy(float) for k, g in b_t.groupby(CELL_KEY)
    }
    n_by_cell = {
        k: g[metric].dropna().to_numpy(float) for k, g in n_t.groupby(CELL_KEY)
    }
    def samples_of(cells: pd.DataFrame) -> tuple[list, int]:
        samples = []
        dropped = 0
        for k in sorted(map(tuple, cells[CELL_KEY].itertuples(index=False))):
            b, n = b_by_cell.get(k, ()), n_by_cell.get(k, ())
            if not len(b) or not len(n):
                continue
            if max(np.median(b), np.median(n)) < th.time_threshold:
                dropped += 1
                continue
            # a zero reading (coarse clock) would make the log ratio infinite
            samples.append((np.maximum(b, 1e-9), np.maximum(n, 1e-9)))
        return samples, dropped

    per_config: dict[str, tuple] = {}
    for config, cells in same_good.groupby("config", sort=True):
        samples, dropped = samples_of(cells)
        per_config[config] = (samples, dropped, _bootstrap(samples, th, rng))

    ref_ratio = None
    if th.reference:
        ref = per_config.get(th.reference)
        if ref is None or ref[2][0] is None:
            comp.warnings.append(
                f"reference config {th.reference!r} has no timed cells in common; "
                "ratios are not normalised"
            )
        else:
            ref_ratio = ref[2][0]
            comp.notes.append(
                f"time ratios divided by reference {th.reference}'s {ref_ratio:.3f}"
            )
    for config, (samples, dropped, (ratio, low, high, noisy)) in per_config.items():
        if ref_ratio and config != th.reference and ratio is not None:
            ratio, low, high = ratio / ref_ratio, low / ref_ratio, high / ref_ratio
        verdict = _verdict(
            config, metric, len(samples), dropped, ratio, low, high, noisy, th
        )
        if ref_ratio and config == th.reference:
            # the yardstick measures the machine, not the code: never a regression
            verdict = replace(
                verdict,
                regression=False,
                improvement=False,
                verdict=f"reference (machine drift {ratio:.2f}x)",
            )
        comp.configs[config].time = verdict

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
        samples, dropped = samples_of(cells)
        ratio, low, high, noisy = _bootstrap(samples, th, rng)
        if ref_ratio and config != th.reference and ratio is not None:
            ratio, low, high = ratio / ref_ratio, low / ref_ratio, high / ref_ratio
        comp.parts[(config, dataset, boards)] = _verdict(
            config, metric, len(samples), dropped, ratio, low, high, noisy, th
        )


def _bootstrap(samples: list, th: Thresholds, rng) -> tuple:
    """(geomean ratio, low, high, has_noise_estimate) over per-instance samples.

    Two levels: resample instances with replacement, then within each instance
    resample its base and new repeats, so both the spread between instances and
    the jitter of repeats widen the interval.
    """
    import numpy as np

    if not samples:
        return None, None, None, False
    logs = np.array([math.log(np.median(n) / np.median(b)) for b, n in samples])
    ratio = math.exp(logs.mean())
    n_inst, reps = len(samples), th.resamples
    has_spread = n_inst > 1 or any(len(b) > 1 or len(n) > 1 for b, n in samples)
    if not has_spread:
        return ratio, ratio, ratio, False
    boot = np.empty((reps, n_inst))
    for i, (b, n) in enumerate(samples):
        bm = np.median(b[rng.integers(0, len(b), (reps, len(b)))], axis=1)
        nm = np.median(n[rng.integers(0, len(n), (reps, len(n)))], axis=1)
        boot[:, i] = np.log(nm / bm)
    pick = rng.integers(0, n_inst, (reps, n_inst))
    means = np.take_along_axis(boot, pick, axis=1).mean(axis=1)
    alpha = (1 - th.confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return ratio, math.exp(low), math.exp(high), True


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
) -> TimeVerdict:
    if ratio is None:
        why = (
            f"all {dropped} instance(s) under {th.time_threshold:g} s"
            if dropped
            else "no instance timed in both runs"
        )
        return TimeVerdict(
            config,
            metric,
            0,
            dropped,
            None,
            None,
            None,
            False,
            False,
            False,
            False,
            f"not timed ({why})",
        )
    if 1 / 1.005 < ratio < 1.005:
        size = "same speed"
    else:
        size = f"{ratio:.2f}x slower" if ratio >= 1 else f"{1 / ratio:.2f}x faster"
    if not noisy:
        # one instance, one repeat: nothing to estimate noise from; the
        # threshold alone decides, and the verdict says so
        slow, fast = ratio >= th.min_ratio, ratio <= 1 / th.min_ratio
        tag = "no noise estimate (1 instance, 1 repeat)"
        return TimeVerdict(
            config,
            metric,
            instances,
            dropped,
            ratio,
            low,
            high,
            False,
            False,
            slow,
            fast,
            f"{size}, {tag}",
        )
    significant = low > 1 or high < 1
    slow = significant and ratio >= th.min_ratio
    fast = significant and ratio <= 1 / th.min_ratio
    if slow or fast:
        text = f"{size}, significant"
    elif significant:
        text = f"{size}, significant but under the {th.min_ratio:g}x threshold"
    else:
        text = f"within noise ({size})"
    return TimeVerdict(
        config,
        metric,
        instances,
        dropped,
        ratio,
        low,
        high,
        True,
        significant,
        slow,
        fast,
        text,
    )


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
    out.append(
        f"{'- ' if md else ''}matched {comp.matched_cells} cells; time metric: "
        f"{metric} (median of repeats, geomean over the 'timed' instances: those "
        f"over {comp.thresholds.time_threshold:g} s); regression: significant and "
        f">= {comp.thresholds.min_ratio:g}x"
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
        verdict = t.verdict if t else "time not compared"
        if t and t.regression:
            verdict = f"REGRESSION: {verdict}"
        if s.source_changed:
            verdict += " [source changed]"
        body.append(
            [s.config, str(s.cells), counters, status, timed, ratio, interval, verdict]
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
    from harness.tables import table_text  # the harness's one table style

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
