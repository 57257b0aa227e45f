"""Weighted A* compiled with numba: wastar's answers and counters, ~15x its rate.

The search, answers and counters of ``wastar`` (``solvers/_best_first.py``), 13-15x
its rate on 4x4 boards.

Data structures (:mod:`harness.kernels.best_first`): boards packed 4 bits a square
into an int64 (so at most 16 squares: up to 4x4); an open-addressing hash table of
the boards seen (packed board -> best g and the move that reached it); a binary
heap of int64 keys (f, then h, then push order: the same order as ``wastar``'s
tuples, f kept exact as q*g + p*h for w = p/q). h from the heuristic's compiled
arrays: tile costs updated per move, linear conflict and pattern databases
evaluated per new board, walking distance stepped in its state tables.

Bounded: with an admissible heuristic every path is at most w times the optimum
(``bounded_by="w"``, checked by the judge). Counters: exactly ``wastar``'s
(expanded, generated, max_frontier, extra["stale"]); tests compare them.

Tile costs (``cost_model``): the float kernel of :mod:`harness.kernels.costs`
(f = g + w*h in costs, the same order: f, then h, then first in first out); the
path costs at most w times the cheapest.

Set-up (``prepare``, outside the timed region): compiling the kernel or loading it
from numba's cache; pattern databases are built when the heuristic is made.
"""

from __future__ import annotations

from fractions import Fraction

from harness.heuristics import Heuristic, kernel
from harness.puzzle import Board, Grid, Moves
from harness.solver import Counters, register, weight_param
from solvers._costs import best_first as cost_best_first
from solvers._best_first import MAX_SQUARES, compiled, prepare, refuses_compiled


def _refuses(
    g: Grid, depth: int | None, heuristic: str | None, *, w: Fraction
) -> str | None:
    return refuses_compiled(g, heuristic, depth, w)


@register(
    "wastar_jit",
    optimal=False,
    bounded_by="w",
    params=(weight_param(2),),
    needs=(kernel("best_first"),),
    default_heuristic="manhattan",
    in_all="default",  # --solvers all: manhattan only; name the others
    refuses=_refuses,
    prepare=prepare,
    costs=True,
    sizes=f"up to {MAX_SQUARES} squares (4x4)",
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
    w: Fraction = Fraction(2),
    cost_model: str = "unit",
) -> Moves | None:
    """Weighted A* compiled with numba: wastar's answers and counters, ~15x its rate.

    A path at most ``w`` times the shortest (with tile costs: the cheapest); None
    when unsolvable.
    """
    if cost_model != "unit":
        return cost_best_first(start, goal, grid, counters, heuristic, cost_model,
                                a=1, b=w)  # fmt: skip
    return compiled(start, goal, grid, counters, heuristic, w=w)
