"""Anytime weighted A* compiled with numba: awastar's answers and counters.

The search, answers and counters of ``awastar`` (``solvers/_best_first.py``:
weighted A*'s first solution, then improved within ``effort`` times its
expansions, pruning on g + h), on the packed boards, hash table and heap of
:mod:`harness.kernels.best_first` (boards of at most 16 squares: up to 4x4).

Bounded: every path at most w times the optimum (``bounded_by="w"``, checked by
the judge). Counters: exactly ``awastar``'s, extras included (first_length,
first_expanded, improvements, pruned, proved); tests compare them. Set-up
(``prepare``): compiling the kernel or loading it from numba's cache.
"""

from __future__ import annotations

from fractions import Fraction

from harness.heuristics import Heuristic, kernel
from harness.puzzle import Board, Grid, Moves
from harness.solver import Counters, register
from solvers._best_first import (
    MAX_SQUARES,
    anytime_params,
    compiled,
    prepare,
    refuses_compiled,
)


def _refuses(
    g: Grid, depth: int | None, heuristic: str | None, **params: Fraction
) -> str | None:
    return refuses_compiled(g, heuristic, depth, params.get("w"))


@register(
    "awastar_jit",
    optimal=False,
    bounded_by="w",
    params=anytime_params(),
    needs=(kernel("best_first"),),
    default_heuristic="manhattan",
    in_all="default",  # --solvers all: manhattan only; name the others
    refuses=_refuses,
    prepare=prepare,
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
    effort: Fraction = Fraction(4),
) -> Moves | None:
    """Anytime weighted A* compiled with numba: awastar's answers and counters.

    The best path found within the budget, at most ``w`` times the shortest;
    None when unsolvable.
    """
    return compiled(start, goal, grid, counters, heuristic, w=w, effort=effort)
