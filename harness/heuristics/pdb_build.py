"""The parallel pattern-database builder behind ``pdb78``: 4 bits per entry, both cores.

A pattern table gives, for every placement of the pattern's k tiles, the fewest moves
*of those tiles* that bring them home (the blank is free to wander, and is not
counted). The search runs over states (placement, blank region): the blank moves at
no cost inside its region of non-pattern squares, so a state is a placement plus the
region holding the blank, and a move slides a pattern tile into an adjacent square of
that region. The table value of a placement is the least depth of any of its states.

What makes this builder fit a 7-8 partition in 1 GiB and a few minutes of CPU:

- **Parity instead of a second frontier.** A move changes one pattern tile's
  Manhattan distance by one, so every state of placement P lies at a depth of the
  parity of MD(P). Layer d expands placements of parity d and only ever reaches
  placements of parity d+1: one frontier mask per placement serves both layers.
  A placement's word is 16 bits, visited regions (low byte) and frontier regions
  (high byte): 2 bytes per entry while building (0.5 GiB for the 8-tile table with
  the mirror below).
- **4 bits per entry.** The table stores ``(depth - MD(P)) / 2`` (depth and MD have
  the same parity and the excess is small: at most 9 for the 7-8 tables), two
  entries per byte; lookups add the pattern's Manhattan distance back. The 7-8
  tables take 275 MiB.
- **Locality from the rank.** A placement's index is the rank of its partial
  permutation (tile i's digit: its square's rank among the squares tiles < i leave
  free).
  Ranks are cut into blocks by the first k-4 tiles: moving one of the last four tiles
  stays in the block, moving one of the first k-4 lands in one of at most 16
  neighbouring blocks, so a block's children stay in the CPU's level-2 cache. The
  last four digits are read from a small table (``lowrel``) instead of unranked.
- **Region tables per free set, not per mask.** The blank-region tables are kept
  only for free sets of the pattern's size, found by their combinatorial rank (three
  lookups in 10 KB), and a child's region comes from one 64-byte row per free set
  (``kid_region[row, square * 4 + direction]``): a placement's children read one
  cache line instead of a 1 MiB table.
- **Half the 8-tile table, by its mirror symmetry.** The 8-tile pattern (the bottom
  two rows, goal blank in the top two) is its own left-right mirror image, and so
  is its goal state, so its table is symmetric: h(P) = h(P') where P' puts the
  mirror tile (``sigma``) on the mirror square of each tile. The first tiles (a
  block) are a mirror image of themselves, so a block's mirror is a block: only
  the canonical blocks (index at most the mirror's) are stored and searched, a
  child landing in another block is marked at its mirror (the mirrored offset
  ranked from the placement's low tiles by POPCNT, the mirrored region from
  ``kid_mirror``), a child in a block that is its own mirror is marked with its
  mirror too (offset from the table ``operm``), and the skipped blocks' values are
  copied at the end (through ``operm``; :mod:`.pdb_mirror`). Half the placements
  expanded and half the build memory; a child marked at its mirror lands on a
  scattered word of the mirror block (a cache miss where the other children
  stream), so a layer's CPU time drops by about a quarter, not a half.
- **Both cores.** Each layer runs one compiled ``nogil`` kernel per core on Python
  threads, each claiming runs of blocks from a shared counter; a child's word is
  marked with an atomic OR (an LLVM ``atomicrmw``), so two threads reaching the
  same placement never lose each other's bit; a table nibble is written once,
  also by atomic OR. (A numba ``prange`` did the same but took three times as long
  to compile.)

The driver (:func:`build_packed`) runs one kernel call per layer and reports progress
through a callback (states expanded out of the exact total, which is known up front:
the regions of every free-square set times k!).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from math import factorial, perm

import numba
import numpy as np

from harness import kernels
from harness.heuristics import pdb_pull
from harness.heuristics.pdb_mirror import (
    fill_mirrors,
    mirror_squares,
    mirror_tables,
    symmetry,
)
from harness.heuristics.pdb_ops import (
    atomic_add,
    atomic_or,
    map_mask,
    unrank_squares,
)
from harness.heuristics.pdb_regions import (
    Regions,
    chunks,
    popcount8,
    row_of,
)
from harness.kernels.ida import ctpop
from harness.puzzle import Grid

#: Most low digits per block: a block is every placement of the last few tiles.
LOW = 4
#: Most placements per block (a block's words stay in the level-2 cache, and
#: offsets within a block fit the uint16 tables of the mirrored build).
BLOCK_WORDS = 1 << 16
#: Largest board the builder takes (a square mask must fit an int64; 5x5 is 25).
MAX_SQUARES = 32


#: A layer pulls (:mod:`.pdb_pull`) instead of pushing once the states not yet
#: reached are fewer than this many times the last layer's new states: a push layer
#: costs about one scattered write per child of the frontier, a pull layer about one
#: read per state not yet reached (fewer for those it reaches), and on the 7-tile
#: pdb78 table the pull layers are the cheaper from the layer whose unreached states
#: fall below about 2.4 times the frontier (measured layer by layer on one thread).
PULL_RATIO = 2.4


def _pull_now(pull: str | float, reached: int, total: int, frontier: int) -> bool:
    """Whether the next layer pulls: see ``build_packed``'s ``pull``."""
    if pull == "never":
        return False
    if pull == "auto":
        return total - reached < PULL_RATIO * frontier
    return reached >= float(pull) * total


