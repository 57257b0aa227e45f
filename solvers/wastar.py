"""Weighted A* (Pohl 1970): best-first on f = g + w*h, paths at most w x optimal.

Over board tuples, with dicts for the best g and the parent links. w = 1 is A*; a
larger w trusts h more, expands far fewer boards and returns longer paths.

Data structures and order: ``solvers/_best_first.py`` (a heap of (f, h, tie) keys
in exact integers: equal f pop the lower h first, then first in first out; a board
whose g improves is pushed again and its older entry goes stale). The goal is
tested when popped. With an admissible heuristic every path returned is at most w
times the optimum: when the goal is popped, some board of an optimal path is still
open with f <= g* + w*h* <= w * optimum, and the goal's f (its length) is no
larger. The judge checks that claim on every answer (``bounded_by="w"``).

Counters: expanded = boards popped and expanded (stale entries and the goal
excluded); generated = successors created, those already known at an equal or
lower g included; max_frontier = largest heap size, stale entries included;
extra["stale"] = stale entries popped. ``is_solvable`` is checked first, so an
unsolvable board returns None at once.
"""

from __future__ import annotations

from fractions import Fraction

from harness.heuristics import EVALUATE, NO_TABLES, Heuristic
from harness.puzzle import Board, Grid, Moves
from harness.solver import Counters, register, weight_param
from solvers._best_first import refuses_low_weight, search


@register(
    "wastar",
    optimal=False,
    bounded_by="w",
    params=(weight_param(2),),
    needs=(EVALUATE, NO_TABLES),  # any h(board) made without tables
    default_heuristic="manhattan",
    in_all="default",  # --solvers all: manhattan only; name the others
    refuses=refuses_low_weight,
    sizes="any (4x4 below w=2: depth <= 50)",
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
    w: Fraction = Fraction(2),
) -> Moves | None:
    """Weighted A* (Pohl 1970): best-first on f = g + w*h, paths at most w x optimal.

    A path at most ``w`` times the shortest; None when unsolvable.
    """
    return search(start, goal, grid, counters, heuristic, w=w)
