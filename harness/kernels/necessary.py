"""The necessary expansions of a 3x3 board under a heuristic: the yardstick for the
expansions column.

Every optimal unidirectional search with an admissible, consistent heuristic h
must expand each board s with g*(s) + h(s) < C*, where g*(s) is the distance of s
from the start and C* the optimum (Dechter and Pearl, JACM 1985; the "surely
expanded" set of Holte et al., AAAI 2016, and Chen et al., IJCAI 2017). Boards
with g*(s) + h(s) = C* may or may not be expanded: how many there are says how
much a lucky tie-break can save. Both counts are properties of the board and the
heuristic, not of a solver, so they are the yardstick: "A* expanded 1.04x the
necessary set, bidirectional BFS 40x".

Computed exactly over every board of the start's component (181,440 on 3x3):
g* by a compiled breadth-first search from the start over the oracle's ranked
neighbour table (:func:`harness.core.oracle.neighbour_table`; moves are
reversible, so the distances from the start are the distances to it), about a
millisecond; h on every board with g*(s) <= C* (no other board can count),
vectorised over the rank table for a tile-additive heuristic
(``Heuristic.tile_cost``), else one call per board. Each board's h is kept per
goal and heuristic for the rest of the process, and for a built-in heuristic in
the cache folder too (keyed by the digest of the heuristics' and kernels'
sources), so a later run reads it. Blind search (no heuristic) takes h = 0.
Grids of more than 9 squares: :func:`necessary` refuses (ValueError); the column
says nothing rather than guess.
"""

from __future__ import annotations

import functools
import hashlib
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.core import oracle
from harness.core.cache import cache_dir
from harness.core.files import write_atomic
from harness.kernels.base import jit, sources_digest
from harness.puzzle import Board, Grid, rank

#: Largest grid computed (3x3: 181,440 boards per component).
MAX_SQUARES = oracle.MAX_SQUARES

#: Start boards whose distances are kept (362,880 bytes each on 3x3): a run asks
#: for one board's counts under each config's heuristic in a row.
_KEEP_STARTS = 16

_from_start: OrderedDict[tuple[int, int, Board], np.ndarray] = OrderedDict()
#: (grid, goal, heuristic key) -> int16 h per rank, -1 where not evaluated yet
_h_memo: dict[tuple[int, int, Board, str], np.ndarray] = {}
_count_memo: dict[tuple[int, int, Board, Board, str], Necessary] = {}


@dataclass(frozen=True, slots=True)
class Necessary:
    """``below``: boards with g* + h < C* (every optimal search with a consistent
    h expands them); ``ties``: boards with g* + h = C*; ``optimum``: C*."""

    below: int
    ties: int
    optimum: int


def necessary(
    start: Board,
    goal: Board,
    grid: Grid,
    heuristic: Callable[[Board], int] | None,
    key: str,
) -> Necessary | None:
    """The necessary set of ``start`` under ``heuristic`` (bound to ``goal``; None:
    blind, h = 0), memoised under ``key`` (the heuristic's name). None when the
    goal is unreachable from the start. ValueError for a grid over 9 squares."""
    if grid.squares > MAX_SQUARES:
        raise ValueError(
            f"necessary expansions: {grid.label} is too large to enumerate "
            f"(at most {MAX_SQUARES} squares)"
        )
    start, goal = tuple(start), tuple(goal)
    memo_key = (grid.rows, grid.cols, start, goal, key)
    if memo_key in _count_memo:
        return _count_memo[memo_key]
    g_star = distances_from(start, grid)
    optimum = int(g_star[rank(goal)])
    if optimum < 0:
        return None
    near = np.flatnonzero((g_star >= 0) & (g_star <= optimum))
    if heuristic is None:
        h = np.zeros(len(near), dtype=np.int64)
    else:
        h = _h_values(goal, grid, heuristic, key, near)
    f = g_star[near].astype(np.int64) + h
    found = Necessary(int((f < optimum).sum()), int((f == optimum).sum()), optimum)
    _count_memo[memo_key] = found
    return found


