"""The memory pass of a worker (:class:`MemoryPass`, a part of
:class:`harness.measure.worker.Worker`): the peak RSS of a plain solve, then the
tracemalloc peak of a second solve, never both in one solve.

Why two solves: tracemalloc's own bookkeeping inflates the process's RSS, and it
slows the solver, so the RSS solve runs untraced and the traced solve is neither
timed nor its RSS read. Imported by workers: standard library and the harness core
only.
"""

from __future__ import annotations

import gc
import time
import tracemalloc

from harness.measure.failures import AlarmTimeout, counters_dict
from harness.measure.probes import peak_rss_bytes, reset_peak_rss, status_kb, trim_heap
from harness.measure.tasks import (
    MAX_MOVES_CHARS,
    TRACEMALLOC_BELOW_BYTES,
    TRACEMALLOC_BELOW_SECONDS,
    TRACEMALLOC_TIMEOUT_FACTOR,
    Attempt,
    Pass,
    Task,
    clocks_now,
)
from harness.puzzle import Grid


class MemoryPass:
    """The memory pass, as methods of the :class:`~harness.measure.worker.Worker`
    that inherits them: they use its alarm (``_arm``, ``_disarm``), memory limit
    (``_limit_memory``), phase clock (``_moved``), outcome of a returned solve
    (``_returned``)."""

    _rss_reset_ok: bool | None
    retire: bool

    def _memory_pass(self, task: Task, config, heuristic, g: Grid) -> Attempt:
        """Peak RSS of a plain solve, then the tracemalloc peak of a second one:
        tracemalloc's own bookkeeping would inflate RSS, so never both at once."""
        from harness.solver import Counters

        counters = Counters()
        gc.collect()
        trim_heap()
        if self._rss_reset_ok is None or self._rss_reset_ok:
            self._rss_reset_ok = reset_peak_rss()  # VmHWM := VmRSS now
        before_kb = status_kb("VmRSS")
        self._limit_memory(task.memory_limit_mb)
        self._arm(task.timeout)
        c0 = time.process_time()
        moves = config.solve_for(task.cost_model)(
            task.start, task.goal, g, counters=counters, heuristic=heuristic
        )
        solve_cpu = time.process_time() - c0
        self._disarm()
        peak_rss = peak_rss_bytes(bool(self._rss_reset_ok))
        attempt = self._returned(Pass("memory", 0), moves, counters)
        attempt.single_cpu_seconds = solve_cpu  # a cold solve: after the trim
        attempt.peak_rss_bytes = peak_rss
        if self._rss_reset_ok and before_kb is not None and peak_rss is not None:
            # what the solve added: its peak over what the worker held before it
            attempt.peak_rss_delta_bytes = max(0, peak_rss - before_kb * 1024)
        del moves, counters
        delta = attempt.peak_rss_delta_bytes
        if delta is not None and delta >= TRACEMALLOC_BELOW_BYTES:
            return attempt  # the RSS delta is the figure; see TRACEMALLOC_BELOW_BYTES
        if solve_cpu >= TRACEMALLOC_BELOW_SECONDS:
            return attempt  # too slow to trace; see TRACEMALLOC_BELOW_SECONDS

        traced = clocks_now()
        try:
            return self._traced_solve(task, config, heuristic, g, attempt)
        finally:
            self._moved("memory", "tracemalloc", traced)  # not the RSS solve's

    def _traced_solve(
        self, task: Task, config, heuristic, g: Grid, attempt: Attempt
    ) -> Attempt:
        """The tracemalloc solve of the memory pass (see :meth:`_memory_pass`)."""
        from harness.solver import Counters

        check = Counters()
        gc.collect()
        trim_heap()
        tracemalloc.start()
        slow_limit = task.timeout * TRACEMALLOC_TIMEOUT_FACTOR
        self._arm(slow_limit)
        try:
            again = config.solve_for(task.cost_model)(
                task.start, task.goal, g, counters=check, heuristic=heuristic
            )
        except AlarmTimeout:
            return Attempt(
                "memory",
                0,
                "timeout",
                message=(
                    f"tracemalloc solve exceeded {slow_limit:g} s "
                    f"({TRACEMALLOC_TIMEOUT_FACTOR:g}x the time limit: it runs slower)"
                ),
            )
        except MemoryError:
            self.retire = True
            return Attempt(
                "memory",
                0,
                "memout",
                message=(
                    "MemoryError in the tracemalloc solve (its traces need memory too)"
                ),
            )
        finally:
            self._disarm()
        attempt.peak_bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        attempt.check_counters = counters_dict(check)
        attempt.check_moves = (
            again if isinstance(again, str | None) else repr(again)[:200]
        )
        if (
            isinstance(attempt.check_moves, str)
            and len(attempt.check_moves) > MAX_MOVES_CHARS
        ):
            attempt.check_moves = attempt.check_moves[:200]
        return attempt
