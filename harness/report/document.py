"""The reporter: tables, plain-word findings and a self-contained report of stored runs.

Reads ``results/<run_id>/`` (``meta.json`` + ``rows.csv``, see
``results/README.md``) and nothing else: it never imports a solver or the
runner. :func:`write_report` writes ``report.md``, ``report.html`` (plots embedded
as data URIs, inline CSS, no scripts, nothing fetched) and ``plots/*.png``.

How the numbers are made is :data:`HOW_TO_READ`, printed at the end of every report.
"""

from __future__ import annotations

import base64
import html
import math
import re
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

HOW_TO_READ = (
    "An instance is one (config, dataset, board). Its status is the worst over its "
    "timed repeats (invalid > error > memout > timeout > skipped > answered): an "
    "instance that timed out in one repeat of three counts as a timeout.",
    "Answered = solved, or correctly reported unsolvable. Times and counters are "
    "summarised over answered instances only; a config that fails the hard "
    "instances can therefore show a low median, so tables rank configs by instances "
    "answered first, then by median time.",
    "An instance's time is the median of its repeats (wall time of the solve call "
    "alone). A cell's median and 90th percentile (p90, linear interpolation) are "
    "taken over its instances.",
    "Effective branching factor b* solves N + 1 = 1 + b* + b*^2 + ... + b*^d, with "
    "N = nodes generated and d = the returned path's length (Russell & Norvig, "
    "AIMA 3rd ed., section 3.6.1); undefined at d = 0 and on unsolvable boards. "
    "The table shows the median over instances.",
    "Optimal paths (%) = share of solved instances whose path length equals the "
    "dataset's optimum (where the optimum is known).",
    "A dataset holding both solvable and unsolvable boards is reported as two parts, "
    "'name (solvable)' and 'name (unsolvable)': proving a board unsolvable takes a "
    "full search and would swamp the times of the solvable boards.",
    "Peak memory comes from a separate, untimed pass: the largest tracemalloc peak "
    "(Python allocations) and the largest worker RSS peak over the cell's instances; "
    "MiB = 2^20 bytes.",
)

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


# ----------------------------------------------------------- what stands out


def findings(run: Run) -> list[str]:
    """Plain sentences about one run, computed from its rows and meta.json: speed
    first, then wrong answers, failures, memory-pass failures, refusals."""
    speed, wrong, failed, memory, design, skips = [], [], [], [], [], []
    inst = run.instances()
    head = []
    if not run.meta.get("complete", True) or run.meta.get("finished_utc", "") is None:
        head.append(
            f"Run {run.run_id} is incomplete (it did not finish): the tables "
            "cover only the cells stored so far."
        )
    if inst.empty:
        return [*head, "The run holds no result rows."]
    for dataset, cells in run.summary().groupby("dataset", sort=True):
        speed.extend(_fastest(dataset, cells))
    for (dataset, config), cells in inst.groupby(["dataset", "config"], sort=True):
        for status in PROBLEMS:
            hit = cells[cells.status == status]
            if len(hit):
                first = hit.iloc[0]
                why = f": {first.message}" if first.message else ""
                (wrong if status == "invalid" else failed).append(
                    f"{config} on {dataset}: {_n(len(hit), status + ' result')} "
                    f"({_names(hit.instance)}){why}."
                )
        mixed = cells[(cells.answered_repeats > 0) & ~cells.status.isin(ANSWERED)]
        for _, r in mixed.iterrows():
            failed.append(
                f"{config} on {dataset}/{r.instance}: answered in {r.answered_repeats} "
                f"of {r.repeats} repeats but {r.status} in another; counted as "
                f"{r.status}."
            )
        skipped = cells[cells.status == "skipped"]
        if len(skipped):
            skips.append((config, dataset, len(skipped), skipped.message.iloc[0]))
        claims = (run.meta.get("solvers") or {}).get(config, {}).get("optimal")
        (wrong if claims else design).extend(
            _optimality(config, dataset, cells, claims)
        )
        mem_bad = cells[
            cells.status.isin(ANSWERED)
            & cells.memory_status.notna()
            & ~cells.memory_status.isin(list(ANSWERED) + [""])
        ]
        if len(mem_bad):
            memory.append(
                f"{config}: the memory pass ended {mem_bad.memory_status.iloc[0]} on "
                f"{_n(len(mem_bad), 'instance')} of {dataset} that the timed pass "
                f"answered ({_names(mem_bad.instance)})."
            )
    return head + speed + wrong + failed + memory + design + _skip_sentences(skips)


