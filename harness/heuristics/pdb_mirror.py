"""Half a pattern table, by its left-right mirror symmetry (:mod:`.pdb_build`).

The 8-tile pattern of the 7-8 partition (the bottom two rows, goal blank in the top
two) is its own left-right mirror image, and so is its goal state, so its table is
symmetric: h(P) = h(P') where P' puts the mirror tile (``sigma``) on the mirror square
of each tile. The builder stores and searches only the canonical blocks (index at
most the mirror's) and copies the skipped blocks' values at the end. This module
finds ``sigma`` (:func:`symmetry`), the tables that map a block and an offset onto
their mirrors (:func:`mirror_tables`), and the final copy (:func:`fill_mirrors`).
"""

from __future__ import annotations

import numba
import numpy as np

from harness import kernels
from harness.heuristics.pdb_ops import unrank_squares
from harness.heuristics.pdb_regions import Regions, row_of
from harness.puzzle import Grid

_jit = numba.njit(cache=kernels.CACHE_ENABLED, nogil=True)


def mirror_squares(g: Grid) -> list[int]:
    """The left-right mirror of the board as a square map (column c -> cols - 1 - c)."""
    return [r * g.cols + g.cols - 1 - c for r in range(g.rows) for c in range(g.cols)]


def symmetry(g: Grid, goal_squares: tuple[int, ...], goal_blank: int, high: int,
             regions: Regions) -> list[int] | None:
    """The tile relabelling ``sigma`` under which the pattern's table is left-right
    symmetric (``h(P) = h(P')`` where P' puts tile ``sigma[i]`` on the mirror of
    tile i's square), or None. It needs the pattern's goal squares to be a mirror image
    of themselves, the first ``high`` tiles (a block) to map onto themselves, and
    the goal blank's region to contain its mirror square (then the abstract goal is
    its own mirror): true for the 8-tile half of the 7-8 partition. ``regions``:
    the grid's :class:`Regions` for the pattern's free-set size."""
    m = mirror_squares(g)
    where = {square: i for i, square in enumerate(goal_squares)}
    if any(m[square] not in where for square in goal_squares):
        return None
    sigma = [where[m[square]] for square in goal_squares]
    if any((sigma[i] < high) != (i < high) for i in range(len(goal_squares))):
        return None
    free = ((1 << g.squares) - 1) & ~sum(1 << c for c in goal_squares)
    if regions.region(free, goal_blank) != regions.region(free, m[goal_blank]):
        return None
    return sigma


@_jit
def rank_squares(squares, count, mult, slots):
    """Index of ``count`` distinct slots (each a rank among ``slots``), as
    :func:`unrank_squares` reads it."""
    used = np.int64(0)
    index = 0
    for i in range(count):
        s = squares[i]
        below = 0
        for t in range(s):
            below += (used >> t) & 1
        index += (s - below) * mult[i]
        used |= np.int64(1) << s
    return index


@_jit
def mirror_tables(n, high, low, bsize, mult_high, mult_low, lowrel, msquare, sigma,
                rank_tab, popcnt8):
    """Which blocks the symmetric build keeps, and how the others map onto them.

    A block (a placement of the first ``high`` tiles) is canonical when its index
    is at most its mirror's. Returns (cblock: the canonical blocks in order,
    bslot[block]: its slot among them, or ~slot of its mirror for the others,
    selfm[slot]: 1 when the block is its own mirror, hset[block]: the id of the
    block's set of high squares, operm[hset, offset]: the offset in the mirror block
    of the same low placement mirrored)."""
    blocks = 1
    sets = 1  # C(n, high): a block's high-square set is numbered by its row
    for i in range(high):
        blocks *= n - i
        sets = sets * (n - i) // (i + 1)
    mirror = np.empty(blocks, dtype=np.int64)
    hset = np.empty(blocks, dtype=np.int32)
    squares = np.empty(max(high, 1), dtype=np.int64)
    msquares = np.empty(max(high, 1), dtype=np.int64)
    for b in range(blocks):
        unrank_squares(b, high, mult_high, n, squares)
        occ = 0
        for i in range(high):
            occ |= 1 << squares[i]
            msquares[sigma[i]] = msquare[squares[i]]
        mirror[b] = rank_squares(msquares, high, mult_high, n)
        hset[b] = row_of(occ, rank_tab, popcnt8)
    operm = np.zeros((sets, bsize), dtype=np.uint16)
    done = np.zeros(sets, dtype=np.uint8)
    free = np.empty(n, dtype=np.int64)
    mslot = np.full(n, -1, dtype=np.int64)
    lsquares = np.empty(low, dtype=np.int64)
    for b in range(blocks):
        h = hset[b]
        if done[h]:
            continue
        done[h] = 1
        unrank_squares(b, high, mult_high, n, squares)
        occ = 0
        for i in range(high):
            occ |= 1 << squares[i]
        slots = 0
        mocc = 0
        for c in range(n):
            if not (occ >> c) & 1:
                free[slots] = c
                slots += 1
                mocc |= 1 << msquare[c]
        # slot of each square among the mirror block's free squares
        s = 0
        for c in range(n):
            if (mocc >> c) & 1:
                mslot[c] = s
                s += 1
        for o in range(bsize):
            for i in range(low):
                lsquares[sigma[high + i] - high] = mslot[msquare[free[lowrel[o, i]]]]
            operm[h, o] = rank_squares(lsquares, low, mult_low, slots)
    canonical = 0
    for b in range(blocks):
        canonical += mirror[b] >= b
    cblock = np.empty(canonical, dtype=np.int64)
    bslot = np.empty(blocks, dtype=np.int64)
    selfm = np.zeros(canonical, dtype=np.uint8)
    s = 0
    for b in range(blocks):
        if mirror[b] >= b:
            cblock[s] = b
            bslot[b] = s
            selfm[s] = mirror[b] == b
            s += 1
    for b in range(blocks):
        if mirror[b] < b:
            bslot[b] = ~bslot[mirror[b]]
    return cblock, bslot, selfm, hset, operm


@_jit
def fill_mirrors(nibble, bsize, bslot, cblock, hset, operm, thread, threads):
    """Copy the table values of the canonical blocks to their mirror blocks (the
    blocks the symmetric build skipped); ``bsize`` is even, so every block owns
    whole bytes."""
    blocks = bslot.shape[0]
    for b in range(thread, blocks, threads):
        s = bslot[b]
        if s >= 0:
            continue
        src = cblock[~s] * bsize
        h = hset[b]
        dst = b * bsize
        for o in range(0, bsize, 2):
            g0 = src + np.int64(operm[h, o])
            g1 = src + np.int64(operm[h, o + 1])
            v0 = (nibble[g0 >> 1] >> ((g0 & 1) * 4)) & 0xF
            v1 = (nibble[g1 >> 1] >> ((g1 & 1) * 4)) & 0xF
            nibble[(dst + o) >> 1] = v0 | (v1 << 4)
