"""A* on flat arrays indexed by Cantor rank, compiled with numba.

Data structures: every board is its lexicographic rank (``harness.puzzle.rank``), so
the best g (stored as g + 1, 0 = never seen) and the move that reached each board
live in two uint8/int8 arrays of ``squares!`` entries; the frontier is a binary heap
of (f, push count) keys in growable numpy arrays. The arrays are allocated zeroed
per solve, so the operating system maps only the pages a search touches.

Optimal: with an admissible heuristic. The goal is tested when popped; equal f pop
first-in first-out and a board improved later leaves a stale entry that is skipped,
so the counters equal ``astar_dict``'s (same successor order, same ties): expanded
= boards popped and expanded (goal excluded), generated = successors created,
max_frontier = largest heap size, stale entries included; extra["stale"] = stale
entries popped. Boards of more than 12 squares are refused (13! ranks would not fit);
deep boards over 9 squares too, since A* keeps every board it generates.

Tile costs (``cost_model`` other than unit): a uint8 g per rank cannot hold a
float cost, so the search goes to the float best-first kernel of
:mod:`harness.kernels.costs` (A* with f = g + h in costs; boards in a hash table,
up to 16 cells); its counters are that kernel's.

Set-up (``prepare``): compiling the kernel or loading it from numba's cache.
"""

from __future__ import annotations

from math import factorial

from harness.heuristics import Heuristic, all_heuristics, kernel, make_heuristic
from harness.puzzle import Board, Grid, Moves, apply_moves, is_solvable
from harness.solver import Counters, register
from solvers._costs import best_first as cost_best_first
from solvers._costs import prepare as cost_prepare

#: 12! = 479,001,600 ranks: two 479 MB arrays; 13! would need 12 GB.
_MAX_SQUARES = 12
#: Deepest known optimum taken on boards over 9 squares (A* memory grows fast).
_MAX_DEPTH_LARGE = {"misplaced": 30, "manhattan": 44, "linear_conflict": 46}


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Decline boards whose rank arrays would not fit, and deep boards over 3x3."""
    if g.squares > _MAX_SQUARES:
        return (
            f"{g.label} has {factorial(g.squares):,} ranks: flat arrays need at most "
            f"{_MAX_SQUARES} squares"
        )
    limit = _MAX_DEPTH_LARGE.get(heuristic or "manhattan", 40)
    if g.squares > 9 and depth is not None and depth > limit:
        return (
            f"depth {depth} on {g.label} with {heuristic}: A* would store too many "
            f"boards (takes depth <= {limit})"
        )
    return None


_args_memo: dict[tuple, tuple] = {}


def _kernel_args(goal: Board, g: Grid, heuristic: Heuristic) -> tuple:
    """Heuristic arrays for the kernel: (cost, conflicts, lines...), once per goal.
    The heuristic's declared ``astar_cantor`` kernel gives (cost, conflicts)."""
    key = (heuristic.name, goal, g.rows, g.cols)
    if key not in _args_memo:
        import numpy as np

        from harness import kernels

        _, line_squares, line_len, goal_row, goal_col, rows, _ = (
            kernels.conflict_arrays(goal, g)
        )
        own = all_heuristics()[heuristic.name].kernel("astar_cantor", heuristic)
        cost, conflicts = own.args
        fact = np.array([factorial(i) for i in range(g.squares + 1)], dtype=np.int64)
        _args_memo[key] = (
            kernels.neighbour_array(g),
            (cost, conflicts, line_squares, line_len, goal_row, goal_col, rows, fact),
        )
    return _args_memo[key]


def _run(start: Board, goal: Board, g: Grid, heuristic: Heuristic, stats) -> Moves:
    import numpy as np

    from harness import kernels

    nbr, args = _kernel_args(goal, g, heuristic)
    size = factorial(g.squares)
    best_g = np.zeros(size, dtype=np.uint8)
    parent_move = np.zeros(size, dtype=np.int8)
    path = np.zeros(256, dtype=np.int8)
    length = kernels.astar_cantor(
        np.array(start, dtype=np.int8), np.array(goal, dtype=np.int8), nbr, *args,
        best_g, parent_move, stats, path,
    )
    if length < 0:
        raise AssertionError("solvable board but the heap ran dry")
    return kernels.moves_to_str(path, length)


def _prepare(g: Grid, goal: Board, heuristic: Heuristic | None) -> None:
    """Compile (or load from numba's cache) the kernel with a two-move solve."""
    import numpy as np

    if heuristic is not None and heuristic.cost_model != "unit":
        return cost_prepare(g, goal, heuristic, heuristic.cost_model)
    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, g)
    move = g.neighbours[goal.index(0)][0][0]
    _run(apply_moves(goal, move, g), goal, g, h, np.zeros(4, dtype=np.int64))


@register(
    "astar_cantor_jit",
    optimal=True,
    needs=(kernel("astar_cantor"),),  # a tile cost table, optionally + conflicts
    default_heuristic="manhattan",
    refuses=_refuses,
    prepare=_prepare,
    costs=True,
    sizes=f"up to {_MAX_SQUARES} squares (2x2 .. 3x4); over 9 squares depth-limited",
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
    """A* on flat arrays indexed by Cantor rank, compiled with numba.

    Shortest (with tile costs: cheapest) move string from ``start`` to ``goal``;
    None when unsolvable.
    """
    if cost_model != "unit":
        return cost_best_first(start, goal, grid, counters, heuristic, cost_model,
                               a=1, b=1)  # fmt: skip
    if grid.squares > _MAX_SQUARES:
        raise ValueError(f"astar_cantor_jit: {grid.label} has too many ranks")
    if not is_solvable(start, goal, grid):
        return None
    import numpy as np

    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, grid)
    stats = np.zeros(4, dtype=np.int64)
    try:
        return _run(start, goal, grid, h, stats)
    finally:
        counters.expanded += int(stats[0])
        counters.generated += int(stats[1])
        counters.max_frontier = max(counters.max_frontier, int(stats[2]))
        if stats[3]:
            counters.extra["stale"] = counters.extra.get("stale", 0) + int(stats[3])
