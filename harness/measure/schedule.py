"""Cost-aware scheduling and the ETA: the expected wall time of every cell.

A cell's cost is the wall time its worker spends on it (every pass, set-up
excluded). Before anything is measured the estimate comes from the instance alone:
its optimal depth (search work grows about geometrically with depth), an
unsolvable board counting as a full search, refused cells as free, and the time
limits capping what any cell can take. As cells finish, each (config, size,
solvable) group learns its own curve, ``log(cost) = a + b * depth`` by least
squares, and groups without a sample of their own borrow the slope and level of
the configs measured so far. The runner hands the queue to workers longest
expected first (so no long cell starts last), and the ETA is the same estimate
summed over what is left.

Only the standard library: the model is evaluated once per worker hand-off.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

#: Growth of cost per move of optimal depth before any config has two depths
#: measured (A* with Manhattan on 3x3 grows ~1.3-1.5x per move; blind BFS ~1.6x).
DEFAULT_GROWTH = 1.4
#: Cost of a depth-0 cell before anything is measured (seconds, all passes).
DEFAULT_BASE = 0.01
#: An unsolvable board needs a full search: priced like a solvable board this many
#: moves deeper than the deepest one of its size (3x3: 31 moves).
UNSOLVABLE_EXTRA_DEPTH = 4
DEEPEST = {"2x2": 6, "2x3": 21, "3x3": 31, "3x4": 53, "4x4": 80}


@dataclass(frozen=True, slots=True)
class Job:
    """What the model needs to know about one cell."""

    key: tuple[str, str, bool]  # (config label, size label, solvable)
    depth: int | None  # optimal depth, None when unknown or unsolvable
    passes: int  # passes still to run (repeats, warm-up, memory)
    limit: float  # seconds the passes may take at most (their time limits)


@dataclass(slots=True)
class _Fit:
    n: int = 0
    sx: float = 0.0
    sy: float = 0.0
    sxx: float = 0.0
    sxy: float = 0.0

    def add(self, x: float, y: float) -> None:
        self.n += 1
        self.sx += x
        self.sy += y
        self.sxx += x * x
        self.sxy += x * y

    @property
    def mean_x(self) -> float:
        return self.sx / self.n

    @property
    def mean_y(self) -> float:
        return self.sy / self.n

    def slope(self) -> float | None:
        """Least-squares slope, None when all samples share one depth."""
        var = self.sxx - self.sx * self.sx / self.n
        if self.n < 2 or var < 1e-9:
            return None
        return (self.sxy - self.sx * self.sy / self.n) / var


@dataclass
class CostModel:
    """Expected seconds per cell, learnt from the cells of this run.

    Every cell also pays a fixed overhead (messages, the collector, the memory
    pass's bookkeeping, the reference solve) that no depth curve sees: the
    model's floor is the 10th percentile of the per-pass costs measured so far,
    no cell is expected below it, and the curves are fitted to the cells well
    above it (twice the floor), so shallow cells do not flatten them."""

    growth: float = DEFAULT_GROWTH
    base: float = DEFAULT_BASE
    #: (depth, log seconds per pass) of each cell observed, per group
    _samples: dict[tuple[str, str, bool], list[tuple[float, float]]] = field(
        default_factory=dict
    )
    _costs: list[float] = field(default_factory=list)  # per pass, sorted
    _fits: dict[tuple[str, str, bool], _Fit] = field(default_factory=dict)
    _fitted: bool = True
    _memo: dict[tuple, float] = field(default_factory=dict)

    # ---- learning

    def observe(self, job: Job, seconds: float) -> None:
        """Record that ``job`` took ``seconds`` (wall, set-up excluded)."""
        per_pass = max(seconds, 1e-4) / max(job.passes, 1)
        self._samples.setdefault(job.key, []).append(
            (float(self._depth(job)), math.log(per_pass))
        )
        bisect.insort(self._costs, per_pass)
        self._fitted = False
        self._memo.clear()

    def observe_all(self, samples: Iterable[tuple[Job, float]]) -> None:
        for job, seconds in samples:
            self.observe(job, seconds)

    @property
    def floor(self) -> float:
        """Seconds per pass no cell is expected below (0 before 10 cells)."""
        n = len(self._costs)
        return self._costs[n // 10] if n >= 10 else 0.0

    def _refit(self) -> None:
        """The groups' curves, from their cells well above the floor (all of a
        group's cells when fewer than two are)."""
        if self._fitted:
            return
        above = math.log(2 * self.floor) if self.floor > 0 else -math.inf
        self._fits = {}
        for key, samples in self._samples.items():
            chosen = [s for s in samples if s[1] >= above]
            fit = _Fit()
            for x, y in chosen if len(chosen) >= 2 else samples:
                fit.add(x, y)
            self._fits[key] = fit
        self._fitted = True

    def measured(self, key: tuple[str, str, bool]) -> bool:
        """Whether a cell of this (config, size, solvable) group was observed."""
        return key in self._samples

    def sampled_depth(self, key: tuple[str, str, bool]) -> float | None:
        """The one depth a group was observed at, None when it has no sample or
        samples at two depths or more."""
        depths = {x for x, _ in self._samples.get(key, ())}
        return depths.pop() if len(depths) == 1 else None

    # ---- estimating

    @staticmethod
    def _depth(job: Job) -> float:
        if job.depth is not None:
            return float(job.depth)
        deepest = DEEPEST.get(job.key[1], 31)
        return float(deepest + (UNSOLVABLE_EXTRA_DEPTH if not job.key[2] else 0))

    def _slope(self, key: tuple[str, str, bool]) -> float:
        self._refit()
        own = self._fits.get(key)
        if own is not None and own.slope() is not None:
            return max(own.slope(), 0.0)
        slopes = [s for f in self._fits.values() if (s := f.slope()) is not None]
        if slopes:
            return max(_median(slopes), 0.0)
        return math.log(self.growth)

    def per_pass(self, job: Job) -> float:
        """Expected seconds of one pass of ``job`` (before the time-limit cap)."""
        x = self._depth(job)
        memo_key = (job.key, x)
        if memo_key in self._memo:
            return self._memo[memo_key]
        self._refit()
        own = self._fits.get(job.key)
        if own is not None:
            log_cost = own.mean_y + self._slope(job.key) * (x - own.mean_x)
        else:
            # No sample of this config yet: the median level of the measured
            # configs of this size, else of any size, else the prior.
            slope = self._slope(job.key)
            levels = [
                f.mean_y - slope * f.mean_x
                for k, f in self._fits.items()
                if k[1] == job.key[1]
            ] or [f.mean_y - slope * f.mean_x for f in self._fits.values()]
            level = _median(levels) if levels else math.log(self.base)
            log_cost = level + slope * x
        value = max(math.exp(min(log_cost, 50.0)), self.floor)
        self._memo[memo_key] = value
        return value

    def cost(self, job: Job) -> float:
        """Expected wall seconds of the whole job, capped by its time limits."""
        return min(self.per_pass(job) * max(job.passes, 1), job.limit)

    def order(self, jobs: Iterable[Job]) -> list[int]:
        """Indices of ``jobs``, longest expected first (stable among equals)."""
        jobs = list(jobs)
        return sorted(range(len(jobs)), key=lambda i: -self.cost(jobs[i]))


def eta(
    model: CostModel,
    pending: Iterable[Job | tuple[Job, Hashable]],
    running: Iterable[tuple[Job, float] | tuple[Job, float, Hashable]],
    workers: int,
) -> float:
    """Seconds until the last cell is expected to finish, by playing the rest of
    the run out on the model: each worker first finishes its running cell
    (``running``: (job, seconds it has run[, block])) and the rest of that cell's
    block; then every worker that falls free takes the longest pending unit (a
    block of cells that one worker runs in turn, or a cell without a block:
    ``pending`` items are jobs or (job, block or None)), as the pool does. The
    answer is when the last worker is done: never less than the longest unit,
    and the work spread over ``workers`` when units are small."""
    loads: list[float] = []
    held: dict[Hashable, int] = {}  # block -> the worker running it
    for item in running:
        job, elapsed = item[0], item[1]
        # A cell past its estimate is expected to need a little more, not nothing.
        c = model.cost(job)
        loads.append(max(c - elapsed, 0.1 * c))
        if len(item) > 2 and item[2] is not None:
            held[item[2]] = len(loads) - 1
    loads += [0.0] * max(workers - len(loads), 0)
    units: dict[Hashable, float] = {}
    for n, item in enumerate(pending):
        job, block = item if isinstance(item, tuple) else (item, None)
        c = model.cost(job)
        if block is not None and block in held:
            loads[held[block]] += c
        else:
            key = ("cell", n) if block is None else block
            units[key] = units.get(key, 0.0) + c
    heap = loads or [0.0]
    heapq.heapify(heap)
    for unit in sorted(units.values(), reverse=True):
        heapq.heappush(heap, heapq.heappop(heap) + unit)
    return max(heap)


def _median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
