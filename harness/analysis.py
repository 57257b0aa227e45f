"""Analysis of stored runs: the typed loader over ``results/<run_id>/``, the status
vocabulary, per-instance and per-cell summary tables and the run-to-run table.

Reads ``meta.json`` + ``rows.csv`` (see ``results/README.md``) and nothing else: it
never imports a solver or the runner.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.results import (
    MEASURES,
    STATUSES,
    ResultsError,
    read_meta,
    read_row_dicts,
)

ANSWERED = ("solved", "unsolvable")
PROBLEMS = ("invalid", "error", "memout", "timeout")
#: Worst first wins when an instance's repeats disagree.
SEVERITY = {
    s: i
    for i, s in enumerate(
        ("solved", "unsolvable", "skipped", "timeout", "memout", "error", "invalid")
    )
}
REQUIRED_COLUMNS = (
    "run_id", "dataset", "instance", "size", "goal", "solvable", "optimal_length",
    "solver", "heuristic", "config", "measure", "repeat", "status", "message",
    "moves", "path_length", "is_optimal", "expanded", "generated", "max_frontier",
    "iterations", "seconds", "cpu_seconds", "peak_bytes", "peak_rss_bytes", "h_start",
)  # fmt: skip
_NUMERIC = (
    "optimal_length", "repeat", "path_length", "expanded", "generated",
    "max_frontier", "iterations", "seconds", "cpu_seconds", "peak_bytes",
    "peak_rss_bytes", "h_start",
)  # fmt: skip
_TEXT = tuple(
    c for c in REQUIRED_COLUMNS if c not in _NUMERIC + ("solvable", "is_optimal")
)
MIB = 1 << 20
#: Time ratios closer to 1 than this are not called out: ordinary timing noise.
NOISE = 0.10

CELL = ["run_id", "dataset", "config"]
INSTANCE = [*CELL, "instance"]


class ReportError(ValueError):
    """Input the reporter cannot use; the one-line message names the file and place."""


@dataclass(slots=True)
class Run:
    """One stored run: its directory, ``meta.json`` and typed rows."""

    path: Path
    meta: dict[str, Any]
    rows: pd.DataFrame
    label: str = ""  # short name in multi-run tables: "run 1", "run 2", ...
    _cache: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    @property
    def run_id(self) -> str:
        return str(self.meta.get("run_id") or self.path.name)

    def instances(self) -> pd.DataFrame:
        """:func:`instances` of the rows, computed once."""
        if "instances" not in self._cache:
            self._cache["instances"] = instances(self.rows)
        return self._cache["instances"]

    def summary(self) -> pd.DataFrame:
        """:func:`summary` of the rows, computed once."""
        if "summary" not in self._cache:
            self._cache["summary"] = summary(self.rows, inst=self.instances())
        return self._cache["summary"]


# ------------------------------------------------------------------ reading


def load_run(run_dir: Path | str) -> Run:
    """Read and check one run directory; ReportError (one line) if it is unusable."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise ReportError(f"{run_dir}: no such directory")
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: not a directory")
    if not (run_dir / "rows.csv").is_file():
        raise ReportError(f"{run_dir / 'rows.csv'}: missing (is {run_dir} a run?)")
    meta, rows = _read_stored(run_dir)
    return Run(run_dir, meta, _normalise(rows, run_dir / "rows.csv"))


