"""The counting phase, the parent side: before the timed cells run, one counting
process per config (:mod:`harness.measure.instructions.child`, under callgrind)
counts every cell of it; ``--jobs`` of them at once. External programs are counted
here directly (:mod:`harness.measure.instructions.external`).

Why a separate phase and not the measuring workers started under valgrind: a
worker runs the timed passes too, and no time is ever taken under valgrind; and
the runner hands a worker one instance with every config (the interleaved order),
so a valgrind worker per config would start (~5-10 s under valgrind) once per
cell. Here each config starts once, cells in a row.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.measure.instructions.live import Live
from harness.measure.instructions.model import (
    COMPILED_OK,
    COUNT_TIMEOUT_FACTOR,
    MAX_RESTARTS,
    Count,
)
from harness.measure.instructions.shim import valgrind_command
from harness.measure.tasks import Task

#: Set-up under valgrind (uninstrumented) may take this many times the set-up
#: time limit: valgrind runs uninstrumented code ~3-5x slower.
SETUP_FACTOR = 5.0
#: Beyond a count's own limit (the child's alarm), before the child is killed:
#: a compiled kernel never returns to Python to see its alarm.
GRACE_SECONDS = 30.0


def count_for_run(
    plan: Any, tasks, by_task, jobs: int, progress, *, on_workers: bool = False
) -> dict[int, Count]:
    """The counts of a run's cells with timed passes still to run, by task id
    (``by_task``: task id -> its plan cell); {} when the plan counts none.
    ``progress`` (the runner's) hears the phase begin and each cell counted.

    Always on this machine, ``on_workers`` (a cluster measures the cells) or
    not, and said so then: a count holds for one kind of CPU (numba compiles
    for the host, the C library picks routines by CPU), so counts made on a
    cluster's mixed hosts could not be compared within the run, let alone with
    another; and valgrind and a compiler need to be on one machine only."""
    if not plan.instructions:
        return {}
    todo = [
        (t, by_task[t.id].config.spec.external)
        for t in tasks
        if any(p.measure == "time" for p in t.passes)
    ]
    if not todo:
        return {}
    jobs = max(1, min(jobs, os.cpu_count() or 1))
    configs = len({(t.plugins, t.config) for t, _ in todo})
    progress.counting_began(
        len(todo),
        f"counting instructions under callgrind: {len(todo)} cells of {configs} "
        f"configs, {jobs} at a time (each config's set-up runs under valgrind)"
        + (
            "; on this machine, not the cluster's workers (a count holds for "
            "one kind of CPU)"
            if on_workers
            else ""
        ),
    )
    done = [0]
    lock = threading.Lock()

    def tick() -> None:
        with lock:
            done[0] += 1
            progress.counted(done[0], None)

    return count_tasks(todo, jobs, lambda line: progress.counted(done[0], line), tick)


def count_tasks(
    tasks: Sequence[tuple[Task, Any]],
    jobs: int,
    say: Callable[[str], None] = lambda line: None,
    tick: Callable[[], None] = lambda: None,
) -> dict[int, Count]:
    """Each task's :class:`Count` by task id. ``tasks``: (task, the external
    program or None); tasks of one config are counted by one process, in order
    (it sets up once per size and goal). ``say`` hears a line per config done,
    ``tick`` each cell counted (or lost).

    On Ctrl-C (or any exception here) no counting process starts any more, those
    running are killed, and the exception goes on once every thread has seen
    its process die: seconds, not the minutes the counts running would take."""
    groups: dict[tuple, list[tuple[Task, Any]]] = {}
    for task, program in tasks:
        groups.setdefault((task.plugins, task.config), []).append((task, program))
    counts: dict[int, Count] = {}
    total = len(groups)
    finished = [0]
    live = Live()

    def one(group: list[tuple[Task, Any]]) -> None:
        if live.stopping:
            return
        began = time.monotonic()
        task, program = group[0]
        if program is not None:
            from harness.measure.instructions.external import count_program

            got = count_program(program, [t for t, _ in group], live, tick)
        else:
            got = _count_in_child([t for t, _ in group], live, tick)
        if live.stopping:
            return  # (its cells were lost to the stop, not counted)
        counts.update(got)
        finished[0] += 1
        counted = sum(c.instructions is not None for c in got.values())
        say(
            f"instructions: {task.config.label}: {counted} of {len(group)} cells "
            f"counted in {time.monotonic() - began:.1f} s ({finished[0]}/{total})"
        )

    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="count")
    try:
        for f in [pool.submit(one, g) for g in groups.values()]:
            f.result()
    except BaseException:
        live.stop()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()
    return counts


def child_command(out_file: Path, write_fd: int) -> list[str]:
    """The counting process's command line: the child module under callgrind,
    writing its messages to ``write_fd`` and its counts to ``out_file``."""
    return [
        *valgrind_command(out_file), sys.executable, "-m",
        "harness.measure.instructions.child", str(write_fd), str(out_file),
    ]  # fmt: skip


def _count_in_child(
    tasks: list[Task], live: Live, tick: Callable[[], None]
) -> dict[int, Count]:
    """Count ``tasks`` (one set-up) in counting processes: a process that dies or
    overruns loses its current cell (a Count saying so), the next takes the rest;
    none starts once ``live`` is stopping."""
    counts: dict[int, Count] = {}
    left = list(tasks)
    restarts = 0
    while left and not live.stopping:
        answered, again = _one_child(
            left, counts, live, tick, compiled_ok=restarts >= MAX_RESTARTS
        )
        if again:  # it compiled kernels: a fresh process counts on the cached ones
            restarts += 1
            left = [t for t in left if t.id not in counts]
            continue
        lost = [t for t in left if t.id not in counts]
        if answered == 0 and lost:  # it never got going: the same for every cell
            why = counts.get(left[0].id) or Count(left[0].id, "error")
            for t in lost:
                counts[t.id] = Count(t.id, why.outcome, message=why.message)
                tick()
        left = [t for t in left if t.id not in counts]
    return counts


def _one_child(
    tasks: list[Task],
    counts: dict[int, Count],
    live: Live,
    tick: Callable[[], None],
    *,
    compiled_ok: bool = False,
) -> tuple[int, bool]:
    """One counting process over ``tasks``, in order, until it dies or overruns
    (that cell gets a Count saying so), or asks to be started again (it compiled
    kernels); (how many cells it answered for, whether it asked)."""
    with tempfile.TemporaryDirectory(prefix="npuzzle-callgrind-") as folder:
        out_file = Path(folder) / "callgrind.out"
        read_fd, write_fd = os.pipe()
        log = open(Path(folder) / "child.log", "w+b")
        # str hashing is randomized per process: dict and set probes, and with
        # them the instructions, would differ from one counting process to the
        # next (two runs of 8-mini: up to 3.9% on a cell, 1% on a config)
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        if compiled_ok:
            env[COMPILED_OK] = "1"
        child = subprocess.Popen(
            child_command(out_file, write_fd), stdin=subprocess.PIPE, stdout=log,
            stderr=log, env=env, pass_fds=(write_fd,), cwd=folder,
            start_new_session=True,  # (a terminal's Ctrl-C: Live.stop kills it)
        )  # fmt: skip
        os.close(write_fd)
        try:
            with live.running(child):
                return _read_counts(child, tasks, counts, _Reader(read_fd), log, tick)
        finally:
            if child.poll() is None:
                try:
                    os.killpg(child.pid, 9)
                except ProcessLookupError:
                    pass
            child.wait()
            os.close(read_fd)
            log.close()


def _read_counts(child, tasks, counts, reader, log, tick) -> tuple[int, bool]:
    """Hand ``tasks`` to ``child`` and read its counts into ``counts`` until it
    has answered for all, dies, overruns or asks to be started again; (how many
    it answered for, whether it asked)."""
    assert child.stdin is not None
    try:
        child.stdin.write(pickle.dumps(list(tasks)))
        child.stdin.close()
    except BrokenPipeError:
        pass  # died at once (or was killed): said below as for any death
    pending = list(tasks)
    answered = 0
    deadline = _setup_deadline(pending[0])
    while pending:
        message = reader.next(deadline)
        if message is None:  # died or overran: its current cell is lost
            try:
                child.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                pass
            alive = child.poll() is None
            counts[pending[0].id] = Count(
                pending[0].id,
                "timeout" if alive else "error",
                message="instructions not counted: the counting process "
                + ("overran its limit" if alive else f"died: {_tail(log)}"),
            )
            tick()
            return answered, False
        if isinstance(message, tuple) and message[0] == "restart":
            return answered, True
        if isinstance(message, tuple):  # ("counting", id): the count began
            deadline = time.monotonic() + pending[0].timeout * (
                COUNT_TIMEOUT_FACTOR) + GRACE_SECONDS
            continue
        counts[message.task] = message
        tick()
        answered += 1
        pending = [t for t in pending if t.id != message.task]
        if pending:
            deadline = _setup_deadline(pending[0])
    return answered, False


def _setup_deadline(task: Task) -> float:
    return time.monotonic() + task.setup_timeout * SETUP_FACTOR + GRACE_SECONDS


def _tail(log: Any) -> str:
    log.seek(0)
    lines = log.read().decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:200] if lines else "no output"


class _Reader:
    """Length-prefixed pickles from the child's pipe, each within a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""

    def _fill(self, size: int, deadline: float) -> bool:
        while len(self.buf) < size:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([self.fd], [], [], wait)[0]:
                return False
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return False
            self.buf += chunk
        return True

    def next(self, deadline: float) -> Any:
        if not self._fill(8, deadline):
            return None
        (size,) = struct.unpack("<Q", self.buf[:8])
        if not self._fill(8 + size, deadline):
            return None
        data, self.buf = self.buf[8 : 8 + size], self.buf[8 + size :]
        return pickle.loads(data)
