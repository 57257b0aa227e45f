"""Search kernels for tile costs (:mod:`harness.core.costs`): g and h in float64.

The unit-cost kernels (:mod:`harness.kernels.ida`, :mod:`harness.kernels.best_first`)
keep g and h in integers and are tuned per node; tile costs need floats, so they
get their own kernels here rather than a float path through the tuned ones (which
would cost the unit search its registers and branches). Both take a tile-additive
heuristic's shares as ``share[tile, cell]`` (float64: the cost-weighted Manhattan
or misplaced table) and ``move_cost[tile]`` (float64), and update h per move.

- :func:`best_first_costs`: best-first search on f = a*g + b*h over boards packed
  4 bits a cell into an int64 (at most 16 cells), an open-addressing hash table of
  the boards seen (packed board -> best g, the move that reached it) and a binary
  heap of entry ids ordered by (f, h, push order). A* (a = b = 1), weighted A*
  (a = 1, b = w), greedy (a = 0, b = 1, no board reopened) and uniform-cost
  search (b = 0). The goal is tested when popped.
- :func:`ida_costs`: IDA* (``wb`` = 1) or weighted IDA* (f = g + wb*h) with float
  thresholds. The iteration strategy: the next threshold is the smallest f that
  exceeded the last one, but at least ``step`` (the cheapest tile's cost) above
  it, so real-valued costs cannot make every iteration add one node. A threshold
  may then pass the optimum, so the iteration that finds a path goes on as a
  depth-first branch and bound: every board with wb*(g + h) at or above the best
  path's cost is pruned. At wb = 1 the path returned is the cheapest (any cheaper
  one would be found: its boards have g + h below the best and f within the
  threshold); at wb > 1 it costs at most wb times the optimum (either the best
  path found does, or the optimal path was never pruned and was found).

``stats`` (int64[4]): expanded, generated, max_frontier (best-first: the largest
heap; IDA*: the deepest depth), iterations (IDA*) or stale entries (best-first).
Each returns the path's length and fills ``path`` with move indices (MOVE_ORDER),
-1 when the open list ran dry or no path fits MAX_PATH.
"""

from __future__ import annotations

import numpy as np

from harness.kernels.base import MAX_PATH, jit
from harness.kernels.best_first import grow_table, table_slot
from harness.kernels.cantor import grow, pack_board
from harness.kernels.pdb_costs import weighted_pdb_value


@jit
def _before(ef, eh, i, j):
    """Entry i pops before entry j: lower f, then lower h, then pushed earlier."""
    if ef[i] != ef[j]:
        return ef[i] < ef[j]
    if eh[i] != eh[j]:
        return eh[i] < eh[j]
    return i < j


@jit
def _push(heap, size, entry, ef, eh):
    i = size
    while i > 0:
        up = (i - 1) >> 1
        if not _before(ef, eh, entry, heap[up]):
            break
        heap[i] = heap[up]
        i = up
    heap[i] = entry


@jit
def _pop(heap, size, ef, eh):
    """Remove the root of a heap of ``size`` (the caller read it first)."""
    last = heap[size - 1]
    size -= 1
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _before(ef, eh, heap[child + 1], heap[child]):
            child += 1
        if not _before(ef, eh, heap[child], last):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = last


