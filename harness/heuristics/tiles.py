"""Tile-additive heuristics: misplaced tiles and Manhattan distance.

Both are sums of per-tile shares, so they expose a ``tile_cost[tile][square]`` table,
which lets IDA* update ``h`` per move in O(1). Neither counts the blank.

Under a tile cost model (:mod:`harness.core.costs`) each tile's share is weighted
by its move cost: Manhattan becomes sum over tiles of distance(t) * cost(t), and
misplaced the sum of the misplaced tiles' costs. Both stay admissible and
consistent: tile t must move at least distance(t) times (at least once when
misplaced), each move of it costs cost(t), and one move changes one tile's share
by at most cost(t), the move's own cost. Their shares are then floats, which the
integer compiled kernels of the unit model do not take (the cost-aware kernels of
:mod:`harness.kernels.costs` read ``tile_cost`` itself).
"""

from __future__ import annotations

from collections.abc import Callable

from harness.heuristics.registry import (
    ADDITIVE_KERNELS,
    Heuristic,
    Kernel,
    register_heuristic,
)
from harness.core.costs import tile_costs
from harness.puzzle import Board, Grid


def _unit_only(h: Heuristic) -> None:
    if h.cost_model != "unit":
        raise ValueError(f"{h.name} under {h.cost_model} costs has float shares: "
                         "the unit kernels take integers (see harness.kernels.costs)")


def _ida_additive(h: Heuristic) -> Kernel:
    import numpy as np

    _unit_only(h)
    return Kernel("ida_additive", (np.array(h.tile_cost, dtype=np.int16),))


def _astar_additive(h: Heuristic) -> Kernel:
    import numpy as np

    _unit_only(h)
    return Kernel("astar_cantor", (np.array(h.tile_cost, dtype=np.int16), False))


def _best_first_additive(h: Heuristic) -> Kernel:
    import numpy as np

    _unit_only(h)
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


def _additive(
    name: str, goal: Board, g: Grid, cost: Callable[[int, int], int],
    cost_model: str = "unit",
):  # fmt: skip
    if cost_model == "unit":
        weight = (1,) * g.squares
    else:
        weight = tile_costs(cost_model, g.squares)
    table = tuple(
        tuple(0 if tile == 0 else cost(tile, square) * weight[tile]
              for square in range(g.squares))  # fmt: skip
        for tile in range(g.squares)
    )

    def estimate(board: Board) -> int:
        return sum([table[tile][square] for square, tile in enumerate(board)])

    return Heuristic(name, goal, g, estimate, table, cost_model=cost_model)


@register_heuristic(
    "manhattan", "sum of tiles' grid distances to their goal squares (with tile "
    "costs: each distance times the tile's cost)", tile_cost=True, costs=True,
)  # fmt: skip
def manhattan(goal: Board, g: Grid, cost_model: str = "unit") -> Heuristic:
    where = _positions(goal)

    def dist(tile: int, square: int) -> int:
        (r, c), (gr, gc) = g.row_col(square), g.row_col(where[tile])
        return abs(r - gr) + abs(c - gc)

    return _additive("manhattan", goal, g, dist, cost_model)


@register_heuristic(
    "misplaced", "tiles not on their goal square (blank not counted; with tile "
    "costs: their costs summed)", tile_cost=True, costs=True,
)  # fmt: skip
def misplaced(goal: Board, g: Grid, cost_model: str = "unit") -> Heuristic:
    where = _positions(goal)
    return _additive(
        "misplaced", goal, g, lambda t, c: int(where[t] != c), cost_model
    )
