"""Best-first search ordered by f = a*g + b*h over board tuples: the one search
behind ``wastar`` (a = 1, b = w), ``greedy`` (a = 0, b = 1) and ``awastar`` (the
anytime variant). Not a solver itself (its name starts with ``_``, so the registry
does not import it); the solvers' docstrings say what each counts and promises.

Data structures: a binary heap of ``(f, h, tie, g, board)`` entries, so equal f pop
the lower h first (the deeper board: the usual tie-break for weighted search,
which reaches the goal sooner) and then first-in first-out; a dict ``best_g``
(board -> cheapest g found) and a dict ``parent`` (board -> (board it came from,
move)). f is kept in integers: a weight w = p/q orders like q*g + p*h, so no float
rounding ever reorders the heap and the compiled kernel
(:mod:`harness.kernels.best_first`) pops in exactly the same order.
"""

from __future__ import annotations

from fractions import Fraction
from heapq import heappop, heappush

from harness.heuristics import Heuristic, manhattan
from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, Param, format_value, number, weight_param


def anytime_params() -> tuple[Param, ...]:
    """The anytime search's parameters: its weight, and its effort after the first
    solution (expansions, as a multiple of those the first solution took)."""
    return (
        weight_param(2),
        Param("effort", Fraction(4), number(0, 1000),
              "expansions spent improving, as a multiple of the first solution's"),
    )  # fmt: skip


def refuses_low_weight(
    g: Grid, depth: int | None, heuristic: str | None, *, w: Fraction, **_: Fraction
) -> str | None:
    """The pure-Python searches decline deep boards over 3x3 at weights low
    enough to store millions of boards."""
    if g.squares > 9 and depth is not None and w < 2 and depth > 50:
        return (
            f"depth {depth} on {g.label} at w={format_value(w)}: weighted A* below "
            "w=2 may store tens of millions of boards (takes depth <= 50; the "
            "compiled version takes any)"
        )
    return None


def weights(w: Fraction | None) -> tuple[int, int]:
    """(a, b) with f = a*g + b*h ordering like g + w*h; w None: greedy (0, 1)."""
    if w is None:
        return 0, 1
    w = Fraction(w)
    return w.denominator, w.numerator


def search(
    start: Board,
    goal: Board,
    grid: Grid,
    counters: Counters,
    heuristic: Heuristic | None,
    *,
    w: Fraction | None,
    effort: Fraction | None = None,
) -> Moves | None:
    """Moves from ``start`` to ``goal`` (None when unsolvable), best-first on
    f = g + w*h (``w`` None: on h alone, and a board is never reopened).

    ``effort`` None: stop at the first goal popped. Otherwise anytime: keep
    searching after that first solution for at most ``effort`` times the
    expansions it took, pruning every board with g + h at or above the best
    length found and taking a shorter path to the goal as soon as it is
    generated; an open list run dry proves the best path optimal."""
    if not is_solvable(start, goal, grid):
        return None
    h_of = heuristic if heuristic is not None else manhattan(goal, grid)
    cost = h_of.tile_cost
    a, b = weights(w)
    reopen = w is not None
    neighbours = grid.neighbours
    h = h_of(start)
    heap = [(b * h, h, 0, 0, start)]
    best_g: dict[Board, int] = {start: 0}
    parent: dict[Board, tuple[Board, str] | None] = {start: None}
    tie = expanded = generated = stale = max_frontier = 0
    best = None  # length of the best path found (anytime)
    budget = None  # expansions left after the first solution (anytime)
    first_length = first_expanded = improvements = pruned = 0
    try:
        while heap:
            if len(heap) > max_frontier:
                max_frontier = len(heap)
            _, h, _, g, board = heappop(heap)
            if g > best_g[board]:
                stale += 1  # a cheaper copy of this board was pushed after this one
                continue
            if best is not None and g + h >= best:
                pruned += 1  # cannot lead to a shorter path than the best found
                continue
            if board == goal:
                if effort is None:
                    return _path(parent, board)
                best, first_length, first_expanded = g, g, expanded
                budget = int(effort * max(expanded, 1))
                continue
            if budget is not None:
                if budget <= 0:
                    break
                budget -= 1
            expanded += 1
            blank = board.index(0)
            g += 1
            for move, target in neighbours[blank]:
                squares = list(board)
                tile = squares[target]
                squares[blank] = tile
                squares[target] = 0
                child = tuple(squares)
                generated += 1
                known = best_g.get(child)
                if known is not None and (known <= g or not reopen):
                    continue
                best_g[child] = g
                parent[child] = (board, move)
                if child == goal and best is not None:
                    best = g  # anytime: a shorter path, taken at generation
                    improvements += 1
                    continue
                if cost is not None:
                    h_child = h - cost[tile][target] + cost[tile][blank]
                else:
                    h_child = h_of(child)
                if best is not None and g + h_child >= best:
                    pruned += 1
                    continue
                tie += 1
                heappush(heap, (a * g + b * h_child, h_child, tie, g, child))
        if best is None:
            raise AssertionError("solvable board but the open list ran dry")
        return _path(parent, goal)
    finally:
        anytime = None
        if effort is not None and best is not None:
            anytime = (first_length, first_expanded, improvements, pruned,
                       int(not heap))  # fmt: skip
        _count(counters, expanded, generated, max_frontier, stale, anytime)


