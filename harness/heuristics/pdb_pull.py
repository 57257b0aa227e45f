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
(:func:`unreached`), so placements with nothing left are skipped at one load each.
"""

from __future__ import annotations

import numba
import numpy as np

from harness import kernels
from harness.heuristics.pdb_regions import row_of
from harness.kernels.ida import ctpop

_jit = numba.njit(cache=kernels.CACHE_ENABLED, nogil=True)


@_jit
def _atomic_claim(claim, granule):
    """The next run of blocks for this thread (see pdb_build's ``_atomic_add``)."""
    from harness.heuristics.pdb_build import _atomic_add

    return _atomic_add(claim, 0, granule)
