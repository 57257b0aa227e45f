"""The worker: the child side of the measurement.

A :class:`~harness.measure.tasks.Task` is one solver config on one instance with
the passes still to do (the timed repeats, then the memory pass). :class:`Worker`
runs them in a worker process (:mod:`harness.measure.executors.local` is the parent
side) and keeps prepared set-up state (plugins, heuristic tables, compiled kernels)
between tasks of the same config. Its memory pass is in
:mod:`harness.measure.memory_pass`, the rule for stopping the timed repeats in
:mod:`harness.measure.stopping`.

This module is imported by workers: standard library and the harness core only.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import resource
import signal
import sys
import time
import traceback
import tracemalloc
from functools import partial
from multiprocessing import connection
from typing import Any

from harness.measure.failures import (
    AlarmTimeout,
    caused_by_alarm,
    counters_dict,
    describe_error,
    one_line,
    timed_out,
)
from harness.measure.memory_pass import MemoryPass
from harness.measure.probes import (
    die_with_parent,
    pin_to_core,
    status_kb,
    trim_heap,
)
from harness.measure.sampling import (
    WARM_SOLVE_BELOW,
    CellClock,
    Sample,
    calibrate,
    steady_loops,
    time_loop,
)
from harness.measure.stopping import stop_reason
from harness.measure.tasks import (
    MAX_MOVES_CHARS,
    REFERENCE_BOARD,
    REFERENCE_GOAL,
    REFERENCE_KEY,
    Attempt,
    Pass,
    Setup,
    Task,
    TaskResult,
    clocks_now,
)
from harness.puzzle import Board, Grid, grid

# ------------------------------------------------------- worker: measurement


class Worker(MemoryPass):
    """The measuring side of a worker process; also usable in-process (tests, other
    executors). Keeps prepared set-ups keyed by :attr:`Task.setup_key`."""

    def __init__(self, index: int = 0, send=None) -> None:
        self.index = index
        self._send = send or (lambda msg: None)
        self._plugins: set[str] = set()
        self._prepared: dict[tuple, tuple[Any, Any, Grid]] = {}
        self._armed = False
        self.retire = False  # after a MemoryError: ask to be replaced
        self._rss_reset_ok: bool | None = None
        self._replacement = False
        self.freeze_gc = False  # worker processes: gc.freeze() after each set-up
        self._current: Pass | None = None  # the pass being run
        self.cpu: int | None = None  # the core this process is pinned to
        #: the reference solve, prepared: (solve, heuristic, grid); False: failed
        self._reference: Any = None
        #: (wall, CPU) seconds per phase of the current task (TaskResult.phases)
        self._phases: dict[str, tuple[float, float]] = {}
        #: what the current task's passes learnt of its solve time
        self._cell = CellClock()
        #: the reference's loops per minimum sample time, calibrated once
        self._reference_loops: dict[float, int] = {}

    def _spent(self, phase: str, since: tuple[float, float]) -> tuple[float, float]:
        """Add the wall and CPU seconds from ``since`` (a
        :func:`~harness.measure.tasks.clocks_now`) to ``phase``; returns now."""
        now = clocks_now()
        wall, cpu = self._phases.get(phase, (0.0, 0.0))
        self._phases[phase] = (wall + now[0] - since[0], cpu + now[1] - since[1])
        return now

    def _moved(self, phase: str, to: str, since: tuple[float, float]) -> None:
        """Move the seconds from ``since`` to now from ``phase`` to ``to``."""
        now = self._spent(to, since)
        wall, cpu = self._phases.get(phase, (0.0, 0.0))
        self._phases[phase] = (wall - now[0] + since[0], cpu - now[1] + since[1])

    # ---- alarm: the in-process time limit (the parent kills as a backstop)

    def _on_alarm(self, signum: int, frame: Any) -> None:
        if self._armed:
            self._armed = False  # raise at most once per arming
            raise AlarmTimeout()

    def _arm(self, seconds: float) -> None:
        signal.signal(signal.SIGALRM, self._on_alarm)
        self._armed = True
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))

    def _disarm(self) -> None:
        self._armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)

    def _rearm(self, seconds: float) -> None:
        """A fresh limit for the next call, the handler already set: one system
        call, nothing that touches the solver's memory."""
        self._armed = True
        signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))

    # ---- memory limit

    def _limit_memory(self, limit_mb: int | None) -> None:
        """RLIMIT_AS = the worker's current size + limit: what one solve may add."""
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if limit_mb is None:
            target = hard
        else:
            size_kb = status_kb("VmSize")
            base = size_kb * 1024 if size_kb is not None else 0
            target = base + limit_mb * 1024 * 1024
            if hard != resource.RLIM_INFINITY:
                target = min(target, hard)
        if target != soft:
            resource.setrlimit(resource.RLIMIT_AS, (target, hard))

    # ---- set-up

    def _setup(self, task: Task) -> tuple[Setup, tuple[Any, Any, Grid]]:
        from harness.heuristics import make_heuristic
        from harness.measure.external import load_plugin

        self._limit_memory(None)  # set-up (tables, compilation) is not capped
        g = grid(task.rows, task.cols)
        t0 = time.perf_counter()
        for target in task.plugins:
            if target not in self._plugins:
                load_plugin(target)
                self._plugins.add(target)
        config = task.config.resolve()
        t1 = time.perf_counter()
        heuristic = (
            make_heuristic(config.heuristic, task.goal, g, task.cost_model)
            if config.heuristic else None
        )  # fmt: skip
        t2 = time.perf_counter()
        said = None
        if config.spec.prepare is not None:
            said = config.spec.prepare(g, task.goal, heuristic)
        if task.reference:
            self._reference_solver()  # once per worker, before the baseline below
        t3 = time.perf_counter()
        gc.collect()
        if self.freeze_gc:
            # Imports and tables are permanent: keep them out of every later
            # collection, so gc.collect() before each pass stays cheap.
            gc.freeze()
        trim_heap()
        rss_kb = status_kb("VmRSS")
        note = (
            f"imports {t1 - t0:.3f} s, heuristic {t2 - t1:.3f} s, "
            f"prepare {t3 - t2:.3f} s in worker {self.index}"
            + (" (replacement worker)" if self._replacement else "")
            + (f"; {said}" if isinstance(said, str) and said else "")
        )
        setup = Setup(
            config=task.config.label,
            size=g.label,
            goal=task.goal,
            seconds=t3 - t0,
            note=note,
            worker=self.index,
            import_seconds=t1 - t0,
            heuristic_seconds=t2 - t1,
            prepare_seconds=t3 - t2,
            rss_baseline_bytes=rss_kb * 1024 if rss_kb is not None else None,
        )
        return setup, (config, heuristic, g)

    # ---- one task

    def run(self, task: Task) -> TaskResult:
        """Set up if needed, then run the passes in order until one fails."""
        self._phases = {}
        self._cell = CellClock()
        result = TaskResult(
            task, [], worker=self.index, cpu=self.cpu, phases=self._phases
        )
        key = task.setup_key
        if key not in self._prepared:
            self._send(("setup_begin", task.setup_timeout))
            began = clocks_now()
            try:
                setup, prepared = self._setup(task)
                self._spent("setup", began)
            except BaseException as err:  # a broken plugin or prepare: every pass fails
                status = "memout" if isinstance(err, MemoryError) else "error"
                message = f"set-up failed: {describe_error(err)}"
                traceback.print_exc()
                setup = Setup(
                    task.config.label,
                    f"{task.rows}x{task.cols}",
                    task.goal,
                    0.0,
                    message,
                    self.index,
                    ok=False,
                    error=message,
                )
                self._send(("setup", setup))
                result.setups.append(setup)
                p = task.passes[0]
                attempt = Attempt(p.measure, p.repeat, status, message=message)
                self._send(("attempt", attempt))
                result.attempts.append(attempt)
                self.retire = self.retire or isinstance(err, MemoryError)
                return result
            self._prepared[key] = prepared
            self._send(("setup", setup))
            result.setups.append(setup)
        config, heuristic, g = self._prepared[key]
        if heuristic is not None:
            try:
                result.h_start = int(heuristic(task.start))
            except Exception:
                result.h_start = None
        timed_total = sum(1 for p in task.passes if p.measure == "time")
        stopped = False
        for p in task.passes:
            if stopped and p.measure == "time":
                continue  # adaptive stop: the rest could not move the median
            self._current = p
            budget = task.pass_budget(p, self._cell.loops, self._cell.warm)
            self._send(("begin", p, budget))
            run_pass = {
                "memory": self._memory_pass,
                "warmup": self._warmup_pass,
            }.get(p.measure, self._timed_pass)
            if config.spec.external is not None:
                run_pass = self._external_pass
            began = clocks_now()
            attempt = self._guard(
                task, p, lambda f=run_pass: f(task, config, heuristic, g)
            )
            self._spent(p.measure, began)
            attempt.measure, attempt.repeat = p.measure, p.repeat
            if (
                p.measure == "time"
                and task.adaptive > 0
                and attempt.outcome == "returned"
            ):
                taken = result.attempts + [attempt]
                attempt.stop = stop_reason(taken, timed_total, task)
                stopped = bool(attempt.stop)
            self._send(("attempt", attempt))
            result.attempts.append(attempt)
            if attempt.outcome != "returned":
                break  # the parent records the remaining passes as not run
        return result

    def _guard(self, task: Task, p: Pass, body) -> Attempt:
        """Run a pass; turn whatever escapes it into an outcome."""
        try:
            return body()
        except AlarmTimeout:
            return timed_out(task, p)
        except MemoryError:
            self.retire = True  # fragmented heap, maybe half-built state: replace me
            limit = task.memory_limit_mb
            return Attempt(
                p.measure,
                p.repeat,
                "memout",
                message=(
                    f"MemoryError at the {limit} MB memory limit"
                    if limit
                    else "MemoryError"
                ),
            )
        except SystemExit as err:
            return Attempt(
                p.measure,
                p.repeat,
                "error",
                message=f"solver called sys.exit({err.code!r})",
            )
        except BaseException as err:
            traceback.print_exc()  # the full traceback goes to the workers' log
            if caused_by_alarm(err):  # numba wraps it: "returned a result with an
                return timed_out(task, p)  # exception set", the alarm's its cause
            return Attempt(p.measure, p.repeat, "error", message=describe_error(err))
        finally:
            self._disarm()
            gc.enable()
            if tracemalloc.is_tracing():
                tracemalloc.stop()
            self._limit_memory(None)

    def _returned(self, p: Pass, moves: Any, counters: Any) -> Attempt:
        kind = type(moves).__name__
        chars = len(moves) if isinstance(moves, str) else 0
        if isinstance(moves, str) and chars > MAX_MOVES_CHARS:
            moves = moves[:200]
        elif moves is not None and not isinstance(moves, str):
            moves = one_line(repr(moves), 200)
        return Attempt(
            p.measure,
            p.repeat,
            "returned",
            moves=moves,
            moves_type=kind,
            moves_chars=chars,
            counters=counters_dict(counters),
        )

    # ---- the reference solve

    def _reference_solver(self) -> tuple[Any, Any, Grid] | None:
        """The reference solve, prepared once per worker and solved once untimed
        (first-touch page faults); None if it cannot be (then no reference)."""
        if self._reference is None:
            self._reference = False
            try:
                from harness.configs import ConfigKey
                from harness.heuristics import make_heuristic

                g = grid(3, 3)
                config = ConfigKey(*REFERENCE_KEY).resolve()
                h = make_heuristic(config.heuristic, REFERENCE_GOAL, g)
                if config.spec.prepare is not None:
                    config.spec.prepare(g, REFERENCE_GOAL, h)
                self._reference = (config.spec.solve, h, g)
                self._loop(config.spec.solve, REFERENCE_BOARD, REFERENCE_GOAL, g, h, 1)
            except Exception:
                traceback.print_exc()
                self._reference = False
        return self._reference or None

    def _time_reference(self, min_seconds: float) -> tuple[float, float] | None:
        """(wall, CPU) seconds per solve of one calibrated reference sample, or
        None. Its loops are found once per worker and minimum sample time."""
        ref = self._reference_solver()
        if ref is None:
            return None
        solve, h, g = ref
        run = partial(self._loop, solve, REFERENCE_BOARD, REFERENCE_GOAL, g, h)
        loops = self._reference_loops.get(min_seconds)
        if loops is None:
            first = run(1).cpu_seconds
            loops, _ = calibrate(lambda k: run(k).cpu_seconds * k, first, min_seconds)
            self._reference_loops[min_seconds] = loops
        sample = run(loops)
        return sample.seconds, sample.cpu_seconds

    @staticmethod
    def _loop(solve, start: Board, goal: Board, g: Grid, h, loops: int) -> Sample:
        from harness.solver import Counters

        return time_loop(solve, start, goal, g, h, loops, Counters)

    def _board_loop(
        self, task: Task, config, heuristic, g: Grid, loops: int
    ) -> Sample:
        """``loops`` back-to-back solves of the task's board, timed as one sample."""
        solve = config.solve_for(task.cost_model)  # unit: config.solve itself
        return self._loop(solve, task.start, task.goal, g, heuristic, loops)

    # ---- passes

    def _housekeeping(self, task: Task) -> None:
        """Everything the worker does for a pass before its solves: it walks memory
        and cools the caches, so it never runs between a warm solve and its sample."""
        gc.collect()
        self._limit_memory(task.memory_limit_mb)
        if not task.gc:
            gc.disable()  # collections triggered by earlier garbage are noise

    def _first_solve(self, task: Task, config, heuristic, g: Grid) -> Attempt:
        """The cell's first solve, timed alone (first_seconds: single-shot, cold
        caches), then the calibration of its loops (harness.measure.sampling)."""
        cell, run = self._cell, partial(self._board_loop, task, config, heuristic, g)
        self._arm(task.timeout)
        first = run(1)
        self._armed = False
        attempt = self._returned(Pass("warmup", 0), first.results[0], first.counters[0])
        attempt.first_seconds = first.seconds
        attempt.first_cpu_seconds = first.cpu_seconds
        del first

        def sample_cpu(loops: int) -> float:
            self._rearm(task.timeout)
            took = run(loops)
            self._armed = False
            return took.cpu_seconds * loops

        cell.loops, per_solve = calibrate(
            sample_cpu, attempt.first_cpu_seconds, task.min_sample_seconds
        )
        cell.per_solve = per_solve
        cell.warm = per_solve < WARM_SOLVE_BELOW
        attempt.loops = cell.loops
        return attempt

    def _warmup_pass(self, task: Task, config, heuristic, g: Grid) -> Attempt:
        """An untimed pass before the timed repeats (page faults, caches, lazy
        imports and allocations happen here, not in repeat 0); no row is kept. The
        first one makes the cell's first solve and calibrates its loops."""
        self._housekeeping(task)
        if self._cell.loops is None:
            return self._first_solve(task, config, heuristic, g)
        self._arm(task.timeout)
        again = self._board_loop(task, config, heuristic, g, 1)
        self._armed = False
        return self._returned(Pass("warmup", 0), again.results[0], again.counters[0])

    def _timed_pass(self, task: Task, config, heuristic, g: Grid) -> Attempt:
        """One timed repeat: housekeeping, a warm solve of the board (fast solves),
        then the calibrated sample right after it; then the reference sample."""
        cell = self._cell
        self._housekeeping(task)
        first = None
        if cell.loops is None:  # no warm-up pass: the first solve and calibration
            first = self._first_solve(task, config, heuristic, g)
        warm, sample = self._sample(task, config, heuristic, g)
        one = warm or sample  # the counters and moves are one solve's
        attempt = self._returned(Pass("time", 0), one.results[0], one.counters[0])
        attempt.seconds, attempt.cpu_seconds = sample.seconds, sample.cpu_seconds
        attempt.loops = sample.loops
        attempt.single_cpu_seconds = (
            warm.cpu_seconds if warm else sample.cpu_seconds if sample.loops == 1
            else None
        )  # fmt: skip
        check_loops(attempt, one, sample)
        if first is not None:  # no warm-up pass kept it: the first solve's figures
            attempt.first_seconds = first.first_seconds
            attempt.first_cpu_seconds = first.first_cpu_seconds
            if attempt.check_label == "" and (first.counters, first.moves) != (
                attempt.counters, attempt.moves
            ):  # and it must agree like any solve of the cell
                attempt.check_counters = first.counters
                attempt.check_moves = first.moves
                attempt.check_label = "the first solve"
        del warm, sample, one
        ref = self._reference_sample(task) if task.reference else None
        if ref is not None:
            attempt.ref_seconds, attempt.ref_cpu_seconds = ref
        return attempt

    def _sample(
        self, task: Task, config, heuristic, g: Grid
    ) -> tuple[Sample | None, Sample]:
        """(the warm solve or None, the sample): the warm solve, for a looped
        sample an untimed loop of as many solves less one (sampling.steady_loops),
        then the sample; nothing else runs between them but the alarm's re-arming
        (one system call). The sample's alarm is the time
        limit, plus a few minimum sample times when it loops several solves."""
        cell = self._cell
        loops = cell.loops or 1
        run = partial(self._board_loop, task, config, heuristic, g)
        slack = 4 * loops * cell.per_solve if loops > 1 else 0.0
        self._arm(task.timeout)
        warm = run(1) if cell.warm else None
        if warm is not None and loops > 1:
            # the solves after the housekeeping and the last reference sample stay
            # slow for a while: an untimed loop brings the sample to the solve's
            # steady state (sampling.steady_loops)
            self._rearm(task.timeout + slack)
            run(steady_loops(loops))
        if warm is not None:
            self._rearm(task.timeout + slack)
        sample = run(loops)
        self._armed = False
        return warm, sample

    def _reference_sample(self, task: Task) -> tuple[float, float] | None:
        """The reference sample right after a pass's own, in the same process on
        the same core (the same drift); its time is the pass's, not the solve's."""
        began = clocks_now()
        ref = self._time_reference(task.min_sample_seconds)
        self._moved("time", "reference", began)
        return ref

    def _external_pass(self, task: Task, config, heuristic, g: Grid) -> Attempt:
        """An external program's pass, on the footing of an in-process one (see
        :func:`harness.measure.external.worker_pass`), the reference after it."""
        from harness.measure.external import worker_pass

        assert self._current is not None
        reference = partial(self._reference_sample, task) if task.reference else None
        external = config.spec.external
        return worker_pass(task, self._current, external, g, self._cell, reference)


