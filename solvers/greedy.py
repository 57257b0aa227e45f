"""Greedy best-first search: expand the open board with the smallest h, no bound.

It ignores the moves already made (Doran & Michie 1966): fast, with no bound on how
long its paths get.

Data structures and order: ``solvers/_best_first.py`` with f = h (a heap of (h,
tie) keys, first in first out among equal h; dicts for the boards seen and their
parent links). A board seen once is never reopened, even when reached again by a
shorter path, so every board is expanded at most once. The goal is tested when
popped. No guarantee: the judge checks only that the path is legal and reaches the
goal; ``suboptimality`` in the rows says how long it was.

Counters: expanded = boards popped and expanded (the goal excluded); generated =
successors created, boards seen before included; max_frontier = largest heap
size. ``is_solvable`` is checked first, so an unsolvable board returns None at once.
"""

from __future__ import annotations

from harness.heuristics import EVALUATE, NO_TABLES, Heuristic
from harness.puzzle import Board, Grid, Moves
from harness.solver import Counters, register
from solvers._best_first import search


@register(
    "greedy",
    optimal=False,
    needs=(EVALUATE, NO_TABLES),  # any h(board) made without tables
    default_heuristic="manhattan",
    in_all="default",  # --solvers all: manhattan only; name the others
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """Greedy best-first search: expand the open board with the smallest h, no bound.

    A path to the goal, of no guaranteed length; None when unsolvable.
    """
    return search(start, goal, grid, counters, heuristic, w=None)
