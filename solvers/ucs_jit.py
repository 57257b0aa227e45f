"""Uniform-cost search (Dijkstra) compiled with numba: ``ucs``'s answers, on the
float best-first kernel of :mod:`harness.kernels.costs` with f = g (b = 0).

Data structures (the kernel's): boards packed 4 bits a square into an int64 (so at
most 16 squares: up to 4x4), an open-addressing hash table of the boards seen
(packed board -> cheapest g, the move that reached it) and a binary heap of entry
ids ordered by (g, push order). The goal is tested when popped: the cheapest path
under every cost model, the shortest under unit costs. ``is_solvable`` is checked
first. Counters: expanded, generated, max_frontier as ``ucs`` counts them (the
same order of equal g: first in first out), extra["stale"].

Set-up (``prepare``): compiling the kernel or loading it from numba's cache.
"""

from __future__ import annotations

from harness.heuristics import Heuristic
from harness.puzzle import Board, Grid, Moves, apply_moves
from harness.solver import Counters, register
from solvers._costs import MAX_SQUARES, best_first

#: Deepest known optimum taken on boards larger than 3x3: a blind search stores
#: every board cheaper than the goal (4x4 at depth 24: tens of millions).
_MAX_DEPTH_LARGE = 24


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    if g.squares > MAX_SQUARES:
        return (f"{g.label}: the compiled search packs a board in 64 bits "
                f"(<= {MAX_SQUARES} squares)")  # fmt: skip
    if g.squares > 9 and (depth is None or depth > _MAX_DEPTH_LARGE):
        known = "unknown" if depth is None else str(depth)
        return (f"depth {known} on {g.label}: a blind search stores every cheaper "
                f"board (takes depth <= {_MAX_DEPTH_LARGE})")  # fmt: skip
    return None


def prepare(g: Grid, goal: Board, heuristic: Heuristic | None) -> None:
    """Compile (or load from numba's cache) the kernel with a one-move solve."""
    if g.squares <= MAX_SQUARES:
        near = apply_moves(goal, g.neighbours[goal.index(0)][0][0], g)
        best_first(near, goal, g, Counters(), None, "unit", a=1, b=0)


@register("ucs_jit", optimal=True, refuses=_refuses, prepare=prepare, costs=True,
          sizes=f"up to {MAX_SQUARES} squares (larger than 3x3: depth <= "
          f"{_MAX_DEPTH_LARGE})")  # fmt: skip
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
    cost_model: str = "unit",
) -> Moves | None:
    """Uniform-cost search (Dijkstra) compiled with numba: ``ucs``'s answers.

    Cheapest move string from ``start`` to ``goal``; None when unsolvable.
    """
    return best_first(start, goal, grid, counters, None, cost_model, a=1, b=0)
