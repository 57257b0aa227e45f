"""Cost-aware scheduling (harness.measure.schedule): longest expected first, on
synthetic grids whose costs are known. No clocks: costs are given, not timed."""

from __future__ import annotations

import math

import pytest

from harness.measure.eta import Backlog, eta
from harness.measure.executors.local import LocalPool
from harness.measure.schedule import (
    EXPLORE,
    FIRST_OF_GROUP,
    CostModel,
    Priorities,
    Workload,
    priority,
)
from harness.measure.tasks import Pass, Task

#: True cost (seconds per pass) of each synthetic config at optimal depth d.
TRUE = {
    "slow_blind": lambda d: 0.002 * 1.8**d,
    "fast_astar": lambda d: 0.0005 * 1.35**d,
    "flat": lambda d: 0.05,
}


def grid_jobs(passes: int = 4) -> list[Workload]:
    return [
        Workload((config, "3x3", True), depth, passes, limit=1e9)
        for config in TRUE
        for depth in range(0, 32, 3)
    ]


def true_cost(job: Workload) -> float:
    return TRUE[job.key[0]](job.depth) * job.passes


def test_before_any_measurement_deeper_and_unsolvable_cells_go_first():
    model = CostModel()
    jobs = [
        Workload(("a", "3x3", True), 5, 4, 1e9),
        Workload(("a", "3x3", True), 20, 4, 1e9),
        Workload(("a", "3x3", False), None, 4, 1e9),  # a full search
        Workload(("b", "3x3", True), 15, 4, 1e9),
        Workload(("b", "3x3", True), 18, 1, 1e9),  # one pass left (a resume)
    ]
    assert model.order(jobs) == [2, 1, 3, 4, 0]


def test_time_limits_cap_the_expected_cost():
    model = CostModel()
    deep = Workload(("a", "4x4", True), 60, 4, limit=12.0)
    assert model.cost(deep) == 12.0


def test_after_measuring_a_few_cells_the_order_is_the_true_cost_order():
    """Two depths of each config measured; every other cell of the grid is then
    ordered exactly by its true cost (costs are exactly geometric in depth)."""
    model = CostModel()
    jobs = grid_jobs()
    for config in TRUE:
        for depth in (0, 30):
            job = Workload((config, "3x3", True), depth, 4, 1e9)
            model.observe(job, true_cost(job))
    order = model.order(jobs)
    costs = [true_cost(jobs[i]) for i in order]
    assert costs == sorted(costs, reverse=True)
    for job in jobs:
        assert model.cost(job) == pytest.approx(true_cost(job), rel=1e-6)


def test_an_unmeasured_config_borrows_the_measured_slope_and_level():
    model = CostModel()
    for depth in (10, 20):
        job = Workload(("a", "3x3", True), depth, 1, 1e9)
        model.observe(job, 0.001 * 2**depth)
    new = Workload(("b", "3x3", True), 20, 1, 1e9)
    assert model.cost(new) == pytest.approx(0.001 * 2**20, rel=1e-6)
    assert math.isclose(model._slope(("b", "3x3", True)), math.log(2))


def test_exploration_first_costliest_then_farthest_point_in_depth():
    """Each group's costliest cell first; then, per group, the cell farthest in
    depth from every measured or running one (the shallow end, the middle, the
    quarters); once every pending cell is within EXPLORE_GAP moves of one, the
    expected cost alone."""
    model = CostModel()
    jobs = {i: j for i, j in enumerate(grid_jobs())}  # depths 0, 3, ..., 30

    def top(running=()):
        pri = {
            i: priority(model, j, [jobs[r] for r in running]) for i, j in jobs.items()
        }
        best = max(pri, key=pri.get)
        return jobs[best], pri[best]

    job, pri = top()
    assert job.depth == 30 and pri > FIRST_OF_GROUP
    order = []
    while True:
        job, pri = top()
        if pri < EXPLORE:
            break
        order.append((job.key[0], job.depth))
        model.observe(job, true_cost(job))
        del jobs[next(i for i, j in jobs.items() if j == job)]
    # every group: 30 (the first), then 0, then 15, then 6 or 9 and 21 or 24, ...
    for config in TRUE:
        depths = [d for c, d in order if c == config]
        assert depths[:2] == [30, 0] and depths[2] == 15, depths
        assert set(depths[3:5]) in ({6, 21}, {6, 24}, {9, 21}, {9, 24}), depths
    # a group's cell running counts as measured: its neighbours are not explored
    model = CostModel()
    jobs = {i: j for i, j in enumerate(grid_jobs())}
    for config in TRUE:
        model.observe(Workload((config, "3x3", True), 30, 4, 1e9), 1.0)
    running = [i for i, j in jobs.items() if j.depth == 3]
    job, pri = top(running)
    assert pri > EXPLORE and job.depth in (15, 18)  # far from 3 and from 30
    # ... and a group with a cell running is not "unmeasured" either
    model = CostModel()
    jobs = {i: j for i, j in enumerate(grid_jobs())}
    running = [i for i, j in jobs.items() if j.depth == 3]
    assert all(
        priority(model, j, [jobs[r] for r in running]) < FIRST_OF_GROUP
        for j in jobs.values()
    )


