"""Exact optimal path costs for every board of a small grid (up to 3x3), under each
tile cost model (:mod:`harness.core.costs`).

The unit model's oracle is a breadth-first search (:mod:`harness.core.oracle`);
with tile costs the cheapest path is no longer the shortest, so this is a
shortest-path search from the goal with each move weighted by the moved tile's
cost. Moves are reversible at the same cost (the same tile slides back), so the
cost from the goal is the cost to it.

The search is Bellman-Ford vectorised with numpy over the neighbour table of all
``n!`` ranks (:func:`harness.core.oracle.neighbour_table`): every round relaxes
every edge at once (``cost = min(cost, cost[neighbour] + edge)``) and it stops
when a round changes nothing, after as many rounds as the most moves any
cheapest path takes (~40 on 3x3): ~1-2 s for the 181,440 boards of one parity
class. A heap-based Dijkstra in Python took longer; numba is a layer above this
one. Every comparison and sum is exact floating point in a fixed order, so the
table is the same on every run.

Tables are float64 arrays indexed by rank (``inf`` = unreachable), kept in memory
per process and on disk under ``cache_dir("oracle")`` with a sha256 checksum, like
the distance tables.
"""

from __future__ import annotations

import hashlib
import json
from math import factorial
from pathlib import Path

import numpy as np

from harness.core.cache import cache_dir
from harness.core.costs import check_cost_model, is_unit, tile_costs
from harness.core.files import write_atomic
from harness.core.oracle import MAX_SQUARES, all_permutations, distances, neighbour_table
from harness.puzzle import Board, Grid, rank

_FORMAT = "npuzzle-cost-oracle"
_VERSION = 1

_memo: dict[tuple[int, int, Board, str], np.ndarray] = {}


def _edge_costs(grid: Grid, model: str) -> np.ndarray:
    """float64 (n!, 4): the cost of each neighbour-table edge (the tile that moves),
    inf where there is no edge."""
    perms = all_permutations(grid.squares)
    table = neighbour_table(grid)
    costs = np.array(tile_costs(model, grid.squares), dtype=np.float64)
    edge = np.full(table.shape, np.inf)
    blank_at = np.argmax(perms == 0, axis=1)
    for blank in range(grid.squares):
        rows = np.flatnonzero(blank_at == blank)
        for k, (_move, target) in enumerate(grid.neighbours[blank]):
            edge[rows, k] = costs[perms[rows, target]]
    return edge


def _build(goal: Board, grid: Grid, model: str) -> np.ndarray:
    table = neighbour_table(grid)
    edge = _edge_costs(grid, model)
    safe = np.where(table >= 0, table, 0)  # padded edges cost inf, so never win
    cost = np.full(len(table), np.inf)
    cost[rank(goal)] = 0.0
    while True:
        via = (cost[safe] + edge).min(axis=1)
        better = via < cost
        if not better.any():
            return cost
        cost = np.where(better, via, cost)


def _cache_file(goal: Board, grid: Grid, model: str) -> Path | None:
    folder = cache_dir("oracle")
    if folder is None:
        return None
    return folder / f"{grid.label}-{'-'.join(map(str, goal))}-{model}.cost"


def _meta(goal: Board, grid: Grid, model: str, body: bytes) -> dict:
    return {
        "format": _FORMAT,
        "version": _VERSION,
        "grid": grid.label,
        "goal": list(goal),
        "model": model,
        "size": factorial(grid.squares) * 8,
        "sha256": hashlib.sha256(body).hexdigest(),
    }


def _read_cached(path: Path, goal: Board, grid: Grid, model: str) -> np.ndarray | None:
    """The cached table, or None when missing, foreign, truncated or corrupt."""
    try:
        head, _, body = path.read_bytes().partition(b"\n")
        meta = json.loads(head)
    except (OSError, ValueError):
        return None
    if meta != _meta(goal, grid, model, body) or len(body) != meta["size"]:
        return None
    return np.frombuffer(body, dtype=np.float64).copy()


def optimal_costs(goal: Board, grid: Grid, model: str) -> np.ndarray:
    """Read-only float64 array over all ``n!`` ranks: the cheapest path's cost to
    ``goal`` under ``model``, inf if unreachable. ValueError for grids of more
    than 9 cells or an unknown model."""
    goal = tuple(goal)
    if grid.squares > MAX_SQUARES or sorted(goal) != list(range(grid.squares)):
        raise ValueError(f"cost oracle: only boards of at most {MAX_SQUARES} cells "
                         f"(3x3) are enumerated, toward a goal of the grid's tiles; "
                         f"not {grid.label} toward {goal}")  # fmt: skip
    check_cost_model(model)
    key = (grid.rows, grid.cols, goal, model)
    if key not in _memo:
        if is_unit(model):
            dist = distances(goal, grid)
            cost = np.where(dist >= 0, dist.astype(np.float64), np.inf)
        else:
            path = _cache_file(goal, grid, model)
            cost = _read_cached(path, goal, grid, model) if path else None
            if cost is None:
                cost = _build(goal, grid, model)
                if path:
                    body = cost.tobytes()
                    head = json.dumps(_meta(goal, grid, model, body)).encode()
                    try:  # atomic: a concurrent reader sees old or new, never half
                        write_atomic(path, head + b"\n" + body, sync=False)
                    except OSError:
                        pass
        cost.flags.writeable = False
        _memo[key] = cost
    return _memo[key]


def optimal_cost(board: Board, goal: Board, grid: Grid, model: str) -> float | None:
    """The cheapest path's cost from ``board`` to ``goal`` under ``model``; None
    when unsolvable."""
    if sorted(board) != list(range(grid.squares)):
        raise ValueError(f"oracle: board {board} is not a {grid.label} board")
    value = float(optimal_costs(goal, grid, model)[rank(board)])
    return None if value == np.inf else value


def clear_memory() -> None:
    """Forget the in-process tables (tests use this to exercise the disk cache)."""
    _memo.clear()
