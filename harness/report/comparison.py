"""The report's side-by-side table of runs: each later run against the first, per
(dataset, config). Each run's own figures come from its summary
(:func:`harness.analysis.summary`); what changed between the runs (the time ratio
and its interval, exact counter changes) comes from the one comparer,
:func:`harness.compare.compare`, so ``harness report A B`` and ``harness compare A
B`` give one verdict, on one labelled metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from harness.analysis import Run, exact_text
from harness.compare import Comparison, Incomparable
from harness.compare import compare as compare_runs

#: The counters whose changes the report lists (the comparer checks more).
REPORTED_COUNTERS = ("expanded", "generated", "path_length")
METRIC_LABELS = {"cpu_seconds": "CPU time", "seconds": "wall time"}


def comparison_table(runs: Sequence[Run]) -> pd.DataFrame:
    """Each later run against the first, per (dataset, config) present in either:
    answered counts, each run's median time over the instances answered in both
    (``both`` of them), the comparer's time ratio new/old
    (``metric``; geometric mean of per-instance median ratios, with its interval),
    median counters, and the instances whose counters changed."""
    base_run, rows = runs[0], []
    base_sum = base_run.summary()
    for new_run in runs[1:]:
        new_sum = new_run.summary()
        try:
            comp: Comparison | None = compare_runs(base_run, new_run)
            incomparable = ""
        except Incomparable as err:
            comp, incomparable = None, str(err)
        changes = _counter_changes(comp)
        cells = sorted(
            set(map(tuple, base_sum[["dataset", "config"]].values))
            | set(map(tuple, new_sum[["dataset", "config"]].values))
        )
        for dataset, config in cells:
            old = base_sum[(base_sum.dataset == dataset) & (base_sum.config == config)]
            new = new_sum[(new_sum.dataset == dataset) & (new_sum.config == config)]
            part = _first(old, "dataset_name"), _first(old, "boards")
            if not isinstance(part[0], str):
                part = _first(new, "dataset_name"), _first(new, "boards")
            verdict = comp.parts.get((config, *part)) if comp else None
            answered = _answered_in_both(base_run, new_run, dataset, config)
            changed = [
                text for inst, text in changes.get((config, part[0]), [])
                if inst in answered
            ]  # fmt: skip
            source = comp.configs.get(config) if comp else None
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
                    # over the instances answered in both runs: a median over
                    # each run's own answers would compare different boards
                    "old_median_ms": _median_ms(base_run, dataset, config, answered),
                    "new_median_ms": _median_ms(new_run, dataset, config, answered),
                    "both": len(answered),
                    "metric": METRIC_LABELS.get(comp.metric or "", "time")
                    if comp
                    else "time",
                    "time_ratio": _value(verdict, "ratio"),
                    "time_low": _value(verdict, "low"),
                    "time_high": _value(verdict, "high"),
                    "significant": bool(verdict.significant) if verdict else False,
                    "verdict": verdict.verdict if verdict else "",
                    "compared": verdict.instances if verdict else 0,
                    "old_median_expanded": _median(base_run, dataset, config, answered,
                                                  "expanded"),
                    "new_median_expanded": _median(new_run, dataset, config, answered,
                                                  "expanded"),
                    "old_median_generated": _median(base_run, dataset, config, answered,
                                                  "generated"),
                    "new_median_generated": _median(new_run, dataset, config, answered,
                                                  "generated"),
                    "counters_changed": len(changed) if answered else np.nan,
                    "changed_instances": changed,
                    "same_source": None
                    if source is None or source.source_changed is None
                    else not source.source_changed,
                    "incomparable": incomparable,
                }
            )
    return pd.DataFrame(rows)


def _counter_changes(comp: Comparison | None) -> dict[tuple[str, str], list]:
    """(config, dataset) -> [(instance, "d04-0000: expanded 45 -> 46, ..."), ...]."""
    by_instance: dict[tuple[str, str, str], list[str]] = {}
    for c in comp.counter_changes if comp else ():
        if c.counter in REPORTED_COUNTERS:
            by_instance.setdefault((c.config, c.dataset, c.instance), []).append(
                f"{c.counter} {exact_text(c.base)} -> {exact_text(c.new)}"
            )
    for q in comp.quality_changes if comp else ():  # solution quality, its own kind
        by_instance.setdefault((q.config, q.dataset, q.instance), []).append(
            f"path_length {q.base} -> {q.new}"
        )
    out: dict[tuple[str, str], list] = {}
    for (config, dataset, instance), parts in sorted(by_instance.items()):
        out.setdefault((config, dataset), []).append(
            (instance, f"{instance}: " + ", ".join(parts))
        )
    return out


def _answered_in_both(old: Run, new: Run, dataset: str, config: str) -> set[str]:
    """Instances of this dataset part that both runs answered with counters."""
    keep = ["instance", "generated"]
    a = old.instances()
    b = new.instances()
    a = a[(a.dataset == dataset) & (a.config == config)][keep]
    b = b[(b.dataset == dataset) & (b.config == config)][keep]
    both = a.merge(b, on="instance", suffixes=("_old", "_new"))
    both = both.dropna(subset=["generated_old", "generated_new"])
    return set(both.instance)


def _median(
    run: Run, dataset: str, config: str, names: set[str], column: str
) -> float:
    """Median of ``column`` over the instances ``names`` (answered in both runs)."""
    inst = run.instances()
    part = inst[
        (inst.dataset == dataset) & (inst.config == config) & inst.instance.isin(names)
    ]
    return float(part[column].median()) if len(part) else np.nan


def _median_ms(run: Run, dataset: str, config: str, names: set[str]) -> float:
    return _median(run, dataset, config, names, "seconds") * 1e3


def _value(verdict: Any, name: str) -> float:
    value = getattr(verdict, name, None) if verdict is not None else None
    return float(value) if value is not None else np.nan


def _first(frame: pd.DataFrame, col: str) -> Any:
    return frame[col].iat[0] if len(frame) else np.nan
