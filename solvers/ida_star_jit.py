"""IDA* compiled with numba: the search and counters of ``ida_star``, ~10x its rate.

Data structures: one int8 board changed in place, an explicit stack of move indices
(no recursion), and the heuristic kept incrementally: Manhattan / misplaced by a
per-tile cost table, linear conflict by re-measuring only the two rows or columns a
move touches, walking distance by one step in its row or column state table,
pattern databases by re-indexing only the moved tile's group (and its mirrored
group). Kernels live in :mod:`harness.kernels`.

``solve`` calls the kernel's one-board entry (:mod:`harness.kernels.single`): the
tables bound once per heuristic, goal and grid, the solvability test compiled, the
compiled overload called without numba's argument typing, so a 3x3 solve costs
its search and ~2-3 us more (``tests/benchmarks/bench_solve_call.py``). A kernel
without one (a plugin's) goes the general way (``_solve_general``).
``solve_many`` (for ``harness solve``) solves a batch in one kernel call, through
a ``*_many`` driver per kernel.

Optimal: with an admissible heuristic (all offered ones). Unsolvable boards return
None at once (``is_solvable``), since IDA* keeps no closed set.

Counters follow Korf (1985) exactly as ``ida_star`` does (its docstring has the
details): moves tried up, left, right, down; the undoing move never generated;
generated = every child created, cut-off ones included, summed over iterations,
plus 1 for the root (once); the last iteration stops at the first goal;
max_frontier = the final bound. With ``manhattan`` and the blank-first goal it
reproduces Korf's published node counts (``harness/data/korf100.tsv``).

Tile costs (``cost_model`` other than unit): IDA* in float costs with a
tile-additive heuristic (cost-weighted Manhattan or misplaced), a kernel of its
own (:mod:`harness.kernels.costs`, where the threshold strategy is stated: the
smallest exceeded f, at least the cheapest tile's cost above the last, and
branch and bound in the iteration that finds a path), so the unit kernels are
untouched. iterations = thresholds tried.

Set-up (``prepare``, outside the timed region): compiling or loading the kernel from
numba's cache, and for ``pdb*`` heuristics building or loading the tables, which
happens when the runner makes the heuristic. numba is imported only then.
"""

from __future__ import annotations

from typing import Any

from harness.heuristics import (
    Heuristic,
    Kernel,
    all_heuristics,
    kernel,
    make_heuristic,
)
from harness.puzzle import MOVE_ORDER, Board, Grid, Moves, apply_moves, is_solvable
from harness.solver import Counters, register
from solvers._costs import ida as cost_ida
from solvers._costs import prepare as cost_prepare

#: Deepest known optimum taken on boards larger than 3x3, per heuristic, so a
#: solve fits the budget at the measured rates (~78M nodes/s manhattan, ~17M/s
#: linear conflict): Korf's 100 need up to 6e9 nodes with manhattan. Walking
#: distance solves every Korf instance in under 15 s, so it takes any 4x4 depth.
_MAX_DEPTH_LARGE = {
    "misplaced": 40,
    "manhattan": 58,
    "linear_conflict": 60,
    "walking_distance": 80,
}


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Decline pattern databases on grids they are not built for, and deep boards
    with weak heuristics on grids larger than 3x3."""
    heuristic = heuristic or "manhattan"
    info = all_heuristics().get(heuristic)
    if info is not None and info.refuses(g):  # e.g. pattern databases' own grids
        return info.refuses(g)
    if heuristic.startswith("pdb"):  # pattern databases take any depth
        return None
    if g.squares <= 9 or depth is None:
        return None
    limit = _MAX_DEPTH_LARGE.get(heuristic, 58)
    if depth > limit:
        return (
            f"depth {depth} on {g.label} with {heuristic}: compiled IDA* may need "
            f"billions of nodes (takes depth <= {limit}; use a pdb heuristic)"
        )
    return None


#: (heuristic name, goal, rows, cols) -> (heuristic data it was built from, kernel)
_args_memo: dict[tuple, tuple[Any, Kernel]] = {}


def _kernel(goal: Board, g: Grid, heuristic: Heuristic) -> Kernel:
    """The heuristic's declared ``ida`` kernel, built once per process (and again
    if the heuristic comes with other tables)."""
    key = (heuristic.name, goal, g.rows, g.cols)
    if key in _args_memo and _args_memo[key][0] is heuristic.data:
        return _args_memo[key][1]
    result = all_heuristics()[heuristic.name].kernel("ida", heuristic)
    _args_memo[key] = (heuristic.data, result)
    return result


MOVE_INDEX = {m: i for i, m in enumerate(MOVE_ORDER)}
_goal_arrays: dict[tuple, Any] = {}
_path_buffer: list = []


def _run(start: Board, goal: Board, g: Grid, heuristic: Heuristic, stats) -> Moves:
    import numpy as np

    from harness import kernels

    k = _kernel(goal, g, heuristic)
    args = (*k.start_args(start), *k.args) if k.start_args else k.args
    board = np.array(start, dtype=np.int8)
    target = _goal_arrays.get(goal)
    if target is None:  # per goal, read-only: a 3x3 solve takes microseconds
        target = _goal_arrays[goal] = np.array(goal, dtype=np.int8)
        target.flags.writeable = False
    if not _path_buffer:  # the kernel overwrites what it returns
        _path_buffer.append(np.zeros(kernels.MAX_PATH + 1, dtype=np.int8))
    path = _path_buffer[0]
    nbr = kernels.neighbour_array(g)
    length = getattr(kernels, k.function)(board, target, nbr, *args, stats, path)
    if length < 0:
        raise RuntimeError(f"ida_star_jit: no path within {kernels.MAX_PATH} moves")
    return kernels.moves_to_str(path, length)


class _Fast:
    """A kernel's one-board entry bound to a heuristic, goal and grid
    (:mod:`harness.kernels.single`): ``call(start, frame, *start_args(start))``,
    and the frame's counters and path as the arrays they are."""

    __slots__ = ("data", "call", "frame", "start_args", "stats", "path")

    def __init__(self, data, call, frame, start_args, stats, path) -> None:
        self.data, self.call, self.frame = data, call, frame
        self.start_args, self.stats, self.path = start_args, stats, path


