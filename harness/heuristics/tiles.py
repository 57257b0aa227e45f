"""Tile-additive heuristics: misplaced tiles and Manhattan distance.

Both are sums of per-tile shares, so they expose a ``tile_cost[tile][cell]`` table,
which lets IDA* update ``h`` per move in O(1). Neither counts the blank.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.heuristics.registry import Heuristic, register_heuristic
from harness.puzzle import Board, Grid


def _positions(goal: Board) -> list[int]:
    where = [0] * len(goal)
    for cell, tile in enumerate(goal):
        where[tile] = cell
    return where


def _additive(name: str, goal: Board, g: Grid, cost: Callable[[int, int], int]):
    table = tuple(
        tuple(0 if tile == 0 else cost(tile, cell) for cell in range(g.cells))
        for tile in range(g.cells)
    )

    def estimate(board: Board) -> int:
        return sum([table[tile][cell] for cell, tile in enumerate(board)])

    return Heuristic(name, goal, g, estimate, table)


@register_heuristic("misplaced", "tiles not on their goal cell (blank not counted)")
def misplaced(goal: Board, g: Grid) -> Heuristic:
    where = _positions(goal)
    return _additive("misplaced", goal, g, lambda t, c: int(where[t] != c))


@register_heuristic("manhattan", "sum of tiles' grid distances to their goal cells")
def manhattan(goal: Board, g: Grid) -> Heuristic:
    where = _positions(goal)

    def dist(tile: int, cell: int) -> int:
        (r, c), (gr, gc) = g.row_col(cell), g.row_col(where[tile])
        return abs(r - gr) + abs(c - gc)

    return _additive("manhattan", goal, g, dist)