def check_loops(attempt: Attempt, one: Sample, sample: Sample) -> None:
    """Every solve of the sample must count and answer as the one whose counters
    the row records; the first that does not is kept as the attempt's check, and
    the rows call the cell nondeterministic (harness.measure.rows)."""
    want = counters_dict(one.counters[0])
    for i, (moves, counters) in enumerate(
        zip(sample.results, sample.counters, strict=True)
    ):
        got = counters_dict(counters)
        if got != want or moves != one.results[0]:
            attempt.check_counters = got
            attempt.check_moves = (
                moves if isinstance(moves, str | None) else repr(moves)[:200]
            )
            attempt.check_label = f"loop {i + 1} of {sample.loops}"
            return


# ------------------------------------------------------- worker: the process


def worker_entry(
    fd: int, index: int, replacement: bool, cpu: int | None = None
) -> None:
    """Entry point of a worker process (started by :class:`LocalPool` as
    ``python -c``): receive tasks on the socket ``fd``, stream events back."""
    # Ctrl-C reaches the whole process group; the parent alone decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    from harness.measure.external.process import adopt_orphans

    adopt_orphans()  # what programs' children leave after a setsid is ours
    # stdout/stderr are the run's workers.log: solvers must not print, but plugins
    # might, and crash tracebacks (faulthandler) belong where a user can find them.
    faulthandler.enable(file=sys.stderr, all_threads=True)
    conn = connection.Connection(fd)
    worker = Worker(index, conn.send)
    worker._replacement = replacement
    worker.freeze_gc = True
    # a cell and the reference solve timed after it must share a core's drift
    worker.cpu = pin_to_core(cpu)
    where = f" on core {worker.cpu}" if worker.cpu is not None else ""
    print(
        f"[worker {index} pid {os.getpid()}] started{where}",
        file=sys.stderr,
        flush=True,
    )
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        print(
            f"[worker {index}] task {task.id}: {task.config} on {task.dataset} "
            f"{task.instance}",
            file=sys.stderr,
            flush=True,
        )
        result = worker.run(task)
        conn.send(("done", result.h_start, worker.retire, result.phases))
        if worker.retire:
            return