@jit
def best_first_costs(start, goal, nbr, share, move_cost, a, b, reopen, stats, path,
                     pdb=None):  # fmt: skip
    """Best-first search on f = a*g + b*h with float tile costs (module docstring);
    ``pdb``: a weighted PDB's arrays, read instead of ``share``."""
    n = start.shape[0]
    pos = np.empty(n, dtype=np.int64)  # tile -> square (weighted PDBs)
    cap = 1 << 12
    ef = np.empty(cap, dtype=np.float64)  # per pushed entry: f, h, g, board
    eh = np.empty(cap, dtype=np.float64)
    eg = np.empty(cap, dtype=np.float64)
    ep = np.empty(cap, dtype=np.int64)
    heap = np.empty(cap, dtype=np.int64)
    keys = np.zeros(1 << 12, dtype=np.int64)
    gs = np.zeros(1 << 12, dtype=np.float64)
    moves = np.zeros(1 << 12, dtype=np.int8)
    mask = keys.shape[0] - 1
    h = _h(start, share, pos, pdb)
    first = pack_board(start)
    target = pack_board(goal)
    at = table_slot(keys, first, mask)
    keys[at] = first
    moves[at] = -1
    stored = 1
    ef[0] = b * h
    eh[0] = h
    eg[0] = 0.0
    ep[0] = first
    heap[0] = 0
    size = 1
    entries = 1
    expanded = generated = stale = 0
    largest = 1
    board = np.empty(n, dtype=np.int8)
    while size > 0:
        if size > largest:
            largest = size
        e = heap[0]
        _pop(heap, size, ef, eh)
        size -= 1
        g = eg[e]
        packed = ep[e]
        at = table_slot(keys, packed, mask)
        if g > gs[at]:
            stale += 1  # a cheaper copy of this board was pushed after this one
            continue
        if packed == target:
            stats[0] += expanded
            stats[1] += generated
            stats[2] = max(stats[2], largest)
            stats[3] += stale
            return _walk_back(goal, nbr, keys, moves, mask, path)
        expanded += 1
        h = eh[e]
        blank = 0
        for c in range(n):
            board[c] = (packed >> (4 * c)) & 15
            pos[board[c]] = c
            if board[c] == 0:
                blank = c
        for k in range(4):
            to = nbr[blank, k]
            if to < 0:
                continue
            t = board[to]
            child = (packed & ~(np.int64(15) << (4 * to))) | (np.int64(t) << (4 * blank))
            generated += 1
            g_child = g + move_cost[t]
            at = table_slot(keys, child, mask)
            if keys[at] != 0:
                if gs[at] <= g_child or not reopen:
                    continue
            else:
                keys[at] = child
                stored += 1
                if 2 * stored > keys.shape[0]:  # half full: double, rehash
                    keys, gs, moves = grow_table(keys, gs, moves)
                    mask = keys.shape[0] - 1
                    at = table_slot(keys, child, mask)
            gs[at] = g_child
            moves[at] = k
            if pdb is None:
                h_child = h + share[t, blank] - share[t, to]
            else:
                pos[t] = blank
                h_child = weighted_pdb_value(pos, *pdb)
                pos[t] = to
            if entries == ef.shape[0]:
                ef = grow(ef, 2 * entries, entries)
                eh = grow(eh, 2 * entries, entries)
                eg = grow(eg, 2 * entries, entries)
                ep = grow(ep, 2 * entries, entries)
            if size == heap.shape[0]:
                heap = grow(heap, 2 * size, size)
            ef[entries] = a * g_child + b * h_child
            eh[entries] = h_child
            eg[entries] = g_child
            ep[entries] = child
            _push(heap, size, entries, ef, eh)
            entries += 1
            size += 1
    stats[0] += expanded
    stats[1] += generated
    stats[2] = max(stats[2], largest)
    stats[3] += stale
    return -1


@jit
def _walk_back(goal, nbr, keys, moves, mask, path):
    """The path to ``goal`` by its parent moves, into ``path``; its length (-1 if
    longer than ``path``). A board's g only falls, and a parent's g is below its
    child's, so the walk ends at the start (move -1)."""
    board = goal.copy()
    blank = 0
    for c in range(board.shape[0]):
        if board[c] == 0:
            blank = c
    reverse = np.empty(path.shape[0], dtype=np.int8)
    length = 0
    at = table_slot(keys, pack_board(board), mask)
    while moves[at] >= 0:
        if length == path.shape[0]:
            return -1
        k = moves[at]
        reverse[length] = k
        length += 1
        src = nbr[blank, 3 - k]  # where the blank was before move k
        board[blank] = board[src]
        board[src] = 0
        blank = src
        at = table_slot(keys, pack_board(board), mask)
    for i in range(length):
        path[i] = reverse[length - 1 - i]
    return length


