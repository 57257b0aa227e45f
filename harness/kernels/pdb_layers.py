"""Compiled kernels of the parallel 4-bit pattern-database builder
(:mod:`harness.heuristics.pdb_build` explains the method): one breadth-first layer
over (placement, blank region) per call, on several threads, with atomic marks;
the mirror-symmetry tables; unpacking a table to one byte per entry."""

from __future__ import annotations

import numba
import numpy as np
from numba.core import cgutils
from numba.extending import intrinsic

from harness.kernels.base import jit


def _atomic_rmw(op: str):
    """Code for ``array[index] <op>= value`` as one LLVM atomicrmw; returns the
    old value."""

    def codegen(context, builder, signature, args):
        arrty = signature.args[0]
        ary, idx, val = args
        struct = context.make_array(arrty)(context, builder, ary)
        ptr = cgutils.get_item_pointer(context, builder, arrty, struct, [idx])
        val = context.cast(builder, val, signature.args[2], arrty.dtype)
        return builder.atomic_rmw(op, ptr, val, "monotonic")

    return codegen


@intrinsic
def _atomic_or(typingctx, array, index, value):
    """``array[index] |= value`` atomically; returns the old value."""
    return array.dtype(array, index, value), _atomic_rmw("or")


@intrinsic
def _atomic_add(typingctx, array, index, value):
    """``array[index] += value`` atomically; returns the old value."""
    return array.dtype(array, index, value), _atomic_rmw("add")


