"""Blank regions of free-square sets, for the layered pattern-database builder.

While a pattern's tiles stand still, the blank moves at no cost inside its connected
region of free (non-pattern) squares, so the builder's state is a placement plus a
region. These tables answer, for every set of free squares of one size (a pattern of k
tiles leaves n - k free squares), its regions and, for every slide of a pattern tile,
which region the blank lands in. They are indexed by the free set's *row*: its
combinatorial rank (sum over its i-th lowest square c of C(c, i + 1)), read a byte of
the mask at a time from :func:`rank_tables`, so boards up to 32 squares (5x5 included)
need no table over all 2**n masks, which for 25 squares would be 33 M rows.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations
from math import comb

import numpy as np

from harness.kernels import jit
from harness.kernels.pdb_bfs import flood_region

#: Regions a free set may have: a placement's word keeps 8 bits per mask.
MAX_REGIONS = 8


def chunks(n: int) -> int:
    """Bytes of an n-square mask."""
    return (n + 7) // 8


@cache
def rank_tables(n: int) -> np.ndarray:
    """int64 (chunks(n), 256, n + 1): ``[ch, byte, before]`` is what the squares of
    byte ``ch`` add to the combinatorial rank of a mask when ``before`` set squares
    lie below that byte; :func:`row_of` sums them. Read-only, one per n."""
    # binom[c, i] = C(c, i), zero beyond c
    binom = np.array(
        [[comb(c, i) for i in range(n + 10)] for c in range(8 * chunks(n))],
        dtype=np.int64,
    )
    table = np.zeros((chunks(n), 256, n + 1), dtype=np.int64)
    before = np.arange(n + 1)
    for ch in range(chunks(n)):
        for byte in range(256):
            i = 0
            for b in range(8):
                if byte >> b & 1:
                    table[ch, byte] += binom[8 * ch + b, before + i + 1]
                    i += 1
    table.flags.writeable = False
    return table


@cache
def popcount8() -> np.ndarray:
    """int64 table: set bits of every byte (read-only)."""
    table = np.array([x.bit_count() for x in range(256)], dtype=np.int64)
    table.flags.writeable = False
    return table


@jit
def row_of(mask, rank_tab, popcnt8):
    """Combinatorial rank of a square mask among the masks of its size."""
    row = 0
    before = 0
    for ch in range(rank_tab.shape[0]):
        byte = (mask >> (8 * ch)) & 0xFF
        row += rank_tab[ch, byte, before]
        before += popcnt8[byte]
    return row


def rows_of(masks: np.ndarray, rank_tab: np.ndarray) -> np.ndarray:
    """:func:`row_of` of every mask of an int64 array (numpy, vectorised)."""
    row = np.zeros(len(masks), dtype=np.int64)
    before = np.zeros(len(masks), dtype=np.int64)
    pop = popcount8()
    for ch in range(rank_tab.shape[0]):
        byte = (masks >> (8 * ch)) & 0xFF
        row += rank_tab[ch, byte, before]
        before += pop[byte]
    return row


def free_sets(n: int, free_bits: int) -> np.ndarray:
    """Every mask of ``free_bits`` of n squares, as int64, in row order."""
    full = (1 << n) - 1
    if free_bits <= n - free_bits:
        masks = [
            sum(1 << c for c in squares)
            for squares in combinations(range(n), free_bits)
        ]
    else:
        masks = [
            full & ~sum(1 << c for c in squares)
            for squares in combinations(range(n), n - free_bits)
        ]
    masks = np.array(masks, dtype=np.int64)
    order = np.argsort(rows_of(masks, rank_tables(n)))
    return masks[order]


@jit
def _label(frees, n, cols):
    """(count[row], label[row, square] (-1 on occupied squares), masks[row, region])
    of every free set; regions are numbered by their lowest square."""
    rows = frees.shape[0]
    count = np.zeros(rows, dtype=np.int64)
    label = np.full((rows, n), -1, dtype=np.int8)
    masks = np.zeros((rows, MAX_REGIONS), dtype=np.int64)
    full = (np.int64(1) << n) - 1
    first_col = np.int64(0)
    last_col = np.int64(0)
    for r in range(n // cols):
        first_col |= np.int64(1) << (r * cols)
        last_col |= np.int64(1) << (r * cols + cols - 1)
    for row in range(rows):
        free = frees[row]
        remaining = free
        rid = 0
        while remaining:
            region = flood_region(
                remaining & -remaining, free, cols, full, first_col, last_col
            )
            remaining &= ~region
            if rid < MAX_REGIONS:
                masks[row, rid] = region
            for c in range(n):
                if (region >> c) & 1:
                    label[row, c] = rid
            rid += 1
        count[row] = rid
    return count, label, masks


class Regions:
    """The blank regions of every free set of ``free_bits`` of the grid's squares.

    ``count[row]``, ``label[row, square]``, ``masks[row, region]`` (square masks),
    ``rank_tab`` (see :func:`rank_tables`). ValueError when a free set has more
    than :data:`MAX_REGIONS` regions.
    """

    def __init__(self, n: int, cols: int, free_bits: int) -> None:
        self.n = n
        self.cols = cols
        self.rank_tab = rank_tables(n)
        self.frees = free_sets(n, free_bits)
        self.count, self.label, self.masks = _label(self.frees, n, cols)
        if self.count.max(initial=0) > MAX_REGIONS:
            raise ValueError(f"a free set with more than {MAX_REGIONS} blank regions")

    def region(self, free: int, square: int) -> int:
        """The region number of ``square`` in the free set ``free``."""
        row = int(rows_of(np.array([free], dtype=np.int64), self.rank_tab)[0])
        return int(self.label[row, square])

    def kid_tables(self, nbr: np.ndarray, msquare: np.ndarray | None = None
                   ) -> np.ndarray:
        """int8 (rows, n * 4): the blank's region after the tile on square p slides
        in direction d into the free square ``nbr[p, d]`` (the blank ends on p), at
        ``[row, p * 4 + d]``; with ``msquare`` (a square map) the region is numbered
        in the mapped image of the child's free set (the region holding msquare[p])."""
        n = self.n
        out = np.zeros((len(self.frees), n * 4), dtype=np.int8)
        bits = np.arange(n, dtype=np.int64)
        for p in range(n):
            for d in range(4):
                q = int(nbr[p, d])
                if q < 0:
                    continue
                frees = self.frees
                ok = ((frees >> q) & 1 == 1) & ((frees >> p) & 1 == 0)
                child = frees[ok] ^ (1 << q) ^ (1 << p)
                at = p
                if msquare is not None:
                    image = ((child[:, None] >> bits) & 1) << msquare.astype(np.int64)
                    child = image.sum(axis=1)
                    at = int(msquare[p])
                out[np.flatnonzero(ok), p * 4 + d] = self.label[
                    rows_of(child, self.rank_tab), at
                ]
        return out
