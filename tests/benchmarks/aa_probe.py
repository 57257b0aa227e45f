"""A* with a known amount of extra work: the detection probe of aa_noise.py.

Each solve runs a plain A* (heap, dict of best g, parent links) to the goal, then,
when the environment variable ``AA_PROBE_EXTRA`` is a fraction f > 0, the same
search again from the start, stopped after f x (the first search's expansions):
the same search plus f more work, with the same counters and path (the second
search's counts are not reported), so only the time can tell the two apart.
Loaded with ``harness run --plugin tests/benchmarks/aa_probe.py``.
"""

from __future__ import annotations

import os
from heapq import heappop, heappush

from harness.heuristics import Heuristic, manhattan
from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, register


def _search(start: Board, goal: Board, grid: Grid, h, limit: int | None):
    """(parent links, goal board or None, expansions) of A*; stops after
    ``limit`` expansions when given."""
    heap = [(h(start), 0, 0, start)]
    best_g: dict[Board, int] = {start: 0}
    parent: dict[Board, Board | None] = {start: None}
    tie = expanded = 0
    while heap:
        _, _, g, board = heappop(heap)
        if g > best_g[board]:
            continue
        if board == goal or (limit is not None and expanded >= limit):
            return parent, board if board == goal else None, expanded
        expanded += 1
        g += 1
        for _, child in grid.successors(board):
            known = best_g.get(child)
            if known is not None and known <= g:
                continue
            best_g[child] = g
            parent[child] = board
            tie += 1
            heappush(heap, (g + h(child), tie, g, child))
    return parent, None, expanded


def _path(parent: dict, board: Board, grid: Grid) -> Moves:
    step_to_move = {-grid.cols: "u", grid.cols: "d", -1: "l", 1: "r"}
    moves = []
    before = parent[board]
    while before is not None:
        moves.append(step_to_move[board.index(0) - before.index(0)])
        board, before = before, parent[before]
    return "".join(reversed(moves))


@register("aa_probe", optimal=True, heuristics=("manhattan",))
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """A* plus AA_PROBE_EXTRA (a fraction) of the same search again, uncounted."""
    if not is_solvable(start, goal, grid):
        return None
    h = heuristic if heuristic is not None else manhattan(goal, grid)
    parent, end, expanded = _search(start, goal, grid, h, None)
    counters.expanded += expanded
    extra = float(os.environ.get("AA_PROBE_EXTRA") or 0)
    if extra > 0:
        _search(start, goal, grid, h, max(1, round(extra * expanded)))
    assert end is not None
    return _path(parent, end, grid)
