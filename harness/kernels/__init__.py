"""Compiled (numba, nopython) kernels for the fast solvers and the PDB builder.

Import this module lazily, inside ``prepare``/``solve`` bodies: importing it imports
numba (about half a second) and ``harness --help`` must not pay for that.

Kernels are compiled with ``cache=True`` into ``cache_dir("numba")`` (or wherever
``NUMBA_CACHE_DIR`` points). When no cache folder is writable numba cannot cache, so
the kernels are compiled in memory instead; nothing fails at import either way.
Compilation happens on a kernel's first call: solvers trigger it in ``prepare``,
outside the timed region (see :func:`warm_up`).

Board conventions match :mod:`harness.puzzle`: a board is a row-major int8 array,
0 is the blank; moves are indexed in MOVE_ORDER (0=u, 1=l, 2=r, 3=d), so the move
undoing move ``k`` is ``3 - k``. IDA* kernels count like Korf (1985): the undoing
move is never generated; ``generated`` is every child created (children then cut off
by the bound included), summed over iterations, plus one for the root (once: that
is what reproduces Korf's published counts); the last iteration stops at the
first goal. ``stats`` is int64[4]: expanded, generated, max_frontier
(deepest depth entered, i.e. the final bound, as ``solvers/ida_star.py``), iterations.
"""

from __future__ import annotations

import os

import numba
import numpy as np

from harness.core.cache import cache_dir
from harness.puzzle import MOVE_ORDER, Grid

#: Longest path a kernel will build (5x5 optimal solutions are at most ~208 moves).
MAX_PATH = 1024
_INF = 1 << 30


def _cache_enabled() -> bool:
    """Point numba at the harness cache folder and say whether caching works here."""
    if not os.environ.get("NUMBA_CACHE_DIR"):
        folder = cache_dir("numba")
        if folder is not None:
            numba.config.CACHE_DIR = str(folder)

    def probe() -> int:
        return 0

    try:  # numba raises RuntimeError at decoration when no locator is writable
        numba.njit(cache=True)(probe)
    except (RuntimeError, OSError):
        return False
    return True


CACHE_ENABLED = _cache_enabled()
jit = numba.njit(cache=CACHE_ENABLED, nogil=True)


# ----------------------------------------------------------------- geometry


_nbr_memo: dict[tuple[int, int], np.ndarray] = {}


def neighbour_array(g: Grid) -> np.ndarray:
    """int8 (cells, 4): the cell the blank reaches by each move in MOVE_ORDER, or -1.
    One read-only array per grid size (solvers call this per solve)."""
    out = _nbr_memo.get((g.rows, g.cols))
    if out is None:
        out = np.full((g.cells, 4), -1, dtype=np.int8)
        for cell, around in enumerate(g.neighbours):
            for move, target in around:
                out[cell, MOVE_ORDER.index(move)] = target
        out.flags.writeable = False
        _nbr_memo[(g.rows, g.cols)] = out
    return out


_LETTERS = bytes.maketrans(bytes(range(4)), MOVE_ORDER.encode())


def moves_to_str(path: np.ndarray, length: int) -> str:
    """Kernel path (move indices) -> the blank's move letters."""
    return path[:length].tobytes().translate(_LETTERS).decode("ascii")


def manhattan_costs(goal, g: Grid) -> np.ndarray:
    """int16 (tile, cell): the tile's grid distance from cell to its goal cell."""
    cost = np.zeros((g.cells, g.cells), dtype=np.int16)
    for home, tile in enumerate(goal):
        if tile:
            for cell in range(g.cells):
                cost[tile, cell] = abs(cell // g.cols - home // g.cols) + abs(
                    cell % g.cols - home % g.cols
                )
    return cost


def conflict_arrays(goal, g: Grid) -> tuple:
    """Arguments of the linear-conflict kernels after ``nbr``: Manhattan costs,
    the cells of each row then each column, line lengths, each tile's goal row and
    column, rows, cols."""
    lines = g.rows + g.cols
    width = max(g.rows, g.cols)
    line_cells = np.zeros((lines, width), dtype=np.int8)
    line_len = np.zeros(lines, dtype=np.int8)
    for r in range(g.rows):
        line_len[r] = g.cols
        line_cells[r, : g.cols] = [r * g.cols + c for c in range(g.cols)]
    for c in range(g.cols):
        line_len[g.rows + c] = g.rows
        line_cells[g.rows + c, : g.rows] = [r * g.cols + c for r in range(g.rows)]
    goal_row = np.zeros(g.cells, dtype=np.int8)
    goal_col = np.zeros(g.cells, dtype=np.int8)
    for home, tile in enumerate(goal):
        goal_row[tile], goal_col[tile] = divmod(home, g.cols)
    return (
        manhattan_costs(goal, g), line_cells, line_len, goal_row, goal_col, g.rows,
        g.cols,
    )


