"""Fair aggregation: numbers over the instances every compared config answered.

A config's median over its *own* answered instances rewards failing the hard ones:
a config that answers only the easy boards looks fast. Downward Lab compares
configs on the instances that every one of them solved and reports coverage apart;
so does this module:

- **coverage**: instances answered (solved, or correctly reported unsolvable) of
  those in the dataset;
- **common-instance aggregates**: median and geometric mean of time and of nodes
  expanded over the instances answered by *every* config that answered anything in
  that dataset (configs that answered none, e.g. a 4x4 pattern database on 3x3
  boards, would empty the set, so they are named and left out of it);
- **scores**, Lab's way: per instance a log-scaled value in 0..1, 1 at or below a
  floor, 0 at or beyond the limit or on any failure (skips included), summed per
  config: ``score = log(limit / v) / log(limit / floor)`` clipped to [0, 1].
  Floors and limits: :data:`TIME_FLOOR_S` and the run's time limit;
  :data:`EXPANDED_FLOOR` and :data:`EXPANDED_LIMIT`.

Input is the per-instance table (one row per run_id, dataset, config, instance
with ``status``, ``seconds`` and ``expanded``; NaN where not answered).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from harness.analysis.keys import CONFIG_GROUP, GROUP
from harness.results import ANSWERED
from harness.results.columns import Column, shown_in_summary

#: Times at or below this score 1: 0.1 us, below every real solve (a table
#: lookup takes ~1 us), so the score never saturates: a 0.1 ms floor, as Lab's
#: planning default of 1 s, tied a 1 us lookup with a 30 us greedy search.
TIME_FLOOR_S = 1e-7
#: Lab scores expansions between 100 and 10^6 for planning tasks; 15-puzzles with
#: Manhattan distance need up to 10^10, so the upper bound here is 10^8.
EXPANDED_FLOOR = 100.0
EXPANDED_LIMIT = 1e8
#: Geometric means clamp values from below: a 0-move board expands no node and a
#: 0 would zero the product. The clamps are far below every real value.
_GMEAN_MIN = {"seconds": 1e-7, "expanded": 1.0}

FAIR_COLUMNS = [
    *CONFIG_GROUP,
    "instances",
    "answered",
    "coverage",
    "in_common",
    "common_n",
    "common_median_ms",
    "common_gmean_ms",
    "common_median_expanded",
    "common_gmean_expanded",
    "own_median_ms",
    "own_median_expanded",
    "score_time",
    "score_expanded",
    "common_instructions_per_node",
]


def score(values: Sequence[float] | np.ndarray, floor: float, limit: float) -> np.ndarray:
    """Lab's log-scaled score per value: 1 at or below ``floor``, 0 at or beyond
    ``limit`` or for NaN (a failure), ``log(limit / v) / log(limit / floor)``
    between."""
    if not (0 < floor < limit):
        raise ValueError(f"score needs 0 < floor < limit, got {floor}, {limit}")
    v = np.asarray(values, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = np.log(limit / np.clip(v, floor, limit)) / math.log(limit / floor)
    return np.where(np.isfinite(v), raw, 0.0)


def geometric_mean(values: pd.Series | np.ndarray, minimum: float) -> float:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return float("nan")
    return float(np.exp(np.log(np.maximum(v, minimum)).mean()))


def answered_mask(inst: pd.DataFrame) -> pd.Series:
    return inst["status"].isin(ANSWERED)


def participants(inst: pd.DataFrame) -> dict[tuple, list[str]]:
    """Per (run_id, dataset): the configs that answered at least one instance,
    sorted. Only these define the common set."""
    ok = inst[answered_mask(inst)]
    return {
        key: sorted(part["config"].unique())
        for key, part in ok.groupby(GROUP, sort=True)
    }


def common_instances(
    inst: pd.DataFrame, configs: Sequence[str] | None = None
) -> pd.DataFrame:
    """``(run_id, dataset, instance)`` answered by every config of ``configs`` (by
    default: every config that answered anything in that dataset)."""
    ok = inst[answered_mask(inst)]
    out = []
    for key, part in ok.groupby(GROUP, sort=True):
        who = list(configs) if configs is not None else sorted(part["config"].unique())
        mine = part[part["config"].isin(who)]
        counts = mine.groupby("instance")["config"].nunique()
        for name in sorted(counts[counts == len(set(who))].index):
            out.append((*key, name))
    return pd.DataFrame(out, columns=[*GROUP, "instance"])


def time_limit(meta: dict | None, inst: pd.DataFrame | None = None) -> float:
    """The run's per-solve time limit in seconds: ``--timeout`` when given, else
    the largest per-config budget, else (no meta) 10x the slowest answer."""
    opts = (meta or {}).get("options") or {}
    value = opts.get("timeout")
    if isinstance(value, int | float) and value > 0:
        return float(value)
    per = opts.get("timeout_by_config")
    if isinstance(per, dict):
        budgets = [v for v in per.values() if isinstance(v, int | float) and v > 0]
        if budgets:
            return float(max(budgets))
    if inst is not None and inst["seconds"].notna().any():
        return float(max(inst["seconds"].max() * 10, TIME_FLOOR_S * 10))
    return 60.0


def with_scores(inst: pd.DataFrame, limit_s: float) -> pd.DataFrame:
    """``inst`` plus ``score_time`` and ``score_expanded`` per instance; anything
    not answered scores 0."""
    ok = answered_mask(inst).to_numpy()
    seconds = np.where(ok, inst["seconds"].to_numpy(dtype=float), np.nan)
    expanded = np.where(ok, inst["expanded"].to_numpy(dtype=float), np.nan)
    return inst.assign(
        score_time=score(seconds, TIME_FLOOR_S, max(limit_s, TIME_FLOOR_S * 1.01)),
        score_expanded=score(expanded, EXPANDED_FLOOR, EXPANDED_LIMIT),
    )


def fair_summary(inst: pd.DataFrame, limit_s: float | None = None) -> pd.DataFrame:
    """Per (run_id, dataset, config): coverage, common-instance median and
    geometric mean of time (ms) and nodes expanded (``common_n`` instances, the
    same for every config of the dataset), own-set medians (labelled as such
    wherever shown) and summed scores. Ranked within a dataset by answered
    (most first), then common geometric mean time."""
    shown = [c for c in shown_in_summary() if c.name in inst]
    names = [*FAIR_COLUMNS, *(c.summary_key for c in shown)]
    if inst.empty:
        return pd.DataFrame(columns=names)
    limit_s = limit_s if limit_s is not None else time_limit(None, inst)
    scored = with_scores(inst, limit_s)
    common = common_instances(inst)
    key = set(map(tuple, common[[*GROUP, "instance"]].to_numpy()))
    scored["common"] = [
        (r, d, i) in key
        for r, d, i in scored[[*GROUP, "instance"]].itertuples(index=False)
    ]
    who = participants(inst)
    rows = []
    for (run_id, dataset, config), part in scored.groupby(CONFIG_GROUP, sort=True):
        ok = part[answered_mask(part)]
        in_common = config in who.get((run_id, dataset), [])
        com = part[part["common"]] if in_common else part.iloc[0:0]
        rows.append(
            {
                "run_id": run_id,
                "dataset": dataset,
                "config": config,
                "instances": len(part),
                "answered": len(ok),
                "coverage": len(ok) / len(part) if len(part) else float("nan"),
                "in_common": in_common,
                "common_n": int(
                    sum(1 for r, d, _ in key if (r, d) == (run_id, dataset))
                ),
                "common_median_ms": com["seconds"].median() * 1e3,
                "common_gmean_ms": geometric_mean(
                    com["seconds"], _GMEAN_MIN["seconds"]
                )
                * 1e3,
                "common_median_expanded": com["expanded"].median(),
                "common_gmean_expanded": geometric_mean(
                    com["expanded"], _GMEAN_MIN["expanded"]
                ),
                "own_median_ms": ok["seconds"].median() * 1e3,
                "own_median_expanded": ok["expanded"].median(),
                "score_time": float(part["score_time"].sum()),
                "score_expanded": float(part["score_expanded"].sum()),
                # registered columns, over the same common instances
                **{c.summary_key: _per_config(c, com) for c in shown},
                **_instructions_per_node(com),
            }
        )
    out = pd.DataFrame(rows, columns=names)
    out = out.sort_values(
        ["run_id", "dataset", "answered", "common_gmean_ms", "config"],
        ascending=[True, True, False, True, True],
        na_position="last",
    )
    return out.reset_index(drop=True)


def _per_config(column: Column, common: pd.DataFrame) -> float:
    """A registered column's value for one config over its common instances."""
    if column.over_config is not None:
        return column.over_config(common)
    return common[column.name].agg(column.per_config)