@jit
def bfs_distances(table, start, dist):
    """Fill ``dist`` (int8 per rank, -1 on entry) with each rank's distance from
    ``start`` over the neighbour ``table`` (ranks' successors, -1 padded)."""
    queue = np.empty(dist.shape[0], dtype=np.int32)
    queue[0] = start
    dist[start] = 0
    head, tail = 0, 1
    while head < tail:
        board = queue[head]
        head += 1
        for k in range(table.shape[1]):
            child = table[board, k]
            if child >= 0 and dist[child] < 0:
                dist[child] = dist[board] + 1
                queue[tail] = child
                tail += 1


def distances_from(start: Board, grid: Grid) -> np.ndarray:
    """int8 distances from ``start`` over every rank (-1: other component); the
    last few starts' are kept."""
    memo_key = (grid.rows, grid.cols, tuple(start))
    if memo_key in _from_start:
        _from_start.move_to_end(memo_key)
        return _from_start[memo_key]
    table = oracle.neighbour_table(grid)
    dist = np.full(len(table), -1, dtype=np.int8)
    bfs_distances(table, rank(start), dist)
    _from_start[memo_key] = dist
    while len(_from_start) > _KEEP_STARTS:
        _from_start.popitem(last=False)
    return dist


def _h_values(
    goal: Board, grid: Grid, heuristic: Callable[[Board], int], key: str,
    ranks: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """h at each of ``ranks`` (int64), evaluating only the boards not seen before."""
    memo_key = (grid.rows, grid.cols, goal, key)
    perms = oracle.all_permutations(grid.squares)
    known = _h_memo.get(memo_key)
    if known is None:
        known = _read_h(memo_key, heuristic, len(perms))
    if known is None:
        table = getattr(heuristic, "tile_cost", None)
        if table is not None and _whole(table):
            # h is the sum of per-tile shares: tile_cost[tile][square], for all boards
            cost = np.asarray(table, dtype=np.int16)
            squares = np.arange(grid.squares)
            known = cost[perms, squares].sum(axis=1, dtype=np.int16)
        else:
            known = np.full(len(perms), -1, dtype=np.int16)
    _h_memo[memo_key] = known
    missing = ranks[known[ranks] < 0]
    for r in missing.tolist():
        known[r] = heuristic(tuple(perms[r].tolist()))
    if len(missing) > _WORTH_STORING:
        _write_h(memo_key, heuristic, known)
    return known[ranks].astype(np.int64)


def _whole(table) -> bool:
    """True when every share is a whole number (unit costs: moves)."""
    return all(float(share).is_integer() for row in table for share in row)


_digest = functools.cache(sources_digest)
#: Fewer new evaluations than this are not worth a write (a shallow board).
_WORTH_STORING = 2000


def _h_file(memo_key: tuple, heuristic: Callable[[Board], int]) -> Path | None:
    """Where a built-in heuristic's values are kept: None for a plugin's (its
    source is not in the digest) or without a cache folder."""
    module = getattr(getattr(heuristic, "estimate", None), "__module__", "") or ""
    folder = cache_dir("necessary")
    if folder is None or not module.startswith("harness.heuristics"):
        return None
    rows, cols, goal, key = memo_key
    name = f"{rows}x{cols}-{'-'.join(map(str, goal))}-{key}-{_digest()}"
    return folder / f"h-{hashlib.sha256(name.encode()).hexdigest()[:24]}.bin"


def _read_h(memo_key: tuple, heuristic, size: int) -> np.ndarray | None:
    path = _h_file(memo_key, heuristic)
    try:
        body = path.read_bytes() if path else b""
    except OSError:
        return None
    digest, values = body[:32], body[32:]
    if len(values) != 2 * size or hashlib.sha256(values).digest() != digest:
        return None  # missing, truncated or corrupt: evaluate again
    return np.frombuffer(values, dtype=np.int16).copy()


def _write_h(memo_key: tuple, heuristic, known: np.ndarray) -> None:
    path = _h_file(memo_key, heuristic)
    if path is None:
        return
    values = known.tobytes()
    try:  # atomic: a concurrent reader sees old or new, never half
        write_atomic(path, hashlib.sha256(values).digest() + values, sync=False)
    except OSError:
        pass


def clear_memory() -> None:
    """Forget every memo (tests use this to time or recompute from scratch)."""
    _from_start.clear()
    _h_memo.clear()
    _count_memo.clear()