def popcount16() -> np.ndarray:
    """uint8 table: number of set bits of every 16-bit value."""
    table = np.zeros(1 << 16, dtype=np.uint8)
    for bit in range(16):
        table[(np.arange(1 << 16) >> bit) & 1 == 1] += 1
    return table


def lowbit16() -> np.ndarray:
    """int8 table: index of the lowest set bit of every 16-bit value (-1 for 0)."""
    values = np.arange(1 << 16)
    table = np.full(1 << 16, -1, dtype=np.int8)
    for bit in range(15, -1, -1):
        table[(values >> bit) & 1 == 1] = bit
    return table


# ------------------------------------------------------------------- IDA*


@jit
def _ida(board, goal, nbr, stats, path, additive=None, walking=None, pdb=None):
    """IDA* with the heuristic whose tables are given: ``additive``, ``walking``
    or ``pdb`` (the arguments of :func:`ida_additive`, :func:`ida_walking_distance`
    and :func:`ida_pdb`). Mutates ``board``; returns the path length in ``path``
    (-1 if none within MAX_PATH). h is kept incrementally: ``s`` (pdb: the plain
    and the mirrored sum) and per-depth arrays for the undo.

    numba compiles one specialization per heuristic: every ``is not None`` test is
    on an argument's type, so numba prunes the other heuristics' branches before
    typing and none is left at run time. Each heuristic's code stays in this body
    and its arrays are unpacked once per solve: array variables bound inside the
    loop (a helper's parameters or a tuple unpacked per node) cost numba reference
    counts per node, which cost 10-60% of the node rate when tried. Linear
    conflict keeps its own kernel: here it ran ~12% slower. Compare node rates with
    ``tests/benchmarks/bench_kernels_ab.py``.
    """
    if additive is not None:
        (cost,) = additive
        s = h = _board_cost(board, cost)
    if walking is not None:
        row_id, col_id, row_dist, row_next, col_dist, col_next, goal_row, goal_col = (
            walking
        )
        rows_at = np.zeros(MAX_PATH + 1, dtype=np.int32)
        cols_at = np.zeros(MAX_PATH + 1, dtype=np.int32)
        rows_at[0] = row_id
        cols_at[0] = col_id
        s = 0
        h = row_dist[row_id] + col_dist[col_id]
    if pdb is not None:
        (tables, offsets, gtiles, gsize, gmult, tile_group, mirror, moffsets, mtiles,
         mtile_group, mcellmap, popcnt, packed, gcost) = pdb  # fmt: skip
        pos, ident, val, mval, total, mtotal = _pdb_groups(
            board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets, mtiles,
            mcellmap, popcnt, packed, gcost,
        )
        saved = np.zeros((MAX_PATH + 1, 2), dtype=np.int32)
        s = (total, mtotal)
        h = max(total, mtotal)
    blank = 0
    for c in range(board.shape[0]):
        if board[c] == 0:
            blank = c
    stack_move = np.zeros(MAX_PATH + 1, dtype=np.int8)
    bound = h
    stats[1] += 1  # the root: Korf's published counts include it once
    while True:
        stats[3] += 1
        next_bound = _INF
        if _is_goal(board, goal, h):
            return 0
        depth = 0
        stats[0] += 1
        stack_move[0] = 0
        while depth >= 0:
            k = stack_move[depth]
            if k == 4:
                # all moves tried: undo the move that led here
                depth -= 1
                if depth < 0:
                    break
                back = path[depth]
                src = nbr[blank, 3 - back]
                t = board[src]
                board[blank] = t
                board[src] = 0
                if additive is not None:
                    s += cost[t, blank] - cost[t, src]
                if pdb is not None:
                    total, mtotal = s
                    pos[t] = blank
                    pos[0] = src
                    grp = tile_group[t]
                    total += saved[depth + 1, 0] - val[grp]
                    val[grp] = saved[depth + 1, 0]
                    if mirror:
                        grp = mtile_group[t]
                        mtotal += saved[depth + 1, 1] - mval[grp]
                        mval[grp] = saved[depth + 1, 1]
                    s = (total, mtotal)
                blank = src
                continue
            stack_move[depth] = k + 1
            if depth > 0 and k == 3 - path[depth - 1]:
                continue  # never generate the move undoing the last one
            dst = nbr[blank, k]
            if dst < 0:
                continue
            stats[1] += 1
            t = board[dst]
            if additive is not None:
                child_h = child_s = s + cost[t, blank] - cost[t, dst]
            if walking is not None:
                # a vertical move steps the row-count state by the moved tile's goal
                # row, a horizontal one the column state
                r = rows_at[depth]
                c = cols_at[depth]
                if k == 0:  # blank up: the tile comes down into the blank's row
                    r = row_next[r, 0, goal_row[t]]
                elif k == 3:
                    r = row_next[r, 1, goal_row[t]]
                elif k == 1:
                    c = col_next[c, 0, goal_col[t]]
                else:
                    c = col_next[c, 1, goal_col[t]]
                child_h = row_dist[r] + col_dist[c]
                child_s = s
            if pdb is not None:
                # only the moved tile's group, and its mirrored group, change
                total, mtotal = s
                pos[t] = blank  # the tile slides into the blank's cell
                grp = tile_group[t]
                new_val = _group_value(
                    pos, gtiles[grp], gsize[grp], gmult[grp], ident, tables,
                    offsets[grp], popcnt, packed, gcost[grp],
                )
                child_total = total + new_val - val[grp]
                child_h = child_total
                child_mtotal = mtotal
                new_mval = np.int32(0)
                # The mirrored sum can only raise f: skip it when the plain sum
                # already cuts the child off at or above the next bound (same f,
                # same counts).
                if mirror and depth + 1 + child_total < next_bound:
                    mgrp = mtile_group[t]
                    new_mval = _group_value(
                        pos, mtiles[mgrp], gsize[mgrp], gmult[mgrp], mcellmap,
                        tables, moffsets[mgrp], popcnt, packed, gcost[mgrp],
                    )
                    child_mtotal = mtotal + new_mval - mval[mgrp]
                    if child_mtotal > child_h:
                        child_h = child_mtotal
                child_s = (child_total, child_mtotal)
            f = depth + 1 + child_h
            if f > bound:
                if pdb is not None:
                    pos[t] = dst
                if f < next_bound:
                    next_bound = f
                continue
            # enter the child, saving at depth + 1 what the undo restores
            if walking is not None:
                rows_at[depth + 1] = r
                cols_at[depth + 1] = c
            if pdb is not None:
                saved[depth + 1, 0] = val[grp]
                val[grp] = new_val
                if mirror:
                    mgrp = mtile_group[t]
                    saved[depth + 1, 1] = mval[mgrp]
                    mval[mgrp] = new_mval
                pos[0] = dst
            board[blank] = t
            board[dst] = 0
            blank = dst
            s = child_s
            path[depth] = k
            depth += 1
            if depth > stats[2]:
                stats[2] = depth
            if _is_goal(board, goal, child_h):
                return depth
            if depth >= MAX_PATH:
                return -1
            stats[0] += 1
            stack_move[depth] = 0
        if next_bound >= _INF or next_bound > MAX_PATH:
            return -1
        bound = next_bound