def _instructions_per_node(common: pd.DataFrame) -> dict[str, float]:
    """Instructions per node expanded over the common instances: their sum over
    the nodes' sum (a cost per node weighted by the solves that expand most); NaN
    when the run counted none (harness run --instructions)."""
    nan = float("nan")
    if "instructions" not in common or common["instructions"].isna().all():
        return {"common_instructions_per_node": nan}
    counted = common[common["instructions"].notna()]
    nodes = counted["expanded"].sum()
    per_node = float(counted["instructions"].sum() / nodes) if nodes > 0 else nan
    return {"common_instructions_per_node": per_node}


def score_totals(fair: pd.DataFrame) -> pd.DataFrame:
    """Per (run_id, config) over all datasets: instances, answered, coverage and
    the summed time and expansion scores; best time score first."""
    cols = ["run_id", "config", "instances", "answered", "coverage",
            "score_time", "score_expanded"]  # fmt: skip
    if fair.empty:
        return pd.DataFrame(columns=cols)
    out = (
        fair.groupby(["run_id", "config"], sort=True)[
            ["instances", "answered", "score_time", "score_expanded"]
        ]
        .sum()
        .reset_index()
    )
    out["coverage"] = out["answered"] / out["instances"]
    out = out.sort_values(
        ["run_id", "score_time", "config"], ascending=[True, False, True]
    )
    return out[cols].reset_index(drop=True)


def sig(value: float, digits: int = 3) -> str:
    """Round to ``digits`` significant figures without scientific notation; a
    dash for a missing or infinite value."""
    if value is None or not np.isfinite(value):
        return "–"
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(digits - 1 - magnitude, 0)
    return f"{round(value, decimals):,.{decimals}f}"


def run_fair(run) -> pd.DataFrame:
    """:func:`fair_summary` of a loaded run (:class:`harness.analysis.Run`), with
    the run's own time limit; computed once per run."""
    if "fair" not in run._cache:
        run._cache["fair"] = fair_summary(run.instances(), time_limit(run.meta, run.instances()))
    return run._cache["fair"]


def run_summary(run) -> pd.DataFrame:
    """The run's summary (:meth:`harness.analysis.Run.summary`), which carries the
    fair columns beside the counts."""
    return run.summary()
