"""The inline executor: tasks run in this process, one at a time (``--jobs 0``)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Any

from harness.measure.executors.base import fill_not_run
from harness.measure.executors.registry import (
    ExecutorKind,
    Launch,
    register_executor,
)
from harness.measure.tasks import Event, Task, TaskStarted
from harness.measure.worker import Worker


class InlineExecutor:
    """Runs tasks in this process, one at a time, with no isolation: for debugging a
    solver under a debugger (``--jobs 0``). A hang or crash takes the run down."""

    jobs = 0

    def __init__(self) -> None:
        self._queue: deque[Task] = deque()
        self._worker = Worker(0)
        self.workers: dict[str, dict[str, Any]] = {}
        self.lost_batches: list[dict[str, Any]] = []

    def submit(self, task: Task) -> None:
        self._queue.append(task)

    def prioritize(
        self,
        priority: Callable[[Task], float],
        key: Callable[[Task], Hashable] | None = None,
        token: Callable[[], Hashable | None] | None = None,
    ) -> None:
        """One task at a time, in submission order: nothing to reorder."""

    def set_run_dir(self, run_dir: Path) -> None:
        """No worker, no log: nothing to do."""

    def set_pin(self, pin: bool) -> None:
        """This process stays where it is: nothing to do."""

    def describe(self) -> dict[str, Any]:
        return {"kind": "inline", "slots": 0}

    def warnings(self) -> list[str]:
        return []

    def notes(self) -> list[str]:
        return []

    def events(self) -> Iterator[Event]:
        while self._queue:
            task = self._queue.popleft()
            yield TaskStarted(task, 0)
            result = self._worker.run(task)
            result.attempts = fill_not_run(task, result.attempts)
            yield result

    def shutdown(self, *, cancel: bool = False) -> None:
        self._queue.clear()


def _start(launch: Launch) -> InlineExecutor:
    return InlineExecutor()


register_executor(ExecutorKind(
    "inline", "this process, one cell at a time, for a debugger (--jobs 0)", _start,
    fixed_jobs=0,
))  # fmt: skip
