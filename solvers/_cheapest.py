"""The cheapest-first search over board tuples behind ``astar_dict`` under tile
costs and ``ucs`` (uniform-cost search: the same search with h = 0). Not a
solver itself (its name starts with ``_``).

Data structures: a binary heap (``heapq``) of ``(f, tie, g, h, board)`` entries
(h carried: f - g would drift in floats), a dict ``best_g`` (board -> cheapest g
found) and a dict ``parent`` (board -> the board it was reached from). The goal
is tested when a board is popped, which makes it optimal with an admissible h
and positive move costs; a board whose g improves is pushed again and its older
entry goes stale. Equal f pop first-in first-out (``tie``).

Counters: expanded = boards popped (stale entries excluded) whose successors
were generated, goal excluded; generated = successors created; max_frontier =
the largest heap size seen, stale entries included; extra["stale"] = stale
entries popped and skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from heapq import heappop, heappush

from harness.puzzle import Board, Grid, Moves
from harness.solver import Counters


def cheapest_first(
    start: Board, goal: Board, grid: Grid, counters: Counters,
    move_cost: Sequence[float], h_of: Callable[[Board], float] | None = None,
    share: Sequence[Sequence[float]] | None = None,
) -> Moves:  # fmt: skip
    """The cheapest path from ``start`` to ``goal`` (solvable: the caller checks)
    when moving tile t costs ``move_cost[t]``; h from ``share[tile][square]``
    updated per move when given, else ``h_of(board)``, else 0 (uniform-cost)."""
    neighbours = grid.neighbours
    tie = 0
    h = h_of(start) if h_of is not None else 0.0
    heap = [(h, tie, 0.0, h, start)]
    best_g: dict[Board, float] = {start: 0.0}
    parent: dict[Board, Board | None] = {start: None}
    expanded = generated = stale = max_frontier = 0
    try:
        while heap:
            if len(heap) > max_frontier:
                max_frontier = len(heap)
            _, _, g, h, board = heappop(heap)
            if g > best_g[board]:
                stale += 1  # a cheaper copy of this board was pushed after this one
                continue
            if board == goal:
                return walk_back(parent, board, grid)
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
                if share is not None:
                    h_child = h - share[tile][target] + share[tile][blank]
                elif h_of is not None:
                    h_child = h_of(child)
                else:
                    h_child = 0.0
                tie += 1
                heappush(heap, (g_child + h_child, tie, g_child, h_child, child))
        raise AssertionError("solvable board but the heap ran dry")
    finally:
        counters.expanded += expanded
        counters.generated += generated
        counters.max_frontier = max(counters.max_frontier, max_frontier)
        if stale:
            counters.extra["stale"] = counters.extra.get("stale", 0) + stale


def walk_back(parent: dict[Board, Board | None], board: Board, g: Grid) -> Moves:
    """Walk parent links back to the start; each move is read off the blank's step."""
    step_to_move = {-g.cols: "u", g.cols: "d", -1: "l", 1: "r"}
    moves: list[str] = []
    before = parent[board]
    while before is not None:
        moves.append(step_to_move[board.index(0) - before.index(0)])
        board, before = before, parent[before]
    return "".join(reversed(moves))
