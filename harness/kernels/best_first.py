"""Best-first search on f = a*g + b*h, compiled: weighted A* (a/b = 1/w), greedy
(a = 0) and the anytime variant, for boards of at most 16 squares (4x4).

The same search, order and counters as ``solvers/_best_first.py``, on flat arrays:
a board is packed 4 bits a square into an int64 (so at most 16 squares); the boards
seen live in an open-addressing hash table (packed board -> best g and the move
that reached it), grown by doubling at half full; the open list is a binary heap
of int64 keys ``f << 39 | h << 28 | push count``, so equal f pop the lower h first,
then first in first out, as the Python tuples do. h comes from the heuristic's
own arrays (the arguments its ``ida`` kernel takes): tile costs updated per move,
linear conflict and pattern databases evaluated on each new board, walking
distance stepped in its row and column state tables (kept per heap entry).

Each public kernel returns ``(length, path)``: the path's move indices, or length
-1 when the open list ran dry (unsolvable: callers check solvability first), -2
when f outgrew its 24 bits. ``stats`` (int64[10]): expanded, generated,
max_frontier, stale, first_length, first_expanded, improvements, pruned, proved,
found (1 once a first solution was popped, anytime).
"""

from __future__ import annotations

import numpy as np

from harness.kernels.base import jit
from harness.kernels.cantor import grow, heap_pop, heap_push, pack_board
from harness.kernels.ida import lc_line_values, pdb_value

#: Bits of the heap key: f above h above the push count.
_F_SHIFT = 39
_H_SHIFT = 28
_TIE_MASK = (1 << _H_SHIFT) - 1
_H_MASK = (1 << (_F_SHIFT - _H_SHIFT)) - 1
_F_LIMIT = 1 << (63 - _F_SHIFT)


@jit
def table_slot(keys, packed, mask):
    """The table slot holding ``packed``, or the empty slot (key 0) where it goes:
    linear probing from a multiplicative hash. No board packs to 0 (it would need
    every square to be the blank)."""
    mixed = (packed ^ (packed >> 31)) * np.int64(-7046029254386353131)
    i = (mixed >> 20) & mask
    while keys[i] != 0 and keys[i] != packed:
        i = (i + 1) & mask
    return i


@jit
def grow_table(keys, gs, moves):
    """The table at twice the size, every entry rehashed."""
    size = keys.shape[0] * 2
    new_keys = np.zeros(size, dtype=np.int64)
    new_gs = np.zeros(size, dtype=gs.dtype)  # int32 here, float64 with tile costs
    new_moves = np.zeros(size, dtype=np.int8)
    for i in range(keys.shape[0]):
        if keys[i] != 0:
            j = table_slot(new_keys, keys[i], size - 1)
            new_keys[j] = keys[i]
            new_gs[j] = gs[i]
            new_moves[j] = moves[i]
    return new_keys, new_gs, new_moves


@jit
def _walk_back(goal, nbr, keys, gs, moves, mask):
    """The path to ``goal`` by its parent moves: each board's move undone leads to
    a board of lower g, down to the start (g 0)."""
    board = goal.copy()
    blank = 0
    for c in range(board.shape[0]):
        if board[c] == 0:
            blank = c
    at = table_slot(keys, pack_board(board), mask)
    reverse = np.zeros(gs[at] + 1, dtype=np.int8)
    length = 0
    while gs[at] > 0:
        k = moves[at]
        reverse[length] = k
        length += 1
        src = nbr[blank, 3 - k]  # where the blank was before move k
        board[blank] = board[src]
        board[src] = 0
        blank = src
        at = table_slot(keys, pack_board(board), mask)
    path = np.empty(length, dtype=np.int8)
    for i in range(length):
        path[i] = reverse[length - 1 - i]
    return path


