"""What the runner measures: memory the solve added, warm-up solves, the reference
solve beside every timed repeat, pinning, and the interleaved order.

Solvers with known costs come from ``tests/plugins/measured.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from plugins.tiny import make_dataset, tiny
from where import PLUGINS

import harness
from harness import results as res
from harness.measure.executors.local import LocalPool
from harness.measure.plan import RunError, make_plan, plan_cells
from harness.measure.resume import prepare_resume
from harness.measure.tasks import Pass, Task, TaskResult
from harness.puzzle import goal_board, grid

PLUGIN = str(PLUGINS / "measured.py")
MIB = 2**20
G3 = grid(3)
GOAL = goal_board("standard", G3)
DEEP = (8, 6, 7, 2, 5, 4, 3, 0, 1)  # 31 moves, the deepest 3x3 boards
SHALLOW = (1, 2, 3, 4, 5, 6, 0, 7, 8)  # 2 moves


pytestmark = pytest.mark.usefixtures("measured_plugin")


@pytest.fixture
def run(tmp_path):
    """``harness.run`` as these tests call it: the measured plugin, one worker, one
    repeat, no memory pass, results under ``tmp_path``; keywords override these."""

    def go(configs, datasets, **options):
        defaults = dict(plugins=[PLUGIN], repeats=1, memory_pass=False, jobs=1,
                        out=tmp_path)  # fmt: skip
        return harness.run(configs, datasets, **{**defaults, **options})

    return go


def _task(n: int, config: str, start, passes, **kw) -> Task:
    from harness.configs import ConfigKey

    solver, _, heuristic = config.rstrip("]").partition("[")
    return Task(
        id=n,
        config=ConfigKey(solver, heuristic or None),
        plugins=(PLUGIN,),
        rows=3,
        cols=3,
        start=start,
        goal=GOAL,
        passes=passes,
        timeout=120.0,
        memory_limit_mb=4096,
        block=0,  # one worker, in submission order
        **kw,
    )


def _in_one_worker(tasks: list[Task]) -> list[TaskResult]:
    pool = LocalPool(1)
    try:
        for task in tasks:
            pool.submit(task)
        return [e for e in pool.events() if isinstance(e, TaskResult)]
    finally:
        pool.shutdown()


def _memory_attempt(result: TaskResult):
    [attempt] = [a for a in result.attempts if a.measure == "memory"]
    assert attempt.outcome == "returned", attempt.message
    return attempt


MEMORY = (Pass("memory", 0),)


def test_memory_delta_is_what_the_solve_added_in_a_fresh_worker():
    [result] = _in_one_worker([_task(0, "alloc64", SHALLOW, MEMORY)])
    attempt = _memory_attempt(result)
    assert 60 * MIB <= attempt.peak_rss_delta_bytes <= 68 * MIB
    # the absolute peak also holds the interpreter and everything imported
    assert attempt.peak_rss_bytes > attempt.peak_rss_delta_bytes + 10 * MIB
    # 64 MiB added: the RSS delta is the figure, no tracemalloc solve is run
    assert attempt.peak_bytes is None and attempt.check_counters is None


def test_memory_delta_ignores_what_earlier_cells_left_in_the_worker():
    """After numba (a compiled solver) and a deep A* (a big heap, then freed) in the
    same worker, the 64 MiB solve still measures 64 MiB."""
    results = _in_one_worker(
        [
            _task(0, "ida_star_jit[manhattan]", DEEP, (Pass("time", 0),)),
            _task(1, "astar_dict[manhattan]", DEEP, MEMORY),
            _task(2, "alloc64", SHALLOW, MEMORY),
        ]
    )
    assert [r.task.config.label for r in results] == [
        "ida_star_jit[manhattan]",
        "astar_dict[manhattan]",
        "alloc64",
    ]
    assert all(r.worker == results[0].worker for r in results)
    deep = _memory_attempt(results[1])
    assert deep.peak_rss_delta_bytes > 1 * MIB  # a deep A* holds tens of thousands
    after = _memory_attempt(results[2])
    assert 60 * MIB <= after.peak_rss_delta_bytes <= 68 * MIB
    # ...while the absolute peak carries numba's footprint and the freed heap
    assert after.peak_rss_bytes - after.peak_rss_delta_bytes > 60 * MIB


def test_small_solves_also_get_the_tracemalloc_peak():
    [result] = _in_one_worker([_task(0, "astar_dict[manhattan]", SHALLOW, MEMORY)])
    attempt = _memory_attempt(result)
    assert attempt.peak_rss_delta_bytes < 16 * MIB
    assert attempt.peak_bytes is not None and attempt.peak_bytes > 0
    assert attempt.check_counters == attempt.counters  # the determinism check


def test_slow_solves_are_not_traced():
    """A solve over 50 ms of CPU keeps its RSS delta but gets no tracemalloc solve
    (traced, it would run 5-20x slower); a quick one in the same worker does."""
    slow, quick = _in_one_worker([
        _task(0, "spin80", SHALLOW, MEMORY),
        _task(1, "count_calls", SHALLOW, MEMORY),
    ])  # fmt: skip
    spun = _memory_attempt(slow)
    assert spun.outcome == "returned" and spun.peak_rss_delta_bytes < 16 * MIB
    assert spun.peak_bytes is None and spun.check_counters is None
    assert _memory_attempt(quick).peak_bytes is not None


def test_rows_carry_the_delta_the_reference_and_the_core(run):
    frame = run(
        "alloc64,count_calls",
        [make_dataset("two", [SHALLOW, (1, 2, 3, 4, 5, 6, 7, 0, 8)], G3, GOAL)],
        repeats=2,
        memory_pass=True,
    )
    memory = frame[(frame.measure == "memory") & (frame.config == "alloc64")]
    assert memory.peak_rss_delta_bytes.between(60 * MIB, 68 * MIB).all()
    timed = frame[frame.measure == "time"]
    assert (timed.status == "solved").all()
    # the reference solve timed after every repeat: a few ms of CPU
    assert timed.ref_cpu_seconds.between(1e-4, 1.0).all()
    assert timed.ref_seconds.notna().all()
    assert memory.ref_cpu_seconds.isna().all()
    assert (frame.worker == 0).all()
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if cores:
        assert (frame.cpu == cores[0]).all()  # worker 0 pinned to the first core
    meta = res.read_meta(frame.attrs["run_dir"])
    assert meta["options"]["reference"] is True and meta["options"]["pin"] is True
    assert "astar_cantor" in meta["timer"]["reference"]
    assert len(meta["load_average_start"]) == 3 and len(meta["load_average_end"]) == 3
    assert meta["hostname"] and "llvmlite" in meta["packages"]
    assert "matplotlib" in meta["packages"] and "source" in meta["cpu_frequency"]


@pytest.mark.parametrize("warmup", [0, 1, 3])
def test_warmup_solves_come_before_the_timed_repeats_and_leave_no_row(
    run, tmp_path, monkeypatch, warmup
):
    calls = tmp_path / "calls.txt"
    monkeypatch.setenv("COUNT_CALLS_FILE", str(calls))
    data = tiny("w", count=2, unsolvable=False)
    frame = run("count_calls", [data], repeats=2, warmup=warmup, min_sample_seconds=0)
    solves = calls.read_text().splitlines()
    # per instance: the first solve (a warm-up's, else the first repeat's), the
    # other warm-ups, and per repeat a warm solve and its one-solve sample
    assert len(solves) == 2 * (max(warmup, 1) + 2 * 2)
    assert sorted(frame.measure.unique()) == ["time"]
    assert sorted(frame.repeat.unique()) == [0, 1]
    meta = res.read_meta(frame.attrs["run_dir"])
    assert meta["options"]["warmup"] == warmup
    assert meta["timer"]["warmup"].startswith(f"{warmup} untimed solve")


def test_warmup_is_stated_in_the_report(run):
    frame = run(
        "count_calls", [tiny("w", count=1, unsolvable=False)], warmup=2, report=True
    )
    text = (Path(frame.attrs["run_dir"]) / "report.md").read_text()
    assert "2 untimed warm-up solves per cell" in text


def test_interleaved_order_rotates_configs_per_instance_from_a_seed():
    data = tiny("order", count=4, unsolvable=False)
    plan = make_plan(
        "count_calls,alloc64,astar_dict", [data], plugins=[PLUGIN], order_seed=7
    )
    cells = plan_cells(plan)
    blocks = [[c for c in cells if c.block == b] for b in range(4)]
    assert [len(b) for b in blocks] == [3, 3, 3, 3]
    for b, block in enumerate(blocks):
        assert {c.instance.id for c in block} == {data.instances[b].id}
    firsts = [block[0].config.label for block in blocks]
    order = [c.config.label for c in blocks[0]]
    assert firsts == [order[0], order[1], order[2], order[0]]  # rotates by one
    again = plan_cells(
        make_plan(
            "count_calls,alloc64,astar_dict", [data], plugins=[PLUGIN], order_seed=7
        )
    )
    assert [(c.config.label, c.instance.id) for c in again] == [
        (c.config.label, c.instance.id) for c in cells
    ]
    assert plan.options(1)["order_seed"] == 7
    flat = plan_cells(
        make_plan(
            "count_calls,alloc64", [data], plugins=[PLUGIN], interleave=False
        )
    )
    assert [c.config.label for c in flat] == ["count_calls"] * 4 + ["alloc64"] * 4
    assert all(c.block is None for c in flat)


def test_one_instance_block_runs_in_one_worker(run):
    data = tiny("blocks", count=4, unsolvable=False)
    frame = run("count_calls,astar_dict,ida_star", [data], jobs=2)
    per_instance = frame.groupby("instance").worker.nunique()
    assert (per_instance == 1).all()
    assert frame.worker.nunique() == 2  # both workers took blocks


def test_schema_1_runs_cannot_be_resumed(tmp_path):
    run_dir = tmp_path / "old"
    run_dir.mkdir()
    res.write_meta(run_dir, {"run_id": "old"})
    meta = res.read_meta(run_dir)
    (run_dir / "meta.json").write_text(
        (run_dir / "meta.json")
        .read_text()
        .replace(f'"schema_version": {res.SCHEMA_VERSION}', '"schema_version": 1')
    )
    assert meta["run_id"] == "old"
    with pytest.raises(RunError, match="stored with schema_version 1"):
        prepare_resume(str(run_dir), tmp_path)
