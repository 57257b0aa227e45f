"""Where the harness keeps rebuildable artefacts (distance tables, pattern
databases, compiled kernels): ``$NPUZZLE_CACHE`` or ``~/.cache/npuzzle-harness``.

Everything here can be deleted at any time; it is rebuilt on demand. When the
folder cannot be written, callers fall back to building in memory.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir(*parts: str) -> Path | None:
    """The cache folder (or a sub-folder), created if needed; None if not writable."""
    root = Path(
        os.environ.get("NPUZZLE_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        / "npuzzle-harness"
    )
    path = root.joinpath(*parts)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError:
        return None
    return path
