"""The callgrind shim: ``shim.c`` compiled on first use into the cache folder (keyed
by its source's sha256, like the pattern databases: no compiler at ``pip
install``), loaded through ctypes, and a :class:`Counter` that counts the
instructions between :meth:`Counter.begin` and :meth:`Counter.end`.

How a count is read back: callgrind has no client request that returns a cost, so
``npz_end`` dumps the cost since ``npz_begin`` (``CALLGRIND_DUMP_STATS_AT``) to
``<out>.<n>``, the n-th dump of this process, and :meth:`Counter.end` reads its
``totals:`` line. The process must run under ``valgrind --tool=callgrind
--instr-atstart=no --collect-atstart=no --callgrind-out-file=<out>``
(:func:`valgrind_command`).

Standard library and the harness core only (the counting child imports it).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.core.cache import cache_dir

SOURCE = Path(__file__).with_name("shim.c")
#: What to install when something is missing (one line before any cell runs).
INSTALL_HINT = "apt-get install valgrind gcc"
#: The header the shim includes; Debian's valgrind package ships it.
HEADER = "valgrind/callgrind.h"


class InstructionsUnavailable(Exception):
    """Instruction counts cannot be taken here; the message is one line saying
    what is missing and what to install."""


def missing() -> str | None:
    """One line on what instruction counting lacks on this machine (valgrind, its
    header, a C compiler), or None when everything is there."""
    if shutil.which("valgrind") is None:
        return f"--instructions needs valgrind, not found on PATH: {INSTALL_HINT}"
    if _compiler() is None:
        return f"--instructions needs a C compiler (cc or gcc), none found: {INSTALL_HINT}"
    try:
        shim_path()
    except InstructionsUnavailable as err:
        return str(err)
    return None


def _compiler() -> str | None:
    for name in (os.environ.get("CC") or "", "cc", "gcc"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def shim_path() -> Path:
    """The compiled shim, built on first use (atomically: a temporary file renamed
    into place, so parallel builders never see half a library)."""
    source = SOURCE.read_bytes()
    digest = hashlib.sha256(source).hexdigest()[:16]
    folder = cache_dir("callgrind") or Path(tempfile.gettempdir())
    target = folder / f"npz_shim-{digest}.so"
    if target.exists():
        return target
    cc = _compiler()
    if cc is None:
        raise InstructionsUnavailable(
            f"--instructions needs a C compiler (cc or gcc), none found: {INSTALL_HINT}"
        )
    fd, tmp = tempfile.mkstemp(prefix=".npz_shim-", suffix=".so", dir=folder)
    os.close(fd)
    try:
        done = subprocess.run(
            [cc, "-O2", "-shared", "-fPIC", "-o", tmp, str(SOURCE)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        if done.returncode != 0:
            if HEADER in done.stderr:
                raise InstructionsUnavailable(
                    f"--instructions needs valgrind's header {HEADER}, not found by "
                    f"{Path(cc).name}: {INSTALL_HINT}"
                )
            first = (done.stderr.strip().splitlines() or ["no output"])[0]
            raise InstructionsUnavailable(f"building the callgrind shim failed: {first}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def valgrind_command(out_file: Path) -> list[str]:
    """The prefix that starts a counting process: callgrind with instrumentation
    and collection off until the shim turns them on around the solves."""
    return [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
        f"--callgrind-out-file={out_file}", "--quiet",
    ]  # fmt: skip


def read_totals(dump: Path) -> int:
    """The ``totals:`` (or ``summary:``) cost of one callgrind dump file."""
    summary = None
    with open(dump, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
            if line.startswith("summary:"):
                summary = int(line.split()[1])
    if summary is None:
        raise ValueError(f"{dump}: no totals line (not a callgrind dump?)")
    return summary


class Counter:
    """Instruction counts of this process, which must run under callgrind with the
    ``--callgrind-out-file`` given here. Make it after the set-up: from then on
    the process runs instrumented (~20-100x slower). The bracket's own cost (the
    ctypes calls and the requests, a few thousand instructions, the same every
    time) is counted once and taken off every count."""

    def __init__(self, out_file: Path) -> None:
        self._lib = ctypes.CDLL(str(shim_path()))
        self._lib.npz_end.argtypes = [ctypes.c_char_p]
        self._out = Path(out_file)
        self._dumps = 0
        if not self._lib.npz_on_valgrind():
            raise InstructionsUnavailable("not running under valgrind")
        self._lib.npz_instrument()  # from here on everything runs instrumented
        self.overhead = 0
        self.overhead = min(self._bracket() for _ in range(3))

    def begin(self) -> None:
        self._lib.npz_begin()

    def end(self) -> int:
        """Instructions since :meth:`begin`, less the bracket's own."""
        self._lib.npz_end(b"npuzzle-harness")
        return self._read() - self.overhead

    def _bracket(self) -> int:
        self.begin()
        return self.end()

    def _read(self) -> int:
        self._dumps += 1
        dump = Path(f"{self._out}.{self._dumps}")
        try:
            return read_totals(dump)
        finally:
            dump.unlink(missing_ok=True)