@jit
def _search(
    start, goal, nbr, a, b, reopen, effort_num, effort_den, stats, additive=None,
    conflicts=None, pdb=None, walking=None,
):
    """The search (one specialization per heuristic, as :func:`harness.kernels.
    ida`'s ``_ida``: each ``is not None`` test is on an argument's type).
    ``effort_den`` 0: stop at the first goal popped; else go on for
    ``effort_num * expansions // effort_den`` expansions (anytime)."""
    n = start.shape[0]
    board = start.copy()
    if conflicts is not None:
        (cost, line_squares, line_len, goal_row, goal_col, rows, cols) = conflicts
        values = np.zeros(line_squares.shape[0], dtype=np.int32)
    if pdb is not None:
        (tables, offsets, gtiles, gsize, gmult, tile_group, mirror, moffsets, mtiles,
         mtile_group, msquaremap, popcnt, packed_tables, gcost) = pdb  # fmt: skip
    if walking is not None:
        (row_id, col_id, row_dist, row_next, col_dist, col_next, wd_goal_row,
         wd_goal_col) = walking  # fmt: skip
    h = 0
    aux0 = np.int64(0)
    if additive is not None:
        (add_cost,) = additive
        for c in range(n):
            h += add_cost[board[c], c]
    if conflicts is not None:
        h = _conflict_h(board, cost, line_squares, line_len, goal_row, goal_col, rows,
                        values)  # fmt: skip
    if pdb is not None:
        h = pdb_value(board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets,
                      mtiles, msquaremap, popcnt, packed_tables, gcost)  # fmt: skip
    if walking is not None:
        h = row_dist[row_id] + col_dist[col_id]
        aux0 = (np.int64(row_id) << 32) | col_id
    goal_pack = pack_board(goal)
    # the boards seen: packed board -> best g, and the move that reached it
    tkeys = np.zeros(1 << 12, dtype=np.int64)
    tgs = np.zeros(1 << 12, dtype=np.int32)
    tmoves = np.zeros(1 << 12, dtype=np.int8)
    mask = tkeys.shape[0] - 1
    seen = 1
    root = pack_board(board)
    at = table_slot(tkeys, root, mask)
    tkeys[at] = root
    hkeys = np.empty(1 << 10, dtype=np.int64)
    hpacks = np.empty(1 << 10, dtype=np.int64)
    hgs = np.empty(1 << 10, dtype=np.int32)
    haux = np.empty(1 << 10, dtype=np.int64)
    # the heap of astar_cantor: (key, rank, pack, g) entries, its rank slot here
    # holding the walking-distance states (0 for every other heuristic)
    heap_push(hkeys, haux, hpacks, hgs, 0, (np.int64(b * h) << _F_SHIFT)
              | (np.int64(h) << _H_SHIFT), aux0, root, 0)  # fmt: skip
    size = 1
    tie = 0
    best = -1  # the best length found (anytime)
    budget = -1  # expansions left after the first solution; -1: not counting
    while size > 0:
        if size > stats[2]:
            stats[2] = size
        key = hkeys[0]
        packed = hpacks[0]
        g = hgs[0]
        extra = haux[0]
        heap_pop(hkeys, haux, hpacks, hgs, size)
        size -= 1
        at = table_slot(tkeys, packed, mask)
        if g > tgs[at]:
            stats[3] += 1  # a cheaper copy of this board was pushed after this one
            continue
        h = (key >> _H_SHIFT) & _H_MASK
        if best >= 0 and g + h >= best:
            stats[7] += 1
            continue
        if packed == goal_pack:
            if effort_den == 0:
                return g, _walk_back(goal, nbr, tkeys, tgs, tmoves, mask)
            best = g
            stats[4] = g
            stats[5] = stats[0]
            stats[9] = 1
            budget = effort_num * max(stats[0], 1) // effort_den
            continue
        if budget >= 0:
            if budget == 0:
                break
            budget -= 1
        stats[0] += 1
        blank = 0
        for c in range(n):
            board[c] = (packed >> (4 * c)) & 15
            if board[c] == 0:
                blank = c
        g += 1
        for k in range(4):
            dst = nbr[blank, k]
            if dst < 0:
                continue
            stats[1] += 1
            t = board[dst]
            # the child: tile t slides from dst into the blank's square
            child = (packed | (np.int64(t) << (4 * blank))) & ~(
                np.int64(15) << (4 * dst)
            )
            at = table_slot(tkeys, child, mask)
            if tkeys[at] == child and (tgs[at] <= g or not reopen):
                continue
            if tkeys[at] != child:
                tkeys[at] = child
                seen += 1
            tgs[at] = g
            tmoves[at] = k
            if child == goal_pack and best >= 0:
                best = g  # anytime: a shorter path, taken at generation
                stats[6] += 1
                if 2 * seen > tkeys.shape[0]:
                    tkeys, tgs, tmoves = grow_table(tkeys, tgs, tmoves)
                    mask = tkeys.shape[0] - 1
                continue
            child_aux = np.int64(0)
            if additive is not None:
                h_child = h - add_cost[t, dst] + add_cost[t, blank]
            if conflicts is not None or pdb is not None:
                board[blank] = t
                board[dst] = 0
                if conflicts is not None:
                    h_child = _conflict_h(board, cost, line_squares, line_len, goal_row,
                                          goal_col, rows, values)  # fmt: skip
                if pdb is not None:
                    h_child = pdb_value(
                        board, tables, offsets, gtiles, gsize, gmult, mirror,
                        moffsets, mtiles, msquaremap, popcnt, packed_tables, gcost,
                    )
                board[dst] = t
                board[blank] = 0
            if walking is not None:
                r = extra >> 32
                cc = extra & 0xFFFFFFFF
                # a vertical move steps the row-count state by the tile's goal row
                if k == 0:
                    r = row_next[r, 0, wd_goal_row[t]]
                elif k == 3:
                    r = row_next[r, 1, wd_goal_row[t]]
                elif k == 1:
                    cc = col_next[cc, 0, wd_goal_col[t]]
                else:
                    cc = col_next[cc, 1, wd_goal_col[t]]
                h_child = row_dist[r] + col_dist[cc]
                child_aux = (np.int64(r) << 32) | cc
            if best >= 0 and g + h_child >= best:
                stats[7] += 1
            else:
                f = a * g + b * h_child
                if f >= _F_LIMIT:
                    return -2, np.zeros(0, dtype=np.int8)
                tie += 1
                if size == hkeys.shape[0]:
                    capacity = 2 * size
                    hkeys = grow(hkeys, capacity, size)
                    hpacks = grow(hpacks, capacity, size)
                    hgs = grow(hgs, capacity, size)
                    haux = grow(haux, capacity, size)
                heap_push(hkeys, haux, hpacks, hgs, size, (np.int64(f) << _F_SHIFT)
                          | (np.int64(h_child) << _H_SHIFT) | (tie & _TIE_MASK),
                          child_aux, child, g)  # fmt: skip
                size += 1
            if 2 * seen > tkeys.shape[0]:
                tkeys, tgs, tmoves = grow_table(tkeys, tgs, tmoves)
                mask = tkeys.shape[0] - 1
    if best < 0:
        return -1, np.zeros(0, dtype=np.int8)
    stats[8] = 1 if size == 0 else 0
    return best, _walk_back(goal, nbr, tkeys, tgs, tmoves, mask)


