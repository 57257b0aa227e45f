"""A batch lost with its Dask worker: whether it had started (the event it logs
as it starts), queued again or its cells recorded as errors, and the meta.json
``lost_batches`` entry that says which worker died under which cells.

:class:`BatchLosses` is a base class of
:class:`~harness.measure.executors.dask.client.DaskExecutor`: it reads and sets
the executor's state named below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.measure.executors.base import fill_not_run
from harness.measure.executors.dask.payloads import Batch
from harness.measure.tasks import Attempt, Task, TaskResult, TaskStarted

#: A batch lost with its Dask worker is queued again this many times, then its
#: cells are recorded as errors.
LOST_BATCH_RETRIES = 1
#: A lost batch that had not started (it only waited on the worker that died) is
#: queued again without counting against LOST_BATCH_RETRIES, at most this often.
UNSTARTED_REQUEUES = 3


class BatchLosses:
    """The executor's side of a lost Dask worker (see the module doc)."""

    _client: Any
    topic: str
    _subscribed: bool
    _started_ids: set[int]
    #: batch id -> times it was queued again without having started
    _unstarted: dict[int, int]
    _next_batch: int
    _by_id: dict[int, Task]
    workers: dict[str, dict[str, Any]]
    lost_batches: list[dict[str, Any]]
    _submit: Callable[..., Any]  # the executor's: queues a batch on the cluster

    def _known_workers(self) -> dict[str, dict[str, Any]]:
        """Workers seen so far, and the scheduler's word on those that joined
        since (a nanny's replacement for a worker that died)."""
        known = dict(self.workers)
        try:
            now = self._client.scheduler_info(n_workers=-1)["workers"]
        except Exception:
            return known
        for address, w in now.items():
            known.setdefault(address, {"host": w.get("host"), "name": w.get("name")})
        return known

    def _heard_start(self, event: tuple[float, Any]) -> None:
        """A batch's start event, pushed by the scheduler (client's event loop)."""
        self._started_ids.add(event[1])

    def _started(self, batch: Batch) -> bool | None:
        """Whether the batch started on its worker (its logged event); None: unknown.
        A batch's cells run only once the scheduler has its start event, which it
        pushes to this client at once: before it can report the task lost (both
        travel the client's stream, in order). The scheduler's own log of the topic
        (its last ``distributed.admin.low-level-log-length`` events, 1000) covers a
        push missed across a reconnect."""
        if batch.id in self._started_ids:
            return True
        try:
            events = self._client.get_events(self.topic)
        except Exception:
            return False if self._subscribed else None
        self._started_ids.update(msg for _, msg in events)
        return batch.id in self._started_ids

    def _lost(
        self, batch: Batch, losses: int, err: BaseException, completed, sources,
        priority: int = 0,
    ):  # fmt: skip
        reason = f"{type(err).__name__}: {err}".strip()
        started = self._started(batch)
        free = self._unstarted.pop(batch.id, 0)
        waited = started is False and free < UNSTARTED_REQUEUES
        counted = losses if waited else losses + 1
        retried = waited or losses < LOST_BATCH_RETRIES
        attempt = losses + free + 1  # this batch's cells were lost this often
        entry = lost_entry(batch, err, self._known_workers(), attempt, retried, reason)
        entry["started"] = started
        if waited:
            entry["outcome"] = (
                "queued again (it had not started: it only waited on the worker)"
            )
        self.lost_batches.append(entry)
        if retried:
            completed.add(self._submit(batch.tasks, sources, counted, priority))
            self._unstarted[self._next_batch - 1] = free + waited
            return
        for task in batch.tasks:
            self._by_id.pop(task.id, None)
            p = task.passes[0]
            message = (
                f"the Dask task running this cell failed {attempt} times "
                f"(its Dask worker died or was lost): {reason[:200]}"
            )
            yield TaskStarted(task, 0)
            yield TaskResult(
                task,
                fill_not_run(
                    task, [Attempt(p.measure, p.repeat, "error", message=message)]
                ),
                [],
                None,
            )


def lost_entry(
    batch: Batch,
    err: BaseException,
    workers: dict[str, dict[str, Any]],
    attempt: int,
    retried: bool,
    reason: str,
) -> dict[str, Any]:
    """meta.json ``lost_batches`` entry: which worker died under which cells, what
    Dask said, and whether the cells were queued again or recorded as errors."""
    last = getattr(err, "last_worker", None)  # KilledWorker names the last one
    address = getattr(last, "address", None) or (last if isinstance(last, str) else "")
    info = workers.get(address, {}) if address else {}
    return {
        "batch": batch.id,
        "worker": address or "unknown (Dask did not say)",
        "worker_name": info.get("name"),
        "host": info.get("host"),
        "cells": [[t.config.label, t.dataset, t.instance] for t in batch.tasks],
        "attempt": attempt,
        "error": reason[:300],
        "retried": retried,
        "outcome": "queued again" if retried else "cells recorded as error",
    }
