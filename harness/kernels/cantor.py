"""A* over flat arrays indexed by the Cantor rank of a board (3x3 and up to 12
squares), with Cantor ranking, unranking and incremental re-ranking."""

from __future__ import annotations

import numpy as np

from harness.kernels.base import jit
from harness.kernels.ida import lc_line_values

# ------------------------------------------------------ A* on Cantor ranks


@jit
def cantor_rank(board, fact):
    """Lexicographic rank of a permutation (as :func:`harness.puzzle.rank`)."""
    n = board.shape[0]
    result = 0
    for i in range(n - 1):
        smaller = 0
        v = board[i]
        for j in range(i + 1, n):
            if board[j] < v:
                smaller += 1
        result += smaller * fact[n - 1 - i]
    return result


@jit
def cantor_unrank(index, board, fact):
    """Fill ``board`` with the permutation of that rank."""
    n = board.shape[0]
    used = 0
    for i in range(n):
        digit = index // fact[n - 1 - i]
        index -= digit * fact[n - 1 - i]
        v = 0
        while True:  # the digit-th value not used yet
            if not (used >> v) & 1:
                if digit == 0:
                    break
                digit -= 1
            v += 1
        board[i] = v
        used |= 1 << v


@jit
def swap_rank(board, rank, p, q, fact):
    """Rank after the blank on square ``p`` trades places with the tile on ``q``
    (``board`` still shows the position before), in O(n) instead of O(n^2): only
    the Lehmer digits of squares p..q change. A square m between them loses or gains
    one smaller value after it; the two squares themselves are recounted."""
    n = board.shape[0]
    t = board[q]
    lo = min(p, q)
    hi = max(p, q)
    between = 0
    between_weight = 0
    for m in range(lo + 1, hi):
        if board[m] < t:
            between += 1
            between_weight += fact[n - 1 - m]
    after = 0  # smaller than t beyond both squares
    for j in range(hi + 1, n):
        if board[j] < t:
            after += 1
    if q > p:  # t moves left to p: its digit there counts between + blank + after
        return (
            rank
            + (between + 1 + after) * fact[n - 1 - p]
            - after * fact[n - 1 - q]
            + between_weight
        )
    # t moves right from q to p: it loses the blank and the smaller squares between
    return (
        rank
        - (between + 1 + after) * fact[n - 1 - q]
        + after * fact[n - 1 - p]
        - between_weight
    )


@jit
def pack_board(board):
    """The board as an int64, 4 bits a square (square c in bits 4c..4c+3; at most
    16 squares)."""
    packed = np.int64(0)
    for c in range(board.shape[0]):
        packed |= np.int64(board[c]) << (4 * c)
    return packed


@jit
def heap_push(keys, ranks, packs, gs, size, key, rank, pack, g):
    i = size
    while i > 0:
        up = (i - 1) >> 1
        if keys[up] <= key:
            break
        keys[i] = keys[up]
        ranks[i] = ranks[up]
        packs[i] = packs[up]
        gs[i] = gs[up]
        i = up
    keys[i] = key
    ranks[i] = rank
    packs[i] = pack
    gs[i] = g


@jit
def heap_pop(keys, ranks, packs, gs, size):
    """Remove the root of a heap of ``size``; the last entry sifts down."""
    key = keys[size - 1]
    rank = ranks[size - 1]
    pack = packs[size - 1]
    g = gs[size - 1]
    size -= 1
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        keys[i] = keys[child]
        ranks[i] = ranks[child]
        packs[i] = packs[child]
        gs[i] = gs[child]
        i = child
    keys[i] = key
    ranks[i] = rank
    packs[i] = pack
    gs[i] = g


@jit
def _lc_total(board, line_squares, line_len, goal_row, goal_col, rows, values):
    lc_line_values(board, line_squares, line_len, goal_row, goal_col, rows, values)
    total = 0
    for i in range(values.shape[0]):
        total += values[i]
    return total