@jit
def _is_goal(board, goal, h):
    if h != 0:
        return False
    for c in range(board.shape[0]):
        if board[c] != goal[c]:
            return False
    return True


@jit
def _board_cost(board, cost):
    h = 0
    for c in range(board.shape[0]):
        h += cost[board[c], c]
    return h


# ------------------------------------------------------- IDA*, tile-additive h


@jit
def ida_additive(board, goal, nbr, cost, stats, path):
    """IDA* with a tile-additive h (``cost[tile, cell]``, blank 0): Manhattan,
    misplaced; a move changes one tile's cost. Mutates ``board``; returns the path
    length in ``path`` (-1 if none within MAX_PATH)."""
    return _ida(board, goal, nbr, stats, path, additive=(cost,))


# ------------------------------------------------- IDA*, Manhattan + conflicts


@jit
def _line_conflict(board, cells, length, line, goal_line, goal_slot):
    """Tiles that must leave this line: members whose goal line is it, minus the
    longest subsequence already in goal order (the admissible LIS form)."""
    # patience sorting over at most 5 values, tails t0 < t1 < ... kept in locals
    # (no heap allocation); a fifth tail is never compared, so it is not stored
    t0 = t1 = t2 = t3 = np.int8(0)
    size = 0
    members = 0
    for i in range(length):
        t = board[cells[i]]
        if t == 0 or goal_line[t] != line:
            continue
        members += 1
        x = goal_slot[t]
        # bisect_left on the strictly increasing tails t0 < t1 < ... (size of them)
        if size == 0 or x <= t0:
            lo = 0
        elif size == 1 or x <= t1:
            lo = 1
        elif size == 2 or x <= t2:
            lo = 2
        elif size == 3 or x <= t3:
            lo = 3
        else:
            lo = 4
        if lo == 0:
            t0 = x
        elif lo == 1:
            t1 = x
        elif lo == 2:
            t2 = x
        elif lo == 3:
            t3 = x
        if lo == size:
            size += 1
    return members - size


