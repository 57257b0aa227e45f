"""What every executor is: the :class:`Executor` protocol the runner drives, the
:class:`ExecutorError` it raises when it cannot go on, and :func:`fill_not_run`,
which every executor applies to a finished task.

A :class:`~harness.measure.tasks.Task` is one solver config on one instance with
the passes still to do (the timed repeats, then the memory pass). An executor takes
tasks and yields :class:`~harness.measure.tasks.TaskStarted` /
:class:`~harness.measure.tasks.TaskResult` events as they happen; the runner turns
results into rows and owns validation, so another engine only has to implement the
protocol and run :class:`~harness.measure.worker.Worker` in its workers: solvers
and results do not change. The three: :mod:`.local` (worker processes on this
machine), :mod:`.inline` (this process, for debugging) and :mod:`.dask` (a Dask
cluster).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Any, Protocol

from harness.measure.tasks import Attempt, Event, Task


class ExecutorError(Exception):
    """An executor cannot go on (e.g. a cluster whose workers run other code): one
    line for the user; the rows stored so far stay, the run can be resumed."""


class Executor(Protocol):
    """Runs tasks somewhere and reports them back as they finish, in any order.
    Everything the runner asks of an executor is declared here; an executor with
    nothing to say to a call (a local pool has no lost batches) still answers it."""

    #: measuring slots (0: inline, in the caller's process)
    jobs: int
    #: worker id -> what is known of the worker (host, CPU model, address) for
    #: meta.json placement; empty when results carry no worker id (local pools)
    workers: dict[str, dict[str, Any]]
    #: batches lost with their worker so far (meta.json ``lost_batches``)
    lost_batches: list[dict[str, Any]]

    def submit(self, task: Task) -> None:
        """Queue a task; it runs when a worker is free."""

    def events(self) -> Iterator[Event]:
        """Yield events until every submitted task has produced its TaskResult."""

    def shutdown(self, *, cancel: bool = False) -> None:
        """Stop the workers; ``cancel`` kills them at once, dropping queued tasks."""

    def prioritize(
        self,
        priority: Callable[[Task], float],
        key: Callable[[Task], Hashable] | None = None,
        token: Callable[[], Hashable | None] | None = None,
    ) -> None:
        """From now on, hand out the pending task with the highest ``priority``;
        ``key``: tasks with equal keys have equal priority (ask once per key);
        ``token``: while it is the same, the last answers hold."""

    def set_run_dir(self, run_dir: Path) -> None:
        """The run directory, once it exists (where worker logs go)."""

    def set_pin(self, pin: bool) -> None:
        """Whether to pin measuring processes to cores (the plan decides)."""

    def describe(self) -> dict[str, Any]:
        """meta.json ``executors`` entry: kind, slots and what else is known."""

    def warnings(self) -> list[str]:
        """What the user should know about where the cells run (one line each)."""

    def notes(self) -> list[str]:
        """meta.json warnings learnt while the cells ran (one line each)."""


def fill_not_run(task: Task, attempts: list[Attempt]) -> list[Attempt]:
    """Attempts for every pass of ``task``: the ones made, then the rest, not tried,
    carrying the outcome of the failure that stopped the task."""
    done = {(a.measure, a.repeat) for a in attempts}
    failure = next((a for a in attempts if a.outcome != "returned"), None)
    stopped = any(a.stop for a in attempts)  # adaptive stop: repeats left out
    out = list(attempts)
    for p in task.passes:
        if (p.measure, p.repeat) in done or (stopped and p.measure == "time"):
            continue
        if failure is None:  # cannot happen with a well-behaved worker
            out.append(
                Attempt(p.measure, p.repeat, "error", message="pass result lost")
            )
            continue
        out.append(
            Attempt(
                p.measure,
                p.repeat,
                failure.outcome,
                message=f"not run after {failure.outcome} in {failure.measure} pass "
                f"{failure.repeat}"
                + (f": {failure.message}" if failure.message else ""),
            )
        )
    return out
