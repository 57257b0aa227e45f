"""The local executor: :class:`LocalPool` runs tasks in ``jobs`` worker processes on
this machine (the parent side; the child side is :mod:`harness.measure.worker`).

Workers are fresh interpreters, never a fork of the possibly threaded parent. A
worker keeps prepared set-up state (plugins, heuristic tables, compiled kernels)
between tasks of the same config. The parent enforces every deadline: a worker
that does not answer within the pass's time limit plus a grace period is killed and
replaced, as is one that crashes or runs out of memory; only that one pass is lost.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing import connection
from pathlib import Path
from typing import Any

from harness.core.machine import core_count, usable_cores
from harness.measure.executors.base import fill_not_run
from harness.measure.executors.registry import (
    ExecutorKind,
    Launch,
    executor_kind,
    register_executor,
)
from harness.measure.handout import Handout
from harness.measure.tasks import (
    Attempt,
    Event,
    Pass,
    Setup,
    Task,
    TaskResult,
    TaskStarted,
)

#: A worker that ignores the in-process alarm (compiled code) is killed this much later.
KILL_GRACE_SECONDS = 1.0
KILL_GRACE_FRACTION = 0.2


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


@dataclass(slots=True)
class _Slot:
    index: int
    process: subprocess.Popen | None = None
    conn: connection.Connection | None = None
    task: Task | None = None
    attempts: list[Attempt] = field(default_factory=list)
    setups: list[Setup] = field(default_factory=list)
    prepared: set = field(default_factory=set)
    deadline: float | None = None
    phase: str = ""  # "" (before set-up) | "setup" | "pass"
    current: Pass | None = None
    budget: float = 0.0
    killed_for_deadline: bool = False
    started: int = 0  # processes started in this slot (>1: replacements)
    cpu: int | None = None  # the core its worker is pinned to
    block: int | None = None  # the block of tasks this worker is working through


class LocalPool:
    """``jobs`` worker processes on this machine (see the module docstring).

    Workers are fresh interpreters (``python -c``, like the ``spawn`` start method,
    never a fork of this possibly threaded process) that talk over a socket pair;
    unlike multiprocessing they do not re-import the caller's ``__main__``, so a
    script calling ``harness.run()`` needs no ``if __name__ == "__main__"`` guard.
    """

    def __init__(
        self,
        jobs: int,
        log_path: str | None = None,
        *,
        priority: Callable[[Task], float] | None = None,
        pin: bool = False,
        cores: Sequence[int] | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        """``pin``: worker i on core i of ``cores`` (default: the cores this process
        may use), round robin. ``env``: the workers' environment (default: ours)."""
        if jobs < 1:
            raise ValueError("jobs must be at least 1")
        self.jobs = jobs
        self._log_path = log_path
        self._env = env
        self._slots = [_Slot(i) for i in range(jobs)]
        if pin:  # worker i on core i (round robin over the cores we may use)
            cores = list(cores) if cores else usable_cores()
            for slot in self._slots:
                slot.cpu = cores[slot.index % len(cores)] if cores else None
        #: with ``priority`` (expected seconds): every idle worker takes the pending
        #: block that is expected to take longest, asked afresh at each hand-off
        self._handout = Handout()
        if priority is not None:
            self._handout.prioritize(priority)
        self._outstanding = 0
        self.replacements = 0
        self.start_method = "subprocess"
        self.workers: dict[str, dict[str, Any]] = {}  # results say local-N
        self.lost_batches: list[dict[str, Any]] = []  # a local cell is never lost

    def warnings(self) -> list[str]:
        """More workers than cores: they share cores (said before the work)."""
        cores = core_count()
        if self.jobs <= cores:
            return []
        return [
            f"--jobs {self.jobs} on {cores} cores: workers share cores, so a "
            "solve's wall time includes waiting for one (its CPU time less so); "
            f"use at most --jobs {cores} for times you will compare"
        ]

    # ---- Executor interface

    def set_run_dir(self, run_dir: Path) -> None:
        """The log path was given at construction: nothing to do."""

    def set_pin(self, pin: bool) -> None:
        """Pinning was decided at construction: nothing to do."""

    def describe(self) -> dict[str, Any]:
        return {"kind": "local", "slots": self.jobs}

    def notes(self) -> list[str]:
        return []

    def prioritize(
        self,
        priority: Callable[[Task], float],
        key: Callable[[Task], Hashable] | None = None,
        token: Callable[[], Hashable | None] | None = None,
    ) -> None:
        """From now on, hand out the pending block with the highest summed
        ``priority``; ``key``: tasks with equal keys have equal priority, so a
        hand-off asks once per key; ``token``: while it is the same, nothing is
        asked again (see :mod:`harness.measure.handout`)."""
        self._handout.prioritize(priority, key, token)

    def submit(self, task: Task) -> None:
        self._handout.add(task)
        self._outstanding += 1

    def events(self) -> Iterator[Event]:
        while self._outstanding:
            yield from self._fill()
            yield from self._wait()

    def _fill(self) -> list[TaskStarted]:
        """Give every idle worker its next task."""
        started = []
        for slot in self._slots:
            if slot.task is None:
                task = self._next_for(slot)
                if task is None:
                    continue  # (blocks: another worker may still get one)
                self._assign(slot, task)
                started.append(TaskStarted(task, slot.index))
        return started

    def shutdown(self, *, cancel: bool = False) -> None:
        for slot in self._slots:
            if slot.process is None:
                continue
            if cancel or slot.task is not None:
                self._kill(slot)
            else:
                try:
                    slot.conn.send(None)
                    slot.process.wait(2.0)
                except (OSError, subprocess.TimeoutExpired):
                    self._kill(slot)
            self._close(slot)
        self._handout.clear()
        self._outstanding = 0

    def withdraw(self) -> list[Task]:
        """Take back every task not yet handed to a worker, and every block no
        worker has begun (the running tasks, and the rest of a begun block, finish
        and are still reported by :meth:`events`)."""
        out = self._handout.withdraw()
        self._outstanding -= len(out)
        return out

    def reap_idle(self) -> None:
        """Forget idle workers that exited since their last task (killed from
        outside, or their parent thread ended): the next task starts a fresh one
        instead of being charged with a crash it did not cause."""
        for slot in self._slots:
            if (
                slot.task is None
                and slot.process is not None
                and slot.process.poll() is not None
            ):
                self._close(slot)

    # ---- scheduling

    def _next_for(self, slot: _Slot) -> Task | None:
        """The next task of this worker's block, else of the free block expected to
        take longest (see :class:`~harness.measure.handout.Handout`)."""
        task, slot.block = self._handout.take(slot.block, slot.prepared)
        return task

    def _start(self, slot: _Slot) -> None:
        ours, theirs = socket.socketpair()
        child_fd = theirs.detach()
        paths = [p for p in sys.path if p]
        code = (
            f"import sys; sys.path[:0] = {paths!r}; "
            "from harness.measure.worker import worker_entry; "
            f"worker_entry({child_fd}, {slot.index}, {slot.started > 0}, {slot.cpu})"
        )
        log = _open_log(self._log_path) if self._log_path else subprocess.DEVNULL
        try:
            process = subprocess.Popen(
                [sys.executable, "-c", code],
                pass_fds=(child_fd,),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self._env,
            )
        finally:
            os.close(child_fd)
            if log is not subprocess.DEVNULL:
                log.close()
        if slot.started:
            self.replacements += 1
        slot.started += 1
        slot.process = process
        slot.conn = connection.Connection(ours.detach())
        slot.prepared = set()

    def _assign(self, slot: _Slot, task: Task) -> None:
        if slot.process is None:
            self._start(slot)
        slot.task, slot.attempts, slot.setups = task, [], []
        slot.deadline, slot.phase, slot.current = None, "", None
        slot.killed_for_deadline = False
        try:
            slot.conn.send(task)
        except OSError:
            pass  # the worker died already; the closed socket reports it

    # ---- events from workers

    def _wait(self) -> Iterator[Event]:
        busy = [s for s in self._slots if s.task is not None]
        if not busy:
            return
        now = time.monotonic()
        deadlines = [s.deadline for s in busy if s.deadline is not None]
        timeout = max(0.0, min(deadlines) - now) if deadlines else None
        # A worker's socket turns readable with a message, or with EOF when it dies.
        ready = set(connection.wait([s.conn for s in busy], timeout))
        finished: list[TaskResult] = []
        for slot in busy:
            if slot.conn in ready:
                alive = self._drain(slot, finished)
                if not alive and slot.task is not None:
                    finished.append(self._lost(slot))
            elif slot.deadline is not None and time.monotonic() >= slot.deadline:
                slot.killed_for_deadline = True
                self._kill(slot)
                finished.append(self._lost(slot))
        # Hand out the next tasks before the caller stores these results, so the
        # workers solve while the parent writes and fsyncs rows.
        yield from self._fill()
        yield from finished

    def _drain(self, slot: _Slot, finished: list[TaskResult]) -> bool:
        """Handle every waiting message; False when the worker is gone."""
        while slot.task is not None:
            try:
                if not slot.conn.poll():
                    return True
                msg = slot.conn.recv()
            except (EOFError, OSError):
                return False
            kind = msg[0]
            if kind == "setup_begin":
                slot.phase, slot.budget = "setup", msg[1]
                slot.deadline = time.monotonic() + msg[1]
            elif kind == "setup":
                slot.setups.append(msg[1])
                if msg[1].ok:
                    slot.prepared.add(slot.task.setup_key)
            elif kind == "begin":
                slot.phase, slot.current, slot.budget = "pass", msg[1], msg[2]
                grace = KILL_GRACE_SECONDS + KILL_GRACE_FRACTION * msg[2]
                slot.deadline = time.monotonic() + msg[2] + grace
            elif kind == "attempt":
                slot.attempts.append(msg[1])
                slot.deadline, slot.current = None, None
            elif kind == "done":
                h_start, retire = msg[1], msg[2]
                result = self._finish(slot, h_start)
                result.phases = msg[3] if len(msg) > 3 else {}
                if retire:  # it exits by itself after a MemoryError
                    try:
                        slot.process.wait(5.0)
                    except subprocess.TimeoutExpired:
                        self._kill(slot)
                    self._close(slot)
                finished.append(result)
                return True
        return True

    def _finish(self, slot: _Slot, h_start: int | None) -> TaskResult:
        task = slot.task
        assert task is not None
        result = TaskResult(
            task,
            fill_not_run(task, slot.attempts),
            list(slot.setups),
            h_start,
            slot.index,
            cpu=slot.cpu,
        )
        slot.task = None
        slot.deadline = None
        self._outstanding -= 1
        return result

    def _lost(self, slot: _Slot) -> TaskResult:
        """The worker died or was killed mid-task: record the pass it was in."""
        task = slot.task
        assert task is not None and slot.process is not None
        try:
            code = slot.process.wait(5.0)
        except subprocess.TimeoutExpired:  # closed its socket but lives on
            self._kill(slot)
            code = slot.process.returncode
        if slot.killed_for_deadline:
            outcome = "timeout"
            if slot.phase == "setup":
                message = (
                    f"set-up did not finish within {slot.budget:g} s; worker killed"
                )
            else:
                message = (
                    f"exceeded the {task.timeout:g} s time limit; the solver ignored "
                    "the in-process alarm and its worker was killed"
                )
        else:
            outcome = "error"
            if code is None:
                how = "vanished"
            elif code < 0:
                how = f"was killed by {_signal_name(-code)}"
                if -code == signal.SIGKILL:
                    how += " (out of memory? the kernel's OOM killer sends SIGKILL)"
            else:
                how = f"exited with code {code}"
            where = {"setup": "during set-up", "pass": "during the solve"}.get(
                slot.phase, "before the task started"
            )
            message = f"worker crashed {where}: it {how}"
            if self._log_path:
                message += f"; see {os.path.basename(self._log_path)}"
        done = {(a.measure, a.repeat) for a in slot.attempts}
        current = slot.current or next(
            (p for p in task.passes if (p.measure, p.repeat) not in done),
            task.passes[0],
        )
        slot.attempts.append(
            Attempt(current.measure, current.repeat, outcome, message=message)
        )
        self._close(slot)
        return self._finish(slot, None)

    def _kill(self, slot: _Slot) -> None:
        process = slot.process
        if process is not None and process.poll() is None:
            from harness.measure.external import kill_program_groups

            kill_program_groups(process.pid)  # external programs: own sessions
            process.kill()
            try:
                process.wait(5.0)
            except subprocess.TimeoutExpired:
                pass  # unkillable (D state); the OS reaps it later

    def _close(self, slot: _Slot) -> None:
        if slot.conn is not None:
            try:
                slot.conn.close()
            except OSError:
                pass
        if slot.process is not None and slot.process.poll() is None:
            self._kill(slot)
        slot.process, slot.conn = None, None
        slot.prepared = set()


def _open_log(path: str):
    """The workers' log for appending, never through a symlink (then: none)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.fdopen(os.open(path, flags, 0o666), "ab")
    except OSError:
        return subprocess.DEVNULL


def _start(launch: Launch):
    """``jobs`` >= 1: a pool of worker processes, worker i pinned to core i when the
    plan pins; 0: the inline executor (this process, no isolation)."""
    if launch.jobs == 0:
        return executor_kind("inline").start(launch)
    jobs = core_count() if launch.jobs is None else launch.jobs
    log = None if launch.run_dir is None else str(Path(launch.run_dir) / "workers.log")
    return LocalPool(jobs, log_path=log, pin=launch.pin)


register_executor(ExecutorKind("local", "worker processes here (--jobs 0: inline)",
                               _start))  # fmt: skip
