"""Analysis of stored runs: the one typed reader of ``results/<run_id>/``, the status
vocabulary (defined in :mod:`harness.results`, the schema), and the per-instance and
per-cell summary tables that ``harness run``, ``harness report`` and the plots show.

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

from harness.analysis.keys import CONFIG_GROUP, INSTANCE
from harness.results import (
    ANSWERED,
    BOOL_TOKENS,
    CONTRADICTED,
    MEASURES,
    META_FILE,
    ROWS_FILE,
    STATUSES,
    WORST_LAST,
    ResultsError,
    column_names,
    columns,
    RunMeta,
    load_meta,
    mark_contradicted_labels,
    read_meta,
    read_row_dicts,
)
from harness.results import PROBLEMS as PROBLEMS  # the status vocabulary, re-exported
from harness.results import SEVERITY as SEVERITY
from harness.results.columns import per_instance_columns, shown_in_summary
from harness.results.quality import BEST_LENGTH, QUALITY_BASIS, mark_quality

#: The worst wins when an instance's repeats disagree (ties broken: solved before
#: unsolvable, timeout before memout).
_WORST = {s: i for i, s in enumerate(WORST_LAST)}
_BOOL_TOKENS = BOOL_TOKENS
MIB = 1 << 20
#: Time ratios closer to 1 than this are not called out: ordinary timing noise.
NOISE = 0.10



class ReportError(ValueError):
    """Input the reporter cannot use; the one-line message names the file and place."""


@dataclass(slots=True)
class Run:
    """One stored run: its directory, ``meta.json`` and typed rows."""

    path: Path
    meta: dict[str, Any]
    rows: pd.DataFrame  # analysis_view(stored): plain dtypes, mixed datasets split
    label: str = ""  # short name in multi-run tables: "run 1", "run 2", ...
    #: The rows as read_run typed them (what harness compare works on).
    stored: pd.DataFrame | None = field(default=None, repr=False)
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
            self._cache["summary"] = summary(
                self.rows, inst=self.instances(), meta=self.meta
            )
        return self._cache["summary"]


# ------------------------------------------------------------------ reading


def read_run(run_dir: Path | str) -> tuple[dict[str, Any], pd.DataFrame]:
    """The one typed reader of a stored run: ``(meta, rows)``, the rows in schema
    column order with nullable dtypes (``Int64``, ``float64``, ``boolean``,
    ``string``; NA where a field is empty). :mod:`harness.results` owns the format
    (schema version, header, torn last line); this checks every field and raises
    ResultsError naming the file, the line and the field."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ResultsError(f"{run_dir}: no such run directory")
    meta = read_meta(run_dir)
    rows = typed_rows(read_row_dicts(run_dir), run_dir / ROWS_FILE)
    return meta, _claimed_bounds(load_meta(meta, str(run_dir / META_FILE)), rows)


def _claimed_bounds(meta: RunMeta, rows: pd.DataFrame) -> pd.DataFrame:
    """Runs stored before schema 6 have no ``bound`` column: each config's bound
    is the one its migrated meta.json claims (1 where it called the config
    optimal, none for the others)."""
    if meta.stored_version >= 6 or rows.empty:
        return rows
    claims = {label: float(info["bound"]) for label, info in meta.solvers.items()
              if isinstance(info, dict) and info.get("bound") is not None}  # fmt: skip
    hit = rows["bound"].isna()
    rows.loc[hit, "bound"] = rows.loc[hit, "config"].map(claims).astype("float64")
    return rows


def typed_rows(records: Sequence[dict[str, str]], path: Path | str) -> pd.DataFrame:
    """Rows of strings (as :func:`harness.results.read_row_dicts` gives them) as a
    typed DataFrame; ResultsError at the first field that is not of its type."""
    raw = pd.DataFrame.from_records(list(records), columns=list(column_names()))
    raw = raw.fillna("").astype(str)

    def fail(index: int, message: str) -> ResultsError:
        return ResultsError(f"{path}: line {index + 2}: {message}")

    out = pd.DataFrame(index=pd.RangeIndex(len(raw)))
    for col, kind in ((c.name, c.kind) for c in columns()):
        text = raw[col]
        if kind in ("int", "float"):
            num = pd.to_numeric(text.mask(text == ""), errors="coerce")
            bad = num.isna() & (text != "")
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise fail(i, f"{col} {text.iat[i]!r} is not a number")
            if kind == "int":
                whole = num.isna() | (num == np.floor(num))
                if not whole.all():
                    i = int(np.flatnonzero(~whole.to_numpy())[0])
                    raise fail(i, f"{col} {text.iat[i]!r} is not a whole number")
                out[col] = num.astype("Int64")
            else:
                out[col] = num.astype("float64")
        elif kind == "bool":
            key = text.str.strip().str.lower()
            bad = ~key.isin(list(_BOOL_TOKENS))
            if bad.any():
                i = int(np.flatnonzero(bad.to_numpy())[0])
                raise fail(i, f"{col} {text.iat[i]!r} is not True/False")
            out[col] = pd.array(key.map(_BOOL_TOKENS).tolist(), dtype="boolean")
        elif col in ("message", "extra"):
            out[col] = text.astype("string")
        else:
            out[col] = text.replace("", None).astype("string")
    for col, allowed in (("status", STATUSES), ("measure", MEASURES)):
        bad = ~raw[col].isin(allowed)
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise fail(
                i, f"{col} {raw[col].iat[i]!r} is not one of {', '.join(allowed)}"
            )
    for col in ("dataset", "instance", "config"):
        bad = raw[col] == ""
        if bad.any():
            raise fail(int(np.flatnonzero(bad.to_numpy())[0]), f"empty {col}")
    return mark_quality(mark_contradicted_labels(out))