def test_eta_spreads_work_over_workers_but_not_below_the_longest_cell():
    model = CostModel()
    for depth in (0, 30):
        job = Workload(("a", "3x3", True), depth, 1, 1e9)
        model.observe(job, 0.01 * 1.2**depth)
    small = [Workload(("a", "3x3", True), 0, 1, 1e9)] * 10  # 0.01 s each
    assert eta(model, small, [], 2) == pytest.approx(0.05)
    long = Workload(("a", "3x3", True), 30, 1, 1e9)
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
        model.observe(Workload(("a", "3x3", True), d, 1, 1e9), true(d))
    assert model.floor == pytest.approx(true(3), rel=0.01)
    for d in (0, 5):
        assert 0.9 * true(d) <= model.cost(Workload(("a", "3x3", True), d, 1, 1e9))
    for d in (25, 31):
        cost = model.cost(Workload(("a", "3x3", True), d, 1, 1e9))
        assert cost == pytest.approx(true(d), rel=0.2)


def explore(model: CostModel, jobs: list[Workload], cost) -> list[Workload]:
    """Measure cells as ``priority`` asks while it asks for exploration (at most
    six per group); return the cells left."""
    jobs = list(jobs)
    while jobs:
        best = max(jobs, key=lambda j: priority(model, j, []))
        if priority(model, best, []) < EXPLORE:
            break
        model.observe(best, cost(best))
        jobs.remove(best)
    return jobs


@pytest.mark.parametrize(
    "shape",
    [
        lambda d: 0.004 * min(1.3**d, 60.0),  # blind search: saturates at depth 16
        lambda d: 0.02 + 0.00001 * 1.6**d,  # overhead, then geometric
        lambda d: 0.03,  # flat: the fixed overhead only
    ],
    ids=["saturating", "overhead-then-geometric", "flat"],
)
def test_after_exploration_the_work_left_is_priced_within_a_quarter(shape):
    """Whatever the curve's shape, the few cells exploration measures (deepest,
    shallowest, middle, quarters) price the rest of the group within 25% in sum
    (the ETA's figure), and no cell more than 2.5x off. A straight line in log
    cost through the deepest cells priced the saturating curve's middle 3x high."""
    model = CostModel()
    jobs = [Workload(("a", "3x3", True), d, 5, 1e9) for d in range(32)]
    cost = lambda j: shape(j.depth) * j.passes  # noqa: E731
    left = explore(model, jobs, cost)
    assert 5 <= 32 - len(left) <= 8
    said, real = sum(model.cost(j) for j in left), sum(cost(j) for j in left)
    assert said == pytest.approx(real, rel=0.25)
    for j in left:
        assert 1 / 2.5 <= model.cost(j) / cost(j) <= 2.5, j.depth


@pytest.mark.parametrize("seed", range(4))
def test_cells_that_scatter_about_the_curve_are_priced_at_their_mean(seed):
    """Cells of one depth scatter (log-normal, sigma 0.4: the mean is 1.08x the
    typical). Twenty groups measured every fourth depth price the depths between
    at their mean, within -5%/+25% in sum (about 10% high, as documented); exact
    curves get no spread."""
    import random

    rng, sigma = random.Random(seed), 0.4
    model, exact, pending = CostModel(), CostModel(), []
    for g in range(20):
        for d in range(32):
            job = Workload((f"c{g}", "3x3", True), d, 1, 1e9)
            if d % 4 == 0 or d == 31:
                model.observe(job, 0.01 * 1.3**d * math.exp(rng.gauss(0, sigma)))
                exact.observe(job, 0.01 * 1.3**d)
            else:
                pending.append(job)
    mean = sum(0.01 * 1.3**j.depth * math.exp(sigma**2 / 2) for j in pending)
    said = sum(model.cost(j) for j in pending)
    assert 0.95 <= said / mean <= 1.25
    assert 0.04 <= model._spread <= 0.16  # v/2 = 0.08, x1.5 for the neighbours' noise
    assert exact._spread == pytest.approx(0.0, abs=1e-12)