@jit
def lc_line_values(board, line_cells, line_len, goal_row, goal_col, rows, out):
    """Fill ``out[line]`` with each row's then each column's must-leave count."""
    for line in range(line_cells.shape[0]):
        if line < rows:
            out[line] = _line_conflict(
                board, line_cells[line], line_len[line], line, goal_row, goal_col
            )
        else:
            out[line] = _line_conflict(
                board, line_cells[line], line_len[line], line - rows, goal_col, goal_row
            )


@jit
def ida_linear_conflict(
    board, goal, nbr, cost, line_cells, line_len, goal_row, goal_col, rows, cols,
    stats, path,
):
    """IDA* with Manhattan + 2 x (tiles that must leave a row/column), updated per
    move: a vertical move only changes the two rows involved, a horizontal one
    the two columns (tile order along the other line is unchanged)."""
    n = board.shape[0]
    lines = line_cells.shape[0]
    values = np.zeros(lines, dtype=np.int32)
    lc_line_values(board, line_cells, line_len, goal_row, goal_col, rows, values)
    blank = 0
    md = 0
    for c in range(n):
        t = board[c]
        if t == 0:
            blank = c
        md += cost[t, c]
    conflicts = 0
    for i in range(lines):
        conflicts += values[i]
    stack_move = np.zeros(MAX_PATH + 1, dtype=np.int8)
    # per depth: the two lines changed by the move into it and their old values
    saved_line = np.zeros((MAX_PATH + 1, 2), dtype=np.int32)
    saved_value = np.zeros((MAX_PATH + 1, 2), dtype=np.int32)
    bound = md + 2 * conflicts
    stats[1] += 1  # the root, once
    while True:
        stats[3] += 1
        next_bound = _INF
        if _is_goal(board, goal, md + conflicts):
            return 0
        depth = 0
        stats[0] += 1
        stack_move[0] = 0
        while depth >= 0:
            k = stack_move[depth]
            if k == 4:
                depth -= 1
                if depth < 0:
                    break
                back = path[depth]
                src = nbr[blank, 3 - back]
                t = board[src]
                md += cost[t, blank] - cost[t, src]
                board[blank] = t
                board[src] = 0
                blank = src
                for j in range(2):
                    line = saved_line[depth + 1, j]
                    conflicts += saved_value[depth + 1, j] - values[line]
                    values[line] = saved_value[depth + 1, j]
                continue
            stack_move[depth] = k + 1
            if depth > 0 and k == 3 - path[depth - 1]:
                continue
            dst = nbr[blank, k]
            if dst < 0:
                continue
            stats[1] += 1
            t = board[dst]
            child_md = md + cost[t, blank] - cost[t, dst]
            # apply, then measure the two affected lines
            board[blank] = t
            board[dst] = 0
            if k == 0 or k == 3:  # vertical: rows of blank and dst
                la = blank // cols
                lb = dst // cols
            else:
                la = rows + blank % cols
                lb = rows + dst % cols
            if la < rows:
                va = _line_conflict(
                    board, line_cells[la], line_len[la], la, goal_row, goal_col
                )
                vb = _line_conflict(
                    board, line_cells[lb], line_len[lb], lb, goal_row, goal_col
                )
            else:
                va = _line_conflict(
                    board, line_cells[la], line_len[la], la - rows, goal_col, goal_row
                )
                vb = _line_conflict(
                    board, line_cells[lb], line_len[lb], lb - rows, goal_col, goal_row
                )
            child_conflicts = conflicts + va - values[la] + vb - values[lb]
            f = depth + 1 + child_md + 2 * child_conflicts
            if f > bound:
                board[dst] = t
                board[blank] = 0
                if f < next_bound:
                    next_bound = f
                continue
            saved_line[depth + 1, 0] = la
            saved_line[depth + 1, 1] = lb
            saved_value[depth + 1, 0] = values[la]
            saved_value[depth + 1, 1] = values[lb]
            values[la] = va
            values[lb] = vb
            conflicts = child_conflicts
            md = child_md
            blank = dst
            path[depth] = k
            depth += 1
            if depth > stats[2]:
                stats[2] = depth
            if _is_goal(board, goal, md + conflicts):
                return depth
            if depth >= MAX_PATH:
                return -1
            stats[0] += 1
            stack_move[depth] = 0
        if next_bound >= _INF or next_bound > MAX_PATH:
            return -1
        bound = next_bound