@jit
def astar_cantor(
    start, goal, nbr, cost, conflicts, line_squares, line_len, goal_row, goal_col, rows,
    fact, best_g, parent_move, stats, path,
):
    """A* over flat arrays indexed by Cantor rank: ``best_g[rank]`` holds g + 1 (0 =
    never seen) and ``parent_move[rank]`` the blank move that reached the board. The
    heap orders (f, push count), so equal f pop first-in first-out like
    ``astar_dict``; a board re-pushed at a lower g leaves a stale entry, skipped.
    Heap entries carry the board packed 4 bits a square (n <= 12 here), so a pop
    needs no unranking, and children are ranked incrementally (:func:`swap_rank`).
    h is ``cost`` summed, plus 2 x line conflicts when ``conflicts``. Returns the
    path length (moves in ``path``), or -1 when the goal is unreachable.
    ``stats``: expanded, generated, max_frontier, stale."""
    n = start.shape[0]
    values = np.zeros(line_squares.shape[0], dtype=np.int32)
    board = start.copy()
    h = 0
    for c in range(n):
        h += cost[board[c], c]
    if conflicts:
        h += 2 * _lc_total(
            board, line_squares, line_len, goal_row, goal_col, rows, values
        )
    goal_rank = cantor_rank(goal, fact)
    capacity = 1024
    keys = np.empty(capacity, dtype=np.int64)
    ranks = np.empty(capacity, dtype=np.int64)
    packs = np.empty(capacity, dtype=np.int64)
    gs = np.empty(capacity, dtype=np.int32)
    tie = 0
    root = cantor_rank(board, fact)
    heap_push(keys, ranks, packs, gs, 0, np.int64(h) << 40, root, pack_board(board), 0)
    size = 1
    best_g[root] = 1
    while size > 0:
        if size > stats[2]:
            stats[2] = size
        key = keys[0]
        rank = ranks[0]
        pack = packs[0]
        g = gs[0]
        heap_pop(keys, ranks, packs, gs, size)
        size -= 1
        if g > best_g[rank] - 1:
            stats[3] += 1
            continue
        if rank == goal_rank:
            return _walk_back(goal, rank, nbr, parent_move, fact, g, path)
        stats[0] += 1
        blank = 0
        for c in range(n):
            board[c] = (pack >> (4 * c)) & 15
            if board[c] == 0:
                blank = c
        h = (key >> 40) - g
        g += 1
        for k in range(4):
            dst = nbr[blank, k]
            if dst < 0:
                continue
            stats[1] += 1
            child = swap_rank(board, rank, blank, dst, fact)
            known = best_g[child]
            if known != 0 and known - 1 <= g:
                continue
            best_g[child] = g + 1
            parent_move[child] = k
            tile = board[dst]
            # the child's packed board: tile t moves from dst to blank
            child_pack = (
                pack
                | (np.int64(tile) << (4 * blank))
            ) & ~(np.int64(15) << (4 * dst))
            if conflicts:
                board[blank] = tile
                board[dst] = 0
                h_child = 0
                for c in range(n):
                    h_child += cost[board[c], c]
                h_child += 2 * _lc_total(
                    board, line_squares, line_len, goal_row, goal_col, rows, values
                )
                board[dst] = tile
                board[blank] = 0
            else:
                h_child = h - cost[tile, dst] + cost[tile, blank]
            tie += 1
            if size == capacity:
                capacity *= 2
                keys = grow(keys, capacity, size)
                ranks = grow(ranks, capacity, size)
                packs = grow(packs, capacity, size)
                gs = grow(gs, capacity, size)
            heap_push(
                keys, ranks, packs, gs, size, (np.int64(g + h_child) << 40) | tie,
                child, child_pack, g,
            )
            size += 1
    return -1


@jit
def grow(array, capacity, size):
    """A new array of ``capacity`` entries holding the first ``size`` of ``array``."""
    bigger = np.empty(capacity, dtype=array.dtype)
    bigger[:size] = array[:size]
    return bigger


@jit
def _walk_back(goal, rank, nbr, parent_move, fact, length, path):
    """Rebuild the path from the goal by undoing each board's parent move."""
    board = goal.copy()
    n = board.shape[0]
    blank = 0
    for c in range(n):
        if board[c] == 0:
            blank = c
    for i in range(length - 1, -1, -1):
        k = parent_move[rank]
        path[i] = k
        src = nbr[blank, 3 - k]  # where the blank was before move k
        board[blank] = board[src]
        board[src] = 0
        blank = src
        rank = cantor_rank(board, fact)
    return length
