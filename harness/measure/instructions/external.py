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
from pathlib import Path
from typing import Any

from harness.measure.external.process import parse_answer
from harness.measure.external.programs import ExternalError
from harness.measure.instructions.model import COUNT_TIMEOUT_FACTOR, Count
from harness.measure.instructions.shim import read_totals
from harness.measure.tasks import Task
from harness.puzzle import Board, format_board

#: Lines of one board a batch program is given per count (the figure is per line).
BATCH_LINES = 5


def count_program(program: Any, tasks: list[Task]) -> dict[int, Count]:
    """Each task's count for one external program (its goal boards counted once)."""
    counts: dict[int, Count] = {}
    lines = BATCH_LINES if program.batch else 1
    goal_cost: dict[Board, int] = {}
    for task in tasks:
        limit = max(task.timeout * COUNT_TIMEOUT_FACTOR, 10.0)
        try:
            if task.goal not in goal_cost:
                goal_cost[task.goal] = _run(program, task.goal, lines, limit)[0]
            total, answer = _run(program, task.start, lines, limit)
        except ExternalError as err:
            counts[task.id] = Count(
                task.id, err.outcome, message=f"instructions not counted: {err}"
            )
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
    return counts


def _run(program: Any, board: Board, lines: int, limit: float) -> tuple[int, Any]:
    """(instructions of the whole process, its first answer) for ``lines`` lines
    of ``board``; ExternalError when the program fails or overruns."""
    text = (format_board(board) + "\n") * lines
    with tempfile.TemporaryDirectory(prefix="npuzzle-callgrind-") as folder:
        out = Path(folder) / "callgrind.out.%p"
        command = [
            "valgrind", "--tool=callgrind", "--trace-children=yes", "--quiet",
            f"--callgrind-out-file={out}", *program.command,
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command, input=text.encode(), capture_output=True, timeout=limit,
                start_new_session=True,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise ExternalError(
                f"over {limit:g} s under callgrind", outcome="timeout"
            ) from None
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ExternalError(
                f"exited with status {done.returncode} under callgrind"
                + (f": {tail[-1][:120]}" if tail else "")
            )
        dumps = sorted(Path(folder).glob("callgrind.out.*"))
        if not dumps:
            raise ExternalError("callgrind wrote no counts")
        total = sum(read_totals(d) for d in dumps)
    answers = done.stdout.decode("utf-8", "replace").strip().splitlines()
    return total, parse_answer(answers[0] if answers else "")
