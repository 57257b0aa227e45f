"""The parallel pattern-database builder behind ``pdb78``: 4 bits per entry, both cores.

A pattern table gives, for every placement of the pattern's k tiles, the fewest moves
*of those tiles* that bring them home (the blank is free to wander, and is not
counted). The search runs over states (placement, blank region): the blank moves at
no cost inside its region of non-pattern cells, so a state is a placement plus the
region holding the blank, and a move slides a pattern tile into an adjacent cell of
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
  permutation (tile i's digit: its cell's rank among the cells tiles < i leave free).
  Ranks are cut into blocks by the first k-4 tiles: moving one of the last four tiles
  stays in the block, moving one of the first k-4 lands in one of at most 16
  neighbouring blocks, so a block's children stay in the CPU's level-2 cache. The
  last four digits are read from a small table (``lowrel``) instead of unranked.
- **Region tables per free set, not per mask.** The blank-region tables are kept
  only for free sets of the pattern's size, found by their combinatorial rank (three
  lookups in 10 KB), and a child's region comes from one 64-byte row per free set
  (``kid_region[row, cell * 4 + direction]``): a placement's children read one
  cache line instead of a 1 MiB table.
- **Half the 8-tile table, by its mirror symmetry.** The 8-tile pattern (the bottom
  two rows, goal blank in the top two) is its own left-right mirror image, and so
  is its goal state, so its table is symmetric: h(P) = h(P') where P' puts the
  mirror tile (``sigma``) on the mirror cell of each tile. The first tiles (a
  block) are a mirror image of themselves, so a block's mirror is a block: only
  the canonical blocks (index at most the mirror's) are stored and searched, a
  child landing in another block is marked at its mirror (the mirrored offset
  ranked from the placement's low tiles by POPCNT, the mirrored region from
  ``kid_mirror``), a child in a block that is its own mirror is marked with its
  mirror too (offset from the table ``operm``), and the skipped blocks' values are
  copied at the end (through ``operm``). Half the placements expanded and half
  the build memory; a child marked at its mirror lands on a scattered word of the
  mirror block (a cache miss where the other children stream), so a layer's CPU
  time drops by about a quarter, not a half.
- **Both cores.** Each layer runs one compiled ``nogil`` kernel per core on Python
  threads, each claiming runs of blocks from a shared counter; a child's word is marked with an
  atomic OR (an LLVM ``atomicrmw``), so two threads reaching the same placement
  never lose each other's bit; a table nibble is written once, also by atomic OR.
  (A numba ``prange`` did the same but took three times as long to compile.)

The driver (:func:`build_packed`) runs one kernel call per layer and reports progress
through a callback (states expanded out of the exact total, which is known up front:
the regions of every free-cell set times k!).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from math import comb, factorial, perm

import numpy as np

from harness import kernels
from harness.kernels.pdb_layers import (
    expand_layer,
    fill_mirrors,
    low_table,
    symmetry_tables,
    unpack_entries,
)
from harness.puzzle import Grid

#: Low digits per block: a block is every placement of the last LOW tiles.
LOW = 4



def mirror_cells(g: Grid) -> list[int]:
    """The left-right mirror of the board as a cell map (column c -> cols - 1 - c)."""
    return [r * g.cols + g.cols - 1 - c for r in range(g.rows) for c in range(g.cols)]


def symmetry(g: Grid, goal_cells: tuple[int, ...], goal_blank: int, high: int,
             label) -> list[int] | None:
    """The tile relabelling ``sigma`` under which the pattern's table is left-right
    symmetric (``h(P) = h(P')`` where P' puts tile ``sigma[i]`` on the mirror of
    tile i's cell), or None. It needs the pattern's goal cells to be a mirror image
    of themselves, the first ``high`` tiles (a block) to map onto themselves, and
    the goal blank's region to contain its mirror cell (then the abstract goal is
    its own mirror): true for the 8-tile half of the 7-8 partition."""
    m = mirror_cells(g)
    where = {cell: i for i, cell in enumerate(goal_cells)}
    if any(m[cell] not in where for cell in goal_cells):
        return None
    sigma = [where[m[cell]] for cell in goal_cells]
    if any((sigma[i] < high) != (i < high) for i in range(len(goal_cells))):
        return None
    free = ((1 << g.cells) - 1) & ~sum(1 << c for c in goal_cells)
    if label[free, goal_blank] != label[free, m[goal_blank]]:
        return None
    return sigma



def compact_regions(n, free_bits, count, label, masks, nbr):
    """The blank-region tables for free sets of exactly ``free_bits`` cells, indexed
    by the free set's combinatorial rank (sum over its i-th lowest cell c of
    C(c, i + 1)), which is ``rank_lo[free & 255] + rank_hi[free >> 8, popcount(free &
    255)]``: small enough (~300 KB) to stay in the level-2 cache, where the full
    65,536-row tables would not. Returns (rank_lo, rank_hi, kid_region[row, p * 4 +
    d]: the blank's region after the tile on cell p moves in direction d (one
    64-byte line per free set, so a placement's children read one cache line),
    rmasks[row, region] cell masks, regions per row). ValueError when a free set
    has more than 8 regions (a placement's word has 8 bits per mask)."""
    rank_lo = np.zeros(256, dtype=np.int64)
    rank_hi = np.zeros((256, 9), dtype=np.int64)
    for lo in range(256):
        i = 0
        for c in range(8):
            if lo >> c & 1:
                rank_lo[lo] += comb(c, i + 1)
                i += 1
    for hi in range(256):
        for start in range(9):
            i = start
            for b in range(8):
                if hi >> b & 1:
                    rank_hi[hi, start] += comb(8 + b, i + 1)
                    i += 1
    rows = comb(n, free_bits)
    rmasks = np.zeros((rows, 8), dtype=np.int64)
    rows_count = np.zeros(rows, dtype=np.int64)
    frees, row = _free_sets(n, free_bits, rank_lo, rank_hi)
    assert sorted(row.tolist()) == list(range(rows))
    if count[frees].max() > 8:
        raise ValueError("a free set with more than 8 blank regions")
    kid_region = np.zeros((rows, n * 4), dtype=np.int8)
    for p, d, q, ok in _slides(nbr, frees):
        free2 = frees ^ (1 << q) ^ (1 << p)
        kid_region[row[ok], p * 4 + d] = label[free2[ok], p]
    rmasks[row] = masks[frees][:, :8]
    rows_count[row] = count[frees]
    return rank_lo, rank_hi, kid_region, rmasks, rows_count


def _free_sets(n, free_bits, rank_lo, rank_hi) -> tuple[np.ndarray, np.ndarray]:
    """Every set of ``free_bits`` free cells (a bit mask each) and its row, the
    combinatorial rank from the ``rank_lo``/``rank_hi`` tables."""
    frees = np.array(
        [m for m in range(1 << n) if m.bit_count() == free_bits], dtype=np.int64
    )
    return frees, rank_lo[frees & 255] + rank_hi[frees >> 8, _popcount8()[frees & 255]]


def _slides(nbr, frees):
    """(p, d, q, ok) for every cell p and direction d with a neighbour q: a tile on
    p slides into q; ``ok`` marks the free sets (of ``frees``) where it can (q free,
    p not)."""
    for p in range(nbr.shape[0]):
        for d in range(4):
            q = nbr[p, d]
            if q >= 0:
                yield p, d, q, ((frees >> q) & 1 == 1) & ((frees >> p) & 1 == 0)


def _popcount8() -> np.ndarray:
    return np.array([x.bit_count() for x in range(256)], dtype=np.int64)


def packed_size(entries: int) -> int:
    """Bytes of a 4-bit table of ``entries`` entries."""
    return (entries + 1) // 2


def cost_table(g: Grid, goal_cells: tuple[int, ...]) -> np.ndarray:
    """``cost[i, c]``: Manhattan distance from cell c to pattern tile i's goal cell."""
    cost = np.zeros((len(goal_cells), g.cells), dtype=np.int64)
    for i, home in enumerate(goal_cells):
        hr, hc = divmod(home, g.cols)
        for c in range(g.cells):
            r, cc = divmod(c, g.cols)
            cost[i, c] = abs(r - hr) + abs(cc - hc)
    return cost


def threads_to_use() -> int:
    """Threads for a build: the machine's cores (at most 8)."""
    return max(1, min(8, os.cpu_count() or 1))


def build_packed(
    g: Grid,
    goal_cells: tuple[int, ...],
    goal_blank: int,
    out: np.ndarray | None = None,
    progress: Callable[[int, int, int], None] | None = None,
    *,
    mirror: bool = True,
    threads: int | None = None,
) -> np.ndarray:
    """Build one pattern table at 4 bits per entry (``(depth - MD) / 2``, two
    entries per byte, low nibble first) into ``out`` (uint8, ``packed_size``
    bytes) or a new array. ``progress(layer, reached, total)`` is called after
    every layer: states (placement, blank region) reached so far, out of all.
    ``mirror=False`` searches every block even when the pattern is left-right
    symmetric (tests compare the two). Raises ValueError when the grid or pattern
    does not fit."""
    n, k = g.cells, len(goal_cells)
    if n > 16:
        raise ValueError(f"pattern databases need at most 16 cells, not {n}")
    entries = perm(n, k)
    low = min(LOW, k)
    high = k - low
    mult = np.array([perm(n - 1 - i, k - 1 - i) for i in range(k)], dtype=np.int64)
    bsize = perm(n - high, low)
    blocks = entries // bsize
    count, label, masks = kernels.region_tables(n, g.cols)
    nbr = kernels.neighbour_array(g).astype(np.int64)
    rank_lo, rank_hi, kid_region, rmasks, rows_count = compact_regions(
        n, n - k, count, label, masks, nbr
    )
    adjacent = np.zeros(n, dtype=np.int64)
    for c in range(n):
        for d in range(4):
            if nbr[c, d] >= 0:
                adjacent[c] |= 1 << int(nbr[c, d])
    cost = cost_table(g, goal_cells)
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
    total = int(rows_count.sum()) * factorial(k)

    sigma = symmetry(g, goal_cells, goal_blank, high, label) if mirror else None
    mcell = np.array(mirror_cells(g), dtype=np.int64)
    if sigma is None:
        cblock = np.arange(blocks, dtype=np.int64)
        bslot = np.arange(blocks, dtype=np.int64)
        selfm = np.zeros(blocks, dtype=np.uint8)
        hset = np.zeros(blocks, dtype=np.int32)
        operm = np.zeros((1, 1), dtype=np.uint16)
        kid_mirror = kid_region
    else:
        cblock, bslot, selfm, hset, operm = symmetry_tables(
            n, high, low, bsize, mult_high, mult_low, lowrel, mcell,
            np.array(sigma, dtype=np.int64),
        )
        kid_mirror = mirror_regions(n, n - k, label, nbr, mcell, rank_lo, rank_hi)
    cblocks = len(cblock)
    # mirror of a cell mask, from its low and high byte
    mlo = np.zeros(256, dtype=np.int64)
    mhi = np.zeros(256, dtype=np.int64)
    for x in range(256):
        for b in range(8):
            if x >> b & 1:
                mlo[x] |= 1 << int(mcell[b])
                if b + 8 < n:
                    mhi[x] |= 1 << int(mcell[b + 8])
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
    for i, cell in enumerate(goal_cells):
        start += (cell - bin(used & ((1 << cell) - 1)).count("1")) * int(mult[i])
        used |= 1 << cell
    free = ((1 << n) - 1) & ~used
    bit = 1 << int(label[free, goal_blank])
    slot = int(bslot[start // bsize])
    assert slot >= 0  # the goal is its own mirror
    word[slot * bsize + start % bsize] = bit | (bit << 8)
    flags[0][slot] = 1
    granule = max(1, min(32, cblocks // 64))  # blocks per claim
    workers = threads or threads_to_use()
    popcnt8 = _popcount8()
    kid_flat = kid_region.ravel()
    mirror_flat = kid_mirror.ravel()

    def run(depth: int, claim: np.ndarray) -> np.ndarray:
        return expand_layer(
            depth, n, k, high, bsize, mult, mult_high, mult_kb, mult_ko, nbr,
            adjacent, cost, rank_lo, rank_hi, popcnt8, kid_flat, mirror_flat,
            rmasks, lowbit, lowrel, cblock, bslot, selfm, hset, operm, word,
            nibble, flags[depth & 1], flags[(depth + 1) & 1], claim, granule,
            mlo, mhi, mcell, minv, mult_low,
        )

    depth = 0
    reached = 1
    with ThreadPoolExecutor(workers) as pool:
        while True:
            claim = np.zeros(1, dtype=np.int64)
            if depth < 4 or workers == 1:  # tiny layers (and the first compile)
                result = run(depth, claim)
            else:
                parts = list(pool.map(lambda _t: run(depth, claim), range(workers)))
                result = np.sum(parts, axis=0)
            reached += int(result[0])
            if result[2]:
                raise ValueError(
                    f"pattern {goal_cells}: a value exceeds 4 bits or more than 8 "
                    "regions"
                )
            if progress is not None:
                progress(depth, reached, total)
            if result[0] == 0:
                break
            depth += 1
        del word
        if sigma is not None:
            list(pool.map(
                lambda t: fill_mirrors(nibble, bsize, bslot, cblock, hset, operm, t,
                                        workers),
                range(workers),
            ))
    return nibble


def mirror_regions(n, free_bits, label, nbr, mcell, rank_lo, rank_hi):
    """``kid_mirror[row, p * 4 + d]``: as ``kid_region`` of :func:`compact_regions`,
    the blank's region after the tile on p moves in direction d, but numbered in
    the mirror image of the child's free set (the region holding the mirror of p)."""
    rows = comb(n, free_bits)
    frees, row = _free_sets(n, free_bits, rank_lo, rank_hi)
    out = np.zeros((rows, n * 4), dtype=np.int8)
    for p, d, q, ok in _slides(nbr, frees):
        free2 = frees[ok] ^ (1 << q) ^ (1 << p)
        mfree = np.zeros_like(free2)
        for c in range(n):
            mfree |= ((free2 >> c) & 1) << int(mcell[c])
        out[row[ok], p * 4 + d] = label[mfree, int(mcell[p])]
    return out


def unpack(g: Grid, goal_cells: tuple[int, ...], packed: np.ndarray) -> np.ndarray:
    """The plain table (uint8 depth per entry) of a packed one: for tests and
    checks (pure numpy plus one compiled pass)."""
    n, k = g.cells, len(goal_cells)
    entries = perm(n, k)
    mult = np.array([perm(n - 1 - i, k - 1 - i) for i in range(k)], dtype=np.int64)
    return unpack_entries(n, k, mult, cost_table(g, goal_cells), packed, entries)
