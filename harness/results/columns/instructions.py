"""instructions: instructions per solve counted under valgrind's callgrind (``harness
run --instructions``; harness.measure.instructions), on the time rows of a counted
cell; empty when not counted."""

from __future__ import annotations

from harness.results.columns import Column, RowContext, register_column


def _per_solve(context: RowContext) -> int | None:
    attempt = context.attempt  # None for a row of a refused cell
    return None if attempt is None else attempt.measured.get("instructions")


def _count(value: float) -> str:
    """A large count in three significant figures: 14,487, 368k, 2.37M, 1.05G."""
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e5, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:,.0f}"


register_column(Column(
    "instructions", "int",
    "instructions per solve counted under callgrind: deterministic, but blind to "
    "cache misses and branch mispredictions; a second axis beside time",
    since=8,
    empty=None,
    compute=_per_solve,
    per_instance="median",  # (the same on every time row of the cell)
    per_config="median",
    header="instr/solve",
    render=_count,
))  # fmt: skip
