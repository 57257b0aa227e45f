"""Backward (pull) layers for the pattern-database builder of :mod:`.pdb_build`.

After the widest layer most states are already reached, and pushing every frontier
state's children costs one scattered atomic write each, most of them to states
already marked. A pull layer goes the other way (a "bottom-up" step, as in Beamer,
Asanovic & Patterson's direction-optimizing BFS, 2012): every state not yet reached
looks at its neighbours and is reached at depth + 1 as soon as one of them has been
reached at all. That needs no frontier: moves are reversible, and a move changes the
pattern's Manhattan distance by one, so a neighbour of a state of parity depth + 1
has parity depth, was reached at a depth of that parity, and any such depth at or
below ``depth`` puts the state at depth + 1 (it would have been reached earlier
otherwise). So the reached bits (a word's low byte) are all a pull layer reads.

A pull layer writes only the words of its own blocks (the states it reaches), so it
needs no atomics, and it stops at the first reached neighbour, trying the moves of
the block's last tiles first (their neighbours lie in the same block, in the cache).
The word's high byte, the frontier in push layers, holds the regions not yet reached
(:func:`unreached`), so placements with nothing left cost one load each, and blocks
with nothing left are skipped.
"""

from __future__ import annotations

import numba
import numpy as np

from harness import kernels
from harness.heuristics.pdb_ops import atomic_add, map_mask, unrank_squares
from harness.heuristics.pdb_regions import row_of
from harness.kernels.ida import ctpop

_jit = numba.njit(cache=kernels.CACHE_ENABLED, nogil=True)


@_jit
def unreached(n, k, high, bsize, mult_high, lowrel, cblock, rank_tab, popcnt8,
              rcount, word, open_block, claim, granule):
    """Turn every word's high byte into its regions not yet reached (all of the
    placement's regions but the reached ones), and ``open_block[slot]`` into 1
    where any is left; one thread's share, blocks claimed from ``claim[0]``."""
    low = k - high
    cblocks = cblock.shape[0]
    full = (np.int64(1) << n) - 1
    free_squares = np.empty(n, dtype=np.int64)
    hsquares = np.empty(max(high, 1), dtype=np.int64)
    while True:
        start = atomic_add(claim, 0, granule)
        if start >= cblocks:
            break
        for slot in range(start, min(start + granule, cblocks)):
            hocc = np.int64(0)
            if high > 0:
                unrank_squares(cblock[slot], high, mult_high, n, hsquares)
                for i in range(high):
                    hocc |= np.int64(1) << hsquares[i]
            slots = 0
            for c in range(n):
                if not (hocc >> c) & 1:
                    free_squares[slots] = c
                    slots += 1
            base = slot * bsize
            left = 0
            for o in range(bsize):
                occ = hocc
                for i in range(low):
                    occ |= np.int64(1) << free_squares[lowrel[o, i]]
                row = row_of(full & ~occ, rank_tab, popcnt8)
                seen = word[base + o] & 0xFF
                rest = ((1 << rcount[row]) - 1) & ~seen
                word[base + o] = seen | (rest << 8)
                left |= rest
            open_block[slot] = left != 0