# --------------------------------------------------- IDA*, walking distance


@jit
def ida_walking_distance(
    board, goal, nbr, row_id, col_id, row_dist, row_next, col_dist, col_next,
    goal_row, goal_col, stats, path,
):
    """IDA* with walking distance: h costs two table reads per child
    (:func:`_wd_child`); the states are kept per depth for the undo."""
    walking = (row_id, col_id, row_dist, row_next, col_dist, col_next, goal_row,
               goal_col)  # fmt: skip
    return _ida(board, goal, nbr, stats, path, walking=walking)


# ------------------------------------------------ pattern databases: indexing


@jit
def pattern_index(positions, k, mult, popcnt):
    """Rank of the partial permutation ``positions[:k]`` (distinct cells < 16):
    sum of (cell - earlier cells below it) * mult[i]; dense in range(n!/(n-k)!)."""
    used = 0
    index = 0
    for i in range(k):
        p = positions[i]
        index += (p - popcnt[used & ((1 << p) - 1)]) * mult[i]
        used |= 1 << p
    return index


@jit
def _group_value(pos, tiles, k, mult, cellmap, tables, offset, popcnt, packed, cost):
    """One group's table value. ``packed`` tables hold (value - MD) / 2 at 4 bits
    per entry (:mod:`harness.heuristics.pdb_build`), ``offset`` counting entries:
    the group's Manhattan distance (``cost[slot, cell]``) is added back."""
    used = 0
    index = 0
    md = 0
    for i in range(k):
        p = cellmap[pos[tiles[i]]]
        index += (p - popcnt[used & ((1 << p) - 1)]) * mult[i]
        used |= 1 << p
        if packed:
            md += cost[i, p]
    if packed:
        at = offset + index
        return np.int32(md + 2 * ((tables[at >> 1] >> ((at & 1) * 4)) & 0xF))
    return np.int32(tables[offset + index])


@jit
def _pdb_groups(
    board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets, mtiles, mcellmap,
    popcnt, packed, gcost,
):
    """(each tile's cell, the identity cell map, each group's value, each mirrored
    group's value through ``mcellmap`` (0 unmirrored), the two sums)."""
    n = board.shape[0]
    pos = np.empty(n, dtype=np.int8)
    for c in range(n):
        pos[board[c]] = c
    ident = np.arange(n).astype(np.int8)
    val = np.zeros(gtiles.shape[0], dtype=np.int32)
    mval = np.zeros(gtiles.shape[0], dtype=np.int32)
    total = 0
    mtotal = 0
    for grp in range(gtiles.shape[0]):
        val[grp] = _group_value(
            pos, gtiles[grp], gsize[grp], gmult[grp], ident, tables, offsets[grp],
            popcnt, packed, gcost[grp],
        )
        total += val[grp]
        if mirror:
            mval[grp] = _group_value(
                pos, mtiles[grp], gsize[grp], gmult[grp], mcellmap, tables,
                moffsets[grp], popcnt, packed, gcost[grp],
            )
            mtotal += mval[grp]
    return pos, ident, val, mval, total, mtotal


@jit
def pdb_value(
    board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets, mtiles, mcellmap,
    popcnt, packed, gcost,
):
    """Additive PDB estimate of one board: sum over groups, and with ``mirror`` the
    max of that and the mirrored sum (lookups through ``mcellmap``)."""
    _, _, _, _, total, mtotal = _pdb_groups(
        board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets, mtiles,
        mcellmap, popcnt, packed, gcost,
    )
    return max(total, mtotal)


