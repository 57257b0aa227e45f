"""Test plugin: breadth-first search that sleeps ``NPUZZLE_TEST_NAP`` seconds (read
when the module is imported; default 0) before each solve. Sleeping costs wall
time and no CPU time, so two runs with different naps differ on one clock only
(``harness compare --time wall``)."""

from __future__ import annotations

import os
import time
from collections import deque

from harness.puzzle import Board, Grid
from harness.solver import Counters, register

NAP_SECONDS = float(os.environ.get("NPUZZLE_TEST_NAP", "0"))


@register("napping_bfs", optimal=True, budget_seconds=20)
def napping_bfs(start: Board, goal: Board, grid: Grid, *, counters: Counters,
                heuristic: None) -> str | None:
    """Breadth-first search after a sleep of NPUZZLE_TEST_NAP seconds."""
    if NAP_SECONDS:
        time.sleep(NAP_SECONDS)
    parent: dict[Board, tuple[Board, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        board = queue.popleft()
        counters.expanded += 1
        if board == goal:
            path = []
            while parent[board] is not None:
                board, move = parent[board]
                path.append(move)
            return "".join(reversed(path))
        for move, child in grid.successors(board):
            counters.generated += 1
            if child not in parent:
                parent[child] = (board, move)
                queue.append(child)
    return None