@_jit
def pull(depth, n, k, high, bsize, mult, mult_high, mult_kb, mult_ko, nbr, adjacent,
         cost, rank_tab, popcnt8, kid_region, kid_mirror, rmasks, lowbit, lowrel,
         cblock, bslot, word, nibble, open_block, claim, granule, mmask, msquare, minv,
         mult_low):
    """One thread's share of a pull layer: reach at ``depth + 1`` every state of
    parity ``depth + 1`` not yet reached that has a reached neighbour. Returns
    int64[4] as the push layer's: new states, placements looked at, 1 if a table
    value overflowed 4 bits, neighbours read."""
    low = k - high
    cblocks = cblock.shape[0]
    full = (np.int64(1) << n) - 1
    parity = (depth + 1) & 1
    pos = np.empty(k, dtype=np.int64)
    owner = np.full(n, k, dtype=np.int64)  # k: no pattern tile
    free_squares = np.empty(n, dtype=np.int64)
    hsquares = np.empty(max(high, 1), dtype=np.int64)
    mlow = np.empty(max(low, 1), dtype=np.int64)
    new = 0
    looked = 0
    reads = 0
    bad = 0
    while True:
        start = atomic_add(claim, 0, granule)
        if start >= cblocks:
            break
        for slot in range(start, min(start + granule, cblocks)):
            if open_block[slot] == 0:
                continue
            block = cblock[slot]
            gbase = block * bsize
            hocc = np.int64(0)
            hmd = 0
            if high > 0:
                unrank_squares(block, high, mult_high, n, hsquares)
                for i in range(high):
                    pos[i] = hsquares[i]
                    hocc |= np.int64(1) << hsquares[i]
                    owner[hsquares[i]] = i
                    hmd += cost[i, hsquares[i]]
            slots = 0
            for c in range(n):
                if not (hocc >> c) & 1:
                    free_squares[slots] = c
                    slots += 1
            base = slot * bsize
            left = 0
            for o in range(bsize):
                w = word[base + o]
                todo = (w >> 8) & 0xFF
                if todo == 0:
                    continue
                occ = hocc
                md = hmd
                for i in range(low):
                    c = free_squares[lowrel[o, i]]
                    pos[high + i] = c
                    occ |= np.int64(1) << c
                    md += cost[high + i, c]
                if (md & 1) != parity or md > depth + 1:
                    # reached, if ever, in a later layer: a move changes the
                    # Manhattan distance by one, so no state is nearer than it
                    left = 1
                    continue
                looked += 1
                for i in range(low):
                    owner[pos[high + i]] = high + i
                for t in range(low):  # mirror square of the low tile mapped to t
                    mlow[t] = msquare[pos[high + minv[t]]]
                row = row_of(full & ~occ, rank_tab, popcnt8)
                reached = w & 0xFF
                rest = todo
                while rest:
                    bit = rest & -rest
                    rest &= rest - 1
                    front = rmasks[row, lowbit[bit]]
                    found = False
                    # the last tiles first: their neighbours are in this block
                    for jj in range(k):
                        j = k - 1 - jj
                        p = pos[j]
                        if not adjacent[p] & front:
                            continue
                        for d in range(4):
                            q = np.int64(nbr[p, d])
                            if q < 0 or not (front >> q) & 1:
                                continue
                            # Tile j slides from p into q (as in a push layer);
                            # the neighbour reached is read, not marked.
                            lo = min(p, q)
                            hi = max(p, q)
                            step = hi - lo
                            dblock = 0
                            doff = 0
                            for c in range(lo + 1, hi):
                                ow = owner[c]
                                step -= ow < j
                                after = ow > j
                                dblock += mult_kb[ow] * after
                                doff += mult_ko[ow] * after
                            if j < high:
                                dblock += step * mult_high[j]
                            else:
                                doff += step * mult[j]
                            if q < p:
                                dblock = -dblock
                                doff = -doff
                            reads += 1
                            square = row * (4 * n) + p * 4 + d
                            if dblock == 0:
                                at = base + o + doff
                                region = kid_region[square]
                            else:
                                to = bslot[block + dblock]
                                if to >= 0:
                                    at = to * bsize + o + doff
                                    region = kid_region[square]
                                else:  # stored at its mirror (see push)
                                    occt = (hocc ^ (np.int64(1) << p)
                                            ^ (np.int64(1) << q))
                                    rem = full & ~map_mask(occt, mmask)
                                    om = 0
                                    for t in range(low):
                                        below = rem & ((np.int64(1) << mlow[t]) - 1)
                                        om += ctpop(below) * mult_low[t]
                                        rem &= ~(np.int64(1) << mlow[t])
                                    at = (~to) * bsize + om
                                    region = kid_mirror[square]
                            if word[at] & (np.uint16(1) << region):
                                found = True
                                break
                        if found:
                            break
                    if not found:
                        left = 1
                        continue
                    if reached == 0:  # the placement's first state: its value
                        excess = (depth + 1 - md) >> 1
                        if excess > 15:
                            bad = 1
                        g = gbase + o
                        nibble[g >> 1] |= np.uint8(excess << ((g & 1) * 4))
                    reached |= bit
                    w = (w | bit) & ~(bit << 8)
                    new += 1
                word[base + o] = w
                left |= (w >> 8) != 0
                for i in range(low):
                    owner[pos[high + i]] = k
            for i in range(high):
                owner[hsquares[i]] = k
            open_block[slot] = left != 0
    out = np.zeros(4, dtype=np.int64)
    out[0] = new
    out[1] = looked
    out[2] = bad
    out[3] = reads
    return out
