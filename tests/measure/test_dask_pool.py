"""How the Dask executor cuts the grid into tasks, which cores and environment its
measuring processes get (no cluster needed: the pure parts of
``harness.measure.executors.dask``)."""

from __future__ import annotations

import dataclasses
import os
from types import SimpleNamespace

from harness.configs import ConfigKey
from harness.measure.executors import dask as dask_pool
from harness.measure.executors.local import LocalPool
from harness.measure.tasks import Pass, Task


def _task(i: int, config: str, block: int | None) -> Task:
    return Task(
        id=i, config=config, plugins=(), rows=3, cols=3, start=tuple(range(9)),
        goal=tuple(range(9)), passes=(Pass("time", 0),), timeout=1.0,
        memory_limit_mb=None, dataset="d", instance=f"i{block}", block=block,
    )  # fmt: skip


def _interleaved(instances: int, configs: int) -> list[Task]:
    return [
        _task(b * configs + c, f"c{(b + c) % configs}", b)
        for b in range(instances)
        for c in range(configs)
    ]


def test_an_instance_block_is_one_batch_in_its_order_costliest_first():
    tasks = _interleaved(instances=6, configs=4)
    cost = {t.id: float(t.block) for t in tasks}  # block 5 is the costliest
    batches = dask_pool.plan_batches(tasks, 64, slots=2, priority=lambda t: cost[t.id])
    assert [[t.id for t in b] for b in batches] == [
        [t.id for t in tasks if t.block == block] for block in (5, 4, 3, 2, 1, 0)
    ]


def test_tiny_blocks_are_packed_whole_into_fewer_batches():
    tasks = _interleaved(instances=200, configs=1)
    batches = dask_pool.plan_batches(tasks, 64, slots=2)
    assert len(batches) <= 2 * dask_pool.BLOCK_BATCHES_PER_SLOT
    assert sorted(t.id for b in batches for t in b) == [t.id for t in tasks]
    blocks = [{t.block for t in b} for b in batches]
    assert sum(len(b) for b in blocks) == 200  # no block in two batches


def test_cells_without_blocks_are_batched_by_set_up():
    tasks = [_task(i, f"c{i // 3}", None) for i in range(7)]
    batches = dask_pool.plan_batches(tasks, 2, slots=2)
    assert [[t.id for t in b] for b in batches] == [[0, 1], [2], [3, 4], [5], [6]]


def test_withdraw_hands_back_the_blocks_no_worker_has_begun():
    pool = LocalPool(1)
    tasks = _interleaved(instances=3, configs=2)
    for t in tasks:
        pool.submit(t)
    first = pool._next_for(pool._slots[0])  # the worker begins block 0
    assert first.block == 0
    back = pool.withdraw()
    assert [t.id for t in back] == [t.id for t in tasks if t.block in (1, 2)]
    assert pool._next_for(pool._slots[0]).id == 1  # block 0 goes on
    assert pool._next_for(pool._slots[0]) is None


def _worker(host, name, cores, nthreads=1, resources=None):
    return {"host": host, "name": name, "cores": cores, "nthreads": nthreads,
            "resources": resources or {}}  # fmt: skip


def test_workers_of_one_host_get_their_own_cores():
    workers = {
        "tcp://a:2": _worker("a", "10", [0, 1, 2, 3]),
        "tcp://a:1": _worker("a", "2", [0, 1, 2, 3], nthreads=2),
        "tcp://b:1": _worker("b", "x", [0, 1]),
        "tcp://b:2": _worker("b", "y", [0, 1]),
        "tcp://b:3": _worker("b", "z", [0, 1]),  # more slots than cores: shared
        "tcp://c:1": _worker("c", "0", []),  # affinity unknown: not pinned
    }
    assert dask_pool.core_plan(workers) == {
        "tcp://a:1": (0, 1),
        "tcp://a:2": (2,),
        "tcp://b:1": (0,),
        "tcp://b:2": (1,),
        "tcp://b:3": (0,),
    }
    with_resource = {"tcp://a:1": _worker("a", "0", [4, 5], 8, {"measure": 2})}
    assert dask_pool.core_plan(with_resource, by_resource=True) == {
        "tcp://a:1": (4, 5)
    }


def test_the_measuring_process_gets_the_clients_values_not_the_nannys(monkeypatch):
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as a nanny sets it
    monkeypatch.setenv("PYTHONHASHSEED", "6640")
    monkeypatch.setenv("NPUZZLE_SOMETHING", "kept")
    env = dask_pool.measuring_env({"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": None})
    assert "MALLOC_TRIM_THRESHOLD_" not in env and "OMP_NUM_THREADS" not in env
    assert env["PYTHONHASHSEED"] == "0"
    assert env["NPUZZLE_SOMETHING"] == "kept"


def test_the_client_environment_is_restored_after_a_nanny_changed_it(monkeypatch):
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    saved = dask_pool.client_environ()
    assert saved["MALLOC_TRIM_THRESHOLD_"] is None and saved["OMP_NUM_THREADS"] == "3"
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    dask_pool.restore_environ(saved)
    assert "MALLOC_TRIM_THRESHOLD_" not in os.environ
    assert os.environ["OMP_NUM_THREADS"] == "3"


class _Client:
    """What ``DaskExecutor._lost`` asks of a Dask client: the scheduler's log of the
    start events (the batch ids in ``started``) and a submit."""

    def __init__(self) -> None:
        self.started: set[int] = set()
        self.priorities: list[int] = []

    def get_events(self, topic: str):
        return tuple((0.0, i) for i in sorted(self.started))

    def submit(self, fn, batch, *, key, priority, **kw):
        self.priorities.append(priority)
        return SimpleNamespace(key=key)

    def scheduler_info(self, **kw):
        raise OSError("no scheduler here")