@jit
def ida_costs(board, goal, nbr, share, move_cost, wb, step, stats, path, pdb=None):
    """IDA* / weighted IDA* with float thresholds (module docstring); ``pdb``: a
    weighted PDB's arrays, read instead of ``share``. Mutates ``board``; returns
    the best path's length in ``path``, -1 if none within MAX_PATH."""
    n = board.shape[0]
    pos = np.empty(n, dtype=np.int64)  # tile -> square (weighted PDBs)
    h = _h(board, share, pos, pdb)
    blank = pos[0]
    g_at = np.zeros(MAX_PATH + 1, dtype=np.float64)
    h_at = np.zeros(MAX_PATH + 1, dtype=np.float64)
    stack_move = np.zeros(MAX_PATH + 1, dtype=np.int8)
    moves_at = np.zeros(MAX_PATH + 1, dtype=np.int8)
    expanded = 0
    generated = 1  # the root, once (Korf's convention, as the unit kernels)
    deepest = 0
    iterations = 0
    best = np.inf
    best_length = -1
    bound = wb * h
    while True:
        iterations += 1
        if _same(board, goal):
            best_length = 0
            break
        next_bound = np.inf
        depth = 0
        g_at[0] = 0.0
        h_at[0] = h
        stack_move[0] = 0
        expanded += 1
        while depth >= 0:
            k = stack_move[depth]
            if k == 4:  # all moves tried: undo the move that led here
                depth -= 1
                if depth < 0:
                    break
                src = nbr[blank, 3 - moves_at[depth]]
                board[blank] = board[src]
                pos[board[src]] = blank
                board[src] = 0
                blank = src
                continue
            stack_move[depth] = k + 1
            if depth > 0 and k == 3 - moves_at[depth - 1]:
                continue  # never generate the move undoing the last one
            to = nbr[blank, k]
            if to < 0:
                continue
            generated += 1
            t = board[to]
            g = g_at[depth] + move_cost[t]
            if pdb is None:
                hc = h_at[depth] + share[t, blank] - share[t, to]
            else:
                pos[t] = blank
                hc = weighted_pdb_value(pos, *pdb)
                pos[t] = to
            f = g + wb * hc
            if f > bound:
                if f < next_bound:
                    next_bound = f
                continue
            if wb * (g + hc) >= best:
                continue  # branch and bound: cannot beat the best path found
            if depth + 1 > MAX_PATH:
                continue
            board[blank] = t
            board[to] = 0
            pos[t] = blank
            moves_at[depth] = k
            blank = to
            depth += 1
            if depth > deepest:
                deepest = depth
            g_at[depth] = g
            h_at[depth] = hc
            # h is a float sum kept per move: near 0, not exactly; a misplaced
            # tile adds at least ``step`` to it
            if hc < 0.5 * step and _same(board, goal):
                best = g
                best_length = depth
                for i in range(depth):
                    path[i] = moves_at[i]
                stack_move[depth] = 4  # a leaf: undo it next
                continue
            expanded += 1
            stack_move[depth] = 0
        if best_length >= 0 or next_bound == np.inf:
            break
        bound = max(next_bound, bound + step)
    stats[0] += expanded
    stats[1] += generated
    stats[2] = max(stats[2], deepest)
    stats[3] += iterations
    return best_length


@jit
def _h(board, share, pos, pdb):
    """h of a whole board (the tile-additive shares, or the weighted PDB), and
    ``pos`` filled: each tile's square."""
    h = 0.0
    for c in range(board.shape[0]):
        pos[board[c]] = c
        h += share[board[c], c]
    if pdb is not None:
        h = weighted_pdb_value(pos, *pdb)
    return h


@jit
def _same(board, goal):
    for c in range(board.shape[0]):
        if board[c] != goal[c]:
            return False
    return True
