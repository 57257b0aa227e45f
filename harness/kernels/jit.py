"""The numba decorator every kernel uses, and where compiled kernels are cached.

Kernels are compiled with ``cache=True`` into ``cache_dir("numba")`` (or wherever
``NUMBA_CACHE_DIR`` points). When no cache folder is writable numba cannot cache, so
the kernels are compiled in memory instead; nothing fails at import either way.
"""

from __future__ import annotations

import os

import numba

from harness.core.cache import cache_dir

#: Longest path a kernel will build (5x5 optimal solutions are at most ~208 moves).
MAX_PATH = 1024


def _cache_enabled() -> bool:
    """Point numba at the harness cache folder and say whether caching works here."""
    if not os.environ.get("NUMBA_CACHE_DIR"):
        folder = cache_dir("numba")
        if folder is not None:
            numba.config.CACHE_DIR = str(folder)

    def probe() -> int:
        return 0

    try:  # numba raises RuntimeError at decoration when no locator is writable
        numba.njit(cache=True)(probe)
    except (RuntimeError, OSError):
        return False
    return True


CACHE_ENABLED = _cache_enabled()
jit = numba.njit(cache=CACHE_ENABLED, nogil=True)
