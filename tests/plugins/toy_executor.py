"""A toy executor, declared the way every executor is (one module, one
:class:`~harness.measure.executors.registry.ExecutorKind`): ``toy`` measures the
cells in this process, one at a time, as ``inline`` does, and counts them. It
proves the registry's promise: loaded with ``--plugin``, ``--executor toy`` runs
a whole run on it, with no edit anywhere else."""

from __future__ import annotations

from typing import Any

from harness.measure.executors.inline import InlineExecutor
from harness.measure.executors.registry import (
    ExecutorKind,
    Launch,
    register_executor,
)


class ToyExecutor(InlineExecutor):
    """Inline, counting the tasks it was handed (meta.json's ``executors``)."""

    def __init__(self) -> None:
        super().__init__()
        self.tasks = 0

    def submit(self, task) -> None:
        self.tasks += 1
        super().submit(task)

    def describe(self) -> dict[str, Any]:
        return {"kind": "toy", "slots": 0, "tasks": self.tasks}


def _start(launch: Launch) -> ToyExecutor:
    return ToyExecutor()


register_executor(ExecutorKind("toy", "the tests' toy executor", _start,
                               fixed_jobs=0))  # fmt: skip