def _skip_sentences(skips: list[tuple[str, str, int, str]]) -> list[str]:
    """One sentence per config (its datasets together), and configs declined for
    the same reason together: refusals are expected, so they should read short."""
    per_config: dict[str, tuple[list[str], int, str]] = {}
    for config, dataset, count, why in skips:
        datasets, total, _ = per_config.get(config, ([], 0, why))
        per_config[config] = ([*datasets, dataset], total + count, why)
    by_reason: dict[tuple[str, ...], list[str]] = {}
    for config, (datasets, total, why) in per_config.items():
        # The reason names the heuristic or solver; strip it to group alike ones.
        generic = why.replace(config.split("[")[-1].rstrip("]"), "*")
        by_reason.setdefault((generic, ", ".join(datasets), str(total)), []).append(
            config
        )
    out = []
    for (_, datasets, total), configs in by_reason.items():
        why = per_config[configs[0]][2]
        who = " and ".join(configs) if len(configs) < 3 else ", ".join(configs)
        each = " each" if len(configs) > 1 else ""
        if why and len(configs) > 1:
            why = f"e.g. {configs[0]}: {why}"
        out.append(
            f"{who} skipped {_n(int(total), 'instance')}{each} ({datasets})"
            + (f": {why}." if why else ".")
        )
    return out


def _fastest(dataset: str, cells: pd.DataFrame) -> list[str]:
    ranked = cells.dropna(subset=["median_ms"])
    if ranked.empty:
        return [f"On {dataset}, no config answered any instance."]
    most = ranked.answered.max()
    best = ranked[ranked.answered == most].sort_values(["median_ms", "config"])
    top = best.iloc[0]
    total = int(top.instances)
    text = (
        f"On {dataset}, the fastest config is {top.config}: median "
        f"{_fmt_ms(top.median_ms)} ms over {int(top.answered)} of {total} instances "
        "answered"
    )
    if len(best) > 1:
        nxt = best.iloc[1]
        ratio = nxt.median_ms / top.median_ms
        if ratio < 1 + NOISE:
            text += (
                f"; {nxt.config} is within timing noise ({_fmt_ms(nxt.median_ms)}"
                " ms): call it a tie"
            )
        else:
            text += (
                f"; the next, {nxt.config}, takes {_fmt_ms(nxt.median_ms)} ms "
                f"({_sig(ratio)}x as long)"
            )
    text += "."
    quicker = ranked[(ranked.answered < most) & (ranked.median_ms < top.median_ms)]
    for _, r in quicker.iterrows():
        text += (
            f" {r.config} has a lower median ({_fmt_ms(r.median_ms)} ms) but "
            f"answered only {int(r.answered)} of {int(r.instances)}."
        )
    return [text]


def _optimality(
    config: str, dataset: str, cells: pd.DataFrame, claims: bool | None
) -> list[str]:
    solved = cells[(cells.status == "solved") & cells.is_optimal.notna()]
    worse = solved[solved.is_optimal == 0]
    if solved.empty:
        return []
    if len(worse) and claims:
        r = (
            worse.assign(excess=worse.path_length - worse.optimal_length)
            .sort_values("excess", ascending=False)
            .iloc[0]
        )
        return [
            f"{config} claims to be optimal but returned a longer path on "
            f"{len(worse)} of {len(solved)} solved instances of {dataset} "
            f"({r.instance}: {int(r.path_length)} moves, optimum "
            f"{int(r.optimal_length)}): a bug in the solver or its heuristic."
        ]
    if claims is False:
        excess = worse.path_length - worse.optimal_length
        text = (
            f"{config} (not optimal by design) found an optimal path on "
            f"{len(solved) - len(worse)} of {len(solved)} solved instances of "
            f"{dataset}"
        )
        if len(worse):
            text += f"; the worst was {int(excess.max())} moves longer than optimal"
        return [text + "."]
    return []


