"""The counting process: started under callgrind (:func:`shim.valgrind_command`) with
instrumentation off, it sets one config up (plugins, heuristic tables, kernels: at
valgrind's uninstrumented speed, nothing counted), then for each of its cells makes
an uncounted warm solve and counts a loop of solves of the board
(:func:`count_cell`). Nothing here reads a clock for a figure: no time is ever
taken under valgrind.

Talks to :mod:`harness.measure.instructions.phase` over two pipes: it reads one
pickled list of tasks from stdin and writes a pickled message per step to the
file descriptor given on its command line; its stdout goes to stderr (a plugin
that prints must not break the protocol). Standard library and the harness core
only.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import struct
import sys
import traceback
from pathlib import Path
from typing import Any

from harness.measure.instructions.model import (
    COMPILED_OK,
    COUNT_TIMEOUT_FACTOR,
    LOOP_TARGET,
    MAX_LOOPS,
    Count,
)
from harness.measure.tasks import MAX_MOVES_CHARS, Task


class _Timeout(BaseException):
    """The count's alarm (a BaseException: a solver's ``except Exception`` must
    not swallow it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Timeout()


def _moves(moves: Any) -> tuple[str | None, str]:
    if isinstance(moves, str) and len(moves) > MAX_MOVES_CHARS:
        return moves[:200], "str"
    return (moves if isinstance(moves, str | None) else repr(moves)[:200]), type(
        moves
    ).__name__


def _counters(counters: Any) -> dict[str, int]:
    return {k: int(v) for k, v in counters.as_dict().items()}


def count_cell(counter: Any, task: Task, config: Any, h: Any, g: Any) -> Count:
    """One counted solve; when it is short (under LOOP_TARGET), then a counted
    loop of ``ceil(LOOP_TARGET / first)`` solves, at most MAX_LOOPS, and the
    figure is the loop's count divided by its solves (the first solve was its
    warm solve: one-time costs, lazy tables, divide away). A long solve is its own
    figure: no warm solve, which would double the count's cost (instrumented, a
    solve runs 20-100x slower) for a first-call cost under 0.5% of it. The
    loop's length depends on a count only, never on a clock, so two runs count
    the same loop."""
    from harness.solver import Counters

    def solve() -> tuple[Any, Any]:
        c = Counters()
        moves = config.solve(task.start, task.goal, g, counters=c, heuristic=h)
        return moves, c

    limit = max(task.timeout * COUNT_TIMEOUT_FACTOR, 1.0)
    gc.collect()
    if not task.gc:
        gc.disable()  # as in the timed passes: a collection is not the solve's
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        counter.begin()
        moves, counters = solve()
        first = counter.end()
        loops, total = 1, first
        if 0 < first < LOOP_TARGET:
            loops = min(MAX_LOOPS, -(-LOOP_TARGET // first))
            answers: list[tuple[Any, Any]] = []
            keep = answers.append
            counter.begin()
            for _ in range(loops):
                keep(solve())
            total = counter.end()
            want = (moves, _counters(counters))
            check = next((a for a in answers if (a[0], _counters(a[1])) != want), None)
        else:
            check = None
    except _Timeout:
        return Count(
            task.id,
            "timeout",
            message=f"instructions not counted: over {limit:g} s under callgrind "
            f"({COUNT_TIMEOUT_FACTOR:g}x the time limit)",
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        gc.enable()
    text, kind = _moves(moves)
    out = Count(
        task.id,
        "returned",
        instructions=round(total / loops),
        loops=loops,
        counters=_counters(counters),
        moves=text,
        moves_type=kind,
    )
    if check is not None:
        out.check_moves = _moves(check[0])[0]
        out.check_counters = _counters(check[1])
    return out


def main(fd: int, out_file: str) -> None:
    from harness.measure.instructions.shim import Counter
    from harness.measure.worker import Worker

    channel = os.fdopen(fd, "wb", buffering=0)
    os.dup2(2, 1)  # the protocol has its own pipe; prints go to the log
    signal.signal(signal.SIGALRM, _on_alarm)

    def send(message: Any) -> None:
        data = pickle.dumps(message)
        channel.write(struct.pack("<Q", len(data)) + data)

    tasks: list[Task] = pickle.load(sys.stdin.buffer)
    counter = None
    worker = Worker()
    prepared: dict[tuple, Any] = {}
    compiled_ok = os.environ.get(COMPILED_OK) == "1"
    for task in tasks:
        try:
            if task.setup_key not in prepared:
                prepared[task.setup_key] = worker._setup(task)[1]
            config, h, g = prepared[task.setup_key]
        except BaseException as err:  # a broken set-up: no count for its cells
            traceback.print_exc()
            send(Count(task.id, "error", message=f"instructions not counted: set-up "
                       f"failed under callgrind: {type(err).__name__}: {err}"))
            continue
        if not compiled_ok and _compiled_here():
            send(("restart", task.id))  # the kernels are in numba's cache now
            return
        send(("counting", task.id))
        try:
            if counter is None:  # after the set-up: instrumented from here on
                counter = Counter(Path(out_file))
            result = count_cell(counter, task, config, h, g)
        except Exception as err:
            traceback.print_exc()
            result = Count(task.id, "error", message=f"instructions not counted: "
                           f"{type(err).__name__}: {err}")
        if not compiled_ok and _compiled_here():  # (a kernel compiled on first call)
            send(("restart", task.id))
            return
        send(result)


def _compiled_here() -> int:
    """Kernels this process compiled rather than loaded from numba's cache (0
    when it imported none). A count on a kernel compiled in the counting process
    differs from one on the same kernel loaded from the cache (measured: 2.4% on
    ``astar_cantor_jit[manhattan]``, and a run 1.0% from the next on 8-mini), so
    the count is made by a fresh process, which loads what this one cached."""
    base = sys.modules.get("harness.kernels.base")
    return base.compiled_here() if base is not None else 0


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
