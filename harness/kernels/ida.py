"""IDA* kernels, one per heuristic family: additive (Manhattan, misplaced),
linear conflict, walking distance and pattern databases (lookups included).

IDA* kernels count like Korf (1985); see :mod:`harness.kernels` for the counters.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.extending import intrinsic

from harness.kernels.base import MAX_PATH, jit

_INF = 1 << 30

# ------------------------------------------------------------------- IDA*


@jit
def _ida(
    board, goal, nbr, stats, path, additive=None, walking=None, pdb=None, weight=None
):
    """IDA* with the heuristic whose tables are given: ``additive``, ``walking``
    or ``pdb`` (the arguments of :func:`ida_additive`, :func:`ida_walking_distance`
    and :func:`ida_pdb`). Mutates ``board``; returns the path length in ``path``
    (-1 if none within MAX_PATH). h is kept incrementally: ``s`` (pdb: the plain
    and the mirrored sum) and per-depth arrays for the undo. ``weight`` (a, b):
    weighted IDA*, bounds on f = a*g + b*h (w = b/a) instead of g + h.

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
         mtile_group, gsquaremap, msquaremap, packed, gcost) = pdb  # fmt: skip
        pos, val, mval, total, mtotal = _pdb_groups(
            board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets, mtiles,
            gsquaremap, msquaremap, packed, gcost,
        )
        saved = np.zeros((MAX_PATH + 1, 2), dtype=np.int32)
        s = (total, mtotal)
        h = max(total, mtotal)
    # squares and tiles as unsigned ints: numba wraps a signed index (adds the
    # length when it is negative) on every read; an unsigned one it reads as is
    blank = np.uintp(0)
    for c in range(board.shape[0]):
        if board[c] == 0:
            blank = np.uintp(c)
    stack_move = np.zeros(MAX_PATH + 1, dtype=np.int8)
    bound = h
    if weight is not None:
        wa, wb = weight
        bound = wb * h
    # the counters live in locals (registers) and reach ``stats`` on return: a
    # store to ``stats`` per node is a memory write LLVM cannot drop, since any
    # array here may alias it
    expanded = 0
    generated = 1  # the root: Korf's published counts include it once
    deepest = 0
    iterations = 0
    while True:
        iterations += 1
        next_bound = _INF
        if _is_goal(board, goal, h):
            return _counted(stats, 0, expanded, generated, deepest, iterations)
        depth = 0
        expanded += 1
        stack_move[0] = 0
        while depth >= 0:
            k = stack_move[depth]
            if k == 4:
                # all moves tried: undo the move that led here
                depth -= 1
                if depth < 0:
                    break
                back = path[depth]
                src = np.uintp(nbr[blank, np.uintp(3 - back)])
                t = np.uintp(board[src])
                board[blank] = t
                board[src] = 0
                if additive is not None:
                    s += cost[t, blank] - cost[t, src]
                if pdb is not None:
                    total, mtotal = s
                    pos[t] = blank
                    pos[0] = src
                    grp = np.uintp(tile_group[t])
                    total += saved[depth + 1, 0] - val[grp]
                    val[grp] = saved[depth + 1, 0]
                    if mirror:
                        grp = np.uintp(mtile_group[t])
                        mtotal += saved[depth + 1, 1] - mval[grp]
                        mval[grp] = saved[depth + 1, 1]
                    s = (total, mtotal)
                blank = src
                continue
            stack_move[depth] = k + 1
            if depth > 0 and k == 3 - path[depth - 1]:
                continue  # never generate the move undoing the last one
            to = nbr[blank, np.uintp(k)]
            if to < 0:
                continue
            dst = np.uintp(to)
            generated += 1
            t = np.uintp(board[dst])
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
                pos[t] = blank  # the tile slides into the blank's square
                grp = np.uintp(tile_group[t])
                new_val = _group_value(
                    pos, grp, gtiles, gsize[grp], gmult, gsquaremap, tables,
                    offsets[grp], packed, gcost,
                )
                child_total = total + new_val - val[grp]
                child_h = child_total
                child_mtotal = mtotal
                new_mval = np.int32(0)
                # The mirrored sum can only raise f: skip it when the plain sum
                # already cuts the child off at or above the next bound (same f,
                # same counts).
                if weight is not None:
                    low = wa * (depth + 1) + wb * child_total
                else:
                    low = depth + 1 + child_total
                if mirror and low < next_bound:
                    mgrp = np.uintp(mtile_group[t])
                    new_mval = _group_value(
                        pos, mgrp, mtiles, gsize[mgrp], gmult, msquaremap, tables,
                        moffsets[mgrp], packed, gcost,
                    )
                    child_mtotal = mtotal + new_mval - mval[mgrp]
                    if child_mtotal > child_h:
                        child_h = child_mtotal
                child_s = (child_total, child_mtotal)
            if weight is not None:
                f = wa * (depth + 1) + wb * child_h
            else:
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
                    mgrp = np.uintp(mtile_group[t])
                    saved[depth + 1, 1] = mval[mgrp]
                    mval[mgrp] = new_mval
                pos[0] = dst
            board[blank] = t
            board[dst] = 0
            blank = dst
            s = child_s
            path[depth] = k
            depth += 1
            if depth > deepest:
                deepest = depth
            if _is_goal(board, goal, child_h):
                return _counted(stats, depth, expanded, generated, deepest, iterations)
            if depth >= MAX_PATH:
                return _counted(stats, -1, expanded, generated, deepest, iterations)
            expanded += 1
            stack_move[depth] = 0
        if next_bound >= _INF or next_bound > _bound_limit(weight):
            return _counted(stats, -1, expanded, generated, deepest, iterations)
        bound = next_bound