def low_digits(n: int, k: int) -> int:
    """Tiles per block for a k-tile pattern on n squares: the most (up to LOW)
    whose placements fit in BLOCK_WORDS (4 for 7-8 on 4x4, 3 for 6 tiles on 5x5)."""
    low = min(LOW, k)
    while low > 1 and perm(n - (k - low), low) > BLOCK_WORDS:
        low -= 1
    return low


_jit = numba.njit(cache=kernels.CACHE_ENABLED, nogil=True)


@_jit
def low_table(slots, low, mult_low):
    """``lowrel[o, i]``: the slot (rank among the block's free squares) of low tile i
    in low offset ``o``."""
    size = 1
    for i in range(low):
        size *= slots - i
    table = np.empty((size, low), dtype=np.int8)
    squares = np.empty(low, dtype=np.int64)
    for o in range(size):
        unrank_squares(o, low, mult_low, slots, squares)
        for i in range(low):
            table[o, i] = squares[i]
    return table


@_jit
def _mark(word, nibble, flags, slot, offset, bsize, gbase, bit, excess):
    """Mark state (placement slot * bsize + offset, region ``bit``) reached; 1 when
    it is new, 3 when its table value would not fit in 4 bits. The table nibble
    (global index gbase + offset) is written with the placement's first state."""
    at = slot * bsize + offset
    if word[at] & bit:
        return 0
    old = atomic_or(word, at, bit | (bit << 8))
    if old & bit:
        return 0
    flags[slot] = 1
    if (old & 0xFF) == 0:  # first state of this placement
        g = gbase + offset
        if excess > 15:
            return 3
        atomic_or(nibble, g >> 1, np.uint8(excess << ((g & 1) * 4)))
    return 1


