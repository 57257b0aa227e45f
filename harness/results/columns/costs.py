"""Tile costs (:mod:`harness.core.costs`): a row's cost model, its path's cost and
the cheapest path's cost. A run of datasets under a cost model (``--cost heavy``,
``8-strata@heavy``) judges optimality and bounds by cost; these columns say what
was judged. Unit rows carry their lengths as costs; rows of runs before schema 9
read as unit with both costs empty."""

from __future__ import annotations

from harness.core.costs import UNIT, format_cost, path_cost
from harness.results.columns import Column, RowContext, register_column

#: the schema version that added these columns
SINCE = 9


def _model(context: RowContext) -> str:
    return context.cell.dataset.cost_model


def _path_cost(context: RowContext) -> float | None:
    row, inst = context.row, context.cell.instance
    moves = row.get("moves")
    if row.get("status") != "solved" or not isinstance(moves, str):
        return None
    if _model(context) == UNIT:
        return float(len(moves))
    return path_cost(inst.start, moves, inst.grid, _model(context))


def _optimal_cost(context: RowContext) -> float | None:
    inst = context.cell.instance
    if not inst.solvable:
        return None
    if _model(context) == UNIT:
        return None if context.optimum is None else float(context.optimum)
    return inst.optimal_cost


register_column(Column(
    "cost_model", "text", "tile cost model of the task: unit, heavy (t), inverse "
    "(1/t), sqrt, reverse (N - t)", since=SINCE, empty=UNIT, compute=_model,
    per_instance=None,
))  # fmt: skip
register_column(Column(
    "path_cost", "float", "the path's cost: the moved tiles' costs summed (unit: "
    "its length)", since=SINCE, empty=None, compute=_path_cost,
    per_instance="median", per_config="median", render=format_cost,
))  # fmt: skip
register_column(Column(
    "optimal_cost", "float", "the cheapest path's cost, where known (the 3x3 cost "
    "oracle, or the dataset's label); empty: no optimum claimed",
    since=SINCE, empty=None, compute=_optimal_cost, per_instance="first",
    render=format_cost,
))  # fmt: skip