@intrinsic
def _ctpop(typingctx, value):
    """Number of set bits of an int64 (one POPCNT)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return numba.types.int64(numba.types.int64), codegen


@jit
def _unrank_cells(index, count, mult, slots, out):
    """Cells (as ranks among ``slots`` free slots) of the first ``count`` digits."""
    used = np.int64(0)
    rest = index
    for i in range(count):
        digit = rest // mult[i]
        rest -= digit * mult[i]
        # the digit-th slot not used yet
        seen = -1
        for s in range(slots):
            if not (used >> s) & 1:
                seen += 1
                if seen == digit:
                    out[i] = s
                    used |= np.int64(1) << s
                    break


@jit
def low_table(slots, low, mult_low):
    """``lowrel[o, i]``: the slot (rank among the block's free cells) of low tile i
    in low offset ``o``."""
    size = 1
    for i in range(low):
        size *= slots - i
    table = np.empty((size, low), dtype=np.int8)
    cells = np.empty(low, dtype=np.int64)
    for o in range(size):
        _unrank_cells(o, low, mult_low, slots, cells)
        for i in range(low):
            table[o, i] = cells[i]
    return table


@jit
def _mark(word, nibble, flags, slot, offset, bsize, gbase, bit, excess):
    """Mark state (placement slot * bsize + offset, region ``bit``) reached; 1 when
    it is new, 3 when its table value would not fit in 4 bits. The table nibble
    (global index gbase + offset) is written with the placement's first state."""
    at = slot * bsize + offset
    if word[at] & bit:
        return 0
    old = _atomic_or(word, at, bit | (bit << 8))
    if old & bit:
        return 0
    flags[slot] = 1
    if (old & 0xFF) == 0:  # first state of this placement
        g = gbase + offset
        if excess > 15:
            return 3
        _atomic_or(nibble, g >> 1, np.uint8(excess << ((g & 1) * 4)))
    return 1


@jit
def expand_layer(depth, n, k, high, bsize, mult, mult_high, mult_kb, mult_ko, nbr,
            adjacent, cost, rank_lo, rank_hi, popcnt8, kid_region, kid_mirror,
            rmasks, lowbit, lowrel, cblock, bslot, selfm, hset, operm, word, nibble,
            flags_cur, flags_nxt, claim, granule, mlo, mhi, mcell, minv, mult_low):
    """One thread's share of a layer: expand the states at ``depth`` of the
    canonical blocks, ``granule`` blocks at a time, each run claimed from the shared
    counter ``claim[0]`` (so a thread the OS holds back does not hold up the layer);
    returns int64[4]: new states, placements expanded, 1 if a table value
    overflowed 4 bits, children generated."""
    low = k - high
    cblocks = cblock.shape[0]
    full = (np.int64(1) << n) - 1
    parity = depth & 1
    pos = np.empty(k, dtype=np.int64)
    owner = np.full(n, k, dtype=np.int64)  # k: no pattern tile
    free_cells = np.empty(n, dtype=np.int64)
    hcells = np.empty(max(high, 1), dtype=np.int64)
    mlow = np.empty(max(low, 1), dtype=np.int64)
    new = 0
    expanded = 0
    kids = 0
    bad = 0
    while True:
        start = _atomic_add(claim, 0, granule)
        if start >= cblocks:
            break
        for slot in range(start, min(start + granule, cblocks)):
            if flags_cur[slot] == 0:
                continue
            flags_cur[slot] = 0
            block = cblock[slot]
            own_mirror = selfm[slot]
            gbase = block * bsize
            hocc = np.int64(0)
            hmd = 0
            if high > 0:
                _unrank_cells(block, high, mult_high, n, hcells)
                for i in range(high):
                    pos[i] = hcells[i]
                    hocc |= np.int64(1) << hcells[i]
                    owner[hcells[i]] = i
                    hmd += cost[i, hcells[i]]
            slots = 0
            for c in range(n):
                if not (hocc >> c) & 1:
                    free_cells[slots] = c
                    slots += 1
            base = slot * bsize
            for o in range(bsize):
                w = word[base + o]
                fr = (w >> 8) & 0xFF
                if fr == 0:
                    continue
                occ = hocc
                md = hmd
                for i in range(low):
                    c = free_cells[lowrel[o, i]]
                    pos[high + i] = c
                    occ |= np.int64(1) << c
                    md += cost[high + i, c]
                if (md & 1) != parity:
                    continue  # reached in this layer: expanded in the next
                word[base + o] = w & 0xFF
                expanded += 1
                for i in range(low):
                    owner[pos[high + i]] = high + i
                for t in range(low):  # mirror cell of the low tile mapped to t
                    mlow[t] = mcell[pos[high + minv[t]]]
                free = full & ~occ
                lo8 = free & 0xFF
                row = rank_lo[lo8] + rank_hi[free >> 8, popcnt8[lo8]]
                front = np.int64(0)
                rest = fr
                while rest:
                    front |= rmasks[row, lowbit[rest]]
                    rest &= rest - 1
                for j in range(k):
                    p = pos[j]
                    if not adjacent[p] & front:
                        continue
                    for d in range(4):
                        q = np.int64(nbr[p, d])
                        if q < 0 or not (front >> q) & 1:
                            continue
                        # Tile j slides from p into q; the blank ends on p.
                        # Tiles before j on the cells passed over shorten
                        # j's digit; tiles after j there shift their own.
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
                        kids += 1
                        excess = depth + 1 - (md + cost[j, q] - cost[j, p])
                        excess >>= 1
                        cell = row * (4 * n) + p * 4 + d
                        if dblock == 0:
                            to = slot
                            tb = block
                            tg = gbase
                            mirrored = own_mirror
                        else:
                            tb = block + dblock
                            to = bslot[tb]
                            mirrored = 0
                            if to < 0:  # not canonical: mark its mirror
                                to = ~to
                                mirrored = 2
                            else:
                                mirrored = selfm[to]
                            tg = cblock[to] * bsize
                        o2 = o + doff
                        if mirrored == 2:
                            # the mirrored child's offset: its low tiles are
                            # this placement's, mirrored, ranked among the
                            # mirror block's free cells (one POPCNT a digit)
                            occt = hocc ^ (np.int64(1) << p) ^ (np.int64(1) << q)
                            rem = full & ~(mlo[occt & 0xFF] | mhi[occt >> 8])
                            om = 0
                            for t in range(low):
                                below = rem & ((np.int64(1) << mlow[t]) - 1)
                                om += _ctpop(below) * mult_low[t]
                                rem &= ~(np.int64(1) << mlow[t])
                            got = _mark(
                                word, nibble, flags_nxt, to,
                                om, bsize, tg,
                                np.uint16(1) << kid_mirror[cell], excess,
                            )
                            new += got & 1
                            bad |= got >> 1
                            continue
                        got = _mark(
                            word, nibble, flags_nxt, to, o2, bsize, tg,
                            np.uint16(1) << kid_region[cell], excess,
                        )
                        new += got & 1
                        bad |= got >> 1
                        if mirrored == 1:  # its own mirror's block: both
                            got = _mark(
                                word, nibble, flags_nxt, to,
                                np.int64(operm[hset[tb], o2]), bsize, tg,
                                np.uint16(1) << kid_mirror[cell], excess,
                            )
                            new += got & 1
                            bad |= got >> 1
                for i in range(low):
                    owner[pos[high + i]] = k
            for i in range(high):
                owner[hcells[i]] = k
    out = np.zeros(4, dtype=np.int64)
    out[0] = new
    out[1] = expanded
    out[2] = bad
    out[3] = kids
    return out

@jit
def _rank_cells(cells, count, mult, slots):
    """Index of ``count`` distinct slots (each a rank among ``slots``), as
    :func:`_unrank_cells` reads it."""
    used = np.int64(0)
    index = 0
    for i in range(count):
        s = cells[i]
        below = 0
        for t in range(s):
            below += (used >> t) & 1
        index += (s - below) * mult[i]
        used |= np.int64(1) << s
    return index


@jit
def symmetry_tables(n, high, low, bsize, mult_high, mult_low, lowrel, mcell, sigma):
    """Which blocks the symmetric build keeps, and how the others map onto them.

    A block (a placement of the first ``high`` tiles) is canonical when its index
    is at most its mirror's. Returns (cblock: the canonical blocks in order,
    bslot[block]: its slot among them, or ~slot of its mirror for the others,
    selfm[slot]: 1 when the block is its own mirror, hset[block]: the id of the
    block's set of high cells, operm[hset, offset]: the offset in the mirror block
    of the same low placement mirrored)."""
    blocks = 1
    for i in range(high):
        blocks *= n - i
    mirror = np.empty(blocks, dtype=np.int64)
    hset = np.empty(blocks, dtype=np.int32)
    set_id = np.full(1 << n, -1, dtype=np.int32)
    sets = 0
    cells = np.empty(max(high, 1), dtype=np.int64)
    mcells = np.empty(max(high, 1), dtype=np.int64)
    for b in range(blocks):
        _unrank_cells(b, high, mult_high, n, cells)
        occ = 0
        for i in range(high):
            occ |= 1 << cells[i]
            mcells[sigma[i]] = mcell[cells[i]]
        mirror[b] = _rank_cells(mcells, high, mult_high, n)
        if set_id[occ] < 0:
            set_id[occ] = sets
            sets += 1
        hset[b] = set_id[occ]
    operm = np.zeros((sets, bsize), dtype=np.uint16)
    done = np.zeros(sets, dtype=np.uint8)
    free = np.empty(n, dtype=np.int64)
    mslot = np.full(n, -1, dtype=np.int64)
    lcells = np.empty(low, dtype=np.int64)
    for b in range(blocks):
        h = hset[b]
        if done[h]:
            continue
        done[h] = 1
        _unrank_cells(b, high, mult_high, n, cells)
        occ = 0
        for i in range(high):
            occ |= 1 << cells[i]
        slots = 0
        mocc = 0
        for c in range(n):
            if not (occ >> c) & 1:
                free[slots] = c
                slots += 1
                mocc |= 1 << mcell[c]
        # slot of each cell among the mirror block's free cells
        s = 0
        for c in range(n):
            if (mocc >> c) & 1:
                mslot[c] = s
                s += 1
        for o in range(bsize):
            for i in range(low):
                lcells[sigma[high + i] - high] = mslot[mcell[free[lowrel[o, i]]]]
            operm[h, o] = _rank_cells(lcells, low, mult_low, slots)
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


@jit
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

@jit
def unpack_entries(n, k, mult, cost, packed, entries):
    out = np.empty(entries, dtype=np.uint8)
    cells = np.empty(k, dtype=np.int64)
    for index in range(entries):
        _unrank_cells(index, k, mult, n, cells)
        # slots are cells here: rank among n cells with earlier ones removed
        md = 0
        for i in range(k):
            md += cost[i, cells[i]]
        e = (packed[index >> 1] >> ((index & 1) * 4)) & 0xF
        out[index] = md + 2 * e
    return out