def _read_stored(run_dir: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    """``(meta, rows as strings)`` via harness.results, which owns the format (schema
    version, header, torn last line); typing is ours, so a bad token is named."""
    try:
        meta = read_meta(run_dir)
        records = read_row_dicts(run_dir)
    except ResultsError as err:
        raise ReportError(str(err)) from None
    columns = list(records[0]) if records else list(REQUIRED_COLUMNS)
    return meta, pd.DataFrame.from_records(records, columns=columns)


def _normalise(rows: pd.DataFrame, path: Path) -> pd.DataFrame:
    """Plain dtypes for analysis: floats with NaN for numbers, str for text,
    ``is_optimal`` as 1.0/0.0/NaN. Unknown status or measure -> ReportError."""
    missing = [c for c in REQUIRED_COLUMNS if c not in rows.columns]
    if missing:
        raise ReportError(f"{path}: line 1: missing column(s) {', '.join(missing)}")
    out = pd.DataFrame(index=pd.RangeIndex(len(rows)))
    for col in _TEXT:
        out[col] = (
            rows[col].astype(object).where(rows[col].notna(), "").astype(str).values
        )
    for col in _NUMERIC:
        raw = rows[col].astype(object).where(rows[col].notna(), "").astype(str).values
        num = pd.to_numeric(pd.Series(raw).replace("", np.nan), errors="coerce")
        bad = num.isna() & (pd.Series(raw) != "")
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ReportError(f"{path}: line {i + 2}: {col} {raw[i]!r} is not a number")
        out[col] = num.astype(float).values
    for col in ("solvable", "is_optimal"):
        out[col] = _bool_column(rows[col], col, path)
    for col, allowed in (("status", STATUSES), ("measure", MEASURES)):
        bad = ~out[col].isin(allowed)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise ReportError(
                f"{path}: line {i + 2}: {col} {out[col].iat[i]!r} is not one of "
                f"{', '.join(allowed)}"
            )
    for col in ("dataset", "instance", "config"):
        bad = out[col] == ""
        if bad.any():
            raise ReportError(
                f"{path}: line {int(np.flatnonzero(bad)[0]) + 2}: empty {col}"
            )
    out["solvable"] = out["solvable"].fillna(0.0).astype(bool)
    return _split_mixed(out)


def _split_mixed(rows: pd.DataFrame) -> pd.DataFrame:
    """Report a dataset holding both solvable and unsolvable boards as two parts,
    ``name (solvable)`` and ``name (unsolvable)``: a proof of unsolvability is a full
    search and would swamp the times of the solvable boards in one median."""
    rows["dataset_name"] = rows["dataset"]
    rows["boards"] = np.where(rows["solvable"], "solvable", "unsolvable")
    kinds = rows.groupby("dataset")["solvable"].nunique()
    mixed = rows["dataset"].isin(kinds[kinds > 1].index)
    rows.loc[mixed, "dataset"] = (
        rows.loc[mixed, "dataset"] + " (" + rows.loc[mixed, "boards"] + ")"
    )
    return rows


def _bool_column(col: pd.Series, name: str, path: Path) -> np.ndarray:
    table = {"true": 1.0, "1": 1.0, "false": 0.0, "0": 0.0, "": np.nan,
             "<na>": np.nan, "nan": np.nan, "none": np.nan}  # fmt: skip
    text = col.astype(object).where(col.notna(), "").astype(str).str.strip().str.lower()
    values = text.map(table)
    bad = values.isna() & ~text.isin([k for k, v in table.items() if v != v])
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ReportError(
            f"{path}: line {i + 2}: {name} {col.iat[i]!r} is not True/False"
        )
    return values.astype(float).to_numpy()


# --------------------------------------------------------------- analysis


def effective_branching_factor(nodes: Any, depth: Any) -> Any:
    """b* with ``nodes + 1 = 1 + b* + ... + b*^depth`` (array or scalar in, same out);
    NaN where depth < 1 or either value is missing. Bisection, 200 halvings."""
    n = np.asarray(nodes, dtype=float)
    d = np.asarray(depth, dtype=float)
    n, d = np.broadcast_arrays(n, d)
    valid = np.isfinite(n) & np.isfinite(d) & (d >= 1) & (n >= 0)
    target = np.where(valid, n + 1.0, 2.0)
    dd = np.where(valid, d, 1.0)
    # A tree with d >= 1 levels below the root and b* = nodes + 1 already holds more
    # than nodes + 1 nodes, so the root lies in [0, nodes + 1].
    lo, hi = np.zeros_like(target), target.copy()
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(200):
            mid = (lo + hi) / 2
            # (b^(d+1) - 1) / (b - 1) via expm1/log1p: exact enough near b = 1,
            # where the plain formula cancels catastrophically.
            step = mid - 1.0
            total = np.where(
                step == 0, dd + 1, np.expm1((dd + 1) * np.log1p(step)) / step
            )
            below = total < target
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    out = np.where(valid, (lo + hi) / 2, np.nan)
    return float(out) if out.ndim == 0 else out


def instances(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (run_id, dataset, config, instance): worst status over the timed
    repeats, median time (s) and counters over answered repeats, b*, memory peaks."""
    if rows.empty:
        return pd.DataFrame(columns=[*INSTANCE, "status", "seconds"])
    rows = rows.assign(_sev=rows["status"].map(SEVERITY))
    timed = rows[rows["measure"] == "time"]
    memory = rows[rows["measure"] == "memory"]
    # Static facts of the instance and config, from whichever row comes first.
    static_cols = ["dataset_name", "boards", "size", "goal", "solvable",
                   "optimal_length", "solver", "heuristic"]  # fmt: skip
    base = rows.groupby(INSTANCE, sort=True)[static_cols].first()
    base["h_start"] = rows.groupby(INSTANCE)["h_start"].max()
    # Status: worst over timed repeats; instances with only a memory row use that.
    source = pd.concat(
        [
            timed,
            memory[
                ~memory.set_index(INSTANCE).index.isin(timed.set_index(INSTANCE).index)
            ],
        ]
    )
    worst = source.loc[source.groupby(INSTANCE)["_sev"].idxmax()].set_index(INSTANCE)
    base["status"] = worst["status"]
    base["message"] = worst["message"]
    base["repeats"] = timed.groupby(INSTANCE).size()
    ok = timed[timed["status"].isin(ANSWERED)]
    base["answered_repeats"] = ok.groupby(INSTANCE).size()
    agg = ok.groupby(INSTANCE).agg(
        seconds=("seconds", "median"),
        cpu_seconds=("cpu_seconds", "median"),
        expanded=("expanded", "median"),
        generated=("generated", "median"),
        max_frontier=("max_frontier", "median"),
        path_length=("path_length", "median"),
        is_optimal=("is_optimal", "min"),  # one non-optimal repeat makes it non-optimal
    )
    base = base.join(agg)
    base[["repeats", "answered_repeats"]] = (
        base[["repeats", "answered_repeats"]].fillna(0).astype(int)
    )
    # A cell's times and counters describe answered instances only.
    unanswered = ~base["status"].isin(ANSWERED)
    base.loc[unanswered, list(agg.columns)] = np.nan
    base["ebf"] = effective_branching_factor(
        base["generated"].where(base["status"] == "solved"), base["path_length"]
    )
    mem = memory.groupby(INSTANCE).agg(
        peak_bytes=("peak_bytes", "max"),
        peak_rss_bytes=("peak_rss_bytes", "max"),
        memory_status=("status", "first"),
    )
    base = base.join(mem)
    return base.reset_index()


def summary(rows: pd.DataFrame, inst: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (run_id, dataset, config): instance and status counts, optimal share,
    median / p90 time (ms), median counters, median b*, peak memory (MiB). Within a
    dataset, ranked by instances answered (most first), then median time."""
    inst = instances(rows) if inst is None else inst
    cols = [
        *CELL,
        "dataset_name",
        "boards",
        "solver",
        "heuristic",
        "size",
        "instances",
        *STATUSES,
        "answered",
        "optimal_share",
        "median_ms",
        "p90_ms",
        "median_expanded",
        "median_generated",
        "median_ebf",
        "peak_traced_mib",
        "peak_rss_mib",
    ]
    if inst.empty:
        return pd.DataFrame(columns=cols)
    g = inst.groupby(CELL, sort=True)
    out = g[["dataset_name", "boards", "solver", "heuristic", "size"]].first()
    out["instances"] = g.size()
    counts = pd.crosstab([inst[c] for c in CELL], inst["status"])
    for status in STATUSES:
        out[status] = counts[status] if status in counts else 0
    out[list(STATUSES)] = out[list(STATUSES)].fillna(0).astype(int)
    out["answered"] = out["solved"] + out["unsolvable"]
    solved = inst[inst["status"] == "solved"]
    out["optimal_share"] = solved.groupby(CELL)["is_optimal"].mean()
    ms = inst["seconds"] * 1e3
    out["median_ms"] = ms.groupby([inst[c] for c in CELL]).median()
    out["p90_ms"] = ms.groupby([inst[c] for c in CELL]).quantile(0.9)
    out["median_expanded"] = g["expanded"].median()
    out["median_generated"] = g["generated"].median()
    out["median_ebf"] = g["ebf"].median()
    out["peak_traced_mib"] = g["peak_bytes"].max() / MIB
    out["peak_rss_mib"] = g["peak_rss_bytes"].max() / MIB
    out = out.reset_index()
    out = out.sort_values(
        ["run_id", "dataset", "answered", "median_ms", "config"],
        ascending=[True, True, False, True, True],
        na_position="last",
    )
    return out[cols].reset_index(drop=True)


def compare(runs: Sequence[Run]) -> pd.DataFrame:
    """Each later run against the first, per (dataset, config) present in either:
    answered counts, median times, time ratio new/old (geometric mean of per-instance
    median ratios over instances answered in both), median counters, and how many
    instances' counters changed."""
    base_run, rows = runs[0], []
    base_inst = base_run.instances()
    base_sum = base_run.summary()
    for new_run in runs[1:]:
        new_inst = new_run.instances()
        new_sum = new_run.summary()
        cells = sorted(
            set(map(tuple, base_sum[["dataset", "config"]].values))
            | set(map(tuple, new_sum[["dataset", "config"]].values))
        )
        for dataset, config in cells:
            old = base_sum[(base_sum.dataset == dataset) & (base_sum.config == config)]
            new = new_sum[(new_sum.dataset == dataset) & (new_sum.config == config)]
            pair = _paired(base_inst, new_inst, dataset, config)
            answered = pair.dropna(subset=["seconds_old", "seconds_new"])
            answered = answered[(answered.seconds_old > 0) & (answered.seconds_new > 0)]
            ratio = (
                float(
                    np.exp(np.log(answered.seconds_new / answered.seconds_old).mean())
                )
                if len(answered)
                else np.nan
            )
            both = pair.dropna(subset=["generated_old", "generated_new"])
            changed = both[
                (both.expanded_old != both.expanded_new)
                | (both.generated_old != both.generated_new)
                | (both.path_length_old != both.path_length_new)
            ]
            rows.append(
                {
                    "dataset": dataset,
                    "config": config,
                    "old_run": base_run.label,
                    "new_run": new_run.label,
                    "old_instances": _first(old, "instances"),
                    "new_instances": _first(new, "instances"),
                    "old_answered": _first(old, "answered"),
                    "new_answered": _first(new, "answered"),
                    "old_median_ms": _first(old, "median_ms"),
                    "new_median_ms": _first(new, "median_ms"),
                    "time_ratio": ratio,
                    "compared": len(answered),
                    "old_median_expanded": _first(old, "median_expanded"),
                    "new_median_expanded": _first(new, "median_expanded"),
                    "old_median_generated": _first(old, "median_generated"),
                    "new_median_generated": _first(new, "median_generated"),
                    "counters_changed": len(changed) if len(both) else np.nan,
                    "changed_instances": [
                        _change_text(c) for _, c in changed.iterrows()
                    ],
                    "same_source": _same_source(base_run, new_run, config),
                }
            )
    return pd.DataFrame(rows)


def _paired(old: pd.DataFrame, new: pd.DataFrame, dataset: str, config: str):
    keep = ["instance", "seconds", "expanded", "generated", "path_length"]
    a = old[(old.dataset == dataset) & (old.config == config)][keep]
    b = new[(new.dataset == dataset) & (new.config == config)][keep]
    return a.merge(b, on="instance", how="outer", suffixes=("_old", "_new"))


def _same_source(old: Run, new: Run, config: str) -> bool | None:
    """Whether meta.json records the same solver source hash in both runs."""
    a = ((old.meta.get("solvers") or {}).get(config) or {}).get("source_sha256")
    b = ((new.meta.get("solvers") or {}).get(config) or {}).get("source_sha256")
    return None if not a or not b else a == b


def _change_text(row: pd.Series) -> str:
    """``d04-0000: expanded 45 -> 46, generated 120 -> 123`` (exact counters)."""
    parts = [
        f"{c} {_exact(row[c + '_old'])} -> {_exact(row[c + '_new'])}"
        for c in ("expanded", "generated", "path_length")
        if row[c + "_old"] != row[c + "_new"]
    ]
    return f"{row.instance}: " + ", ".join(parts)


def _first(frame: pd.DataFrame, col: str) -> Any:
    return frame[col].iat[0] if len(frame) else np.nan


def load_runs(run_dirs: Sequence[Path | str]) -> list[Run]:
    """Load runs in the order given and label them ``run 1``, ``run 2``, ..."""
    if not run_dirs:
        raise ReportError("no run directory given")
    runs = [load_run(d) for d in run_dirs]
    for i, run in enumerate(runs, start=1):
        run.label = f"run {i}" if len(runs) > 1 else run.run_id
    return runs

def _exact(value: float) -> str:
    if pd.isna(value):
        return "–"
    return str(int(value)) if float(value).is_integer() else repr(float(value))
