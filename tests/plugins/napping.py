"""Test plugin: breadth-first search that sleeps ``NPUZZLE_TEST_NAP`` seconds (read
when the module is imported; default 0) before each solve. Sleeping costs wall
time and no CPU time, so two runs with different naps differ on one clock only
(``harness compare --time wall``). ``slow_setup_bfs``: the same search after a
set-up (``prepare``) of ``NPUZZLE_TEST_SETUP`` seconds (default 0.5), as a table
build or a compilation takes."""

from __future__ import annotations

import os
import time

from harness.puzzle import Board, Grid
from harness.solver import Counters, register
from solvers.bfs import solve as bfs  # the built-in search: only the naps are ours

NAP_SECONDS = float(os.environ.get("NPUZZLE_TEST_NAP", "0"))
SETUP_SECONDS = float(os.environ.get("NPUZZLE_TEST_SETUP", "0.5"))


@register("napping_bfs", optimal=True, budget_seconds=20)
def napping_bfs(start: Board, goal: Board, grid: Grid, *, counters: Counters,
                heuristic: None) -> str | None:
    """Breadth-first search after a sleep of NPUZZLE_TEST_NAP seconds."""
    if NAP_SECONDS:
        time.sleep(NAP_SECONDS)
    return bfs(start, goal, grid, counters=counters, heuristic=None)


def _sleep_in_setup(grid: Grid, goal: Board, heuristic: None) -> None:
    time.sleep(SETUP_SECONDS)


@register("slow_setup_bfs", optimal=True, budget_seconds=20, prepare=_sleep_in_setup)
def slow_setup_bfs(start: Board, goal: Board, grid: Grid, *, counters: Counters,
                   heuristic: None) -> str | None:
    """Breadth-first search after a set-up of NPUZZLE_TEST_SETUP seconds."""
    return bfs(start, goal, grid, counters=counters, heuristic=None)
