"""Cost-aware scheduling: the expected wall time of every cell, and the order.

A cell's cost is the wall time its worker spends on it (every pass, set-up
excluded). Before anything is measured the estimate comes from the instance alone:
its optimal depth (search work grows about geometrically with depth), an
unsolvable board counting as a full search, refused cells as free, and the time
limits capping what any cell can take.

As cells finish, each (config, size, solvable) group learns its own cost curve
over depth: the log of its measured costs, made non-decreasing in depth (pooled
where a deeper cell came out cheaper), and interpolated between the depths
measured. No formula is assumed between them: blind search saturates once it has
seen most of a 3x3 state space while IDA* keeps growing geometrically, and a line
fitted through both kinds misprices one or the other by 3x. Beyond the measured
depths the curve goes on at the group's own slope once its cells span
``MIN_SPAN`` moves, else at the median slope of the groups that do; a group
without a sample borrows the slope and level of the configs measured so far.

The order follows from that: each group's costliest cell first (it is due first
anyway), then the cell farthest in depth from any measured or running one of its
group, until no pending cell is ``EXPLORE_GAP`` moves from one (farthest-point
sampling: depths 31, 0, 15, 7, 23, ... cost little and pin the curve down), then
longest expected first, so no long cell starts last. The ETA is the same
estimate played out over the workers, priced at the machine's speed now
(:mod:`harness.measure.eta`).

Only the standard library: the model is evaluated once per worker hand-off.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
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
#: A group's own slope prices depths beyond its samples once these span this many
#: moves; a narrower span (the first few deepest cells, say) says little.
MIN_SPAN = 8
#: A pending cell this many moves of depth from every measured or running cell of
#: its group is measured before the rest (see ``priority``).
EXPLORE_GAP = 5
#: Priorities above every expected cost: a group's first cell, then exploration.
FIRST_OF_GROUP = 1e9
EXPLORE = 1e8
#: The curves are refitted once the cells observed since the last fit reach this
#: share of all observed (and at a group's first cell): a refit passes over every
#: sample, so refitting after each of N cells made a run's parent quadratic in N.
REFIT_SHARE = 0.05


@dataclass(frozen=True, slots=True)
class Workload:
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
    lo: float = math.inf  # the shallowest and deepest depth seen
    hi: float = -math.inf

    def add(self, x: float, y: float) -> None:
        self.lo, self.hi = min(self.lo, x), max(self.hi, x)
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
    no cell is expected below it, and the slopes are fitted to the cells well
    above it (twice the floor), so shallow cells do not flatten them."""

    growth: float = DEFAULT_GROWTH
    base: float = DEFAULT_BASE
    #: The first reference time observed (None: none yet). Costs are kept in
    #: units of the reference, scaled to seconds at this one: the priorities, the
    #: floor and the time-limit caps stay in seconds at the speed the run began
    #: at, and :meth:`cost` prices the cells at another reference time.
    unit: float | None = None
    #: (depth, log seconds per pass) of each cell observed, per group
    _samples: dict[tuple[str, str, bool], list[tuple[float, float]]] = field(
        default_factory=dict
    )
    _costs: list[float] = field(default_factory=list)  # per pass, sorted
    _fits: dict[tuple[str, str, bool], _Fit] = field(default_factory=dict)
    #: (depth, log seconds per pass), ascending and non-decreasing, per group
    _curves: dict[tuple[str, str, bool], list[tuple[float, float]]] = field(
        default_factory=dict
    )
    #: half the variance of log cost about the curves: exp(log_cost + spread) is
    #: the mean cost, which sums (the ETA), where exp(log_cost) is the typical one
    _spread: float = 0.0
    #: slopes of the groups whose cells span MIN_SPAN moves, and the common one
    _wide: dict[tuple[str, str, bool], float] = field(default_factory=dict)
    _common: float = 0.0
    _fitted: bool = False
    #: changes whenever an estimate or a priority of a workload may have changed
    version: int = 0
    _unfitted: int = 0  # cells observed since the last refit
    _depths: dict[tuple[str, str, bool], list[float]] = field(default_factory=dict)
    _floor: float = 0.0  # the floor as of the last refit
    _memo: dict[tuple, float] = field(default_factory=dict)

    # ---- learning

    def observe(
        self, workload: Workload, seconds: float, ref: float | None = None
    ) -> None:
        """Record that ``workload`` took ``seconds`` (wall, set-up excluded). ``ref``:
        the reference solve's seconds on the cell's core at the time (see
        :class:`Pace`): the model learns in units of it, which a change of the
        machine's speed leaves alone. A cell without one counts at the speed of
        the first cell that had one (or of the run's start)."""
        if ref is not None and ref > 0:
            if self.unit is None:
                self.unit = ref
            seconds = seconds * self.unit / ref
        per_pass = max(seconds, 1e-4) / max(workload.passes, 1)
        first = workload.key not in self._samples
        x = float(self._depth(workload))
        self._samples.setdefault(workload.key, []).append((x, math.log(per_pass)))
        depths = self._depths.setdefault(workload.key, [])
        i = bisect.bisect_left(depths, x)
        if i == len(depths) or depths[i] != x:
            depths.insert(i, x)
            self.version += 1  # (a priority's exploration gap may change)
        bisect.insort(self._costs, per_pass)
        self._unfitted += 1
        if first or self._unfitted >= REFIT_SHARE * len(self._costs):
            self._fitted = False
            self._memo.clear()
            self.version += 1

    def observe_all(self, samples: Iterable[tuple[Workload, float]]) -> None:
        for workload, seconds in samples:
            self.observe(workload, seconds)

    @property
    def floor(self) -> float:
        """Seconds per pass no cell is expected below (0 before 10 cells)."""
        n = len(self._costs)
        return self._costs[n // 10] if n >= 10 else 0.0

    def _refit(self) -> None:
        """The groups' slopes, fitted to their cells well above the floor (all of a
        group's cells when fewer than two are), and their curves: mean log cost per
        depth, pooled until non-decreasing in depth (pool-adjacent-violators)."""
        if self._fitted:
            return
        self._floor, self._unfitted = self.floor, 0
        above = math.log(2 * self._floor) if self._floor > 0 else -math.inf
        self._fits, self._curves = {}, {}
        for key, samples in self._samples.items():
            chosen = [s for s in samples if s[1] >= above]
            fit = _Fit()
            for x, y in chosen if len(chosen) >= 2 else samples:
                fit.add(x, y)
            self._fits[key] = fit
            self._curves[key] = _monotone(samples)
        self._spread = _spread(self._curves.values())
        self._wide = {
            k: s for k, f in self._fits.items() if (s := _wide_slope(f)) is not None
        }
        slopes = list(self._wide.values()) or [
            s for f in self._fits.values() if (s := f.slope()) is not None
        ]
        self._common = max(median(slopes), 0.0) if slopes else math.log(self.growth)
        self._fitted = True
        self.version += 1

    def fit(self) -> None:
        """Refit now if a refit is due (estimates otherwise refit lazily)."""
        self._refit()

    def measured(self, key: tuple[str, str, bool]) -> bool:
        """Whether a cell of this (config, size, solvable) group was observed."""
        return key in self._samples

    def known_depths(self, key: tuple[str, str, bool]) -> list[float]:
        """The depths a group was observed at, ascending."""
        return list(self._depths.get(key, ()))

    def gap(self, key: tuple[str, str, bool], depth: float) -> float:
        """Moves of depth from ``depth`` to the nearest one the group was
        observed at (inf: none)."""
        depths = self._depths.get(key, ())
        i = bisect.bisect_left(depths, depth)
        near = depths[max(i - 1, 0) : i + 1]
        return min((abs(depth - d) for d in near), default=math.inf)

    # ---- estimating

    @staticmethod
    def _depth(workload: Workload) -> float:
        if workload.depth is not None:
            return float(workload.depth)
        deepest = DEEPEST.get(workload.key[1], 31)
        return float(deepest + (UNSOLVABLE_EXTRA_DEPTH if not workload.key[2] else 0))

    def _slope(self, key: tuple[str, str, bool]) -> float:
        """Growth of log cost per move: the group's own once its samples span
        ``MIN_SPAN`` moves, else the median of the groups' that do, else of any
        group's, else the prior."""
        self._refit()
        own = self._wide.get(key)
        return self._common if own is None else max(own, 0.0)

    def per_pass(self, workload: Workload) -> float:
        """Expected seconds of one pass of ``workload`` (before the time-limit cap)."""
        x = self._depth(workload)
        memo_key = (workload.key, x)
        if memo_key in self._memo:
            return self._memo[memo_key]
        self._refit()
        curve = self._curves.get(workload.key)
        if curve:
            log_cost = _interpolate(curve, x, self._slope(workload.key))
        else:
            # No sample of this config yet: the median level of the measured
            # configs of this size, else of any size, else the prior.
            slope = self._slope(workload.key)
            levels = [
                f.mean_y - slope * f.mean_x
                for k, f in self._fits.items()
                if k[1] == workload.key[1]
            ] or [f.mean_y - slope * f.mean_x for f in self._fits.values()]
            level = median(levels) if levels else math.log(self.base)
            log_cost = level + slope * x
        value = max(math.exp(min(log_cost + self._spread, 50.0)), self._floor)
        self._memo[memo_key] = value
        return value

    def cost(self, workload: Workload, ref: float | None = None) -> float:
        """Expected wall seconds of the whole workload, capped by its time limits;
        ``ref``: priced at this reference time, not the one the run began at."""
        scale = ref / self.unit if ref and self.unit else 1.0
        expected = self.per_pass(workload) * max(workload.passes, 1) * scale
        return min(expected, workload.limit)

    def order(self, workloads: Iterable[Workload]) -> list[int]:
        """Indices of ``workloads``, longest expected first (stable among equals)."""
        workloads = list(workloads)
        return sorted(range(len(workloads)), key=lambda i: -self.cost(workloads[i]))


def priority(
    model: CostModel, workload: Workload, running: Iterable[Workload]
) -> float:
    """The pool hands out the pending cell with the highest priority (``running``:
    the workloads of the cells running now).

    - A group with no sample and no running cell: its costliest cell
      (``FIRST_OF_GROUP`` + cost), due first anyway; one sample already sets the
      group's level for every later estimate and the ETA.
    - Then exploration: a cell at least ``EXPLORE_GAP`` moves of depth from every
      measured or running cell of its group (``EXPLORE`` + that distance), the
      farthest first. The deepest cell is measured first, so this takes the
      shallowest next, then the middle, the quarters, ...: a few cheap cells that
      fix the curve's shape, where a curve extrapolated from the deepest cells
      alone was off by 3x at the middle depths.
    - Else the expected cost: longest first.
    """
    busy = [j for j in running if j.key == workload.key]
    if not model.measured(workload.key):
        return model.cost(workload) + (0.0 if busy else FIRST_OF_GROUP)
    if workload.depth is not None:
        gap = model.gap(workload.key, workload.depth)
        for j in busy:
            if j.depth is not None:
                gap = min(gap, abs(workload.depth - j.depth))
        if gap >= EXPLORE_GAP:
            return EXPLORE + min(gap, 1e6)
    return model.cost(workload)


class Priorities:
    """:func:`priority` for the pool, remembered per workload while the model stays the
    same, for the workloads whose priority the running cells cannot change (their
    group is measured and they are no exploration target): most of a hand-off's
    classes are then a dictionary look-up."""

    def __init__(self, model: CostModel, running: Callable[[], Iterable[Workload]]):
        self.model, self.running = model, running
        self._memo: dict[Workload, tuple[int, float]] = {}
        self._version = -1  # the model version the calls since were made at
        self._volatile = False  # one of them depended on the running cells

    def __call__(self, workload: Workload) -> float:
        model = self.model
        hit = self._memo.get(workload)
        if hit is not None and hit[0] == model.version:
            return hit[1]
        alike = [w for w in self.running() if w.key == workload.key]
        value = priority(model, workload, alike)
        # running cells only lower an exploration gap, which is already short
        fixed = model.measured(workload.key) and (
            workload.depth is None
            or model.gap(workload.key, workload.depth) < EXPLORE_GAP
        )
        if fixed:
            self._memo[workload] = (model.version, value)
        if model.version != self._version:
            self._version, self._volatile = model.version, not fixed
        else:
            self._volatile |= not fixed
        return value

    def token(self) -> int | None:
        """Equal tokens mean every priority asked in between is unchanged (None:
        not known). The model is refitted first, so no estimate moves while the
        pool asks a hand-off's priorities."""
        self.model.fit()
        version = self.model.version
        return version if version == self._version and not self._volatile else None


def median(values: list[float]) -> float:
    """The median of ``values`` (not empty)."""
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def _wide_slope(fit: _Fit) -> float | None:
    """A fit's slope when its samples span ``MIN_SPAN`` moves of depth, else None."""
    return fit.slope() if fit.hi - fit.lo >= MIN_SPAN else None


def _spread(curves: Iterable[list[tuple[float, float]]]) -> float:
    """Half the mean squared error of predicting each measured depth of a curve
    from its two neighbours (leave one out), at most 0.5; 0 until five depths can
    be checked. The curves are in log cost, so they give a cell's typical cost,
    while the ETA sums costs and needs their mean: for log-normal errors of
    variance v the mean is exp(v / 2) times the typical. Cells of one depth do
    scatter (two 3x3 boards 26 moves deep can differ 2x in A* work): replaying
    four recorded main workloads, the ETA at 25% of the cells was 0.75-1.00 of the time
    left without this and 0.84-1.16 with it. On pure log-normal noise it prices the
    cells between measured depths about 10% high (the neighbours' own noise
    counts twice), the safer side for an ETA."""
    errors = []
    for c in curves:
        for (x0, y0), (x, y), (x1, y1) in zip(c, c[1:], c[2:], strict=False):
            errors.append(y - (y0 + (y1 - y0) * (x - x0) / (x1 - x0)))
    if len(errors) < 5:
        return 0.0
    return min(sum(e * e for e in errors) / len(errors), 1.0) / 2


def _monotone(samples: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """(depth, mean log cost) per depth, ascending in depth, pooled with their
    neighbours (weighted by sample count) until non-decreasing: a deeper cell is
    not expected cheaper, and one noisy cell does not bend the curve down."""
    by_depth: dict[float, list[float]] = {}
    for x, y in samples:
        by_depth.setdefault(x, []).append(y)
    pools: list[list] = []  # [depths, mean, weight]
    for x in sorted(by_depth):
        ys = by_depth[x]
        pools.append([[x], sum(ys) / len(ys), len(ys)])
        while len(pools) > 1 and pools[-2][1] > pools[-1][1]:
            xs2, y2, w2 = pools.pop()
            xs1, y1, w1 = pools.pop()
            pools.append([xs1 + xs2, (y1 * w1 + y2 * w2) / (w1 + w2), w1 + w2])
    return [(x, y) for xs, y, _ in pools for x in xs]


def _interpolate(curve: list[tuple[float, float]], x: float, slope: float) -> float:
    """Log cost at depth ``x``: linear between the measured depths around it, and
    at ``slope`` per move beyond the shallowest or deepest."""
    xs = [d for d, _ in curve]
    i = bisect.bisect_left(xs, x)
    if i < len(xs) and xs[i] == x:
        return curve[i][1]
    if i == 0:
        return curve[0][1] - slope * (xs[0] - x)
    if i == len(xs):
        return curve[-1][1] + slope * (x - xs[-1])
    (x0, y0), (x1, y1) = curve[i - 1], curve[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
