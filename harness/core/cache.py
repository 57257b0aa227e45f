"""Where the harness keeps rebuildable artefacts (distance tables, pattern
databases, compiled kernels): ``$NPUZZLE_CACHE`` or ``~/.cache/npuzzle-harness``.

Everything here can be deleted at any time; it is rebuilt on demand. When the
folder cannot be written, callers fall back to building in memory. What is read
from here is trusted (compiled kernels are loaded as code), so a folder another
user owns or may write to is not used (:func:`harness.core.files.check_owned`);
files are written by :func:`harness.core.files.write_atomic`.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.core.files import can_write, check_owned


def cache_dir(*parts: str) -> Path | None:
    """The cache folder (or a sub-folder), created if needed; None if it cannot be
    written, or if another user owns or may write to it or a folder on the way."""
    root = Path(
        os.environ.get("NPUZZLE_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        / "npuzzle-harness"
    )
    path = root.joinpath(*parts)
    try:
        path.mkdir(parents=True, exist_ok=True)
        for depth in range(len(parts) + 1):  # the root and each sub-folder
            check_owned(root.joinpath(*parts[:depth]).resolve(), private=False)
    except OSError:
        return None
    return path if can_write(path) else None