def compare_findings(runs: Sequence[Run], table: pd.DataFrame) -> list[str]:
    """Sentences about how later runs differ from the first."""
    out = []
    base = runs[0]
    for other in runs[1:]:
        for key, what in (
            ("python", "Python"),
            ("cpu_model", "CPU"),
            ("platform", "platform"),
        ):
            a, b = base.meta.get(key), other.meta.get(key)
            if a != b:
                out.append(
                    f"{other.label} ran on a different {what} ({b}) than "
                    f"{base.label} ({a}): time ratios mix code and machine."
                )
    for new_run, part in table.groupby("new_run", sort=False):
        old_run = part.old_run.iat[0]
        for dataset, cells in part.groupby("dataset", sort=True):
            only_old = cells[cells.new_instances.isna()].config.tolist()
            only_new = cells[cells.old_instances.isna()].config.tolist()
            if len(only_old) == len(cells):
                out.append(f"{dataset} is only in {old_run}.")
                continue
            if len(only_new) == len(cells):
                out.append(f"{dataset} is only in {new_run}.")
                continue
            for run, configs in ((old_run, only_old), (new_run, only_new)):
                if configs:
                    out.append(
                        f"On {dataset}, only {run} has {_names(pd.Series(configs), 6)}."
                    )
            for _, r in cells.dropna(
                subset=["old_instances", "new_instances"]
            ).iterrows():
                out.extend(_cell_changes(r))
    return out


def _cell_changes(r: pd.Series) -> list[str]:
    where, out = f"{r.config} on {r.dataset}", []
    if r.new_answered != r.old_answered:
        out.append(
            f"{where}: {int(r.new_answered)} answered in {r.new_run} "
            f"against {int(r.old_answered)} in {r.old_run}."
        )
    if r.compared and abs(math.log(r.time_ratio)) > math.log1p(NOISE):
        text = (
            f"{where}: {_ratio_words(r.time_ratio)} in {r.new_run} than in "
            f"{r.old_run} (geometric mean of {r.compared} per-instance "
            "median time ratios)"
        )
        if r.same_source and r.counters_changed == 0:
            text += (
                "; the solver's source and every counter are unchanged, so this is "
                "more likely the machine (load, clock) than the code"
            )
        out.append(text + ".")
    if r.counters_changed:
        out.append(
            f"{where}: counters changed on {_n(r.counters_changed, 'instance')}"
            f" ({'; '.join(r.changed_instances[:3])}"
            + ("; ..." if len(r.changed_instances) > 3 else "")
            + ")."
        )
    return out


def _ratio_words(ratio: float) -> str:
    """0.5 -> '2.00x faster', 2 -> '2.00x slower' (ratio = new / old time)."""
    return f"{_sig(1 / ratio)}x faster" if ratio < 1 else f"{_sig(ratio)}x slower"


def _n(count: float, noun: str) -> str:
    count = int(count)
    return f"{count} {noun}" + ("" if count == 1 or noun.endswith("-instance") else "s")


def _names(names: pd.Series, limit: int = 3) -> str:
    names = list(names)
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# ------------------------------------------------------------- formatting

