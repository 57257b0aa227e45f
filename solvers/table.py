"""Table walk: read the answer off the exact distance table, four moves per lookup.

Data structures: from the oracle's distance table (``harness.core.oracle.distances``:
optimal distance of every rank to the goal) and its neighbour table, set-up derives
one int32 per rank, ``step[rank] = next_rank * 4 + move``: the first move in
MOVE_ORDER (u, l, r, d) that lowers the distance by one, and the board it leads to.
From it, per rank, the rank four such steps on and their four letters (Python
lists). Solving is ``rank(start)`` (two dict lookups) and then one list lookup per
four moves: the speed limit every search solver is measured against (about 2 us per
3x3 board). Works for any goal on grids of at most 9 squares (2x2, 2x3, 3x2, 3x3),
the oracle's range.

``solve_many`` walks a whole batch with numpy (about 0.5 us per 3x3 board), for
``harness solve``.

Optimal by construction. Unsolvable boards (distance -1) return None.

Counters: no search happens; expanded = generated = boards walked (the path
length), max_frontier = 1 (one board held at a time).

Set-up (``prepare``, outside the timed region): the oracle's BFS or cache load
(well under a second for 3x3), the step table (one vectorised pass) and the walk
lists (~0.1 s).
"""

from __future__ import annotations

from math import factorial
from typing import Any

from harness.heuristics import Heuristic
from harness.puzzle import MOVE_ORDER, Board, Grid, Moves
from harness.solver import Counters, register

_MAX_SQUARES = 9
_step_memo: dict[tuple, Any] = {}


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Only grids the oracle enumerates (at most 9 squares)."""
    if g.squares > _MAX_SQUARES:
        return f"no exact table for {g.label}: the oracle enumerates at most 9 squares"
    return None


def step_table(goal: Board, g: Grid):
    """int32 per rank: ``next_rank * 4 + move index`` toward ``goal`` (-1 at the goal
    and on unreachable boards). Built once per goal and process."""
    key = (g.rows, g.cols, tuple(goal))
    if key in _step_memo:
        return _step_memo[key]
    import numpy as np

    from harness.core import oracle

    dist = oracle.distances(goal, g).astype(np.int16)
    nbr = oracle.neighbour_table(g)  # k-th legal move of each rank, -1 padded
    perms = oracle.all_permutations(g.squares)
    blank = np.argmax(perms == 0, axis=1)
    # move index (in MOVE_ORDER) of the k-th legal move from each blank square
    move_of = np.full((g.squares, 4), -1, dtype=np.int32)
    for square, around in enumerate(g.neighbours):
        for k, (move, _target) in enumerate(around):
            move_of[square, k] = MOVE_ORDER.index(move)
    child_dist = np.where(nbr >= 0, dist[np.maximum(nbr, 0)], np.int16(32767))
    downhill = child_dist == (dist - 1)[:, None]
    k = np.argmax(downhill, axis=1)  # first downhill move in MOVE_ORDER
    rows = np.arange(len(dist))
    step = (nbr[rows, k].astype(np.int64) * 4 + move_of[blank, k]).astype(np.int32)
    step[(dist <= 0) | ~downhill.any(axis=1)] = -1
    step.flags.writeable = False
    _step_memo[key] = (step, dist)
    return step, dist


_walk_memo: dict[tuple, tuple] = {}


#: Moves read per lookup by :func:`solve` (the walk's stride).
STRIDE = 4


def _walk_tables(goal: Board, g: Grid) -> tuple:
    """(next rank after up to STRIDE steps, their letters, distance, rank function)
    as Python lists for :func:`solve`: list indexing and two dict lookups per rank
    cost a fraction of numpy scalar access and :func:`harness.puzzle.rank`, and a
    stride of four steps cuts the interpreted loop to a quarter."""
    key = (g.rows, g.cols, goal)
    found = _walk_memo.get(key)
    if found is None:
        import numpy as np

        step, dist = step_table(goal, g)
        at = np.arange(len(step), dtype=np.int64)
        code = np.zeros(len(step), dtype=np.int64)  # base-5 digits: move + 1
        for i in range(STRIDE):
            entry = np.where(at >= 0, step[np.maximum(at, 0)], -1)
            code += np.where(entry >= 0, (entry & 3) + 1, 0) * 5**i
            at = np.where(entry >= 0, entry >> 2, -1)
        letters = []
        for c in range(5**STRIDE):
            digits = [(c // 5**i) % 5 for i in range(STRIDE)]
            letters.append("".join(MOVE_ORDER[d - 1] for d in digits if d))
        chunk = [letters[c] for c in code.tolist()]
        found = (at.tolist(), chunk, dist.tolist(), split_rank(g.squares))
        _walk_memo[key] = found
    return found


def split_rank(n: int):
    """``rank`` for permutations of 0..n-1 as two dict lookups: the Lehmer digit of
    position i is the number of smaller values after it, so the head's digits
    depend only on the head (as value minus smaller values before it) and the
    tail's only on the tail. Tables: n!/(n-h)! heads and n!/h! tails, h = n // 2."""
    from itertools import permutations
    from math import factorial

    h = n // 2
    weight = [factorial(n - 1 - i) for i in range(n)]
    heads = {}
    for head in permutations(range(n), h):
        heads[head] = sum(
            (v - sum(u < v for u in head[:i])) * weight[i] for i, v in enumerate(head)
        )
    tails = {}
    for tail in permutations(range(n), n - h):
        tails[tail] = sum(
            sum(u < v for u in tail[i + 1 :]) * weight[h + i]
            for i, v in enumerate(tail)
        )

    def rank_of(board: Board) -> int:
        return heads[board[:h]] + tails[board[h:]]

    return rank_of


