"""One writer per run directory: an advisory lock held while a process writes it.

Two ``harness run --resume`` of one run at once both appended every cell (1,042
rows for 552 keys) and each rewrote meta.json with its own session. A writer now
takes ``.lock`` in the run directory with ``fcntl.flock`` (exclusive, without
waiting) and writes its pid, host, start time and command into it; a second
writer gets one line naming the first. The kernel drops the lock when its holder
exits, however it exits, so a lock can never outlive its writer: a lock file that
still names a holder but is not locked was left by a writer that died (killed,
power cut), and the next writer takes it over and says whose it was.

Where ``flock`` is not supported (some network filesystems) the holder recorded
in the file decides: a live process on this host holds it, a dead one does not,
and one on another host holds it until its file is deleted.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.jsontext import loads
from harness.results import ResultsError

LOCK_FILE = ".lock"

#: Locks this process holds, by resolved run directory: the run command takes
#: the lock, and the report it writes at the end must not refuse it.
_held: dict[Path, RunLock] = {}


class RunLocked(ResultsError):
    """Another process is writing the run directory (the message names it)."""


@dataclass
class RunLock:
    """A held run-directory lock; ``stale``: the holder a dead writer left
    behind (None when the lock was free and clean)."""

    run_dir: Path
    fd: int
    stale: dict[str, Any] | None = None
    depth: int = field(default=1, repr=False)

    def release(self) -> None:
        """Give the lock up (the file stays, emptied: a clean release)."""
        self.depth -= 1
        if self.depth > 0 or self.fd < 0:
            return
        _held.pop(self.run_dir.resolve(), None)
        try:
            os.ftruncate(self.fd, 0)
        except OSError:
            pass
        os.close(self.fd)  # closing drops the flock
        self.fd = -1

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_run(run_dir: Path | str, command: str | None = None) -> RunLock:
    """Take the writer lock of ``run_dir`` (re-entrant within this process);
    RunLocked naming the holder when another process has it."""
    run_dir = Path(run_dir)
    key = run_dir.resolve()
    if key in _held:
        _held[key].depth += 1
        return _held[key]
    path = run_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as err:
        raise ResultsError(
            f"{path}: cannot open the run's lock: {err.strerror}"
        ) from None
    try:
        holder = _holder(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise RunLocked(_busy(run_dir, holder)) from None
            if err.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise ResultsError(f"{path}: cannot lock: {err.strerror}") from None
            if holder and _alive(holder):  # no flock here: the recorded holder
                raise RunLocked(_busy(run_dir, holder)) from None
        mine = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "command": command or " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        }
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(mine) + "\n").encode(), 0)
        except OSError as err:  # a full disk: said with the file, as every write
            raise ResultsError(
                f"{path}: cannot write the run's lock: {err.strerror}"
            ) from None
    except BaseException:
        os.close(fd)
        raise
    lock = RunLock(run_dir, fd, stale=holder or None)
    _held[key] = lock
    return lock


def unlock_run(run_dir: Path | str) -> None:
    """Release this process's lock of ``run_dir`` entirely (no-op if none)."""
    lock = _held.get(Path(run_dir).resolve())
    if lock is not None:
        lock.depth = 1
        lock.release()


def stale_text(holder: dict[str, Any]) -> str:
    """One phrase on a lock a dead writer left."""
    return (
        f"pid {holder.get('pid')} on {holder.get('host')} "
        f"(since {holder.get('since_utc')}: {holder.get('command')}) ended without "
        "releasing this run's lock"
    )


def _holder(fd: int) -> dict[str, Any]:
    try:
        raw = os.pread(fd, 4096, 0)
        holder = loads(raw) if raw.strip() else {}
    except (OSError, ValueError):
        return {"pid": None, "host": None, "command": "(unreadable lock file)"}
    return holder if isinstance(holder, dict) else {}


def _alive(holder: dict[str, Any]) -> bool:
    """Whether the recorded holder may still run (another host: assume so)."""
    if holder.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(holder.get("pid")), 0)
    except (ProcessLookupError, TypeError, ValueError):
        return False
    except PermissionError:
        return True
    return True


def _busy(run_dir: Path, holder: dict[str, Any]) -> str:
    who = (
        f"pid {holder.get('pid')} on {holder.get('host')} since "
        f"{holder.get('since_utc')} ({holder.get('command')})"
        if holder.get("pid")
        else "another process"
    )
    return (
        f"run {run_dir.name} is being written by {who}; wait for it to finish or "
        f"stop it (its lock is {run_dir / LOCK_FILE})"
    )