@_jit
def _expand(depth, n, k, high, bsize, mult, mult_high, mult_kb, mult_ko, nbr,
            adjacent, cost, rank_tab, popcnt8, kid_region, kid_mirror,
            rmasks, lowbit, lowrel, cblock, bslot, selfm, hset, operm, word, nibble,
            flags_cur, flags_nxt, claim, granule, mmask, msquare, minv, mult_low):
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
    free_squares = np.empty(n, dtype=np.int64)
    hsquares = np.empty(max(high, 1), dtype=np.int64)
    mlow = np.empty(max(low, 1), dtype=np.int64)
    new = 0
    expanded = 0
    kids = 0
    bad = 0
    while True:
        start = atomic_add(claim, 0, granule)
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
            for o in range(bsize):
                w = word[base + o]
                fr = (w >> 8) & 0xFF
                if fr == 0:
                    continue
                occ = hocc
                md = hmd
                for i in range(low):
                    c = free_squares[lowrel[o, i]]
                    pos[high + i] = c
                    occ |= np.int64(1) << c
                    md += cost[high + i, c]
                if (md & 1) != parity:
                    continue  # reached in this layer: expanded in the next
                word[base + o] = w & 0xFF
                expanded += 1
                for i in range(low):
                    owner[pos[high + i]] = high + i
                for t in range(low):  # mirror square of the low tile mapped to t
                    mlow[t] = msquare[pos[high + minv[t]]]
                row = row_of(full & ~occ, rank_tab, popcnt8)
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
                        # Tiles before j on the squares passed over shorten
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
                        square = row * (4 * n) + p * 4 + d
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
                            # mirror block's free squares (one POPCNT a digit)
                            occt = hocc ^ (np.int64(1) << p) ^ (np.int64(1) << q)
                            rem = full & ~map_mask(occt, mmask)
                            om = 0
                            for t in range(low):
                                below = rem & ((np.int64(1) << mlow[t]) - 1)
                                om += ctpop(below) * mult_low[t]
                                rem &= ~(np.int64(1) << mlow[t])
                            got = _mark(
                                word, nibble, flags_nxt, to,
                                om, bsize, tg,
                                np.uint16(1) << kid_mirror[square], excess,
                            )
                            new += got & 1
                            bad |= got >> 1
                            continue
                        got = _mark(
                            word, nibble, flags_nxt, to, o2, bsize, tg,
                            np.uint16(1) << kid_region[square], excess,
                        )
                        new += got & 1
                        bad |= got >> 1
                        if mirrored == 1:  # its own mirror's block: both
                            got = _mark(
                                word, nibble, flags_nxt, to,
                                np.int64(operm[hset[tb], o2]), bsize, tg,
                                np.uint16(1) << kid_mirror[square], excess,
                            )
                            new += got & 1
                            bad |= got >> 1
                for i in range(low):
                    owner[pos[high + i]] = k
            for i in range(high):
                owner[hsquares[i]] = k
    out = np.zeros(4, dtype=np.int64)
    out[0] = new
    out[1] = expanded
    out[2] = bad
    out[3] = kids
    return out


def packed_size(entries: int) -> int:
    """Bytes of a 4-bit table of ``entries`` entries."""
    return (entries + 1) // 2


def cost_table(g: Grid, goal_squares: tuple[int, ...]) -> np.ndarray:
    """``cost[i, c]``: Manhattan distance from square c to pattern tile i's goal
    square."""
    cost = np.zeros((len(goal_squares), g.squares), dtype=np.int64)
    for i, home in enumerate(goal_squares):
        hr, hc = divmod(home, g.cols)
        for c in range(g.squares):
            r, cc = divmod(c, g.cols)
            cost[i, c] = abs(r - hr) + abs(cc - hc)
    return cost


def threads_to_use() -> int:
    """Threads for a build: the machine's cores (at most 8)."""
    return max(1, min(8, os.cpu_count() or 1))