DISPLAY = {
    "config": "config",
    "instances": "instances",
    "solved": "solved",
    "unsolvable": "unsolvable (correct)",
    "timeout": "timeout",
    "memout": "memout",
    "error": "error",
    "invalid": "invalid",
    "skipped": "skipped",
    "optimal_share": "optimal paths (%)",
    "median_ms": "median time (ms)",
    "p90_ms": "p90 time (ms)",
    "median_expanded": "median expanded (nodes)",
    "median_generated": "median generated (nodes)",
    "median_ebf": "b* (median)",
    "peak_traced_mib": "peak traced (MiB)",
    "peak_rss_mib": "peak RSS (MiB)",
}
#: Columns dropped from a display table when they are empty for every config.
_OPTIONAL = ("optimal_share", "median_ebf", "peak_traced_mib", "peak_rss_mib")
#: The two halves of the summary as people read it: what came back, what it cost.
PARTS = {
    "answers": ("config", "instances", *STATUSES, "optimal_share"),
    "cost": (
        "config",
        "median_ms",
        "p90_ms",
        "median_expanded",
        "median_generated",
        "median_ebf",
        "peak_traced_mib",
        "peak_rss_mib",
    ),
}


def _sig(value: float, digits: int = 3) -> str:
    """Round to ``digits`` significant figures without scientific notation."""
    if value is None or not np.isfinite(value):
        return "–"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - magnitude, 0)
    return f"{round(value, decimals):,.{decimals}f}"


def _fmt_ms(value: float) -> str:
    return _sig(value)


def _count(value: float) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"


_FORMAT = {
    "optimal_share": lambda v: "–" if not np.isfinite(v) else f"{100 * v:.0f}",
    "median_ms": _sig,
    "p90_ms": _sig,
    "median_expanded": _count,
    "median_generated": _count,
    "median_ebf": lambda v: "–" if not np.isfinite(v) else f"{v:.2f}",
    "peak_traced_mib": _sig,
    "peak_rss_mib": _sig,
}


def display_table(
    table: pd.DataFrame, part: str = "all", keep_empty: bool = False
) -> pd.DataFrame:
    """Strings for people: rounded, units in headers, empty optional columns dropped;
    ``part`` = "answers", "cost" (see :data:`PARTS`) or "all"."""
    cols = [
        c for c in DISPLAY if c in table.columns and (part == "all" or c in PARTS[part])
    ]
    if not keep_empty:
        cols = [c for c in cols if c not in _OPTIONAL or table[c].notna().any()]
    out = pd.DataFrame(index=table.index)
    for c in cols:
        fmt = _FORMAT.get(c, _count if c != "config" else str)
        out[DISPLAY[c]] = [fmt(float(v)) if c != "config" else str(v) for v in table[c]]
    return out.reset_index(drop=True)


def display_compare(table: pd.DataFrame) -> pd.DataFrame:
    """The side-by-side table of :func:`compare` as strings; counters exact."""
    out = pd.DataFrame(index=table.index)
    if table.empty:
        return out
    old, new = table.old_run.iat[0], table.new_run.iat[0]
    out["config"] = table.config
    out[f"answered {old}"] = [
        _of(a, n) for a, n in zip(table.old_answered, table.old_instances, strict=True)
    ]
    out[f"answered {new}"] = [
        _of(a, n) for a, n in zip(table.new_answered, table.new_instances, strict=True)
    ]
    out[f"median time {old} (ms)"] = table.old_median_ms.map(_sig)
    out[f"median time {new} (ms)"] = table.new_median_ms.map(_sig)
    out[f"time ratio {new}/{old}"] = [
        "–" if not np.isfinite(r) else f"{r:.2f} (n={n})"
        for r, n in zip(table.time_ratio, table.compared, strict=True)
    ]
    out[f"median expanded {old}"] = table.old_median_expanded.map(_exact)
    out[f"median expanded {new}"] = table.new_median_expanded.map(_exact)
    out[f"median generated {old}"] = table.old_median_generated.map(_exact)
    out[f"median generated {new}"] = table.new_median_generated.map(_exact)
    out["counters changed (instances)"] = table.counters_changed.map(_count)
    return out.reset_index(drop=True)


def _of(answered: float, total: float) -> str:
    return "–" if pd.isna(total) else f"{int(answered)}/{int(total)}"