def test_a_deeper_cell_measured_cheaper_pools_with_its_neighbour():
    """Costs are not expected to fall with depth: a noisy deeper cell that came out
    cheaper is pooled with the shallower one (geometric mean), and the depths
    between and beyond are priced no lower than that."""
    model = CostModel()
    key = ("a", "3x3", True)
    model.observe(Workload(key, 10, 1, 1e9), 0.001)
    model.observe(Workload(key, 20, 1, 1e9), 1.0)
    model.observe(Workload(key, 22, 1, 1e9), 0.25)
    pooled = math.sqrt(1.0 * 0.25)
    for depth in (20, 21, 22):
        assert model.cost(Workload(key, depth, 1, 1e9)) == pytest.approx(pooled)
    assert model.cost(Workload(key, 26, 1, 1e9)) >= pooled
    assert model.cost(Workload(key, 15, 1, 1e9)) == pytest.approx(
        math.exp((math.log(0.001) + math.log(pooled)) / 2)
    )


def test_eta_plays_blocks_out_as_the_pool_runs_them():
    """A block (one instance, every config) runs on one worker, cell after cell:
    ten 0.01 s cells in one block take 0.1 s even with two workers; the rest of
    a running cell's block stays on that cell's worker."""
    model = CostModel()
    for depth in (0, 30):
        model.observe(Workload(("a", "3x3", True), depth, 1, 1e9), 0.01 * 1.2**depth)
    cell = Workload(("a", "3x3", True), 0, 1, 1e9)  # 0.01 s
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


# ------------------------------------------ a run's parent is linear in its cells
# (issue 24, item 1: every hand-off re-summed the priority of every pending block,
# and every finished cell refitted the model over every sample: 138 s of parent
# CPU for 5,000 cells.) Calls are counted, not timed.


def _blocks(n: int, configs: int = 2, depths: int = 8) -> list[Task]:
    """``n`` instance blocks of ``configs`` cells; depth cycles over ``depths``."""
    return [
        Task(
            id=b * configs + c, config=f"c{c}", plugins=(), rows=3, cols=3,
            start=tuple(range(9)), goal=tuple(range(9)), passes=(Pass("time", 0),),
            timeout=1.0, memory_limit_mb=None, dataset="d",
            instance=f"c{c}-{b % depths}", block=b,
        )
        for b in range(n)
        for c in range(configs)
    ]  # fmt: skip


def test_a_hand_off_asks_the_priority_once_per_class_not_per_pending_cell():
    tasks = _blocks(400)
    depth = {t.id: int(t.instance.split("-")[1]) for t in tasks}
    asked = 0

    def cost(t: Task) -> float:
        nonlocal asked
        asked += 1
        return TRUE["slow_blind"](depth[t.id])

    pool = LocalPool(1)
    for t in tasks:
        pool.submit(t)
    pool.prioritize(cost, key=lambda t: (t.config, depth[t.id]))
    slot = pool._slots[0]
    handed = [pool._next_for(slot) for _ in tasks]
    assert pool._next_for(slot) is None
    # longest block first, each block whole and in order, oldest first on ties
    firsts = [t for t in handed if t.id % 2 == 0]
    assert [depth[t.id] for t in firsts] == sorted(
        (depth[t.id] for t in firsts), reverse=True
    )
    assert [t.block for t in firsts] == sorted(
        (t.block for t in firsts), key=lambda b: (-(b % 8), b)
    )
    assert all(handed[i + 1].block == handed[i].block for i in range(0, 800, 2))
    # 400 hand-offs of a block x 16 classes at most (was 80,000 calls: N^2 / 2)
    assert asked <= 400 * 16
    # with a token that does not change, a class is asked once in the whole run
    asked = 0
    pool = LocalPool(1)
    for t in tasks:
        pool.submit(t)
    pool.prioritize(cost, key=lambda t: (t.config, depth[t.id]), token=lambda: 1)
    again = [pool._next_for(pool._slots[0]) for _ in tasks]
    assert [t.id for t in again] == [t.id for t in handed] and asked <= 16