def _prepare(g: Grid, goal: Board, heuristic: Heuristic | None) -> None:
    """Load or build the oracle's table for this goal and derive the step table."""
    _walk_tables(goal, g)


def solve_many(starts, goal: Board, grid: Grid, *, heuristic: Heuristic | None = None):
    """:func:`solve` for a whole batch (an int8 array of boards), with numpy: every
    rank at once, then one gather per step over the boards still walking (longest
    first). Same answers and counters as :func:`solve` board by board."""
    if grid.squares > _MAX_SQUARES:
        raise ValueError(f"table: {grid.label} has no exact table")
    import numpy as np

    step, dist = step_table(goal, grid)
    n, squares = starts.shape
    first, second = np.triu_indices(squares, k=1)
    weight = np.array([factorial(squares - 1 - i) for i in range(squares)], np.int64)
    at = (starts[:, second] < starts[:, first]) @ weight[first]  # Lehmer ranks
    lengths = dist[at].astype(np.int64)  # -1: unsolvable
    walked = np.maximum(lengths, 0)
    order = np.argsort(-walked, kind="stable")
    longest = int(walked[order[0]]) if n else 0
    # one row per board: its letters, then a newline (unsolvable: an empty line)
    text = np.zeros((n, longest + 1), dtype=np.uint8)
    letters = np.frombuffer(MOVE_ORDER.encode(), dtype=np.uint8)
    ranked = walked[order]
    where = at[order]
    for s in range(longest):
        k = int(np.count_nonzero(ranked > s))
        entry = step[where[:k]]
        text[order[:k], s] = letters[entry & 3]
        where[:k] = entry >> 2
    text[np.arange(n), walked] = ord("\n")
    keep = np.arange(longest + 1) <= walked[:, None]
    answers: list = text[keep].tobytes().decode("ascii").split("\n")[:-1]
    for i in np.flatnonzero(lengths < 0).tolist():
        answers[i] = None
    counts = np.zeros((n, 4), dtype=np.int64)
    counts[:, 0] = counts[:, 1] = walked
    counts[:, 2] = lengths >= 0
    return answers, counts


@register(
    "table",
    many=solve_many,
    optimal=True,
    refuses=_refuses,
    prepare=_prepare,
    budget_seconds=10.0,
    sizes="at most 9 squares (2x2, 2x3, 3x2, 3x3), any goal",
    search=False,
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """Table walk: read the answer off the exact distance table, four moves per lookup.

    Shortest move string from ``start`` to ``goal``; None when unsolvable.
    """
    if grid.squares > _MAX_SQUARES:
        raise ValueError(f"table: {grid.label} has no exact table")
    found = _walk_memo.get((grid.rows, grid.cols, goal))
    after, chunk, dist, rank_of = found or _walk_tables(goal, grid)
    at = rank_of(tuple(start))
    if dist[at] < 0:
        return None
    parts = []
    while at >= 0:
        parts.append(chunk[at])
        at = after[at]
    moves = "".join(parts)
    counters.expanded += len(moves)
    counters.generated += len(moves)
    if counters.max_frontier < 1:
        counters.max_frontier = 1
    return moves
