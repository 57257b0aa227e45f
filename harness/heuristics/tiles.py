"""Tile-additive heuristics: misplaced tiles and Manhattan distance.

Both are sums of per-tile shares, so they expose a ``tile_cost[tile][square]`` table,
which lets IDA* update ``h`` per move in O(1). Neither counts the blank.
"""

from __future__ import annotations

from collections.abc import Callable

from harness.heuristics.registry import (
    ADDITIVE_KERNELS,
    Heuristic,
    Kernel,
    register_heuristic,
)
from harness.puzzle import Board, Grid


def _ida_additive(h: Heuristic) -> Kernel:
    import numpy as np

    return Kernel("ida_additive", (np.array(h.tile_cost, dtype=np.int16),))


def _astar_additive(h: Heuristic) -> Kernel:
    import numpy as np

    return Kernel("astar_cantor", (np.array(h.tile_cost, dtype=np.int16), False))


def _best_first_additive(h: Heuristic) -> Kernel:
    import numpy as np

    return Kernel("best_first_additive", (np.array(h.tile_cost, dtype=np.int16),))


# Every tile-additive heuristic (``tile_cost=True``) gets these compiled kernels.
ADDITIVE_KERNELS.update(
    ida=_ida_additive, astar_cantor=_astar_additive, best_first=_best_first_additive
)


def _positions(goal: Board) -> list[int]:
    where = [0] * len(goal)
    for square, tile in enumerate(goal):
        where[tile] = square
    return where


def _additive(name: str, goal: Board, g: Grid, cost: Callable[[int, int], int]):
    table = tuple(
        tuple(0 if tile == 0 else cost(tile, square) for square in range(g.squares))
        for tile in range(g.squares)
    )

    def estimate(board: Board) -> int:
        return sum([table[tile][square] for square, tile in enumerate(board)])

    return Heuristic(name, goal, g, estimate, table)


@register_heuristic(
    "manhattan", "sum of tiles' grid distances to their goal squares", tile_cost=True
)
def manhattan(goal: Board, g: Grid) -> Heuristic:
    where = _positions(goal)

    def dist(tile: int, square: int) -> int:
        (r, c), (gr, gc) = g.row_col(square), g.row_col(where[tile])
        return abs(r - gr) + abs(c - gc)

    return _additive("manhattan", goal, g, dist)


@register_heuristic(
    "misplaced", "tiles not on their goal square (blank not counted)", tile_cost=True
)
def misplaced(goal: Board, g: Grid) -> Heuristic:
    where = _positions(goal)
    return _additive("misplaced", goal, g, lambda t, c: int(where[t] != c))