@jit
def _counted(stats, result, expanded, generated, deepest, iterations):
    """Add a search's counters to ``stats`` (expanded, generated, the deepest
    depth reached, iterations) and return ``result``."""
    stats[0] += expanded
    stats[1] += generated
    if deepest > stats[2]:
        stats[2] = deepest
    stats[3] += iterations
    return result


@jit
def _bound_limit(weight):
    """The largest bound worth an iteration: MAX_PATH moves (weighted: in f's
    units, a*g + b*h, where g and h are each at most MAX_PATH)."""
    if weight is None:
        return MAX_PATH
    return (weight[0] + weight[1]) * MAX_PATH


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
    """IDA* with a tile-additive h (``cost[tile, square]``, blank 0): Manhattan,
    misplaced; a move changes one tile's cost. Mutates ``board``; returns the path
    length in ``path`` (-1 if none within MAX_PATH)."""
    return _ida(board, goal, nbr, stats, path, additive=(cost,))


# ------------------------------------------------- IDA*, Manhattan + conflicts


@jit
def _line_conflict(board, line_squares, at, length, line, goal_line, goal_slot):
    """Tiles that must leave this line (its squares ``line_squares[at]``, whole with
    the row, as PDB lookups take theirs): members whose goal line is it, minus the
    longest subsequence already in goal order (the admissible LIS form)."""
    # patience sorting over at most 5 values, tails t0 < t1 < ... kept in locals
    # (no heap allocation); a fifth tail is never compared, so it is not stored
    t0 = t1 = t2 = t3 = np.int8(0)
    size = 0
    members = 0
    for i in range(length):
        t = np.uintp(board[np.uintp(line_squares[at, i])])
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
def lc_line_values(board, line_squares, line_len, goal_row, goal_col, rows, out):
    """Fill ``out[line]`` with each row's then each column's must-leave count."""
    for line in range(line_squares.shape[0]):
        if line < rows:
            out[line] = _line_conflict(
                board, line_squares, line, line_len[line], line, goal_row, goal_col
            )
        else:
            out[line] = _line_conflict(
                board, line_squares,
                line, line_len[line], line - rows, goal_col, goal_row
            )


