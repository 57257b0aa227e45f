"""Greedy best-first search compiled with numba: greedy's answers and counters.

The search, answers and counters of ``greedy`` (``solvers/_best_first.py``, f = h,
no board reopened), on the packed boards, hash table and heap of
:mod:`harness.kernels.best_first` (boards of at most 16 squares: up to 4x4). No bound
on the path length.

Tile costs (``cost_model``): on h in costs (cost-weighted Manhattan), the float
kernel of :mod:`harness.kernels.costs`; still no bound.

Counters: exactly ``greedy``'s (expanded, generated, max_frontier); tests compare
them. Set-up (``prepare``): compiling the kernel or loading it from numba's cache.
"""

from __future__ import annotations

from harness.heuristics import Heuristic, kernel
from harness.puzzle import Board, Grid, Moves
from harness.solver import Counters, register
from solvers._costs import best_first as cost_best_first
from solvers._best_first import MAX_SQUARES, compiled, prepare, refuses_compiled


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    return refuses_compiled(g, heuristic)


@register(
    "greedy_jit",
    optimal=False,
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
    cost_model: str = "unit",
) -> Moves | None:
    """Greedy best-first search compiled with numba: greedy's answers and counters.

    A path to the goal, of no guaranteed length; None when unsolvable.
    """
    if cost_model != "unit":
        return cost_best_first(start, goal, grid, counters, heuristic, cost_model,
                                a=0, b=1, reopen=False)  # fmt: skip
    return compiled(start, goal, grid, counters, heuristic, w=None)