def load_run(run_dir: Path | str) -> Run:
    """Read and check one run directory; ReportError (one line) if it is unusable."""
    run_dir = Path(run_dir)
    if not run_dir.exists():
        raise ReportError(f"{run_dir}: no such directory")
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: not a directory")
    if not (run_dir / ROWS_FILE).is_file():
        raise ReportError(f"{run_dir / ROWS_FILE}: missing (is {run_dir} a run?)")
    try:
        meta, stored = read_run(run_dir)
    except ResultsError as err:
        raise ReportError(str(err)) from None
    rows = analysis_view(stored)
    # Rows copied by --reuse or merge keep the run_id of the run that measured
    # them; the run being read is the one they are reported under.
    rows["measured_in"] = rows["run_id"]
    rows["run_id"] = str(meta.get("run_id") or run_dir.name)
    return Run(run_dir, meta, rows, stored=stored)


def analysis_view(stored: pd.DataFrame, *, split_mixed: bool = True) -> pd.DataFrame:
    """The typed rows in plain dtypes for analysis: float (NaN) for numbers, str
    ("" when empty) for text, ``is_optimal`` as 1.0/0.0/NaN, ``solvable`` as bool;
    mixed datasets split in two (:func:`_split_mixed`) unless ``split_mixed`` is
    false."""
    out = pd.DataFrame(index=pd.RangeIndex(len(stored)))
    for col, kind in ((c.name, c.kind) for c in columns()):
        if kind == "text":
            values = stored[col].astype(object)
            out[col] = values.where(values.notna(), "").astype(str).to_numpy()
        else:
            out[col] = stored[col].to_numpy(dtype=float, na_value=np.nan)
    out["solvable"] = out["solvable"].fillna(0.0).astype(bool)
    out[CONTRADICTED] = (
        stored[CONTRADICTED].to_numpy(dtype=bool)
        if CONTRADICTED in stored
        else np.zeros(len(out), dtype=bool)
    )
    if QUALITY_BASIS not in stored:  # a frame typed before mark_quality
        stored = mark_quality(stored.copy())
    out[BEST_LENGTH] = stored[BEST_LENGTH].to_numpy(dtype=float, na_value=np.nan)
    out[QUALITY_BASIS] = stored[QUALITY_BASIS].fillna("").astype(str).to_numpy()
    if not split_mixed:
        out["dataset_name"] = out["dataset"]
        out["boards"] = np.where(out["solvable"], "solvable", "unsolvable")
        return out
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
    rows = rows.assign(_sev=rows["status"].map(_WORST))
    timed = rows[rows["measure"] == "time"]
    memory = rows[rows["measure"] == "memory"]
    # Static facts of the instance and config, from whichever row comes first.
    static_cols = ["dataset_name", "boards", "size", "goal", "solvable",
                   "optimal_length", "solver", "heuristic", "bound",
                   BEST_LENGTH]  # fmt: skip
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
        suboptimality=("suboptimality", "max"),  # the worst repeat's path
        quality_basis=(QUALITY_BASIS, "first"),
        **{c.name: (c.name, c.per_instance) for c in per_instance_columns()},
    )
    base = base.join(agg)
    base[["repeats", "answered_repeats"]] = (
        base[["repeats", "answered_repeats"]].fillna(0).astype(int)
    )
    # A cell's times and counters describe answered instances only.
    unanswered = ~base["status"].isin(ANSWERED)
    base.loc[unanswered, list(agg.columns)] = np.nan
    base["quality_basis"] = base["quality_basis"].fillna("").astype(str)
    base["ebf"] = effective_branching_factor(
        base["generated"].where(base["status"] == "solved"), base["path_length"]
    )
    if "peak_rss_delta_bytes" not in memory:  # rows from before schema 3
        memory = memory.assign(peak_rss_delta_bytes=np.nan)
    mem = memory.groupby(INSTANCE).agg(
        peak_bytes=("peak_bytes", "max"),
        peak_rss_bytes=("peak_rss_bytes", "max"),
        peak_rss_delta_bytes=("peak_rss_delta_bytes", "max"),
        memory_status=("status", "first"),
    )
    base = base.join(mem)
    return base.reset_index()