@jit
def ida_linear_conflict(
    board, goal, nbr, cost, line_squares, line_len, goal_row, goal_col, rows, cols,
    stats, path, weight=None,
):
    """IDA* with Manhattan + 2 x (tiles that must leave a row/column), updated per
    move: a vertical move only changes the two rows involved, a horizontal one
    the two columns (tile order along the other line is unchanged). ``weight``
    (a, b): weighted IDA* on f = a*g + b*h, as :func:`_ida`."""
    n = board.shape[0]
    lines = line_squares.shape[0]
    values = np.zeros(lines, dtype=np.int32)
    lc_line_values(board, line_squares, line_len, goal_row, goal_col, rows, values)
    blank = np.uintp(0)  # unsigned squares and tiles: no wrap of negative indices
    ucols = np.uintp(cols)
    urows = np.uintp(rows)
    md = 0
    for c in range(n):
        t = board[c]
        if t == 0:
            blank = np.uintp(c)
        md += cost[t, c]
    conflicts = 0
    for i in range(lines):
        conflicts += values[i]
    stack_move = np.zeros(MAX_PATH + 1, dtype=np.int8)
    # per depth: the two lines changed by the move into it and their old values
    saved_line = np.zeros((MAX_PATH + 1, 2), dtype=np.int32)
    saved_value = np.zeros((MAX_PATH + 1, 2), dtype=np.int32)
    bound = md + 2 * conflicts
    if weight is not None:
        wa, wb = weight
        bound = wb * (md + 2 * conflicts)
    expanded = 0  # the counters in locals, as in _ida
    generated = 1  # the root, once
    deepest = 0
    iterations = 0
    while True:
        iterations += 1
        next_bound = _INF
        if _is_goal(board, goal, md + conflicts):
            return _counted(stats, 0, expanded, generated, deepest, iterations)
        depth = 0
        expanded += 1
        stack_move[0] = 0
        while depth >= 0:
            k = stack_move[depth]
            if k == 4:
                depth -= 1
                if depth < 0:
                    break
                back = path[depth]
                src = np.uintp(nbr[blank, np.uintp(3 - back)])
                t = np.uintp(board[src])
                md += cost[t, blank] - cost[t, src]
                board[blank] = t
                board[src] = 0
                blank = src
                for j in range(2):
                    line = np.uintp(saved_line[depth + 1, j])
                    conflicts += saved_value[depth + 1, j] - values[line]
                    values[line] = saved_value[depth + 1, j]
                continue
            stack_move[depth] = k + 1
            if depth > 0 and k == 3 - path[depth - 1]:
                continue
            to = nbr[blank, np.uintp(k)]
            if to < 0:
                continue
            dst = np.uintp(to)
            generated += 1
            t = np.uintp(board[dst])
            child_md = md + cost[t, blank] - cost[t, dst]
            # apply, then measure the two affected lines
            board[blank] = t
            board[dst] = 0
            if k == 0 or k == 3:  # vertical: rows of blank and dst
                la = blank // ucols
                lb = dst // ucols
            else:
                la = urows + blank % ucols
                lb = urows + dst % ucols
            if la < urows:
                va = _line_conflict(
                    board, line_squares,
                    la, line_len[la], np.intp(la), goal_row, goal_col
                )
                vb = _line_conflict(
                    board, line_squares,
                    lb, line_len[lb], np.intp(lb), goal_row, goal_col
                )
            else:
                va = _line_conflict(
                    board, line_squares,
                    la, line_len[la], np.intp(la - urows), goal_col,
                    goal_row,
                )
                vb = _line_conflict(
                    board, line_squares,
                    lb, line_len[lb], np.intp(lb - urows), goal_col,
                    goal_row,
                )
            child_conflicts = conflicts + va - values[la] + vb - values[lb]
            if weight is not None:
                f = wa * (depth + 1) + wb * (child_md + 2 * child_conflicts)
            else:
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
            if depth > deepest:
                deepest = depth
            if _is_goal(board, goal, md + conflicts):
                return _counted(stats, depth, expanded, generated, deepest, iterations)
            if depth >= MAX_PATH:
                return _counted(stats, -1, expanded, generated, deepest, iterations)
            expanded += 1
            stack_move[depth] = 0
        if next_bound >= _INF or next_bound > _bound_limit(weight):
            return _counted(stats, -1, expanded, generated, deepest, iterations)
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
    """Rank of the partial permutation ``positions[:k]`` (distinct squares < 16):
    sum of (square - earlier squares below it) * mult[i]; dense in range(n!/(n-k)!)."""
    used = 0
    index = 0
    for i in range(k):
        p = positions[i]
        index += (p - popcnt[used & ((1 << p) - 1)]) * mult[i]
        used |= 1 << p
    return index


@intrinsic
def ctpop(typingctx, value):
    """Number of set bits of an int64 (one POPCNT): a 16-bit table would not
    cover the 25 squares of a 5x5 board."""

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return numba.types.int64(numba.types.int64), codegen


@jit
def _group_value(pos, grp, gtiles, k, gmult, squaremap, tables, offset, packed, gcost):
    """Group ``grp``'s table value, its tiles (``gtiles[grp]``) read at their squares
    through ``squaremap[grp]`` (the symmetry carrying the group onto the table it
    shares, or that and the transpose for a mirrored lookup). ``packed`` tables hold
    (value - MD) / 2 at 4 bits per entry (:mod:`harness.heuristics.pdb_build`),
    ``offset`` counting entries: the group's Manhattan distance
    (``gcost[grp, slot, square]``) is added back. The 2-D arrays come whole with the
    row, not as row views: a view made per call costs numba a reference count
    taken and dropped per node (pdb44 ran 1.044x faster without them,
    tests/benchmarks/bench_kernels_ab.py)."""
    used = np.int64(0)
    index = 0
    md = 0
    for i in range(k):
        p = np.int64(squaremap[grp, np.uintp(pos[np.uintp(gtiles[grp, i])])])
        index += (p - ctpop(used & ((np.int64(1) << p) - 1))) * gmult[grp, i]
        used |= np.int64(1) << p
        if packed:
            md += gcost[grp, i, np.uintp(p)]
    if packed:
        at = offset + index
        byte = np.int64(tables[np.uintp(at >> 1)])
        return np.int32(md + 2 * ((byte >> ((at & 1) * 4)) & 0xF))
    return np.int32(tables[np.uintp(offset + index)])


