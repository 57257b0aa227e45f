"""A test solver whose cost and counters are turned by environment variables, to
inject steps into a history: NPUZZLE_TEST_EXTRA_EXPANDED adds to its expanded
count, NPUZZLE_TEST_WORK multiplies the CPU work it burns per solve."""

from __future__ import annotations

import os

from harness.puzzle import is_solvable
from harness.solver import register

BASE_WORK = 60_000  # loop iterations per solve: a few ms of CPU


@register("steps", optimal=True, budget_seconds=30)
def solve(start, goal, grid, *, counters, heuristic):
    if not is_solvable(start, goal, grid):
        return None
    work = int(BASE_WORK * float(os.environ.get("NPUZZLE_TEST_WORK", "1")))
    acc = 0
    for i in range(work):  # burn CPU in proportion to work
        acc ^= i * 7
    parent = {start: None}
    frontier = [start]
    while frontier:  # breadth-first: optimal
        nxt = []
        for board in frontier:
            counters.expanded += 1
            if board == goal:
                moves = []
                while parent[board] is not None:
                    board, move = parent[board]
                    moves.append(move)
                counters.expanded += int(
                    os.environ.get("NPUZZLE_TEST_EXTRA_EXPANDED", "0")
                )
                return "".join(reversed(moves))
            for move, child in grid.successors(board):
                counters.generated += 1
                if child not in parent:
                    parent[child] = (board, move)
                    nxt.append(child)
        frontier = nxt
    return None
