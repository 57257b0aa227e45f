"""How the Dask executor cuts the grid into tasks, which cores and environment its
measuring processes get (no cluster needed: the pure parts of
``harness.measure.dask_pool``)."""

from __future__ import annotations

import os

from harness.measure import dask_pool
from harness.measure.pool import LocalPool
from harness.measure.worker import Pass, Task


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