@jit
def ida_pdb(
    board, goal, nbr, tables, offsets, gtiles, gsize, gmult, tile_group, mirror,
    moffsets, mtiles, mtile_group, mcellmap, popcnt, packed, gcost, stats, path,
):
    """IDA* with an additive disjoint PDB (optionally max'ed with its mirrored
    lookup); a move re-indexes only the moved tile's groups (:func:`_pdb_child`)."""
    pdb = (tables, offsets, gtiles, gsize, gmult, tile_group, mirror, moffsets, mtiles,
           mtile_group, mcellmap, popcnt, packed, gcost)  # fmt: skip
    return _ida(board, goal, nbr, stats, path, pdb=pdb)


# ------------------------------------------------ pattern databases: building


@jit
def region_tables(n, cols):
    """For every set of free cells (bit mask over n <= 16 cells): its number of
    connected regions, each free cell's region number (regions numbered by their
    lowest cell; -1 for occupied cells) and each region's cell mask."""
    size = 1 << n
    count = np.zeros(size, dtype=np.uint8)
    label = np.full((size, n), -1, dtype=np.int8)
    masks = np.zeros((size, n), dtype=np.int32)
    full = (1 << n) - 1
    first_col = 0
    last_col = 0
    for r in range(n // cols):
        first_col |= 1 << (r * cols)
        last_col |= 1 << (r * cols + cols - 1)
    for free in range(size):
        remaining = free
        rid = 0
        while remaining:
            region = remaining & -remaining
            while True:
                grow = (
                    region
                    | (region >> cols)
                    | ((region << cols) & full)
                    | ((region >> 1) & (full & ~last_col))
                    | ((region << 1) & (full & ~first_col))
                ) & free
                if grow == region:
                    break
                region = grow
            remaining &= ~region
            masks[free, rid] = region
            for c in range(n):
                if (region >> c) & 1:
                    label[free, c] = rid
            rid += 1
        count[free] = rid
    return count, label, masks


#: Layout of one placement's uint32 word in :func:`pdb_bfs`.
_DIST_SHIFT = 24
_BLOCK = 12  # placements per "frontier not empty here" flag: 2**12


@jit
def pdb_bfs(n, nbr, goal_cells, goal_blank, mult, popcnt, lowbit, region_count,
            region_label, region_mask, state, flags_a, flags_b):
    """Breadth-first search over (pattern placement, blank region) from the goal,
    counting only pattern-tile moves; the blank moves free of cost inside its
    region of non-pattern cells, so a state is a placement plus one region.

    ``state[index]`` packs, per placement: bits 0-7 the regions visited, 8-15 and
    16-23 the regions in the current/next frontier (the two swap roles each
    layer), 24-31 the depth at which any region was first reached (255 = not yet):
    the minimum over blank cells, which is the table. One word per placement keeps
    a child's check-and-mark to one cache line. ``flags_*[index >> 12]`` mark
    blocks with frontier bits, so sparse layers skip most of the array.
    Returns (deepest layer, states visited, a value to ignore), or depth -1 for
    more than 8 regions."""
    k = goal_cells.shape[0]
    pos = np.empty(k, dtype=np.int64)
    owner = np.full(n, -1, dtype=np.int64)  # cell -> pattern tile slot, -1 if free
    kid_index = np.empty(4 * k, dtype=np.int64)
    kid_bit = np.empty(4 * k, dtype=np.uint32)
    touch = np.uint32(0)  # xor of prefetched words: returned so loads are kept
    adjacent = np.zeros(n, dtype=np.int64)
    for c in range(n):
        for d in range(4):
            if nbr[c, d] >= 0:
                adjacent[c] |= np.int64(1) << nbr[c, d]
    full = (np.int64(1) << n) - 1
    occ = np.int64(0)
    for j in range(k):
        pos[j] = goal_cells[j]
        occ |= np.int64(1) << pos[j]
    free = full & ~occ
    start = pattern_index(pos, k, mult, popcnt)
    bit = np.uint32(1) << region_label[free, goal_blank]
    state[start] = bit | (bit << 8)  # visited, in frontier A, depth 0
    flags_a[start >> _BLOCK] = 1
    depth = 0
    states = 1
    frontier = 1
    blocks = flags_a.shape[0]
    entries = state.shape[0]
    while frontier:
        frontier = 0
        cur_shift = 8 if depth % 2 == 0 else 16
        nxt_shift = 24 - cur_shift
        cur_flags = flags_a if depth % 2 == 0 else flags_b
        nxt_flags = flags_b if depth % 2 == 0 else flags_a
        for block in range(blocks):
            if cur_flags[block] == 0:
                continue
            cur_flags[block] = 0
            stop = min((block + 1) << _BLOCK, entries)
            for index in range(block << _BLOCK, stop):
                word = state[index]
                mask = (word >> cur_shift) & 0xFF
                if mask == 0:
                    continue
                state[index] = word & ~(np.uint32(0xFF) << cur_shift)
                # unrank: digit i picks the (digit)-th cell not used by tiles < i
                rest = index
                occ = np.int64(0)
                for i in range(k):
                    digit = rest // mult[i]
                    rest -= digit * mult[i]
                    avail = full & ~occ
                    for _ in range(digit):
                        avail &= avail - 1
                    pos[i] = lowbit[avail]
                    occ |= np.int64(1) << pos[i]
                    owner[pos[i]] = i
                free = full & ~occ
                if region_count[free] > 8:
                    return -1, 0, touch
                for rid in range(region_count[free]):
                    if not (mask >> rid) & 1:
                        continue
                    region = np.int64(region_mask[free, rid])
                    # Phase 1: every child's index and region bit, and a load of
                    # its word with no branch on the value, so the CPU fetches
                    # all of them at once; phase 2 tests and marks them.
                    kids = 0
                    for j in range(k):
                        p = pos[j]
                        targets = adjacent[p] & region
                        while targets:
                            q = lowbit[targets]
                            targets &= targets - 1
                            # Tile j slides into q; the blank ends on p. Index of
                            # the child, incrementally: digit j moves by the cells
                            # passed over that tiles before j do not hold, and each
                            # later tile passed over shifts its own digit by one.
                            lo = min(p, q)
                            hi = max(p, q)
                            step = hi - lo
                            extra = 0
                            for c in range(lo + 1, hi):
                                o = owner[c]
                                if o >= 0:
                                    if o < j:
                                        step -= 1
                                    else:
                                        extra += mult[o]
                            change = step * mult[j] + extra
                            child = index + change if q > p else index - change
                            free2 = free ^ (np.int64(1) << q) ^ (np.int64(1) << p)
                            if region_count[free2] == 1:
                                rid2 = 0  # the common case: skip the label table
                            else:
                                rid2 = region_label[free2, p]
                            if rid2 >= 8:
                                return -1, 0, touch
                            kid_index[kids] = child
                            kid_bit[kids] = np.uint32(1) << rid2
                            touch ^= state[child]
                            kids += 1
                    for m in range(kids):
                        child = kid_index[m]
                        b2 = kid_bit[m]
                        seen = state[child]
                        if seen & b2:
                            continue
                        seen |= b2 | (b2 << nxt_shift)
                        if (seen >> _DIST_SHIFT) == 255:
                            seen = (seen & np.uint32(0x00FFFFFF)) | (
                                np.uint32(depth + 1) << _DIST_SHIFT
                            )
                        state[child] = seen
                        nxt_flags[child >> _BLOCK] = 1
                        states += 1
                        frontier += 1
                for i in range(k):
                    owner[pos[i]] = -1
        if frontier:
            depth += 1
    return depth, states, touch


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
    """Rank after the blank on cell ``p`` trades places with the tile on ``q``
    (``board`` still shows the position before), in O(n) instead of O(n^2): only
    the Lehmer digits of cells p..q change. A cell m between them loses or gains
    one smaller value after it; the two cells themselves are recounted."""
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
    after = 0  # smaller than t beyond both cells
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
    # t moves right from q to p: it loses the blank and the smaller cells between
    return (
        rank
        - (between + 1 + after) * fact[n - 1 - q]
        + after * fact[n - 1 - p]
        - between_weight
    )


@jit
def _pack(board):
    packed = np.int64(0)
    for c in range(board.shape[0]):
        packed |= np.int64(board[c]) << (4 * c)
    return packed


@jit
def _heap_push(keys, ranks, packs, gs, size, key, rank, pack, g):
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
def _heap_pop(keys, ranks, packs, gs, size):
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
def _lc_total(board, line_cells, line_len, goal_row, goal_col, rows, values):
    lc_line_values(board, line_cells, line_len, goal_row, goal_col, rows, values)
    total = 0
    for i in range(values.shape[0]):
        total += values[i]
    return total


@jit
def astar_cantor(
    start, goal, nbr, cost, conflicts, line_cells, line_len, goal_row, goal_col, rows,
    fact, best_g, parent_move, stats, path,
):
    """A* over flat arrays indexed by Cantor rank: ``best_g[rank]`` holds g + 1 (0 =
    never seen) and ``parent_move[rank]`` the blank move that reached the board. The
    heap orders (f, push count), so equal f pop first-in first-out like
    ``astar_dict``; a board re-pushed at a lower g leaves a stale entry, skipped.
    Heap entries carry the board packed 4 bits a cell (n <= 12 here), so a pop
    needs no unranking, and children are ranked incrementally (:func:`swap_rank`).
    h is ``cost`` summed, plus 2 x line conflicts when ``conflicts``. Returns the
    path length (moves in ``path``), or -1 when the goal is unreachable.
    ``stats``: expanded, generated, max_frontier, stale."""
    n = start.shape[0]
    values = np.zeros(line_cells.shape[0], dtype=np.int32)
    board = start.copy()
    h = 0
    for c in range(n):
        h += cost[board[c], c]
    if conflicts:
        h += 2 * _lc_total(
            board, line_cells, line_len, goal_row, goal_col, rows, values
        )
    goal_rank = cantor_rank(goal, fact)
    capacity = 1024
    keys = np.empty(capacity, dtype=np.int64)
    ranks = np.empty(capacity, dtype=np.int64)
    packs = np.empty(capacity, dtype=np.int64)
    gs = np.empty(capacity, dtype=np.int32)
    tie = 0
    root = cantor_rank(board, fact)
    _heap_push(keys, ranks, packs, gs, 0, np.int64(h) << 40, root, _pack(board), 0)
    size = 1
    best_g[root] = 1
    while size > 0:
        if size > stats[2]:
            stats[2] = size
        key = keys[0]
        rank = ranks[0]
        pack = packs[0]
        g = gs[0]
        _heap_pop(keys, ranks, packs, gs, size)
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
                    board, line_cells, line_len, goal_row, goal_col, rows, values
                )
                board[dst] = tile
                board[blank] = 0
            else:
                h_child = h - cost[tile, dst] + cost[tile, blank]
            tie += 1
            if size == capacity:
                capacity *= 2
                keys = _grow(keys, capacity, size)
                ranks = _grow(ranks, capacity, size)
                packs = _grow(packs, capacity, size)
                gs = _grow(gs, capacity, size)
            _heap_push(
                keys, ranks, packs, gs, size, (np.int64(g + h_child) << 40) | tie,
                child, child_pack, g,
            )
            size += 1
    return -1


