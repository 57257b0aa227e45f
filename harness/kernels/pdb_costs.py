"""Weighted pattern databases (tile costs): the cheapest cost of bringing a
pattern's tiles home, by a Dijkstra search over (placement, blank region).

The state space is :func:`harness.kernels.pdb_bfs.pdb_bfs`'s: a pattern's tiles
on some squares and the blank somewhere in one region of the other squares (the
blank moves free inside it: moving a tile outside the pattern costs the pattern
nothing). Moving pattern tile j costs ``cost[j]`` (its tile cost), so layers are
no longer breadth-first: the open list is a binary heap of (cost, state) with
stale entries skipped when popped. The search runs in slices (``budget`` pops a
call) so the caller can say how far it is.

:func:`weighted_pdb_value` reads the finished tables (float32, one per group,
back to back) for the cost kernels of :mod:`harness.kernels.costs`.
"""

from __future__ import annotations

import numpy as np

from harness.kernels.base import jit
from harness.kernels.ida import pattern_index
from harness.kernels.pdb_bfs import adjacency, child_index, unrank_pattern

#: Regions a placement's free squares may form (state = placement * 8 + region).
REGIONS = 8


@jit
def _heap_push(hd, hs, size, d, s):
    i = size
    while i > 0:
        up = (i - 1) >> 1
        if hd[up] < d or (hd[up] == d and hs[up] < s):
            break
        hd[i] = hd[up]
        hs[i] = hs[up]
        i = up
    hd[i] = d
    hs[i] = s


@jit
def _heap_pop(hd, hs, size):
    """Remove the root of a heap of ``size`` (the caller read it first)."""
    d = hd[size - 1]
    s = hs[size - 1]
    size -= 1
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and (
            hd[child + 1] < hd[child]
            or (hd[child + 1] == hd[child] and hs[child + 1] < hs[child])
        ):
            child += 1
        if hd[child] > d or (hd[child] == d and hs[child] > s):
            break
        hd[i] = hd[child]
        hs[i] = hs[child]
        i = child
    hd[i] = d
    hs[i] = s


@jit
def pdb_dijkstra_start(n, goal_squares, goal_blank, mult, popcnt, region_label,
                       dist, hd, hs):  # fmt: skip
    """Put the goal state (cost 0) in ``dist`` and the heap; returns the heap size."""
    k = goal_squares.shape[0]
    pos = np.empty(k, dtype=np.int64)
    occ = np.int64(0)
    for j in range(k):
        pos[j] = goal_squares[j]
        occ |= np.int64(1) << pos[j]
    free = ((np.int64(1) << n) - 1) & ~occ
    index = pattern_index(pos, k, mult, popcnt)
    state = index * REGIONS + region_label[free, goal_blank]
    dist[state] = 0.0
    hd[0] = 0.0
    hs[0] = state
    return 1


@jit
def pdb_dijkstra(n, nbr, k, mult, lowbit, region_count, region_label, region_mask,
                 cost, dist, hd, hs, size, budget):  # fmt: skip
    """Pop up to ``budget`` states from the heap (``hd`` costs, ``hs`` states,
    ``size`` entries), relaxing each one's moves into ``dist`` (float64, inf =
    not reached, ``placements * REGIONS``). Returns (heap size, hd, hs, states
    settled, placements reached for the first time); heap size -1: a placement
    with more than ``REGIONS`` blank regions."""
    pos = np.empty(k, dtype=np.int64)
    owner = np.full(n, -1, dtype=np.int64)
    adjacent = adjacency(nbr, n)
    full = (np.int64(1) << n) - 1
    settled = 0
    reached = 0
    while size > 0 and settled < budget:
        d = hd[0]
        state = hs[0]
        _heap_pop(hd, hs, size)
        size -= 1
        if d > dist[state]:
            continue  # stale: a cheaper entry of this state came first
        settled += 1
        index = state // REGIONS
        occ = unrank_pattern(index, k, mult, full, lowbit, pos, owner)
        free = full & ~occ
        region = np.int64(region_mask[free, state % REGIONS])
        for j in range(k):
            p = pos[j]
            targets = adjacent[p] & region
            while targets:
                q = lowbit[targets]
                targets &= targets - 1
                child = child_index(index, j, p, q, owner, mult)
                free2 = free ^ (np.int64(1) << q) ^ (np.int64(1) << p)
                rid = 0 if region_count[free2] == 1 else region_label[free2, p]
                if rid >= REGIONS:
                    return -1, hd, hs, settled, reached
                kid = child * REGIONS + rid
                nd = d + cost[j]
                if nd < dist[kid]:
                    first = True
                    for r in range(REGIONS):
                        if dist[child * REGIONS + r] != np.inf:
                            first = False
                    if first:
                        reached += 1
                    dist[kid] = nd
                    if size == hd.shape[0]:
                        bigger_d = np.empty(2 * size, dtype=np.float64)
                        bigger_s = np.empty(2 * size, dtype=np.int64)
                        bigger_d[:size] = hd[:size]
                        bigger_s[:size] = hs[:size]
                        hd, hs = bigger_d, bigger_s
                    _heap_push(hd, hs, size, nd, kid)
                    size += 1
        for i in range(k):
            owner[pos[i]] = -1
    return size, hd, hs, settled, reached


@jit
def weighted_pdb_value(pos, tables, offsets, gtiles, gsize, gmult, popcnt):
    """The weighted PDB bound of a board whose tile t stands on ``pos[t]``: the
    sum over groups of the group's table at its tiles' placement (float32
    entries, summed in float64 in group order)."""
    total = 0.0
    for grp in range(gtiles.shape[0]):
        used = 0
        index = 0
        for j in range(gsize[grp]):
            p = pos[gtiles[grp, j]]
            index += (p - popcnt[used & ((1 << p) - 1)]) * gmult[grp, j]
            used |= 1 << p
        total += tables[offsets[grp] + index]
    return total
