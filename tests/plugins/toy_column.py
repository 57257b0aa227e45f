"""A toy column, declared the way every measured or derived column is (one module,
one :class:`~harness.results.Column`): ``toy_moves_x2``, twice the length of the
path a pass returned. It proves the registry's promise: loaded with ``--plugin``,
it is in rows.csv, read back typed, and shown by the summary and the report,
with no edit anywhere else."""

from __future__ import annotations

from harness.results import Column, RowContext, register_column


def _twice_the_length(context: RowContext) -> int | None:
    length = context.row.get("path_length")
    return None if length is None else 2 * length


TOY = register_column(
    Column(
        "toy_moves_x2",
        "int",
        "twice the moves of the returned path",
        compute=_twice_the_length,
        per_instance="median",
        per_config="max",
        header="toy x2",
        render=lambda value: f"{value:.0f} toy",
    )
)