def summary(
    rows: pd.DataFrame,
    inst: pd.DataFrame | None = None,
    meta: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """Per (run_id, dataset, config): instance and status counts, optimal share,
    b*, peak memory (MiB), and the fair numbers of :func:`harness.analysis.aggregate.
    fair_summary`: coverage, median and geometric mean of time (ms) and nodes
    expanded over the instances every config answered (``common_n`` of them), and
    the summed scores (time limit from ``meta``). ``median_ms``, ``p90_ms`` and the
    ``median_*`` counters are over each config's own answered instances: never
    compare them across configs. Within a dataset, ranked by instances answered
    (most first), then the common geometric mean time."""
    from harness.analysis import aggregate

    inst = instances(rows) if inst is None else inst
    # the registered columns' per-config values (over the common instances)
    added = [c.summary_key for c in shown_in_summary() if c.name in inst]
    cols = [
        *CONFIG_GROUP,
        "dataset_name",
        "boards",
        "solver",
        "heuristic",
        "size",
        "instances",
        *STATUSES,
        "answered",
        "optimal_share",
        "bound",
        "median_suboptimality",
        "max_suboptimality",
        "quality_basis",
        "median_ms",
        "p90_ms",
        "median_expanded",
        "median_generated",
        "median_ebf",
        "peak_traced_mib",
        "peak_rss_mib",
        "rss_added_mib",
        *aggregate.FAIR_COLUMNS[5:],
        *added,
    ]
    if inst.empty:
        return pd.DataFrame(columns=cols)
    g = inst.groupby(CONFIG_GROUP, sort=True)
    out = g[["dataset_name", "boards", "solver", "heuristic", "size"]].first()
    out["instances"] = g.size()
    counts = pd.crosstab([inst[c] for c in CONFIG_GROUP], inst["status"])
    for status in STATUSES:
        out[status] = counts[status] if status in counts else 0
    out[list(STATUSES)] = out[list(STATUSES)].fillna(0).astype(int)
    out["answered"] = out["solved"] + out["unsolvable"]
    solved = inst[inst["status"] == "solved"]
    out["optimal_share"] = solved.groupby(CONFIG_GROUP)["is_optimal"].mean()
    out["bound"] = g["bound"].first()
    out["median_suboptimality"] = solved.groupby(CONFIG_GROUP)["suboptimality"].median()
    out["max_suboptimality"] = solved.groupby(CONFIG_GROUP)["suboptimality"].max()
    out["quality_basis"] = solved.groupby(CONFIG_GROUP)["quality_basis"].agg(_basis)
    ms = inst["seconds"] * 1e3
    out["median_ms"] = ms.groupby([inst[c] for c in CONFIG_GROUP]).median()
    out["p90_ms"] = ms.groupby([inst[c] for c in CONFIG_GROUP]).quantile(0.9)
    out["median_expanded"] = g["expanded"].median()
    out["median_generated"] = g["generated"].median()
    out["median_ebf"] = g["ebf"].median()
    out["peak_traced_mib"] = g["peak_bytes"].max() / MIB
    out["peak_rss_mib"] = g["peak_rss_bytes"].max() / MIB  # absolute: the worker
    out["rss_added_mib"] = g["peak_rss_delta_bytes"].max() / MIB  # by the solve
    out = out.reset_index()
    fair = aggregate.fair_summary(inst, aggregate.time_limit(meta, inst))
    fair_columns = [*aggregate.FAIR_COLUMNS[5:], *added]
    out = out.merge(fair[[*CONFIG_GROUP, *fair_columns]], on=CONFIG_GROUP, how="left")
    out = out.sort_values(
        ["run_id", "dataset", "answered", "common_gmean_ms", "config"],
        ascending=[True, True, False, True, True],
        na_position="last",
    )
    return out[cols].reset_index(drop=True)


def _basis(values: pd.Series) -> str:
    """One word for a cell's quality bases: the one they share, or ``mixed``."""
    kinds = sorted(set(values) - {""})
    return kinds[0] if len(kinds) == 1 else ("mixed" if kinds else "")


def skipped_reasons(rows) -> list[tuple[str, str, int, str]]:
    """``(config, dataset, instances, reason)`` for every refused pair."""
    if rows is None or len(rows) == 0:
        return []
    sk = rows[
        (rows["status"] == "skipped")
        & (rows["measure"] == "time")
        & (rows["repeat"] == 0)
    ]
    out = []
    for (config, dataset, reason), g in sk.groupby(
        ["config", "dataset", "message"], sort=False
    ):
        out.append(
            (str(config), str(dataset), int(g["instance"].nunique()), str(reason))
        )
    return out


def load_runs(run_dirs: Sequence[Path | str | Run]) -> list[Run]:
    """Load runs in the order given (a Run already loaded is taken as it is) and
    label them ``run 1``, ``run 2``, ..."""
    if not run_dirs:
        raise ReportError("no run directory given")
    runs = [d if isinstance(d, Run) else load_run(d) for d in run_dirs]
    for i, run in enumerate(runs, start=1):
        run.label = f"run {i}" if len(runs) > 1 else run.run_id
    return runs

def exact_text(value: float) -> str:
    if pd.isna(value):
        return "–"
    return str(int(value)) if float(value).is_integer() else repr(float(value))
