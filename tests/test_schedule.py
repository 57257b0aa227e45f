"""Cost-aware scheduling (harness.measure.schedule): longest expected first, on
synthetic grids whose costs are known. No clocks: costs are given, not timed."""

from __future__ import annotations

import math

import pytest

from harness.measure.pool import LocalPool
from harness.measure.runner import _priority
from harness.measure.schedule import CostModel, Job, eta
from harness.measure.worker import Pass, Task

#: True cost (seconds per pass) of each synthetic config at optimal depth d.
TRUE = {
    "slow_blind": lambda d: 0.002 * 1.8**d,
    "fast_astar": lambda d: 0.0005 * 1.35**d,
    "flat": lambda d: 0.05,
}


def grid_jobs(passes: int = 4) -> list[Job]:
    return [
        Job((config, "3x3", True), depth, passes, limit=1e9)
        for config in TRUE
        for depth in range(0, 32, 3)
    ]


def true_cost(job: Job) -> float:
    return TRUE[job.key[0]](job.depth) * job.passes


def test_before_any_measurement_deeper_and_unsolvable_cells_go_first():
    model = CostModel()
    jobs = [
        Job(("a", "3x3", True), 5, 4, 1e9),
        Job(("a", "3x3", True), 20, 4, 1e9),
        Job(("a", "3x3", False), None, 4, 1e9),  # a full search
        Job(("b", "3x3", True), 15, 4, 1e9),
        Job(("b", "3x3", True), 18, 1, 1e9),  # one pass left (a resume)
    ]
    assert model.order(jobs) == [2, 1, 3, 4, 0]


def test_time_limits_cap_the_expected_cost():
    model = CostModel()
    deep = Job(("a", "4x4", True), 60, 4, limit=12.0)
    assert model.cost(deep) == 12.0


def test_after_measuring_a_few_cells_the_order_is_the_true_cost_order():
    """Two depths of each config measured; every other cell of the grid is then
    ordered exactly by its true cost (costs are exactly geometric in depth)."""
    model = CostModel()
    jobs = grid_jobs()
    for config in TRUE:
        for depth in (0, 30):
            job = Job((config, "3x3", True), depth, 4, 1e9)
            model.observe(job, true_cost(job))
    order = model.order(jobs)
    costs = [true_cost(jobs[i]) for i in order]
    assert costs == sorted(costs, reverse=True)
    for job in jobs:
        assert model.cost(job) == pytest.approx(true_cost(job), rel=1e-6)


def test_an_unmeasured_config_borrows_the_measured_slope_and_level():
    model = CostModel()
    for depth in (10, 20):
        job = Job(("a", "3x3", True), depth, 1, 1e9)
        model.observe(job, 0.001 * 2**depth)
    new = Job(("b", "3x3", True), 20, 1, 1e9)
    assert model.cost(new) == pytest.approx(0.001 * 2**20, rel=1e-6)
    assert math.isclose(model._slope(("b", "3x3", True)), math.log(2))


def test_exploration_first_costliest_then_the_far_end_of_each_group():
    model = CostModel()
    jobs = {i: j for i, j in enumerate(grid_jobs())}
    # nothing measured: each group's costliest (deepest) cell outranks the rest
    pri = {i: _priority(model, j, {}, jobs) for i, j in jobs.items()}
    top = max(pri, key=pri.get)
    assert jobs[top].depth == 30 and pri[top] > 1e9
    # a group measured at one depth asks next for its cell farthest from it
    for config in TRUE:
        model.observe(Job((config, "3x3", True), 30, 4, 1e9), 1.0)
    pri = {i: _priority(model, j, {}, jobs) for i, j in jobs.items()}
    top = max(pri, key=pri.get)
    assert jobs[top].depth == 0
    # ... but not while a cell of that group is running
    running = {i: 0.0 for i, j in jobs.items() if j.depth == 3}
    pri = {i: _priority(model, j, running, jobs) for i, j in jobs.items()}
    assert max(pri.values()) < 1e8


