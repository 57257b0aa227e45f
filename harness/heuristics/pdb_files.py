"""A pattern database table's file in the cache: a JSON header line (format,
version, grid, pattern, entries, sha256, build seconds) and the table's bytes.

A file that is missing, foreign, truncated or corrupt reads as None, and the
caller rebuilds the table (:func:`harness.heuristics.pdb.load_table`); a table
is written whole or not at all, and an unwritable cache folder just means it is
not cached.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness.core.cache import cache_dir
from harness.core.files import write_atomic
from harness.core.jsontext import loads
from harness.puzzle import Grid

_FORMAT = "npuzzle-pdb"
#: Longest header line read from a cached table (a corrupt file with no newline
#: must not be read whole as one line).
_MAX_HEADER = 1 << 16
_VERSION = 1


def table_file(g: Grid, goal_squares: tuple[int, ...], goal_blank: int,
                packed: bool = False) -> Path | None:
    folder = cache_dir("pdb")
    if folder is None:
        return None
    squares = ".".join(map(str, goal_squares))
    bits = ".4bit" if packed else ""
    # "cells" in the file name: the tables cached before squares were so named
    # keep their names (a rebuild of pdb78 takes minutes)
    return folder / f"{g.label}-blank{goal_blank}-cells{squares}{bits}.bin"


def _header(g: Grid, goal_squares, goal_blank, entries: int, digest: str, build: float,
            packed: bool = False, more: dict | None = None):
    """The header line of a cached table; ``more``: keys of other kinds of table
    (weighted tables, :mod:`harness.heuristics.pdb_costs`: the cost model, the
    tiles' costs, the entry type)."""
    extra = {"bits": 4, "encoding": "(value - manhattan) / 2"} if packed else {}
    extra.update(more or {})
    return {
        "format": _FORMAT,
        "version": _VERSION,
        "grid": g.label,
        "goal_cells": list(goal_squares),  # the key of tables cached before the rename
        "goal_blank": goal_blank,
        "entries": entries,
        "sha256": digest,
        "build_seconds": round(build, 3),
        **extra,
    }


def read_table(path: Path, g: Grid, goal_squares, goal_blank, out,
               packed: bool = False, more: dict | None = None) -> float | None:
    """Fill ``out`` from a cached table; its build seconds, or None when the file is
    missing, foreign, truncated or corrupt."""
    try:
        with path.open("rb") as f:
            meta = loads(f.readline(_MAX_HEADER))  # a header, never the table
            got, digest = _read_hashed(f, memoryview(out).cast("B"))
            trailing = f.read(1)
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict) or got != len(out) or trailing:
        return None
    build = meta.get("build_seconds", 0.0)
    header = _header(g, goal_squares, goal_blank, len(out), digest, build, packed, more)
    if meta != header:
        return None
    return float(build)


#: Bytes per read while loading a table: the sha256 of one chunk runs on a second
#: thread while the next chunk is read (both release the GIL), and each chunk is
#: hashed while it is still in the CPU's cache.
_CHUNK = 8 << 20


def _read_hashed(f, out: memoryview) -> tuple[int, str]:
    """Read from ``f`` into ``out`` until it is full or the file ends; (bytes read,
    sha256 hex digest of them)."""
    from concurrent.futures import ThreadPoolExecutor

    h = hashlib.sha256()
    got = 0
    with ThreadPoolExecutor(1) as pool:
        pending = None
        while got < len(out):
            n = f.readinto(out[got : got + _CHUNK])
            if pending is not None:
                pending.result()
            if not n:
                break
            pending = pool.submit(h.update, out[got : got + n])
            got += n
        if pending is not None:
            pending.result()
    return got, h.hexdigest()


def write_table(path: Path, g: Grid, goal_squares, goal_blank, table, build: float,
                packed: bool = False, more: dict | None = None) -> None:
    """Store a table atomically (write a temporary file, then rename); an
    unwritable folder just means the table is not cached."""
    digest = hashlib.sha256(memoryview(table)).hexdigest()
    head = json.dumps(
        _header(g, goal_squares, goal_blank, len(table), digest, build, packed, more)
    )

    def write(f) -> None:
        f.write(head.encode() + b"\n")
        f.write(memoryview(table))

    try:  # readers never see half a file; group-readable as the umask allows
        write_atomic(path, write, sync=False)
    except OSError:
        pass
