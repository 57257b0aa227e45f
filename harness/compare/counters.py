"""Counters and statuses compared exactly, cell by cell."""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any

from harness.compare.model import (
    CELL_KEY,
    COUNTERS,
    GOOD_STATUSES,
    QUALITY,
    STATUS_SEVERITY,
    WORSE_WHEN_HIGHER,
    Comparison,
    ConfigSummary,
    CounterChange,
    QualityChange,
    StatusChange,
    same_bound,
)
from harness.core.jsontext import loads

if TYPE_CHECKING:
    import pandas as pd

def cell_table(rows: pd.DataFrame) -> pd.DataFrame:
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
        vary = bool(
            len(good) > 1
            and (good[[*COUNTERS, QUALITY]].nunique(dropna=False) > 1).any()
        )
        out.append(
            {
                **dict(zip(CELL_KEY, key, strict=True)),
                "status": worst.status,
                "counters_vary": vary,
                **{c: first[c] for c in COUNTERS},
                QUALITY: first[QUALITY],
                "bound": first["bound"] if "bound" in first else None,
                "extra": first.extra,
            }
        )
    return pd.DataFrame(
        out,
        columns=CELL_KEY + ["status", "counters_vary", *COUNTERS, QUALITY, "bound",
                            "extra"],
    )  # fmt: skip


def compare_counters(
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
        _compare_quality(cell, where, comp, summary)
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


def _compare_quality(cell, where: tuple, comp: Comparison, summary) -> None:
    """A path of another length: a regression when longer at the same bound."""
    b, n = _num(getattr(cell, f"{QUALITY}_b")), _num(getattr(cell, f"{QUALITY}_n"))
    if b is None or n is None or b == n:
        return
    bb, bn = _num(cell.bound_b), _num(cell.bound_n)
    worse = n > b and same_bound(bb, bn)
    comp.quality_changes.append(QualityChange(*where, int(b), int(n), bb, bn, worse))
    summary.quality_changes += 1
    summary.quality_regressions += worse


def _extras(text: object) -> dict[str, float]:
    """The ``extra`` column's JSON object of counters ({} when empty or malformed)."""
    if not isinstance(text, str) or not text.strip():
        return {}
    try:
        data = loads(text)
    except json.JSONDecodeError:
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _num(value: Any) -> float | None:
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(v) else v