def build_packed(
    g: Grid,
    goal_squares: tuple[int, ...],
    goal_blank: int,
    out: np.ndarray | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    *,
    mirror: bool = True,
    threads: int | None = None,
    pull: str | float = "auto",
) -> np.ndarray:
    """Build one pattern table at 4 bits per entry (``(depth - MD) / 2``, two
    entries per byte, low nibble first) into ``out`` (uint8, ``packed_size``
    bytes) or a new array. ``progress(layer, reached, total)`` is called after
    every layer: states (placement, blank region) reached so far, out of all.
    ``mirror=False`` searches every block even when the pattern is left-right
    symmetric (tests compare the two). ``pull``: when layers go backward
    (:mod:`.pdb_pull`): ``"auto"`` (by :data:`PULL_RATIO`), ``"never"``, or once
    this fraction of all states is reached. Raises ValueError when the grid or
    pattern does not fit."""
    n, k = g.squares, len(goal_squares)
    if n > MAX_SQUARES:
        raise ValueError(
            f"pattern databases need at most {MAX_SQUARES} squares, not {n}"
        )
    entries = perm(n, k)
    low = low_digits(n, k)
    high = k - low
    mult = np.array([perm(n - 1 - i, k - 1 - i) for i in range(k)], dtype=np.int64)
    bsize = perm(n - high, low)
    blocks = entries // bsize
    nbr = kernels.neighbour_array(g).astype(np.int64)
    regions = Regions(n, g.cols, n - k)
    kid_region = regions.kid_tables(nbr)
    rank_tab, rmasks = regions.rank_tab, regions.masks
    adjacent = np.zeros(n, dtype=np.int64)
    for c in range(n):
        for d in range(4):
            if nbr[c, d] >= 0:
                adjacent[c] |= 1 << int(nbr[c, d])
    cost = cost_table(g, goal_squares)
    mult_low = np.array(
        [perm(n - high - 1 - i, low - 1 - i) for i in range(low)], dtype=np.int64
    )
    lowrel = low_table(n - high, low, mult_low)
    mult_high = mult[:high] // bsize
    # per owner (k: none): its block multiplier if a high tile, offset one if low
    mult_kb = np.zeros(k + 1, dtype=np.int64)
    mult_kb[:high] = mult_high
    mult_ko = np.zeros(k + 1, dtype=np.int64)
    mult_ko[high:k] = mult[high:]
    lowbit = kernels.lowbit16()
    popcnt8 = popcount8()
    total = int(regions.count.sum()) * factorial(k)

    sigma = symmetry(g, goal_squares, goal_blank, high, regions) if mirror else None
    msquare = np.array(mirror_squares(g), dtype=np.int64)
    if sigma is None:
        cblock = np.arange(blocks, dtype=np.int64)
        bslot = np.arange(blocks, dtype=np.int64)
        selfm = np.zeros(blocks, dtype=np.uint8)
        hset = np.zeros(blocks, dtype=np.int32)
        operm = np.zeros((1, 1), dtype=np.uint16)
        kid_mirror = kid_region
    else:
        cblock, bslot, selfm, hset, operm = mirror_tables(
            n, high, low, bsize, mult_high, mult_low, lowrel, msquare,
            np.array(sigma, dtype=np.int64), rank_tab, popcnt8,
        )
        kid_mirror = regions.kid_tables(nbr, msquare)
    cblocks = len(cblock)
    # the mirror image of a square mask, a byte of it at a time
    mmask = np.zeros((chunks(n), 256), dtype=np.int64)
    for ch in range(chunks(n)):
        for x in range(256):
            for b in range(8):
                if x >> b & 1 and 8 * ch + b < n:
                    mmask[ch, x] |= 1 << int(msquare[8 * ch + b])
    minv = np.zeros(max(low, 1), dtype=np.int64)  # low tile mirrored onto each
    if sigma is not None:
        for i in range(low):
            minv[sigma[high + i] - high] = i

    word = np.zeros(cblocks * bsize, dtype=np.uint16)
    nibble = np.zeros(packed_size(entries), dtype=np.uint8) if out is None else out
    nibble[:] = 0
    flags = [np.zeros(cblocks, dtype=np.uint8), np.zeros(cblocks, dtype=np.uint8)]
    # the goal placement, blank in the goal blank's region, depth 0, excess 0
    start = 0
    used = 0
    for i, square in enumerate(goal_squares):
        start += (square - bin(used & ((1 << square) - 1)).count("1")) * int(mult[i])
        used |= 1 << square
    free = ((1 << n) - 1) & ~used
    bit = 1 << regions.region(free, goal_blank)
    slot = int(bslot[start // bsize])
    assert slot >= 0  # the goal is its own mirror
    word[slot * bsize + start % bsize] = bit | (bit << 8)
    flags[0][slot] = 1
    granule = max(1, min(32, cblocks // 64))  # blocks per claim
    workers = threads or threads_to_use()
    kid_flat = kid_region.ravel()
    mirror_flat = kid_mirror.ravel()

    def run(depth: int, claim: np.ndarray) -> np.ndarray:
        return _expand(
            depth, n, k, high, bsize, mult, mult_high, mult_kb, mult_ko, nbr,
            adjacent, cost, rank_tab, popcnt8, kid_flat, mirror_flat,
            rmasks, lowbit, lowrel, cblock, bslot, selfm, hset, operm, word,
            nibble, flags[depth & 1], flags[(depth + 1) & 1], claim, granule,
            mmask, msquare, minv, mult_low,
        )

    open_block = np.zeros(cblocks, dtype=np.uint8)
    rcount = regions.count

    def mark_unreached(claim: np.ndarray) -> None:
        pdb_pull.unreached(
            n, k, high, bsize, mult_high, lowrel, cblock, rank_tab, popcnt8, rcount,
            word, open_block, claim, granule,
        )

    def run_pull(depth: int, claim: np.ndarray) -> np.ndarray:
        return pdb_pull.pull(
            depth, n, k, high, bsize, mult, mult_high, mult_kb, mult_ko, nbr,
            adjacent, cost, rank_tab, popcnt8, kid_flat, mirror_flat, rmasks, lowbit,
            lowrel, cblock, bslot, word, nibble, open_block, claim, granule, mmask,
            msquare, minv, mult_low,
        )

    def on_threads(step, *args):
        """``step(*args, claim)`` on every worker thread, blocks claimed from one
        counter; the threads' results summed."""
        claim = np.zeros(1, dtype=np.int64)
        if workers == 1:
            return step(*args, claim)
        parts = list(pool.map(lambda _t: step(*args, claim), range(workers)))
        return None if parts[0] is None else np.sum(parts, axis=0)

    depth = 0
    reached = last = 1
    pulling = False
    with ThreadPoolExecutor(workers) as pool:
        while True:
            if not pulling and depth >= 4 and _pull_now(pull, reached, total, last):
                on_threads(mark_unreached)
                pulling = True
            if pulling:
                result = on_threads(run_pull, depth)
            elif depth < 4:  # tiny layers (and the first compile) on one thread
                result = run(depth, np.zeros(1, dtype=np.int64))
            else:
                result = on_threads(run, depth)
            reached += int(result[0])
            last = int(result[0])
            if result[2]:
                raise ValueError(
                    f"pattern {goal_squares}: a value exceeds 4 bits or more than 8 "
                    "regions"
                )
            if progress is not None:
                progress(depth, reached, total)
            if result[0] == 0:
                break
            depth += 1
        word = None  # 2 bytes a placement: freed before the mirrors are copied
        if sigma is not None:
            list(pool.map(
                lambda t: fill_mirrors(
                    nibble, bsize, bslot, cblock, hset, operm, t, workers
                ),
                range(workers),
            ))
    return nibble


def unpack(g: Grid, goal_squares: tuple[int, ...], packed: np.ndarray) -> np.ndarray:
    """The plain table (uint8 depth per entry) of a packed one: for tests and
    checks (pure numpy plus one compiled pass)."""
    n, k = g.squares, len(goal_squares)
    entries = perm(n, k)
    mult = np.array([perm(n - 1 - i, k - 1 - i) for i in range(k)], dtype=np.int64)
    return _unpack(n, k, mult, cost_table(g, goal_squares), packed, entries)


@_jit
def _unpack(n, k, mult, cost, packed, entries):
    out = np.empty(entries, dtype=np.uint8)
    squares = np.empty(k, dtype=np.int64)
    for index in range(entries):
        unrank_squares(index, k, mult, n, squares)
        # slots are squares here: rank among n squares with earlier ones removed
        md = 0
        for i in range(k):
            md += cost[i, squares[i]]
        e = (packed[index >> 1] >> ((index & 1) * 4)) & 0xF
        out[index] = md + 2 * e
    return out