def test_eta_spreads_work_over_workers_but_not_below_the_longest_cell():
    model = CostModel()
    for depth in (0, 30):
        job = Job(("a", "3x3", True), depth, 1, 1e9)
        model.observe(job, 0.01 * 1.2**depth)
    small = [Job(("a", "3x3", True), 0, 1, 1e9)] * 10  # 0.01 s each
    assert eta(model, small, [], 2) == pytest.approx(0.05)
    long = Job(("a", "3x3", True), 30, 1, 1e9)
    assert eta(model, [long], [], 2) == pytest.approx(model.cost(long))
    # a running cell counts what it still has to do
    left = eta(model, [], [(long, model.cost(long) / 2)], 1)
    assert left == pytest.approx(model.cost(long) / 2)


def test_shallow_cells_are_priced_at_the_fixed_overhead_not_below():
    """Every cell pays a fixed overhead beside its depth curve: the floor (10th
    percentile of per-pass costs) holds the shallow end, and the curve, fitted to
    cells well above it, still prices the deep end."""
    model = CostModel()
    true = lambda d: 0.01 + 0.0001 * 1.5**d  # noqa: E731
    for d in range(0, 32):
        model.observe(Job(("a", "3x3", True), d, 1, 1e9), true(d))
    assert model.floor == pytest.approx(true(3), rel=0.01)
    for d in (0, 5):
        assert 0.9 * true(d) <= model.cost(Job(("a", "3x3", True), d, 1, 1e9))
    for d in (25, 31):
        cost = model.cost(Job(("a", "3x3", True), d, 1, 1e9))
        assert cost == pytest.approx(true(d), rel=0.2)


def test_eta_plays_blocks_out_as_the_pool_runs_them():
    """A block (one instance, every config) runs on one worker, cell after cell:
    ten 0.01 s cells in one block take 0.1 s even with two workers; the rest of
    a running cell's block stays on that cell's worker."""
    model = CostModel()
    for depth in (0, 30):
        model.observe(Job(("a", "3x3", True), depth, 1, 1e9), 0.01 * 1.2**depth)
    cell = Job(("a", "3x3", True), 0, 1, 1e9)  # 0.01 s
    assert eta(model, [(cell, 7)] * 10, [], 2) == pytest.approx(0.10)
    split = [(cell, 7)] * 5 + [(cell, 8)] * 5
    assert eta(model, split, [], 2) == pytest.approx(0.05)
    # worker 1 runs block 7 (one cell there, 4 more to come); worker 2 is free
    # and takes block 8 (3 cells): the run ends with block 7
    left = eta(model, [(cell, 7)] * 4 + [(cell, 8)] * 3, [(cell, 0.0, 7)], 2)
    assert left == pytest.approx(0.05)
    # longest unit first, each to the worker that falls free first (the pool's way)
    units = [(cell, 1)] * 3 + [(cell, 2)] * 3 + [(cell, 3)] * 2 + [(cell, 4)] * 2
    assert eta(model, units, [], 2) == pytest.approx(0.05)


def _task(i: int, config: str, depth: int) -> Task:
    return Task(
        id=i, config=config, plugins=(), rows=3, cols=3, start=tuple(range(9)),
        goal=tuple(range(9)), passes=(Pass("time", 0),), timeout=1.0,
        memory_limit_mb=None, dataset="d", instance=f"{config}-{depth}",
    )  # fmt: skip


def test_the_pool_hands_out_the_longest_expected_task_first():
    """The pool asks the priority afresh at every hand-off (no worker started:
    only its choice is exercised)."""
    tasks = [
        _task(i, config, depth)
        for i, (config, depth) in enumerate(
            (c, d) for c in TRUE for d in range(0, 32, 6)
        )
    ]
    truth = {t.id: TRUE[t.config](int(t.instance.split("-")[1])) for t in tasks}
    pool = LocalPool(2)
    for t in tasks:
        pool.submit(t)
    pool.prioritize(lambda t: truth[t.id])
    slot = pool._slots[0]
    handed = [pool._next_for(slot) for _ in tasks]
    assert [truth[t.id] for t in handed] == sorted(truth.values(), reverse=True)
    assert pool._next_for(slot) is None
