"""External programs' instructions: the program runs under callgrind from its
first instruction (``--trace-children=yes``: a shell wrapper's children too), once
on the board and once on the goal board, and the count is the difference: what
the search cost, without the start-up, reading and printing every board pays (as
its time is, :mod:`harness.measure.external.passes`). A batch program gets
:data:`BATCH_LINES` lines of the board, then as many of the goal board; the
figure is per line.

Standard library and the harness core only.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.measure.external.process import parse_answer
from harness.measure.external.programs import ExternalError
from harness.measure.instructions.live import Live, kill_group
from harness.measure.instructions.model import COUNT_TIMEOUT_FACTOR, Count
from harness.measure.instructions.shim import read_totals
from harness.measure.tasks import Task
from harness.puzzle import Board, format_board

#: Lines of one board a batch program is given per count (the figure is per line).
BATCH_LINES = 5


def count_program(
    program: Any, tasks: list[Task], live: Live, tick: Callable[[], None]
) -> dict[int, Count]:
    """Each task's count for one external program (its goal boards counted
    once); ``tick`` after each; none started once ``live`` is stopping."""
    counts: dict[int, Count] = {}
    lines = BATCH_LINES if program.batch else 1
    goal_cost: dict[Board, int] = {}
    for task in tasks:
        if live.stopping:
            break
        limit = max(task.timeout * COUNT_TIMEOUT_FACTOR, 10.0)
        try:
            if task.goal not in goal_cost:
                goal_cost[task.goal] = _run(program, task.goal, lines, limit, live)[0]
            total, answer = _run(program, task.start, lines, limit, live)
        except ExternalError as err:
            counts[task.id] = Count(
                task.id, err.outcome, message=f"instructions not counted: {err}"
            )
            tick()
            continue
        counts[task.id] = Count(
            task.id,
            "returned",
            instructions=max(0, round((total - goal_cost[task.goal]) / lines)),
            loops=lines,
            counters={},  # programs report none: their answers are still compared
            moves=answer,
            moves_type=type(answer).__name__,
        )
        tick()
    return counts


def _run(
    program: Any, board: Board, lines: int, limit: float, live: Live
) -> tuple[int, Any]:
    """(instructions of the whole process, its first answer) for ``lines`` lines
    of ``board``; ExternalError when the program fails or overruns."""
    text = (format_board(board) + "\n") * lines
    with tempfile.TemporaryDirectory(prefix="npuzzle-callgrind-") as folder:
        out = Path(folder) / "callgrind.out.%p"
        command = [
            "valgrind", "--tool=callgrind", "--trace-children=yes", "--quiet",
            f"--callgrind-out-file={out}", *program.command,
        ]  # fmt: skip
        child = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        with live.running(child):
            try:
                stdout, stderr = child.communicate(text.encode(), timeout=limit)
            except subprocess.TimeoutExpired:
                raise ExternalError(
                    f"over {limit:g} s under callgrind", outcome="timeout"
                ) from None
            finally:  # (and what a traced program started)
                kill_group(child)
                child.wait()
        if child.returncode != 0:
            tail = stderr.decode("utf-8", "replace").strip().splitlines()
            raise ExternalError(
                f"exited with status {child.returncode} under callgrind"
                + (f": {tail[-1][:120]}" if tail else "")
            )
        dumps = sorted(Path(folder).glob("callgrind.out.*"))
        if not dumps:
            raise ExternalError("callgrind wrote no counts")
        total = sum(read_totals(d) for d in dumps)
    answers = stdout.decode("utf-8", "replace").strip().splitlines()
    return total, parse_answer(answers[0] if answers else "")