class _Lost(Exception):
    last_worker = "tcp://10.0.0.2:4001"  # as KilledWorker names it


def _executor() -> dask_pool.DaskExecutor:
    """A DaskExecutor around a fake client (no cluster)."""
    ex = object.__new__(dask_pool.DaskExecutor)
    ex.__dict__.update(
        _client=_Client(), topic="t", _started_ids=set(), _subscribed=True,
        _unstarted={}, _futures={}, _priorities={}, _next_batch=0, batches=0,
        _by_id={}, lost_batches=[], slice_seconds=2.0, log_path=None, programs=(),
        environ={}, cores={}, pin=False, resources=None,
        workers={"tcp://10.0.0.2:4001": {"host": "node2", "name": "w1"}},
    )  # fmt: skip
    return ex


def _lose(ex, completed, *, started: bool) -> list:
    """The last submitted batch is lost with its worker (as ``events`` sees it)."""
    future = completed[-1]
    _, batch, losses = ex._futures.pop(future.key)
    if started:
        ex._client.started.add(batch.id)
    priority = ex._priorities.pop(batch.id, 0)
    return list(ex._lost(batch, losses, _Lost("worker died"), completed, {}, priority))


def test_a_lost_batch_that_had_not_started_is_queued_again_without_counting():
    """A batch only waiting on a worker that died is queued again free (at most
    UNSTARTED_REQUEUES times), keeping its priority; one that ran gets
    LOST_BATCH_RETRIES more tries; lost_batches says which it was."""
    assert (dask_pool.UNSTARTED_REQUEUES, dask_pool.LOST_BATCH_RETRIES) == (3, 1)
    ex = _executor()
    task = dataclasses.replace(_task(0, "c", None), config=ConfigKey("good_bfs", None))
    ex._by_id[0] = task
    completed = Completed()
    completed.add(ex._submit([task], {}, priority=-7))
    events = [_lose(ex, completed, started=False) for _ in range(5)]
    entries = ex.lost_batches
    assert [e["started"] for e in entries] == [False] * 5
    assert [e["attempt"] for e in entries] == [1, 2, 3, 4, 5]
    assert [e["retried"] for e in entries] == [True, True, True, True, False]
    # the 4th loss is the one counted retry, the 5th records the cells as errors
    free = ["had not started" in e["outcome"] for e in entries]
    assert free == [True, True, True, False, False]
    assert events[:4] == [[]] * 4
    result = events[4][-1]
    assert result.attempts[0].outcome == "error"
    assert "failed 5 times (its Dask worker died" in result.attempts[0].message
    assert ex._client.priorities == [-7] * 5  # queued again at its place
    assert entries[0]["worker"] == "tcp://10.0.0.2:4001"
    assert entries[0]["host"] == "node2"

    # a batch that had started: one retry, then its cells are errors
    ex = _executor()
    ex._by_id[0] = task
    completed = Completed()
    completed.add(ex._submit([task], {}))
    assert _lose(ex, completed, started=True) == []
    assert _lose(ex, completed, started=True)[-1].attempts[0].outcome == "error"
    assert [(e["started"], e["retried"]) for e in ex.lost_batches] == [
        (True, True),
        (True, False),
    ]
    assert ex.lost_batches[1]["outcome"] == "cells recorded as error"

    # the start pushed to the client counts though the scheduler's log lost it;
    # with neither source the batch's start is unknown (None) and the loss counts
    ex = _executor()
    ex._by_id[0] = task
    completed = Completed()
    completed.add(ex._submit([task], {}))
    ex._heard_start((0.0, 0))
    assert ex._started(ex._futures[completed[-1].key][1]) is True
    ex._client.get_events = None  # calling it raises
    ex._subscribed = False
    _, batch, _ = ex._futures[completed[-1].key]
    batch = dataclasses.replace(batch, id=99)
    assert ex._started(batch) is None


class Completed(list):
    """Stands in for ``distributed.as_completed``: what was added."""

    def add(self, future) -> None:
        self.append(future)


def test_the_code_fingerprint_covers_the_harness_and_the_solvers() -> None:
    """A worker with other code is refused by this fingerprint: it must read the
    installed sources wherever the module sits (a moved module once read none)."""
    files = dask_pool.code_files()
    for name in ("harness/measure/worker.py",
                 "harness/measure/executors/dask/payloads.py",
                 "harness/puzzle.py", "solvers/ida_star.py"):  # fmt: skip
        assert files[name].is_file(), name
    assert len(dask_pool.code_fingerprint()) == 64


def test_a_worker_restarted_under_its_old_name_keeps_its_cores():
    """A nanny's replacement comes back at a new address: it measured unpinned
    (216 of 552 rows had no cpu) with the plan made before (issue 24, item 7)."""
    workers = {
        "tcp://a:1": _worker("a", "w0", [0, 1]),
        "tcp://a:2": _worker("a", "w1", [0, 1]),
    }
    plan = dask_pool.by_name_too(dask_pool.core_plan(workers), workers)
    restarted = {"address": "tcp://a:3", "host": "a", "name": "w1"}
    assert dask_pool.cores_for(plan, restarted) == (1,)
    assert dask_pool.cores_for(plan, {"address": "tcp://a:1"}) == (0,)
    stranger = {"address": "tcp://a:4", "host": "a", "name": "w7"}
    assert dask_pool.cores_for(plan, stranger) == ()  # said in meta.json instead
