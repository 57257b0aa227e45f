"""Building pattern databases: blank-region tables and the breadth-first search
over (placement, blank region) from the goal."""

from __future__ import annotations

import numpy as np

from harness.kernels.base import jit
from harness.kernels.ida import pattern_index

# ------------------------------------------------ pattern databases: building


@jit
def flood_region(seed, free, cols, full, first_col, last_col):
    """The connected region of the square mask ``free`` that holds the square ``seed``
    (one bit), on a board ``cols`` wide whose squares are ``full``; ``first_col`` and
    ``last_col``: the masks of its first and last columns (no wrapping)."""
    region = seed
    while True:
        grow = (
            region
            | (region >> cols)
            | ((region << cols) & full)
            | ((region >> 1) & (full & ~last_col))
            | ((region << 1) & (full & ~first_col))
        ) & free
        if grow == region:
            return region
        region = grow


@jit
def region_tables(n, cols):
    """For every set of free squares (bit mask over n <= 16 squares): its number of
    connected regions, each free square's region number (regions numbered by their
    lowest square; -1 for occupied squares) and each region's square mask."""
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
            region = flood_region(
                remaining & -remaining, free, cols, full, first_col, last_col
            )
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
def adjacency(nbr, n):
    """Per square, the bit mask of its neighbouring squares."""
    adjacent = np.zeros(n, dtype=np.int64)
    for c in range(n):
        for d in range(4):
            if nbr[c, d] >= 0:
                adjacent[c] |= np.int64(1) << nbr[c, d]
    return adjacent


@jit
def unrank_pattern(index, k, mult, full, lowbit, pos, owner):
    """Placement ``index`` into ``pos`` (tile slot -> square) and ``owner`` (square
    -> slot; the caller resets it to -1 after use); returns the occupied mask.
    Digit i picks the (digit)-th square not used by tiles < i."""
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
    return occ


@jit
def child_index(index, j, p, q, owner, mult):
    """The placement after tile slot ``j`` slides from square ``p`` into ``q``,
    incrementally: digit j moves by the squares passed over that tiles before j do
    not hold, and each later tile passed over shifts its own digit by one."""
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
    return index + change if q > p else index - change


@jit
def pdb_bfs(n, nbr, goal_squares, goal_blank, mult, popcnt, lowbit, region_count,
            region_label, region_mask, state, flags_a, flags_b):
    """Breadth-first search over (pattern placement, blank region) from the goal,
    counting only pattern-tile moves; the blank moves free of cost inside its
    region of non-pattern squares, so a state is a placement plus one region.

    ``state[index]`` packs, per placement: bits 0-7 the regions visited, 8-15 and
    16-23 the regions in the current/next frontier (the two swap roles each
    layer), 24-31 the depth at which any region was first reached (255 = not yet):
    the minimum over blank squares, which is the table. One word per placement keeps
    a child's check-and-mark to one cache line. ``flags_*[index >> 12]`` mark
    blocks with frontier bits, so sparse layers skip most of the array.
    Returns (deepest layer, states visited, a value to ignore), or depth -1 for
    more than 8 regions."""
    k = goal_squares.shape[0]
    pos = np.empty(k, dtype=np.int64)
    owner = np.full(n, -1, dtype=np.int64)  # square -> pattern tile slot, -1 if free
    kid_index = np.empty(4 * k, dtype=np.int64)
    kid_bit = np.empty(4 * k, dtype=np.uint32)
    touch = np.uint32(0)  # xor of prefetched words: returned so loads are kept
    adjacent = adjacency(nbr, n)
    full = (np.int64(1) << n) - 1
    occ = np.int64(0)
    for j in range(k):
        pos[j] = goal_squares[j]
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
                occ = unrank_pattern(index, k, mult, full, lowbit, pos, owner)
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
                            # tile j slides into q; the blank ends on p
                            child = child_index(index, j, p, q, owner, mult)
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
