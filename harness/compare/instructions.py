"""Instructions compared: when both runs counted them (``harness run
--instructions``), each config gets an instruction verdict beside its time verdict.

A count is deterministic, so there is no interval: the verdict is the geometric
mean over the cells both runs answered alike of ``new / base`` instructions per
solve, called a change when it passes the instruction threshold (1% by default:
two runs of the same configs agree within 0.5%, tests/benchmarks/instructions_aa.py).
A time verdict and an instruction verdict that disagree (instructions flat, time
1.3x slower; or the reverse) are said, not hidden: a count is blind to memory
latency, cache misses and branch mispredictions, and time is exposed to the
machine's drift.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.compare.model import (
    CELL_KEY,
    GOOD_STATUSES,
    Comparison,
    InstructionVerdict,
    TimeVerdict,
)

if TYPE_CHECKING:
    import pandas as pd


def compare_instructions(
    base_rows: pd.DataFrame,
    new_rows: pd.DataFrame,
    both: pd.DataFrame,
    comp: Comparison,
) -> None:
    """Fill each config's InstructionVerdict from the cells answered alike in
    both runs with a count on both sides; a note when only one side counted."""
    import numpy as np

    counted = [_counted(rows) for rows in (base_rows, new_rows)]
    if counted[0].empty or counted[1].empty:
        if not (counted[0].empty and counted[1].empty):
            side = "base" if counted[0].empty else "new"
            comp.notes.append(
                f"instructions not compared: the {side} run counted none "
                "(harness run --instructions)"
            )
        return
    same = both[(both.status_b == both.status_n) & both.status_b.isin(GOOD_STATUSES)]
    cells = (
        same[CELL_KEY]
        .merge(counted[0], on=CELL_KEY)
        .merge(counted[1], on=CELL_KEY, suffixes=("_b", "_n"))
    )
    th = comp.thresholds.instructions_ratio
    for config, group in cells.groupby("config", sort=True):
        b = group.instructions_b.to_numpy(dtype=float)
        n = group.instructions_n.to_numpy(dtype=float)
        keep = (b > 0) & (n > 0)  # (an external program on its goal board: 0)
        if not keep.any():
            continue
        ratios = n[keep] / b[keep]
        ratio = float(np.exp(np.log(ratios).mean()))
        nodes_b = group.expanded_b[keep].sum()
        nodes_n = group.expanded_n[keep].sum()
        per_node = (
            float((n[keep].sum() / nodes_n) / (b[keep].sum() / nodes_b))
            if nodes_b > 0 and nodes_n > 0
            else None
        )
        verdict = InstructionVerdict(
            config=config,
            instances=int(keep.sum()),
            ratio=ratio,
            low=float(ratios.min()),
            high=float(ratios.max()),
            per_node_ratio=per_node,
            threshold=th,
            regression=ratio >= th,
            improvement=ratio <= 1 / th,
            verdict=_words(ratio, th),
        )
        if config in comp.configs:
            comp.configs[config].instructions = verdict
            note = disagreement(verdict, comp.configs[config].time)
            if note:
                comp.notes.append(f"{config}: {note}")


def _counted(rows: pd.DataFrame) -> pd.DataFrame:
    """Per cell: the count (one per cell, on every time row) and nodes expanded."""
    import pandas as pd

    if "instructions" not in rows:
        return pd.DataFrame(columns=[*CELL_KEY, "instructions", "expanded"])
    timed = rows[
        (rows.measure == "time")
        & rows.status.isin(GOOD_STATUSES)
        & rows.instructions.notna()
    ]
    return (
        timed.groupby(CELL_KEY, sort=False)[["instructions", "expanded"]]
        .median()
        .reset_index()
    )


def _words(ratio: float, threshold: float) -> str:
    if ratio >= threshold:
        return f"{ratio:.3f}x the instructions"
    if ratio <= 1 / threshold:
        return f"{1 / ratio:.3f}x fewer instructions"
    return f"same instructions (within {100 * (threshold - 1):g}%)"


def disagreement(ins: InstructionVerdict, time: TimeVerdict | None) -> str:
    """A sentence when the time and instruction verdicts disagree, else ""."""
    if time is None or time.ratio is None:
        return ""
    ins_moved = ins.regression or ins.improvement
    time_moved = time.significant and (time.regression or time.improvement)
    if time_moved and not ins_moved:
        return (
            f"time says {time.verdict} but instructions are flat ({ins.ratio:.3f}x): "
            "either the change is in what a count cannot see (cache misses, memory "
            "latency, branch mispredictions) or it is the machine's drift; run the "
            "time comparison again (interleaved) before believing either"
        )
    if ins_moved and not time_moved:
        return (
            f"instructions moved ({ins.verdict}) but time did not ({time.verdict}): "
            "a change smaller than the time noise, or one the processor hides"
        )
    if ins_moved and time_moved and ins.regression != time.regression:
        return (
            f"instructions and time point opposite ways ({ins.verdict}; "
            f"{time.verdict})"
        )
    return ""