#: (heuristic name, goal, rows, cols) -> _Fast, or None for a kernel without a
#: one-board entry; and the last (heuristic, grid, goal, _Fast) looked up, since
#: a run solves one square's board over and over.
_fast_memo: dict[tuple, _Fast | None] = {}
_last: list = [None, None, None, None]
_UNSEEN = object()


def _fast(goal: Board, g: Grid, h: Heuristic) -> _Fast | None:
    """The one-board entry of the heuristic's kernel (compiled or loaded from
    numba's cache on first use), or None when its kernel has none."""
    key = (h.name, goal, g.rows, g.cols)
    fast = _fast_memo.get(key, _UNSEEN)
    if fast is _UNSEEN or (fast is not None and fast.data is not h.data):
        from harness import kernels
        from harness.kernels import single

        k = _kernel(goal, g, h)
        entry = getattr(single, f"{k.function}_one", None)
        fast = None
        if entry is not None:
            nbr = kernels.neighbour_array(g)
            args, start_args = single.entry_args(k, h.data)
            frame, stats, path = single.make_frame(goal, g.cols, nbr, args)
            extra = start_args(goal) if start_args else ()
            call = single.bind(entry, tuple(goal), frame, *extra)
            fast = _Fast(h.data, call, frame, start_args, stats, path)
        _fast_memo[key] = fast
    _last[:] = (h, g, goal, fast)
    return fast


#: move index (bytes 0-3) -> its letter
_LETTER_BYTES = bytes.maketrans(bytes(range(4)), MOVE_ORDER.encode())


def _prepare(g: Grid, goal: Board, heuristic: Heuristic | None) -> None:
    """Compile (or load from numba's cache) the kernel this heuristic uses, by
    solving a two-move board; PDB tables are already in ``heuristic.data``."""
    import numpy as np

    if heuristic is not None and heuristic.cost_model != "unit":
        return cost_prepare(g, goal, heuristic, heuristic.cost_model)

    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, g)
    blank_moves = "".join(m for m, _ in g.neighbours[goal.index(0)][:1])
    near = apply_moves(goal, blank_moves, g)
    _run(near, goal, g, h, np.zeros(4, dtype=np.int64))
    solve(near, goal, g, counters=Counters(), heuristic=h)  # its one-board entry


_LETTERS: list = []


def _width(g: Grid) -> int:
    """Moves kept per board by :func:`solve_many` (3x3 optima are at most 31 moves,
    4x4 at most 80); a longer path is solved again on its own."""
    return 32 if g.squares <= 9 else 256


