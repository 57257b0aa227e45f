"""The necessary expansions (:mod:`harness.core.necessary`): per solved row of an
optimal search on a 3x3 board, how many boards every optimal unidirectional search
with the row's heuristic must expand (g* + h < C*), how many tie at C*, and the
row's expansions over the first: the yardstick of the expansions column ("A*
1.04x the necessary set, bidirectional BFS 40x"). A blind search is measured
against h = 0. Empty, never guessed, where it cannot be computed: boards over 9
squares, tile costs other than unit, unsolvable boards, a row without an
expansion count (an external program that reports none), a bounded or greedy
search (it need not expand the set), a lookup, or a heuristic the harness cannot
make. Rows of runs before schema 10 read as empty."""

from __future__ import annotations

from harness.core.costs import UNIT
from harness.core.oracle import MAX_SQUARES
from harness.heuristics import Heuristic, make_heuristic
from harness.results.columns import Column, RowContext, register_column

#: the schema version that added these columns
SINCE = 10

_made: dict[tuple, Heuristic | None] = {}


def _heuristic(name: str, context: RowContext) -> Heuristic | None:
    inst = context.cell.instance
    key = (name, inst.goal, inst.grid.rows, inst.grid.cols)
    if key not in _made:
        try:
            _made[key] = make_heuristic(name, inst.goal, inst.grid)
        except (KeyError, ValueError):  # unknown here (an external's), or refused
            _made[key] = None
    return _made[key]


def _yardstick(context: RowContext):
    """The row's necessary set, or None where it is not computed (module doc)."""
    cell, row = context.cell, context.row
    inst = cell.instance
    if (
        row.get("status") != "solved"
        or row.get("expanded") is None
        or not inst.solvable
        or inst.grid.squares > MAX_SQUARES
        or cell.dataset.cost_model != UNIT
        or not cell.config.spec.optimal
        or not cell.config.spec.search
    ):
        return None
    name = cell.config.heuristic
    h = None if name is None else _heuristic(name, context)
    if name is not None and h is None:
        return None
    # late: harness.kernels imports numba (~0.5 s), which every reader of
    # rows.csv would pay for at import; only a run's rows compute this
    from harness.kernels.necessary import necessary

    return necessary(inst.start, inst.goal, inst.grid, h, name or "none")


def _below(context: RowContext) -> int | None:
    found = _yardstick(context)
    return None if found is None else found.below


def _ties(context: RowContext) -> int | None:
    found = _yardstick(context)
    return None if found is None else found.ties


def _over(context: RowContext) -> float | None:
    found = _yardstick(context)
    if found is None or found.below == 0:
        return None
    return context.row["expanded"] / found.below


def _summed(common) -> float:
    """Summed expansions over summed necessary sets, over the boards that have one
    (weighted by the boards that expand most, as instr/node: a median of per-board
    ratios would be decided by shallow boards, where 3 expansions over a
    necessary set of 1 read as 3x)."""
    counted = common[(common["necessary"] > 0) & common["expanded"].notna()]
    if counted.empty:
        return float("nan")
    return float(counted["expanded"].sum() / counted["necessary"].sum())


def _times(value: float) -> str:
    """A ratio of expansions: 1.04x, 3.1x, 40x."""
    return f"{value:.3g}x"


register_column(Column(
    "necessary", "int", "boards every optimal search with this heuristic must "
    "expand: g* + h < C* (3x3, exact; blind: h = 0)", since=SINCE, empty=None,
    compute=_below, per_instance="first",
))  # fmt: skip
register_column(Column(
    "necessary_ties", "int", "boards with g* + h = C*: expanded or not as ties "
    "fall", since=SINCE, empty=None, compute=_ties, per_instance="first",
))  # fmt: skip
register_column(Column(
    "over_necessary", "float", "nodes expanded over the boards every optimal "
    "search with the config's heuristic must expand (g* + h < C*, exact on 3x3; "
    "blind: h = 0): 1x is the least a search that tests for the goal when it "
    "expands a board can do (A*, IDA*); below 1x: a bidirectional search, or "
    "breadth-first search, which stops when it generates the goal",
    since=SINCE, empty=None, compute=_over, per_instance="median",
    per_config="summed", over_config=_summed, header="nodes/necessary",
    render=_times,
))  # fmt: skip
