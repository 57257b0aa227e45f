"""The numba decorator every kernel uses, and where compiled kernels are cached.

Kernels are compiled with ``cache=True`` into ``cache_dir("numba")`` (or wherever
``NUMBA_CACHE_DIR`` points), in a sub-folder named by a digest of every module that
holds kernels (this package and harness/heuristics). When no cache folder is
writable numba cannot cache, so the kernels are compiled in memory instead; nothing
fails at import either way.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import numba

from harness.core.cache import cache_dir

#: Longest path a kernel will build (5x5 optimal solutions are at most ~208 moves).
MAX_PATH = 1024


#: The folders whose modules hold compiled kernels: this package, and the pattern
#: database builder's kernels in harness/heuristics (pdb_build calls pdb_ops).
KERNEL_FOLDERS = (Path(__file__).parent, Path(__file__).parents[1] / "heuristics")


def sources_digest(folders: Sequence[Path] = KERNEL_FOLDERS) -> str:
    """A digest of every module of ``folders``. numba checks only a kernel's own
    file before it loads the kernel from its cache, but a kernel compiles in the
    kernels it calls from other modules (``batch`` calls ``ida``, ``pdb_build``
    calls ``pdb_ops``): keyed by this digest, an edit to any of those modules
    compiles them all again."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.glob("*.py")):
            name = f"{folder.name}/{path.name}"
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def _cache_enabled() -> bool:
    """Point numba at the harness cache folder and say whether caching works here."""
    base = os.environ.get("NUMBA_CACHE_DIR") or cache_dir("numba")
    if base:
        numba.config.CACHE_DIR = os.path.join(base, sources_digest())

    def probe() -> int:
        return 0

    try:  # numba raises RuntimeError at decoration when no locator is writable
        numba.njit(cache=True)(probe)
    except (RuntimeError, OSError):
        return False
    return True


CACHE_ENABLED = _cache_enabled()
jit = numba.njit(cache=CACHE_ENABLED, nogil=True)


class _Compiles(numba.core.event.Listener):
    """Counts the kernels compiled in this process: numba announces a compile
    only when it did not load the kernel from its cache."""

    count = 0

    def on_start(self, event) -> None:
        _Compiles.count += 1

    def on_end(self, event) -> None: ...


numba.core.event.register("numba:compile", _Compiles())


def compiled_here() -> int:
    """How many kernels this process compiled rather than loaded from numba's
    cache. The instruction count tells them apart: a kernel compiled in the
    counting process ran other code than the same kernel loaded from the cache
    (measured: 2.4% more instructions per node for ``astar_cantor_jit``, 120
    fewer per solve for ``ida_star_jit``), so a count is made only on kernels
    loaded from the cache (:mod:`harness.measure.instructions.child`)."""
    return _Compiles.count