def _count(
    counters: Counters, expanded: int, generated: int, max_frontier: int,
    stale: int, anytime: tuple | None,
) -> None:
    """Add one search's counts to ``counters``; ``anytime``: (first_length,
    first_expanded, improvements, pruned, proved) once a first solution exists."""
    counters.expanded += expanded
    counters.generated += generated
    counters.max_frontier = max(counters.max_frontier, max_frontier)
    extra = counters.extra
    if stale:
        extra["stale"] = extra.get("stale", 0) + stale
    if anytime is not None:
        first_length, first_expanded, improvements, pruned, proved = anytime
        extra["first_length"] = first_length
        extra["first_expanded"] = first_expanded
        extra["improvements"] = extra.get("improvements", 0) + improvements
        extra["pruned"] = extra.get("pruned", 0) + pruned
        extra["proved"] = proved


def _path(parent: dict[Board, tuple[Board, str] | None], board: Board) -> Moves:
    """Follow the parent links back to the start. Each link was set at a g one
    below its board's g at the time, and a board's g only ever falls, so the walk
    ends at the start within the goal's g steps."""
    moves: list[str] = []
    link = parent[board]
    while link is not None:
        board, move = link
        moves.append(move)
        link = parent[board]
    return "".join(reversed(moves))


# ------------------------------------------------------------ compiled version

#: Boards are packed 4 bits a square into one int64 (harness.kernels.best_first).
MAX_SQUARES = 16


#: Deepest optimum the compiled search takes over 3x3 below w = 1.25 (A*'s open
#: list: ~70 bytes a board, so the 4 GiB default memory limit holds ~50 million),
#: per heuristic; pattern databases and higher weights take any depth.
_MAX_DEPTH_LOW_WEIGHT = {"misplaced": 32, "manhattan": 50, "linear_conflict": 54,
                         "walking_distance": 56}  # fmt: skip


def refuses_compiled(
    g: Grid, heuristic: str | None, depth: int | None = None,
    w: Fraction | None = None,
) -> str | None:
    """Why the compiled search declines ``g`` (None: it takes it): more than 16
    squares, a heuristic not made for ``g`` (pattern databases' own grids), or a
    deep board over 3x3 at a weight close to 1 with a weak heuristic."""
    from harness.heuristics import all_heuristics

    if g.squares > MAX_SQUARES:
        return (
            f"{g.label}: the compiled search packs a board in 64 bits (<= 16 squares)"
        )
    heuristic = heuristic or "manhattan"
    info = all_heuristics().get(heuristic)
    if info is not None and info.refuses(g):
        return info.refuses(g)
    limit = _MAX_DEPTH_LOW_WEIGHT.get(heuristic)
    if (
        w is not None and w < Fraction(5, 4) and g.squares > 9 and depth is not None
        and limit is not None and depth > limit
    ):
        return (
            f"depth {depth} on {g.label} with {heuristic} at w={format_value(w)}: "
            f"A*'s open list may outgrow memory (takes depth <= {limit} below "
            "w=1.25; use a pdb heuristic)"
        )
    return None


_kernels: dict[tuple, tuple] = {}


def _kernel(goal: Board, g: Grid, heuristic: Heuristic):
    """The heuristic's ``best_first`` kernel, made once per heuristic and goal
    (and again if the heuristic comes with other tables)."""
    from harness.heuristics import all_heuristics

    key = (heuristic.name, goal, g.rows, g.cols)
    if key in _kernels and _kernels[key][0] is heuristic.data:
        return _kernels[key][1]
    found = all_heuristics()[heuristic.name].kernel("best_first", heuristic)
    _kernels[key] = (heuristic.data, found)
    return found


def compiled(
    start: Board,
    goal: Board,
    grid: Grid,
    counters: Counters,
    heuristic: Heuristic | None,
    *,
    w: Fraction | None,
    effort: Fraction | None = None,
) -> Moves | None:
    """:func:`search` compiled (:mod:`harness.kernels.best_first`): the same
    answer and counters, for boards of at most 16 squares."""
    if grid.squares > MAX_SQUARES:
        raise ValueError(refuses_compiled(grid, None))
    if not is_solvable(start, goal, grid):
        return None
    import numpy as np

    from harness import kernels
    from harness.heuristics import make_heuristic
    from harness.kernels import best_first

    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, grid)
    k = _kernel(goal, grid, h)
    args = (*k.start_args(start), *k.args) if k.start_args else k.args
    a, b = weights(w)
    num, den = (0, 0) if effort is None else (effort.numerator, effort.denominator)
    stats = np.zeros(10, dtype=np.int64)
    try:
        length, path = getattr(best_first, k.function)(
            np.array(start, dtype=np.int8), np.array(goal, dtype=np.int8),
            kernels.neighbour_array(grid), a, b, w is not None, num, den, *args, stats,
        )  # fmt: skip
    finally:
        values = stats.tolist()
        anytime = tuple(values[4:9]) if effort is not None and values[9] else None
        _count(counters, *values[:4], anytime)
    if length == -2:
        raise RuntimeError("f = a*g + b*h outgrew the kernel's 24 bits: a smaller "
                           "weight denominator or a shorter search")  # fmt: skip
    if length < 0:
        raise AssertionError("solvable board but the open list ran dry")
    return kernels.moves_to_str(path, length)


def prepare(g: Grid, goal: Board, heuristic: Heuristic | None) -> None:
    """Compile (or load from numba's cache) the kernel with a one-move solve, for
    each mode (weighted, greedy, anytime: one specialization serves all)."""
    from harness.heuristics import make_heuristic
    from harness.puzzle import apply_moves

    if g.squares > MAX_SQUARES:
        return
    if heuristic is not None and heuristic.cost_model != "unit":
        from solvers._costs import prepare as cost_prepare

        return cost_prepare(g, goal, heuristic, heuristic.cost_model)
    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, g)
    move = g.neighbours[goal.index(0)][0][0]
    compiled(apply_moves(goal, move, g), goal, g, Counters(), h, w=Fraction(2))