@jit
def _grow(array, capacity, size):
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


# ----------------------------------------------- IDA*: a batch of boards per call
#
# One call per batch instead of one per board (a call's dispatch grows with its
# argument count: ~2.5 us for ida_pdb's 19). ``boards`` (b, cells) is overwritten;
# only boards with ``todo`` set are solved; ``stats`` (b, 4) and ``lengths`` (b,)
# receive each board's counters and path length (-1: none within MAX_PATH);
# ``moves`` (b, width) the paths, those longer than ``width`` left out (length
# still given: the caller solves them again one by one). ``*args`` are the
# kernel's own arguments between ``nbr`` and ``stats``.


@jit
def _keep_path(path, length, moves, i):
    if 0 < length <= moves.shape[1]:
        moves[i, :length] = path[:length]


@jit
def ida_additive_many(boards, todo, goal, nbr, stats, moves, lengths, *args):
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    for i in range(boards.shape[0]):
        if todo[i]:
            lengths[i] = ida_additive(boards[i], goal, nbr, *args, stats[i], path)
            _keep_path(path, lengths[i], moves, i)


@jit
def ida_linear_conflict_many(boards, todo, goal, nbr, stats, moves, lengths, *args):
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    for i in range(boards.shape[0]):
        if todo[i]:
            lengths[i] = ida_linear_conflict(
                boards[i], goal, nbr, *args, stats[i], path
            )
            _keep_path(path, lengths[i], moves, i)


@jit
def ida_pdb_many(boards, todo, goal, nbr, stats, moves, lengths, *args):
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    for i in range(boards.shape[0]):
        if todo[i]:
            lengths[i] = ida_pdb(boards[i], goal, nbr, *args, stats[i], path)
            _keep_path(path, lengths[i], moves, i)


@jit
def ida_walking_distance_many(
    boards, todo, goal, nbr, stats, moves, lengths, row_ids, col_ids, *args
):
    """As the others; each board's count states (``start_args``) in two arrays."""
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    for i in range(boards.shape[0]):
        if todo[i]:
            lengths[i] = ida_walking_distance(
                boards[i], goal, nbr, row_ids[i], col_ids[i], *args, stats[i], path
            )
            _keep_path(path, lengths[i], moves, i)
