"""Anytime weighted A* (Hansen & Zhou 2007): weighted A*, then improving its path.

Weighted A*'s first solution, then the same search goes on to improve it, with a
budget of further expansions.

Data structures and order: ``solvers/_best_first.py``, f = g + w*h. The first goal
popped is weighted A*'s answer (at most w times the optimum). The search then
continues from the same open list: a board with g + h at or above the best length
found is pruned (an admissible h says it cannot lead to a shorter path), a shorter
path to the goal is taken as soon as it is generated, and the search stops after
``effort`` times the expansions the first solution took, or when the open list is
empty, which proves the best path optimal. The path returned is the best found: at
most w times the optimum, the bound declared and checked (``bounded_by="w"``).

Counters: as ``wastar`` (expanded, generated, max_frontier, extra["stale"]), over
the whole search; extra["first_length"] and extra["first_expanded"]: the first
solution's length and the expansions it took; extra["improvements"]: shorter paths
found after it; extra["pruned"]: boards cut by the best length; extra["proved"]: 1
when the open list ran dry (the path is optimal), else 0 (the budget ran out).
"""

from __future__ import annotations

from fractions import Fraction

from harness.heuristics import EVALUATE, NO_TABLES, Heuristic
from harness.puzzle import Board, Grid, Moves
from harness.solver import Counters, register
from solvers._best_first import anytime_params, refuses_low_weight, search


@register(
    "awastar",
    optimal=False,
    bounded_by="w",
    params=anytime_params(),
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
    effort: Fraction = Fraction(4),
) -> Moves | None:
    """Anytime weighted A* (Hansen & Zhou 2007): weighted A*, then improving its path.

    The best path found within the budget, at most ``w`` times the shortest;
    None when unsolvable.
    """
    return search(start, goal, grid, counters, heuristic, w=w, effort=effort)
