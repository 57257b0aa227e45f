"""The counting phase's stop: the processes counting now, and a flag that no
more may start. A counting process runs in a session of its own (a terminal's
Ctrl-C must not kill it halfway through writing a count), so on Ctrl-C nothing
ends it but :meth:`Live.stop`: without it the phase would wait for every count
running, minutes for a slow config, and leave valgrind running after the run
has stopped.

Standard library only.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Live:
    """The counting processes running now (each the leader of its own process
    group), and whether the phase is stopping. Shared by the phase's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()
        self._stopping = threading.Event()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    @contextmanager
    def running(self, process: subprocess.Popen) -> Iterator[subprocess.Popen]:
        """Hold ``process`` (started with ``start_new_session=True``) as running
        for the block; one started as the phase stops is killed at once (and the
        block sees it die as any killed process)."""
        with self._lock:
            self._running.add(process)
            late = self._stopping.is_set()
        if late:
            kill_group(process)
        try:
            yield process
        finally:
            with self._lock:
                self._running.discard(process)

    def stop(self) -> None:
        """No process may start from now on; kill the process groups of those
        running (valgrind and anything a traced program started)."""
        with self._lock:
            self._stopping.set()
            running = list(self._running)
        for process in running:
            kill_group(process)


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL to the process group ``process`` leads: the leader if running,
    and what it started (a pid stays out of reuse while it names a group)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # it ended meanwhile