def _exact(value: float) -> str:
    if pd.isna(value):
        return "–"
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table: number columns right-aligned, text left."""

    def esc(text: Any) -> str:
        return str(text).replace("|", "\\|")

    head = "| " + " | ".join(esc(c) for c in frame.columns) + " |"
    rule = (
        "| "
        + " | ".join(
            "--:" if is_numeric_column(frame[c]) else ":--" for c in frame.columns
        )
        + " |"
    )
    body = [
        "| " + " | ".join(esc(v) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])


_NUMBER_TEXT = re.compile(r"^(–|[\d.,]+( \(n=\d+\))?|\d+/\d+)$")


def is_numeric_column(column: pd.Series) -> bool:
    """A display column of numbers (right-aligned); text columns align left."""
    return len(column) > 0 and all(_NUMBER_TEXT.match(str(v)) for v in column)


def text_table(frame: pd.DataFrame) -> str:
    """Aligned plain text (what ``--format table`` prints when not on a terminal)."""
    cols = [str(c) for c in frame.columns]
    cells = [[str(v) for v in row] for row in frame.itertuples(index=False)]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(cols)]
    right = [is_numeric_column(frame[c]) for c in frame.columns]

    def line(values: list[str]) -> str:
        return "  ".join(
            v.rjust(w) if r else v.ljust(w)
            for v, w, r in zip(values, widths, right, strict=True)
        )

    return "\n".join(
        [line(cols), line(["-" * w for w in widths])] + [line(r) for r in cells]
    )


def _html_table(frame: pd.DataFrame) -> str:
    text = [
        ' class="text"' if not is_numeric_column(frame[c]) else ""
        for c in frame.columns
    ]
    head = "".join(
        f"<th{t}>{html.escape(str(c))}</th>"
        for c, t in zip(frame.columns, text, strict=True)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{t}>{html.escape(str(v))}</td>" for v, t in zip(row, text, strict=True)
        )
        + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


# ---------------------------------------------------------------- report


@dataclass(slots=True)
class _Section:
    """One block of the report, rendered to both Markdown and HTML."""

    title: str
    level: int = 2
    paragraphs: list[str] = field(default_factory=list)
    bullets: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    figures: list[Any] = field(default_factory=list)  # plots.Plot


def load_runs(run_dirs: Sequence[Path | str]) -> list[Run]:
    """Load runs in the order given and label them ``run 1``, ``run 2``, ..."""
    if not run_dirs:
        raise ReportError("no run directory given")
    runs = [load_run(d) for d in run_dirs]
    for i, run in enumerate(runs, start=1):
        run.label = f"run {i}" if len(runs) > 1 else run.run_id
    return runs


def write_report(
    run_dirs: Sequence[Path | str], out_dir: Path | str | None = None
) -> Path:
    """Write report.md, report.html and plots/*.png into ``out_dir`` (default: the
    run's own directory; required for several runs). Returns the HTML path."""
    from harness import plots  # matplotlib is only needed for writing files

    runs = load_runs(run_dirs)
    if out_dir is None:
        if len(runs) > 1:
            raise ReportError("several runs: name an output directory (--out DIR)")
        out_dir = runs[0].path
    out = Path(out_dir)
    try:
        (out / "plots").mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ReportError(f"{out}: cannot create ({err.strerror})") from None
    colors = plots.style_map(
        sorted({c for r in runs for c in r.rows["config"].unique()})
    )
    shown = runs[-1]  # the newest run is drawn; older runs appear in the comparison
    limit = (shown.meta.get("options") or {}).get("timeout")
    figures = plots.make_plots(
        shown.instances(),
        colors,
        out / "plots",
        time_limit_s=limit if isinstance(limit, int | float) else None,
    )
    table = compare(runs) if len(runs) > 1 else pd.DataFrame()
    if len(runs) > 1:
        figures.append(
            plots.compare_plot(
                [r.instances().assign(run=r.label) for r in runs],
                colors,
                out / "plots",
            )
        )
    sections = _sections(runs, table, figures)
    title = (
        f"Benchmark report: {runs[0].run_id}"
        if len(runs) == 1
        else f"Benchmark comparison of {len(runs)} runs"
    )
    (out / "report.md").write_text(_markdown(title, sections), encoding="utf-8")
    html_path = out / "report.html"
    html_path.write_text(_html(title, sections, out), encoding="utf-8")
    return html_path


def _sections(runs: list[Run], table: pd.DataFrame, figures: list) -> list[_Section]:
    sections = []
    stands = _Section("What stands out")
    if len(runs) > 1:
        stands.bullets.extend(compare_findings(runs, table))
    for run in runs[-1:] if len(runs) > 1 else runs:
        prefix = f"{run.label}: " if len(runs) > 1 else ""
        stands.bullets.extend(
            prefix + (s[:1].lower() + s[1:] if prefix else s) for s in findings(run)
        )
    skipped = [f.title for f in figures if f.skipped]
    if skipped:
        stands.bullets.append(
            f"Not drawn for lack of data (reasons under Plots): {'; '.join(skipped)}."
        )
    sections.append(stands)
    if len(runs) > 1:
        comp = _Section(
            "Side by side",
            paragraphs=[
                f"Each later run against {runs[0].label}; "
                "time ratio = new / old (below 1 = faster), the "
                "geometric mean of per-instance median ratios "
                "over n instances answered in both; counters exact."
            ],
        )
        comp.tables.extend(summary_blocks(runs, table))
        sections.append(comp)
    for run in reversed(runs):
        sec = _Section(
            f"Results per dataset: {run.label}"
            if len(runs) > 1
            else "Results per dataset"
        )
        table_run = run.summary()
        for dataset, cells in table_run.groupby("dataset", sort=True):
            caption = _dataset_caption(run, dataset, cells)
            sec.tables.append((f"{caption}: answers", display_table(cells, "answers")))
            sec.tables.append((f"{caption}: cost", display_table(cells, "cost")))
        if table_run.empty:
            sec.paragraphs.append("No result rows.")
        sections.append(sec)
    pics = _Section("Plots")
    if len(runs) > 1:
        pics.paragraphs.append(
            f"Plots show {runs[-1].label} ({runs[-1].run_id}), "
            "except the comparison plot, which shows every run."
        )
    pics.figures = [f for f in figures if not f.skipped]
    pics.bullets = [f"{f.title}: skipped ({f.skipped})." for f in figures if f.skipped]
    sections.append(pics)
    # Provenance last: readers come for the results; the facts that make them
    # reproducible (commit, machine, options, set-up) follow.
    about = _Section("Runs")
    about.tables.append(("", _runs_table(runs)))
    for run in runs:
        setup = _setup_table(run)
        if setup is not None:
            label = f" of {run.label}" if len(runs) > 1 else ""
            about.tables.append(
                (f"One-time set-up{label} (not part of any solve time)", setup)
            )
    sections.append(about)
    sections.append(_Section("How to read the numbers", bullets=list(HOW_TO_READ)))
    return sections


def _dataset_caption(run: Run, dataset: str, cells: pd.DataFrame) -> str:
    info = (run.meta.get("datasets") or {}).get(cells["dataset_name"].iat[0], {})
    size = info.get("size") or cells["size"].iat[0]
    goal = info.get("goal", "")
    n = int(cells.instances.max())
    return f"{dataset} ({size}{', goal ' + str(goal) if goal else ''}, {n} instances)"


def _plain(value: Any) -> str:
    """Lists and dicts from meta.json as people write them, not as Python reprs."""
    if isinstance(value, list | tuple):
        return ", ".join(map(_plain, value)) if value else "none"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_plain(v)}" for k, v in value.items()) or "none"
    return str(value)


def _seconds(value: Any) -> str:
    if not isinstance(value, int | float):
        return "–"
    return "< 0.001" if value < 0.001 else _sig(float(value))


def _setup_table(run: Run) -> pd.DataFrame | None:
    """meta.json's set-up (imports, tables, compilation) summed per config over
    workers and goals; configs under a millisecond in all share one closing line."""
    setup = [s for s in run.meta.get("setup") or [] if isinstance(s, dict)]
    if not setup:
        return None
    per_config: dict[str, list[dict]] = {}
    for entry in setup:
        per_config.setdefault(str(entry.get("config", "?")), []).append(entry)
    rows, quick = [], []
    for config, entries in sorted(per_config.items()):
        total = sum(float(e.get("seconds") or 0.0) for e in entries)
        if total < 0.001:
            quick.append(config)
            continue
        slowest = max(entries, key=lambda e: float(e.get("seconds") or 0.0))
        boards = sorted({f"{e.get('size', '?')} {e.get('goal', '?')}" for e in entries})
        rows.append((config, ", ".join(boards), len(entries), _seconds(total),
                     str(slowest.get("note") or "")))
    if quick:
        rows.append((f"{len(quick)} other configs", "", "", "< 0.001 each", ""))
    return pd.DataFrame(
        rows, columns=["config", "boards", "set-ups", "total (s)", "slowest set-up"]
    )


def _options_text(opts: dict[str, Any]) -> str:
    """Run options as people read them: solvers and datasets have rows of their own,
    and per-config timeouts are grouped by value."""
    shown = []
    for key, value in opts.items():
        if key in ("solvers", "datasets"):
            continue
        if key == "timeout_by_config" and isinstance(value, dict):
            by_value: dict[Any, list[str]] = {}
            for config, seconds in value.items():
                by_value.setdefault(seconds, []).append(config)
            common = max(by_value, key=lambda v: len(by_value[v]), default=None)
            parts = [
                f"{v} s: {', '.join(sorted(c))}"
                for v, c in sorted(by_value.items(), key=lambda kv: str(kv[0]))
                if v != common
            ]
            if common is not None:
                parts.append(f"{common} s: the others" if parts else f"{common} s")
            shown.append(f"timeouts: {'; '.join(parts)}")
            continue
        shown.append(f"{key}={_plain(value)}")
    return "; ".join(shown) or "–"


def _runs_table(runs: list[Run]) -> pd.DataFrame:
    """One column per run, one row per fact (transposed: long values wrap)."""
    cols = {}
    for run in runs:
        m, git, opts = (
            run.meta,
            run.meta.get("git") or {},
            run.meta.get("options") or {},
        )
        commit = str(git.get("commit") or "?")[:10] + (
            " (dirty)" if git.get("dirty") else ""
        )
        cols[run.label if len(runs) > 1 else "value"] = {
            "run id": run.run_id,
            "directory": str(run.path),
            "started (UTC)": m.get("started_utc") or "?",
            "finished (UTC)": m.get("finished_utc") or "not finished",
            "commit": commit,
            "python": m.get("python", "?"),
            "platform": m.get("platform", "?"),
            "CPU": f"{m.get('cpu_model', '?')} (x{m.get('cpu_count', '?')})",
            "options": _options_text(opts),
            "datasets": ", ".join(sorted(m.get("datasets") or {}))
            or ", ".join(sorted(run.rows["dataset"].unique())),
            "configs": ", ".join(sorted(run.rows["config"].unique())),
        }
    frame = pd.DataFrame(cols)
    frame.index.name = "run"
    return frame.reset_index()


def _markdown(title: str, sections: list[_Section]) -> str:
    out = [f"# {title}", ""]
    for s in sections:
        out += ["#" * s.level + " " + s.title, ""]
        for p in s.paragraphs:
            out += [p, ""]
        if s.bullets:
            out += [f"- {b}" for b in s.bullets] + [""]
        for caption, frame in s.tables:
            if caption:
                out += [f"**{caption}**", ""]
            out += [markdown_table(frame), ""]
        for f in s.figures:
            out += [
                f"### {f.title}",
                "",
                f.caption,
                "",
                f"![{f.title}](plots/{f.path.name})",
                "",
            ]
    return "\n".join(out)


_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1300px;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem;border-bottom:2px solid #333;padding-bottom:.3rem}
h2{font-size:1.25rem;margin-top:2.2rem;border-bottom:1px solid #bbb}
h3{font-size:1.05rem;margin:1.4rem 0 .4rem}
.scroll{overflow-x:auto;margin:.4rem 0 1.2rem}
table{border-collapse:collapse;font-size:.85rem;font-variant-numeric:tabular-nums}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right;white-space:nowrap}
th{background:#eee;vertical-align:bottom;white-space:normal;max-width:7.5rem}
td.text,th.text{text-align:left}
td.text{white-space:normal;max-width:40rem}
tbody tr:nth-child(even){background:#f7f7f7}
ul.findings li{margin:.25rem 0}
figure{margin:1rem 0 2rem;page-break-inside:avoid}
figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:.9rem;color:#444;margin-top:.3rem}
p.caption{font-weight:600;margin:.8rem 0 .2rem}
@media print{body{max-width:none;margin:0}a{color:inherit}}
"""


def _html(title: str, sections: list[_Section], out: Path) -> str:
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
    ]
    for s in sections:
        parts.append(f"<h{s.level}>{esc(s.title)}</h{s.level}>")
        parts += [f"<p>{esc(p)}</p>" for p in s.paragraphs]
        if s.bullets:
            parts.append(
                '<ul class="findings">'
                + "".join(f"<li>{esc(b)}</li>" for b in s.bullets)
                + "</ul>"
            )
        for caption, frame in s.tables:
            if caption:
                parts.append(f'<p class="caption">{esc(caption)}</p>')
            parts.append(_html_table(frame))
        for f in s.figures:
            data = base64.b64encode(f.path.read_bytes()).decode("ascii")
            parts.append(
                f'<figure id="{esc(f.path.stem)}"><h3>{esc(f.title)}</h3>'
                f'<img src="data:image/png;base64,{data}" alt="{esc(f.title)}" '
                f'data-file="plots/{esc(f.path.name)}">'
                f"<figcaption>{esc(f.caption)} (plots/{esc(f.path.name)})"
                "</figcaption></figure>"
            )
    parts.append("</body></html>")
    return "\n".join(parts)


def summary_blocks(
    runs: Sequence[Run], table: pd.DataFrame | None = None
) -> list[tuple[str, pd.DataFrame]]:
    """(caption, display table) pairs: per dataset answers and cost for one run,
    the side-by-side comparison per dataset for several (``table``: compare(runs)),
    leaving out datasets that only one run of the pair has."""
    if len(runs) > 1:
        table = compare(runs) if table is None else table
        return [
            (f"{d}: {p.old_run.iat[0]} vs {n}", display_compare(p))
            for (d, n), p in table.groupby(["dataset", "new_run"], sort=True)
            if p.old_instances.notna().any() and p.new_instances.notna().any()
        ]
    table = runs[0].summary()
    return [
        (f"{d} ({int(c.instances.max())} instances): {part}", display_table(c, part))
        for d, c in table.groupby("dataset", sort=True)
        for part in PARTS
    ]


def format_summary(runs: Sequence[Run], fmt: str) -> str:
    """The summary (one run) or side-by-side comparison (several) as "table"
    (aligned text), "markdown", "csv" or "json"; csv and json are unrounded."""
    if fmt in ("csv", "json"):
        table = (
            compare(runs).drop(columns=["changed_instances", "same_source"])
            if len(runs) > 1
            else runs[0].summary()
        )
        if fmt == "csv":
            return table.to_csv(index=False)
        return table.to_json(orient="records", indent=2)
    if fmt not in ("table", "markdown"):
        raise ValueError(f"unknown format {fmt!r}")
    blocks = summary_blocks(runs)
    if not blocks:
        return "no result rows"
    if fmt == "markdown":
        return "\n\n".join(f"**{cap}**\n\n{markdown_table(t)}" for cap, t in blocks)
    return "\n\n".join(f"{cap}\n{text_table(t)}" for cap, t in blocks)