@jit
def _pdb_groups(
    board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets, mtiles, gsquaremap,
    msquaremap, packed, gcost,
):
    """(each tile's square, each group's value, each mirrored group's value (0
    unmirrored), the two sums); group ``grp`` reads its squares through
    ``gsquaremap[grp]``, mirrored through ``msquaremap[grp]``."""
    n = board.shape[0]
    pos = np.empty(n, dtype=np.int8)
    for c in range(n):
        pos[board[c]] = c
    val = np.zeros(gtiles.shape[0], dtype=np.int32)
    mval = np.zeros(gtiles.shape[0], dtype=np.int32)
    total = 0
    mtotal = 0
    for grp in range(gtiles.shape[0]):
        val[grp] = _group_value(
            pos, grp, gtiles, gsize[grp], gmult, gsquaremap, tables, offsets[grp],
            packed, gcost,
        )
        total += val[grp]
        if mirror:
            mval[grp] = _group_value(
                pos, grp, mtiles, gsize[grp], gmult, msquaremap, tables, moffsets[grp],
                packed, gcost,
            )
            mtotal += mval[grp]
    return pos, val, mval, total, mtotal


@jit
def pdb_value(
    board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets, mtiles, gsquaremap,
    msquaremap, packed, gcost,
):
    """Additive PDB estimate of one board: sum over groups, and with ``mirror`` the
    max of that and the mirrored sum (lookups through ``msquaremap``)."""
    _, _, _, total, mtotal = _pdb_groups(
        board, tables, offsets, gtiles, gsize, gmult, mirror, moffsets, mtiles,
        gsquaremap, msquaremap, packed, gcost,
    )
    return max(total, mtotal)


@jit
def ida_pdb(
    board, goal, nbr, tables, offsets, gtiles, gsize, gmult, tile_group, mirror,
    moffsets, mtiles, mtile_group, gsquaremap, msquaremap, packed, gcost, stats, path,
):
    """IDA* with an additive disjoint PDB (optionally max'ed with its mirrored
    lookup); a move re-indexes only the moved tile's groups (:func:`_pdb_child`)."""
    pdb = (tables, offsets, gtiles, gsize, gmult, tile_group, mirror, moffsets, mtiles,
           mtile_group, gsquaremap, msquaremap, packed, gcost)  # fmt: skip
    return _ida(board, goal, nbr, stats, path, pdb=pdb)


# ------------------------------------------- weighted IDA*: f = a*g + b*h
#
# The IDA* kernels above with a weight (w = b / a): the same search, counters
# and incremental h, iterating bounds on f = a*g + b*h. Each takes its ida
# twin's arguments, with a and b after ``nbr`` (``solvers/wida_star.py``).


@jit
def wida_additive(board, goal, nbr, a, b, cost, stats, path):
    return _ida(board, goal, nbr, stats, path, additive=(cost,), weight=(a, b))


@jit
def wida_linear_conflict(
    board, goal, nbr, a, b, cost, line_squares, line_len, goal_row, goal_col, rows,
    cols, stats, path,
):
    return ida_linear_conflict(
        board, goal, nbr, cost, line_squares, line_len, goal_row, goal_col, rows, cols,
        stats, path, (a, b),
    )


@jit
def wida_walking_distance(
    board, goal, nbr, a, b, row_id, col_id, row_dist, row_next, col_dist, col_next,
    goal_row, goal_col, stats, path,
):
    walking = (row_id, col_id, row_dist, row_next, col_dist, col_next, goal_row,
               goal_col)  # fmt: skip
    return _ida(board, goal, nbr, stats, path, walking=walking, weight=(a, b))


@jit
def wida_pdb(
    board, goal, nbr, a, b, tables, offsets, gtiles, gsize, gmult, tile_group, mirror,
    moffsets, mtiles, mtile_group, gsquaremap, msquaremap, packed, gcost, stats, path,
):
    pdb = (tables, offsets, gtiles, gsize, gmult, tile_group, mirror, moffsets, mtiles,
           mtile_group, gsquaremap, msquaremap, packed, gcost)  # fmt: skip
    return _ida(board, goal, nbr, stats, path, pdb=pdb, weight=(a, b))