@jit
def _conflict_h(board, cost, line_squares, line_len, goal_row, goal_col, rows, values):
    """Manhattan + 2 x line conflicts of a whole board."""
    h = 0
    for c in range(board.shape[0]):
        h += cost[board[c], c]
    lc_line_values(board, line_squares, line_len, goal_row, goal_col, rows, values)
    for i in range(values.shape[0]):
        h += 2 * values[i]
    return h


# One public kernel per heuristic family, taking the heuristic's ``ida`` arguments.


@jit
def best_first_additive(start, goal, nbr, a, b, reopen, num, den, cost, stats):
    return _search(start, goal, nbr, a, b, reopen, num, den, stats, additive=(cost,))


@jit
def best_first_linear_conflict(
    start, goal, nbr, a, b, reopen, num, den, cost, line_squares, line_len, goal_row,
    goal_col, rows, cols, stats,
):
    lines = (cost, line_squares, line_len, goal_row, goal_col, rows, cols)
    return _search(start, goal, nbr, a, b, reopen, num, den, stats, conflicts=lines)


@jit
def best_first_pdb(
    start, goal, nbr, a, b, reopen, num, den, tables, offsets, gtiles, gsize, gmult,
    tile_group, mirror, moffsets, mtiles, mtile_group, msquaremap, popcnt, packed,
    gcost, stats,
):
    pdb = (tables, offsets, gtiles, gsize, gmult, tile_group, mirror, moffsets, mtiles,
           mtile_group, msquaremap, popcnt, packed, gcost)  # fmt: skip
    return _search(start, goal, nbr, a, b, reopen, num, den, stats, pdb=pdb)


@jit
def best_first_walking_distance(
    start, goal, nbr, a, b, reopen, num, den, row_id, col_id, row_dist, row_next,
    col_dist, col_next, goal_row, goal_col, stats,
):
    walking = (row_id, col_id, row_dist, row_next, col_dist, col_next, goal_row,
               goal_col)  # fmt: skip
    return _search(start, goal, nbr, a, b, reopen, num, den, stats, walking=walking)


#: The best-first kernel for each ``ida`` kernel, by the ida kernel's name: a
#: heuristic with a compiled IDA* kernel has the arrays these take.
FOR_IDA_KERNEL = {
    "ida_additive": "best_first_additive",
    "ida_linear_conflict": "best_first_linear_conflict",
    "ida_pdb": "best_first_pdb",
    "ida_walking_distance": "best_first_walking_distance",
}
