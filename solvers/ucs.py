"""Uniform-cost search (Dijkstra): best-first on g alone, with tile costs or without.

Data structures: a binary heap (``heapq``) of ``(g, tie, board)`` entries, a dict
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

from heapq import heappop, heappush

from harness.heuristics import Heuristic
from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, register, tile_costs

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
    move_cost = tile_costs(cost_model, grid.squares)
    neighbours = grid.neighbours
    tie = 0
    heap = [(0.0, tie, start)]
    best_g: dict[Board, float] = {start: 0.0}
    parent: dict[Board, Board | None] = {start: None}
    expanded = generated = stale = max_frontier = 0
    try:
        while heap:
            if len(heap) > max_frontier:
                max_frontier = len(heap)
            g, _, board = heappop(heap)
            if g > best_g[board]:
                stale += 1  # a cheaper copy of this board was pushed after this one
                continue
            if board == goal:
                return _path(parent, board, grid)
            expanded += 1
            blank = board.index(0)
            for _, target in neighbours[blank]:
                squares = list(board)
                tile = squares[target]
                squares[blank] = tile
                squares[target] = 0
                child = tuple(squares)
                generated += 1
                g_child = g + move_cost[tile]
                known = best_g.get(child)
                if known is not None and known <= g_child:
                    continue
                best_g[child] = g_child
                parent[child] = board
                tie += 1
                heappush(heap, (g_child, tie, child))
        raise AssertionError("solvable board but the heap ran dry")
    finally:
        counters.expanded += expanded
        counters.generated += generated
        counters.max_frontier = max(counters.max_frontier, max_frontier)
        if stale:
            counters.extra["stale"] = counters.extra.get("stale", 0) + stale


def _path(parent: dict[Board, Board | None], board: Board, g: Grid) -> Moves:
    """Walk parent links back to the start; each move is read off the blank's step."""
    step_to_move = {-g.cols: "u", g.cols: "d", -1: "l", 1: "r"}
    moves: list[str] = []
    before = parent[board]
    while before is not None:
        moves.append(step_to_move[board.index(0) - before.index(0)])
        board, before = before, parent[before]
    return "".join(reversed(moves))
