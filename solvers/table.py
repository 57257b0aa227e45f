"""Table walk: read the answer off the exact distance table, one lookup per move.

Data structures: from the oracle's distance table (``harness.oracle.distances``:
optimal distance of every rank to the goal) and its neighbour table, set-up derives
one int32 per rank, ``step[rank] = next_rank * 4 + move``: the first move in
MOVE_ORDER (u, l, r, d) that lowers the distance by one, and the board it leads to.
Solving is ``rank(start)`` and then one array lookup per move: the speed limit every
search solver is measured against. Works for any goal on grids of at most 9 cells
(2x2, 2x3, 3x2, 3x3), the oracle's range.

Optimal by construction. Unsolvable boards (distance -1) return None.

Counters: no search happens; expanded = generated = boards walked (the path
length), max_frontier = 1 (one board held at a time).

Set-up (``prepare``, outside the timed region): the oracle's BFS or cache load
(well under a second for 3x3) and the step table (one vectorised pass).
"""

from __future__ import annotations

from typing import Any

from harness.heuristics import Heuristic
from harness.puzzle import MOVE_ORDER, Board, Grid, Moves, rank
from harness.solver import Counters, register

_MAX_CELLS = 9
_step_memo: dict[tuple, Any] = {}


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Only grids the oracle enumerates (at most 9 cells)."""
    if g.cells > _MAX_CELLS:
        return f"no exact table for {g.label}: the oracle enumerates at most 9 cells"
    return None


def step_table(goal: Board, g: Grid):
    """int32 per rank: ``next_rank * 4 + move index`` toward ``goal`` (-1 at the goal
    and on unreachable boards). Built once per goal and process."""
    key = (g.rows, g.cols, tuple(goal))
    if key in _step_memo:
        return _step_memo[key]
    import numpy as np

    from harness import oracle

    dist = oracle.distances(goal, g).astype(np.int16)
    nbr = oracle.neighbour_table(g)  # k-th legal move of each rank, -1 padded
    perms = oracle.all_permutations(g.cells)
    blank = np.argmax(perms == 0, axis=1)
    # move index (in MOVE_ORDER) of the k-th legal move from each blank cell
    move_of = np.full((g.cells, 4), -1, dtype=np.int32)
    for cell, around in enumerate(g.neighbours):
        for k, (move, _target) in enumerate(around):
            move_of[cell, k] = MOVE_ORDER.index(move)
    child_dist = np.where(nbr >= 0, dist[np.maximum(nbr, 0)], np.int16(32767))
    downhill = child_dist == (dist - 1)[:, None]
    k = np.argmax(downhill, axis=1)  # first downhill move in MOVE_ORDER
    rows = np.arange(len(dist))
    step = (nbr[rows, k].astype(np.int64) * 4 + move_of[blank, k]).astype(np.int32)
    step[(dist <= 0) | ~downhill.any(axis=1)] = -1
    step.flags.writeable = False
    _step_memo[key] = (step, dist)
    return step, dist


def _prepare(g: Grid, goal: Board, heuristic: Heuristic | None) -> None:
    """Load or build the oracle's table for this goal and derive the step table."""
    step_table(goal, g)


@register(
    "table",
    optimal=True,
    refuses=_refuses,
    prepare=_prepare,
    budget_seconds=10.0,
    sizes="at most 9 cells (2x2, 2x3, 3x2, 3x3), any goal",
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """Shortest move string from ``start`` to ``goal``; None when unsolvable."""
    if grid.cells > _MAX_CELLS:
        raise ValueError(f"table: {grid.label} has no exact table")
    step, dist = step_table(goal, grid)
    at = rank(start)
    if dist[at] < 0:
        return None
    moves = []
    entry = int(step[at])
    while entry >= 0:
        moves.append(MOVE_ORDER[entry & 3])
        entry = int(step[entry >> 2])
    counters.expanded += len(moves)
    counters.generated += len(moves)
    counters.max_frontier = max(counters.max_frontier, 1)
    return "".join(moves)
