"""Exact optimal distances for every board of a small grid (2x2, 2x3, 3x2, 3x3).

A breadth-first search from the goal over the whole state space, layer by layer with
numpy: every board is its lexicographic rank (:func:`harness.puzzle.rank`), the
neighbour table of all ``n!`` ranks is computed once per grid with vectorised
ranking, and each BFS layer is one gather over that table. Moves are reversible,
so the distance from the goal is the distance to it.

Tables are int8 arrays indexed by rank (``-1`` = unreachable, the other parity
class), kept in memory per process and on disk under ``cache_dir("oracle")`` with a
sha256 checksum; a missing, truncated or corrupt file is rebuilt, and an unwritable
cache just means building in memory.
"""

from __future__ import annotations

import hashlib
import json
from math import factorial
from pathlib import Path

import numpy as np

from harness.core.cache import cache_dir
from harness.core.files import write_atomic
from harness.core.jsontext import loads
from harness.puzzle import Board, Grid, rank

#: Largest number of squares the oracle accepts (9! = 362,880 ranks; 12! would be 479M).
MAX_SQUARES = 9
_FORMAT = "npuzzle-oracle"
_VERSION = 1

_perms_memo: dict[int, np.ndarray] = {}
_table_memo: dict[tuple[int, int], np.ndarray] = {}
_dist_memo: dict[tuple[int, int, Board], np.ndarray] = {}


def _check(goal: Board, grid: Grid) -> None:
    if grid.squares > MAX_SQUARES:
        raise ValueError(
            f"oracle: {grid.label} has {factorial(grid.squares):,} boards; only "
            f"grids of at most {MAX_SQUARES} squares (3x3) are enumerated"
        )
    if sorted(goal) != list(range(grid.squares)):
        raise ValueError(f"oracle: goal {goal} is not a {grid.label} board")


# ------------------------------------------------------------ vectorised ranks


def all_permutations(n: int) -> np.ndarray:
    """Every permutation of 0..n-1 as int8 rows; row i is ``unrank(i, n)``."""
    if n not in _perms_memo:
        perms = np.zeros((1, 0), dtype=np.int8)
        for size in range(1, n + 1):
            # Lexicographic order: first value v, then the perms of the rest in order;
            # "the rest" is 0..size-2 with every value >= v shifted up by one.
            blocks = []
            for v in range(size):
                rest = perms + (perms >= v)
                blocks.append(np.hstack([np.full((len(perms), 1), v, np.int8), rest]))
            perms = np.vstack(blocks).astype(np.int8)
        perms.flags.writeable = False
        _perms_memo[n] = perms
    return _perms_memo[n]


def rank_many(boards: np.ndarray) -> np.ndarray:
    """Ranks (as :func:`harness.puzzle.rank`) of each row of a 2-D permutation array."""
    count, n = boards.shape
    ranks = np.zeros(count, dtype=np.int64)
    for i in range(n - 1):
        # Lehmer digit: how many later squares hold a smaller value.
        smaller = np.zeros(count, dtype=np.int64)
        col = boards[:, i]
        for j in range(i + 1, n):
            smaller += boards[:, j] < col
        ranks += smaller * factorial(n - 1 - i)
    return ranks


def neighbour_table(grid: Grid) -> np.ndarray:
    """int32 (n!, 4): ranks of each board's successors in MOVE_ORDER, -1 padded."""
    key = (grid.rows, grid.cols)
    if key not in _table_memo:
        n = grid.squares
        perms = all_permutations(n)
        table = np.full((len(perms), 4), -1, dtype=np.int32)
        blank_at = np.argmax(perms == 0, axis=1)
        for blank in range(n):
            rows = np.flatnonzero(blank_at == blank)
            for k, (_move, target) in enumerate(grid.neighbours[blank]):
                child = perms[rows].copy()
                child[:, blank] = child[:, target]
                child[:, target] = 0
                table[rows, k] = rank_many(child)
        table.flags.writeable = False
        _table_memo[key] = table
    return _table_memo[key]


# ------------------------------------------------------------------- the BFS


def _build(goal: Board, grid: Grid) -> np.ndarray:
    table = neighbour_table(grid)
    dist = np.full(len(table), -1, dtype=np.int8)
    frontier = np.array([rank(goal)], dtype=np.int64)
    dist[frontier] = 0
    depth = 0
    while frontier.size:
        children = table[frontier].ravel()
        children = children[children >= 0]
        children = children[dist[children] < 0]
        depth += 1
        dist[children] = depth  # duplicates within the layer just write twice
        frontier = np.unique(children)
    return dist


def _cache_file(goal: Board, grid: Grid) -> Path | None:
    folder = cache_dir("oracle")
    if folder is None:
        return None
    return folder / f"{grid.label}-{'-'.join(map(str, goal))}.bin"


def _read_cached(path: Path, goal: Board, grid: Grid) -> np.ndarray | None:
    """The cached table, or None when missing, foreign, truncated or corrupt."""
    try:
        raw = path.read_bytes()
        head, _, body = raw.partition(b"\n")
        meta = loads(head)
    except (OSError, ValueError):
        return None
    expected = {
        "format": _FORMAT,
        "version": _VERSION,
        "grid": grid.label,
        "goal": list(goal),
        "size": factorial(grid.squares),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    if meta != expected or len(body) != expected["size"]:
        return None
    return np.frombuffer(body, dtype=np.int8).copy()


def _write_cached(path: Path, dist: np.ndarray, goal: Board, grid: Grid) -> None:
    body = dist.tobytes()
    meta = {
        "format": _FORMAT,
        "version": _VERSION,
        "grid": grid.label,
        "goal": list(goal),
        "size": len(body),
        "sha256": hashlib.sha256(body).hexdigest(),
    }
    try:  # atomic: a concurrent reader sees old or new, never half
        write_atomic(path, json.dumps(meta).encode() + b"\n" + body, sync=False)
    except OSError:
        pass


# ------------------------------------------------------------------ public API


def distances(goal: Board, grid: Grid) -> np.ndarray:
    """Read-only int8 array over all ``n!`` ranks: optimal moves to ``goal``, -1 if
    unreachable. ValueError for grids of more than 9 squares."""
    goal = tuple(goal)
    _check(goal, grid)
    key = (grid.rows, grid.cols, goal)
    if key not in _dist_memo:
        path = _cache_file(goal, grid)
        dist = _read_cached(path, goal, grid) if path else None
        if dist is None:
            dist = _build(goal, grid)
            if path:
                _write_cached(path, dist, goal, grid)
        dist.flags.writeable = False
        _dist_memo[key] = dist
    return _dist_memo[key]


def distance(board: Board, goal: Board, grid: Grid) -> int | None:
    """Optimal number of moves from ``board`` to ``goal``; None when unsolvable."""
    if sorted(board) != list(range(grid.squares)):
        raise ValueError(f"oracle: board {board} is not a {grid.label} board")
    value = int(distances(goal, grid)[rank(board)])
    return None if value < 0 else value


def histogram(goal: Board, grid: Grid) -> list[int]:
    """Number of boards at each optimal distance 0..max from ``goal``."""
    dist = distances(goal, grid)
    return np.bincount(dist[dist >= 0]).tolist()


def clear_memory() -> None:
    """Forget the in-process tables (tests use this to exercise the disk cache)."""
    _table_memo.clear()
    _dist_memo.clear()