def solve_many(starts, goal: Board, grid: Grid, *, heuristic: Heuristic | None = None):
    """:func:`solve` for a batch (an int8 array of boards): solvability for all
    at once, then one kernel call for the batch (``harness.kernels.*_many``), so
    no Python call, argument checking or stack allocation per board. Same
    answers and counters as :func:`solve` board by board."""
    import numpy as np

    from harness import kernels
    from harness.core.batch import solvable_many

    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, grid)
    k = _kernel(goal, grid, h)
    n = len(starts)
    todo = solvable_many(starts, goal, grid)
    boards = np.array(starts, dtype=np.int8)  # a copy: the kernel moves tiles
    stats = np.zeros((n, 4), dtype=np.int64)
    lengths = np.zeros(n, dtype=np.int64)
    width = _width(grid)
    moves = np.zeros((n, width), dtype=np.int8)
    target = np.array(goal, dtype=np.int8)
    nbr = kernels.neighbour_array(grid)
    driver = getattr(kernels, f"{k.function}_many", None)
    if driver is None:  # a kernel without a batch driver: one call per board
        for i in np.flatnonzero(todo).tolist():
            path_stats = stats[i]
            moves_i = _run(tuple(starts[i].tolist()), goal, grid, h, path_stats)
            lengths[i] = len(moves_i)
            if len(moves_i) <= width:
                moves[i, : len(moves_i)] = [MOVE_INDEX[m] for m in moves_i]
    else:
        per_board = ()
        if k.start_args_many is not None:
            per_board = tuple(
                np.where(todo, column, 0) for column in k.start_args_many(boards)
            )
        elif k.start_args is not None:
            firsts = [k.start_args(tuple(b)) for b in starts[todo].tolist()]
            per_board = tuple(
                np.zeros(n, dtype=np.int64) for _ in range(len(firsts[0]) if firsts else 0)
            )
            for j, column in enumerate(per_board):
                column[todo] = [f[j] for f in firsts]
            if not firsts:  # nothing to solve: the driver's types need no ids
                per_board = None
        if per_board is not None:
            driver(boards, todo, target, nbr, stats, moves, lengths, *per_board, *k.args)
    if (lengths[todo] < 0).any():
        raise RuntimeError(f"ida_star_jit: no path within {kernels.MAX_PATH} moves")
    if not _LETTERS:
        _LETTERS.append(np.frombuffer(MOVE_ORDER.encode(), dtype=np.uint8))
    shown = np.where(lengths <= width, lengths, 0)
    text = np.zeros((n, width + 1), dtype=np.uint8)
    text[:, :width] = _LETTERS[0][moves]
    text[np.arange(n), shown] = ord("\n")
    keep = np.arange(width + 1) <= shown[:, None]
    answers: list = text[keep].tobytes().decode("ascii").split("\n")[:-1]
    for i in np.flatnonzero(~todo).tolist():
        answers[i] = None
    for i in np.flatnonzero(lengths > width).tolist():  # beyond the batch's width
        stats[i] = 0
        answers[i] = _run(tuple(starts[i].tolist()), goal, grid, h, stats[i])
    return answers, stats


@register(
    "ida_star_jit",
    many=solve_many,
    optimal=True,
    needs=(kernel("ida"),),  # any heuristic with a compiled IDA* kernel
    default_heuristic="manhattan",
    refuses=_refuses,
    prepare=_prepare,
    costs=True,
    sizes=(
        "any (pdb6666: 5x5, pdb78/pdb663/pdb555: 4x4, pdb44: 3x3, "
        "walking_distance: sides <= 4)"
    ),
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
    """IDA* compiled with numba: the search and counters of ``ida_star``, ~10x its rate.

    Shortest (with tile costs: cheapest) move string from ``start`` to ``goal``;
    None when unsolvable.
    """
    if cost_model != "unit":
        return cost_ida(start, goal, grid, counters, heuristic, cost_model)
    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, grid)
    last = _last
    if h is last[0] and grid is last[1] and goal == last[2]:
        fast = last[3]
    else:
        fast = _fast(goal, grid, h)
    if fast is None or type(start) is not tuple:
        return _solve_general(start, goal, grid, h, counters)
    if fast.start_args is None:
        length = fast.call(start, fast.frame)
    else:
        length = fast.call(start, fast.frame, *fast.start_args(start))
    if length < 0:
        return _no_moves(length, fast, start, goal, grid, h, counters)
    expanded, generated, deepest, iterations = fast.stats.tolist()
    counters.expanded += expanded
    counters.generated += generated
    counters.max_frontier = max(counters.max_frontier, deepest)
    counters.iterations += iterations
    return fast.path[:length].tobytes().translate(_LETTER_BYTES).decode("ascii")


def _no_moves(length, fast, start, goal, grid, h, counters) -> Moves | None:
    """A one-board entry's negative return (:mod:`harness.kernels.single`)."""
    from harness.kernels import single

    if length == single.UNSOLVABLE:
        return None
    if length == single.NOT_A_BOARD:  # the general path says what is wrong
        return _solve_general(start, goal, grid, h, counters)
    expanded, generated, deepest, iterations = fast.stats.tolist()
    counters.expanded += expanded
    counters.generated += generated
    counters.max_frontier = max(counters.max_frontier, deepest)
    counters.iterations += iterations
    raise RuntimeError(f"ida_star_jit: no path within {single.MAX_PATH} moves")


def _solve_general(
    start: Board, goal: Board, grid: Grid, h: Heuristic, counters: Counters
) -> Moves | None:
    """The path of a kernel without a one-board entry (a plugin's), and of a
    start that is not a tuple of the goal's tiles: the solvability test in
    Python, then the kernel through numba's dispatcher."""
    if not is_solvable(start, goal, grid):
        return None
    import numpy as np

    stats = np.zeros(4, dtype=np.int64)
    try:
        return _run(start, goal, grid, h, stats)
    finally:
        counters.expanded += int(stats[0])
        counters.generated += int(stats[1])
        counters.max_frontier = max(counters.max_frontier, int(stats[2]))
        counters.iterations += int(stats[3])
