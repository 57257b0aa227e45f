"""One drawing made beside the report's own, in a forked process.

Fifteen figures took ~20 CPU seconds of the main job's ~24 s report (matplotlib's
``savefig``: layout, ticks, PNG encoding); the profiles and scatter plots cost as
much as the ten per-run plots. On two or more cores the first half is drawn in a
child process while this one draws the other half, halving the wall time.

The child is forked, so it sees the modules and plugins already loaded and needs
no interpreter start-up; a fork while another thread runs could leave the child
blocked on a lock that thread held, so then, or on one core, the drawing is made
here, in order, when its result is asked for. The drawing function must be a
module-level function whose arguments and result pickle.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from harness.core.machine import core_count


def can_fork() -> bool:
    """Whether a drawing may be made in a forked child now: two cores or more, the fork
    start method, and no other thread alive."""
    return (
        core_count() >= 2
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


class Beside:
    """``fn(*args)`` started in a forked child (see :func:`can_fork`), else run
    here by :meth:`result`. Use as a context manager: leaving it ends the child."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self._call = (fn, args)
        self._pool: ProcessPoolExecutor | None = None
        self._future: Future | None = None
        self.forked = can_fork()
        if self.forked:
            self._pool = ProcessPoolExecutor(
                1, mp_context=multiprocessing.get_context("fork")
            )
            self._future = self._pool.submit(fn, *args)

    def result(self) -> Any:
        """The drawing's result (its exception raised here if it failed)."""
        if self._future is None:
            fn, args = self._call
            return fn(*args)
        return self._future.result()

    def close(self) -> None:
        """Wait for the child to exit (it may hold a copy of a lock's file)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Beside:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
