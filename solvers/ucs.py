"""Uniform-cost search (Dijkstra): best-first on g alone, with tile costs or without.

The search is ``astar_dict``'s under tile costs with h = 0
(``solvers/_cheapest.py``). Data structures: a binary heap (``heapq``), a dict
``best_g`` (board -> cheapest g found) and a dict ``parent`` (board -> the board it
was reached from). The goal is tested when a board is popped, which is what makes
it optimal for any positive move costs; a board whose g improves is pushed again
and its older entry goes stale. Equal g pop first-in first-out (``tie``).

It is the blind baseline of tile costs (``cost_model``, :mod:`harness.core.costs`):
``bfs`` counts moves and is refused there, while this search orders by the cost
of the moves made, so it returns the cheapest path under every model (and the
shortest under unit costs, with more bookkeeping than ``bfs``). No heuristic:
A* with h = 0. ``is_solvable`` is checked first, so an unsolvable board returns
None at once instead of exhausting its component.

Counters: expanded = boards popped (stale entries excluded) whose successors were
generated, goal excluded; generated = successors created; max_frontier = the
largest heap size seen, stale entries included; extra["stale"] = stale entries
popped and skipped.
"""

from __future__ import annotations

from harness.heuristics import Heuristic
from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, register, tile_costs
from solvers._cheapest import cheapest_first

#: Deepest known optimum taken on boards larger than 3x3: a blind search stores
#: every board within the optimum's cost (4x4 at depth 20: ~3.4M boards).
_MAX_DEPTH_LARGE = 20


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    if g.squares > 9 and (depth is None or depth > _MAX_DEPTH_LARGE):
        known = "unknown" if depth is None else str(depth)
        return (f"depth {known} on {g.label}: a blind search stores every cheaper "
                f"board (takes depth <= {_MAX_DEPTH_LARGE})")  # fmt: skip
    return None


@register("ucs", optimal=True, refuses=_refuses, costs=True,
          sizes="any (larger than 3x3: depth <= 20)")  # fmt: skip
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
    cost_model: str = "unit",
) -> Moves | None:
    """Uniform-cost search (Dijkstra): best-first on g alone, with tile costs or without.

    Cheapest move string from ``start`` to ``goal``; None when unsolvable.
    """
    if not is_solvable(start, goal, grid):
        return None
    return cheapest_first(start, goal, grid, counters,
                          tile_costs(cost_model, grid.squares))  # fmt: skip