def test_the_model_refits_a_share_of_the_time_not_at_every_cell():
    model = CostModel()
    refits = 0
    real = CostModel._refit

    def counting(self):
        nonlocal refits
        refits += not self._fitted
        real(self)

    CostModel._refit = counting
    try:
        for i in range(3000):
            job = Workload(("a", "3x3", True), i % 30, 1, 1e9)
            model.observe(job, TRUE["fast_astar"](i % 30))
            model.cost(job)
    finally:
        CostModel._refit = real
    assert refits < 250  # ~log(3000) / log(1.05) after the first 20 (was 3,000)
    # and the curve it keeps is still the truth's
    assert model.cost(Workload(("a", "3x3", True), 29, 1, 1e9)) == pytest.approx(
        TRUE["fast_astar"](29), rel=0.3
    )


def test_the_backlog_eta_equals_the_played_out_eta_at_a_cost_per_signature():
    model = CostModel()
    for depth in range(0, 32, 4):
        model.observe(Workload(("a", "3x3", True), depth, 2, 1e9), 0.01 * 1.3**depth)
    jobs = {i: Workload(("a", "3x3", True), i % 16, 2, 1e9) for i in range(3000)}
    blocks = {i: i // 3 for i in jobs}  # blocks of three cells
    backlog = Backlog((i, jobs[i], blocks[i]) for i in jobs)
    for i in (0, 3, 4):  # block 0 and block 1 begun, cell 0 finished
        backlog.start(i, 100.0)
    backlog.finish(0)
    running = [(jobs[i], 2.0, blocks[i]) for i in (3, 4)]
    pending = [(jobs[i], blocks[i]) for i in jobs if i not in (0, 3, 4)]
    asked = 0
    real = CostModel.cost

    def counting(self, job, ref=None):
        nonlocal asked
        asked += 1
        return real(self, job, ref)

    CostModel.cost = counting
    try:
        said = backlog.eta(model, 102.0, 2)
    finally:
        CostModel.cost = real
    assert said == pytest.approx(eta(model, pending, running, 2), rel=1e-9)
    assert asked < 100  # 16 signatures x 3 cells, the running ones (was 3,000)
    assert not backlog.unmeasured(model)


def test_equal_units_spread_as_one_by_one_to_the_least_loaded():
    """eta() spreads many equal units at once; it must equal handing them out one
    by one to the worker that falls free first."""
    import heapq
    import random

    model = CostModel()
    for depth in range(0, 32, 4):
        model.observe(Workload(("a", "3x3", True), depth, 1, 1e9), 0.01 * 1.3**depth)
    rng = random.Random(7)
    for _ in range(300):
        running = [(Workload(("a", "3x3", True), rng.randint(0, 31), 1, 1e9),
                    rng.random() * 0.2) for _ in range(rng.randint(0, 4))]  # fmt: skip
        pending = [Workload(("a", "3x3", True), rng.choice((3, 17, 30)), 1, 1e9)
                   for _ in range(rng.randint(0, 80))]  # fmt: skip
        workers = rng.randint(1, 5)
        heap = [max(model.cost(j) - t, 0.1 * model.cost(j)) for j, t in running]
        heap += [0.0] * max(workers - len(heap), 0)
        heapq.heapify(heap)
        for c in sorted((model.cost(j) for j in pending), reverse=True):
            heapq.heapreplace(heap, heap[0] + c)
        assert eta(model, pending, running, workers) == pytest.approx(max(heap))


def test_remembered_priorities_are_the_priorities():
    """Priorities (the pool's memo) answers as priority() does, as the model
    learns and cells run, while asking the model far less."""
    import random

    rng = random.Random(3)
    model = CostModel()
    running: list[Workload] = []
    ask = Priorities(model, lambda: running)
    jobs = [
        Workload((c, "3x3", True), d, 2, 1e9) for c in TRUE for d in range(0, 32, 2)
    ]
    for step in range(600):
        job = rng.choice(jobs)
        if step % 3 == 0:
            model.observe(job, TRUE[job.key[0]](job.depth) * 2)
        running[:] = rng.sample(jobs, 2)
        for j in rng.sample(jobs, 8):
            assert ask(j) == priority(model, j, running)
