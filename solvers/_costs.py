"""The compiled searches with tile costs behind the solvers that take them
(``astar_cantor_jit``, ``wastar_jit``, ``greedy_jit``, ``ucs``, ``ida_star_jit``,
``wida_star``): the kernels of :mod:`harness.kernels.costs`, called with the
heuristic's cost-weighted shares and the model's move costs. Not a solver itself
(its name starts with ``_``).

A heuristic for a cost model is tile-additive (``tile_cost`` in that model's
costs: cost-weighted Manhattan or misplaced) or a weighted pattern database
(:mod:`harness.heuristics.pdb_costs`: pdb44, pdb555, pdb663); others are refused
before a solve (``harness.solver``: the ``tile costs`` capability). Counters: expanded,
generated, max_frontier as the kernels count them; best-first adds
``extra["stale"]``, IDA* ``iterations`` (thresholds tried).
"""

from __future__ import annotations

from typing import Any

from harness.heuristics import Heuristic, make_heuristic
from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, tile_costs

#: Boards pack 4 bits a square into an int64 in the best-first kernel.
MAX_SQUARES = 16
#: Longest path the best-first kernel returns (greedy paths on 4x4 run to
#: hundreds of moves).
_LONGEST = 1 << 16

_arrays: dict[tuple, tuple[Heuristic, Any, Any, Any]] = {}


def _tables(goal: Board, grid: Grid, heuristic: Heuristic | None, cost_model: str,
            blind: bool = False):  # fmt: skip
    """(share, move_cost, pdb): float64 arrays of the heuristic's shares (zeros
    for a weighted PDB) and the moved tiles' costs, and the weighted PDB's arrays
    (None for a tile-additive h), once per heuristic object. No heuristic:
    cost-weighted Manhattan, or with ``blind`` h = 0 (uniform-cost search)."""
    import numpy as np

    from harness.heuristics.pdb_costs import WeightedPDB

    h = heuristic
    if h is None and not blind:
        h = make_heuristic("manhattan", goal, grid, cost_model)
    weighted = h is not None and isinstance(h.data, WeightedPDB)
    if h is not None and (h.cost_model != cost_model
                          or (h.tile_cost is None and not weighted)):  # fmt: skip
        raise ValueError(f"heuristic {h.name} ({h.cost_model} costs) is not a "
                         f"tile-additive or weighted PDB bound on {cost_model} "
                         "costs")  # fmt: skip
    key = (h.name if h else None, goal, grid.rows, grid.cols, cost_model)
    found = _arrays.get(key)
    if found is None or found[0] is not h:
        n = grid.squares
        share = np.zeros((n, n)) if h is None or weighted else np.array(
            h.tile_cost, dtype=np.float64)  # fmt: skip
        move = np.array(tile_costs(cost_model, n), dtype=np.float64)
        pdb = None
        if weighted:
            a = h.data.arrays
            pdb = (a["tables"], a["offsets"], a["gtiles"], a["gsize"], a["gmult"],
                   a["popcnt"])  # fmt: skip
        found = _arrays[key] = (h, share, move, pdb)
    return found[1], found[2], found[3]


def best_first(
    start: Board, goal: Board, grid: Grid, counters: Counters,
    heuristic: Heuristic | None, cost_model: str, *, a: float, b: float,
    reopen: bool = True,
) -> Moves | None:  # fmt: skip
    """Best-first on f = a*g + b*h in tile costs (A*: 1, 1; weighted: 1, w;
    greedy: 0, 1 without reopening; uniform-cost: 1, 0, no heuristic needed);
    None when unsolvable."""
    if grid.squares > MAX_SQUARES:
        raise ValueError(f"{grid.label}: the compiled search packs a board in 64 "
                         "bits (<= 16 cells)")  # fmt: skip
    if not is_solvable(start, goal, grid):
        return None
    import numpy as np

    from harness import kernels

    share, move, pdb = _tables(goal, grid, heuristic, cost_model, blind=b == 0)
    stats = np.zeros(4, dtype=np.int64)
    path = np.empty(_LONGEST, dtype=np.int8)
    try:
        length = kernels.best_first_costs(
            np.array(start, dtype=np.int8), np.array(goal, dtype=np.int8),
            kernels.neighbour_array(grid), share, move, float(a), float(b), reopen,
            stats, path, pdb,
        )  # fmt: skip
    finally:
        _count(counters, stats, "stale")
    if length < 0:
        raise RuntimeError(f"no path within {_LONGEST} moves, or the open list ran dry")
    return kernels.moves_to_str(path, length)


def ida(
    start: Board, goal: Board, grid: Grid, counters: Counters,
    heuristic: Heuristic | None, cost_model: str, *, w: float = 1.0,
) -> Moves | None:  # fmt: skip
    """IDA* (w = 1) or weighted IDA* in tile costs, float thresholds (the strategy:
    :mod:`harness.kernels.costs`); None when unsolvable."""
    if not is_solvable(start, goal, grid):
        return None
    import numpy as np

    from harness import kernels

    share, move, pdb = _tables(goal, grid, heuristic, cost_model)
    stats = np.zeros(4, dtype=np.int64)
    path = np.zeros(kernels.MAX_PATH + 1, dtype=np.int8)
    try:
        length = kernels.ida_costs(
            np.array(start, dtype=np.int8), np.array(goal, dtype=np.int8),
            kernels.neighbour_array(grid), share, move, float(w),
            float(move[1:].min()), stats, path, pdb,
        )  # fmt: skip
    finally:
        _count(counters, stats, "iterations")
    if length < 0:
        raise RuntimeError(f"no path within {kernels.MAX_PATH} moves")
    return kernels.moves_to_str(path, length)


def _count(counters: Counters, stats, fourth: str) -> None:
    expanded, generated, frontier, last = (int(x) for x in stats)
    counters.expanded += expanded
    counters.generated += generated
    counters.max_frontier = max(counters.max_frontier, frontier)
    if fourth == "iterations":
        counters.iterations += last
    elif last:
        counters.extra["stale"] = counters.extra.get("stale", 0) + last


def prepare(g: Grid, goal: Board, heuristic: Heuristic | None, cost_model: str) -> None:
    """Compile (or load from numba's cache) both kernels with a one-move solve."""
    from harness.puzzle import apply_moves

    if g.squares > MAX_SQUARES or heuristic is None or heuristic.cost_model != cost_model:
        return
    near = apply_moves(goal, g.neighbours[goal.index(0)][0][0], g)
    best_first(near, goal, g, Counters(), heuristic, cost_model, a=1, b=1)
    ida(near, goal, g, Counters(), heuristic, cost_model)
