"""The ETA: the cells left, priced by the cost model (:mod:`.schedule`) and played
out over the workers at the machine's speed now.

Costs are learnt in units of the reference solve beside each cell and priced at
its recent pace (:class:`Pace`), so a run that slows down midway is not promised
its early speed. :class:`Backlog` keeps the cells pending and running, and the
order of the blocks a free worker takes.

Only the standard library: the estimate is taken a few times a second.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Hashable, Iterable, Iterator, Mapping

from harness.measure.schedule import CostModel, Workload, median

#: The pace looks back over this many times the time left (see ``Pace``), and
#: over at least this many of a core's cells.
PACE_LOOKBACK = 0.5
PACE_MIN_CELLS = 5
#: A cell is learnt in units of its core's reference over its last this many
#: cells (itself included): one reference solve's own jitter smoothed out.
PACE_LEARN_CELLS = 3


class Pace:
    """How fast the machine runs now, read off the reference solve that follows
    every timed repeat (one fixed solve, the same on every core): per core, the
    geometric mean of its cells' reference times over the last ``lookback``
    times the time left (at least its last ``min_cells`` cells); over the cores,
    the time that spreads work as they do together (the harmonic mean: a core
    twice as slow does half as much). The model learns each cell in units of its
    core's reference over its last ``learn_cells`` cells, and the ETA prices
    what is left at this pace.

    It corrects a change of speed that has lasted a good part of what is left:
    replaying three recorded main workloads (tests/benchmarks/eta_replay.py), 2x
    slower or faster from a third of the way, or each core drifting on its own,
    the median error of the ETA over 10-90% of the cells was 9-25% with the
    pace and 7-91% (mean 50%) without; a run recorded while a second one started
    beside it was said a seventh of its time left without, 0.82-0.95 with.
    It does not foresee a change still to come (0.42 of the time left at 25% of
    a run that turns 2x slower later), it prices every core at one pace (a slow
    core's last block is priced as the others'), the reference feels load a
    little more than the cells do (log cost against log reference: slope
    0.75-0.95), and on a run whose speed holds it adds the reference's own
    jitter (median error 18% where the curves alone had 8%). Over the twelve
    replays the mean median error was 17.8% looking back 1/2 the time left;
    1/4 or the last 10-25 cells did about as well (18%), the last 1-3 cells
    worse (23-26%: they follow every passing load), 1x and 2x (17%, 20%) said
    0.12-0.24 at 25% of the rising run; learning each cell at its own reference
    rather than its core's last three, 21%."""

    def __init__(
        self,
        lookback: float = PACE_LOOKBACK,
        min_cells: int = PACE_MIN_CELLS,
        learn_cells: int = PACE_LEARN_CELLS,
    ) -> None:
        self.lookback, self.min_cells = lookback, max(min_cells, 1)
        self.learn_cells = max(learn_cells, 1)
        self._times: dict[Hashable, list[float]] = {}  # when each cell finished
        self._sums: dict[Hashable, list[float]] = {}  # prefix sums of log refs

    def reference(
        self, core: Hashable, refs: Iterable[float | None], now: float
    ) -> float | None:
        """The reference time to learn a cell in that finished on ``core`` at
        ``now`` beside reference solves of ``refs`` seconds: their median counts
        for the core's pace, and the core's pace over its last ``learn_cells``
        cells is the answer; without any, the core's recent pace, else the
        cores' (None: none seen yet)."""
        refs = sorted(r for r in refs if r is not None and r > 0)
        if refs:
            sums = self._sums.setdefault(core, [0.0])
            sums.append(sums[-1] + math.log(median(refs)))
            self._times.setdefault(core, []).append(now)
            n = len(sums) - 1
            i = max(n - self.learn_cells, 0)
            return math.exp((sums[n] - sums[i]) / (n - i))
        return self.core(core, now) or self.seconds(now)

    def seconds(self, now: float, left: float | None = None) -> float | None:
        """The reference's seconds at ``now`` over the cores, for a run with
        ``left`` seconds to go (None: look back over ``min_cells`` only) (None:
        no reference seen)."""
        paces = [p for c in self._times if (p := self.core(c, now, left))]
        return len(paces) / sum(1 / p for p in paces) if paces else None

    def core(
        self, core: Hashable, now: float, left: float | None = None
    ) -> float | None:
        """One core's reference seconds at ``now`` (see :meth:`seconds`)."""
        times, sums = self._times.get(core), self._sums.get(core)
        if not times or sums is None:
            return None
        n = len(times)
        i = n if left is None else bisect.bisect_left(times, now - self.lookback * left)
        i = max(min(i, n - self.min_cells), 0)
        return math.exp((sums[n] - sums[i]) / (n - i))


def eta(
    model: CostModel,
    pending: Iterable[Workload | tuple[Workload, Hashable]],
    running: Iterable[tuple[Workload, float] | tuple[Workload, float, Hashable]],
    workers: int,
    ref: float | None = None,
) -> float:
    """Seconds until the last cell is expected to finish, by playing the rest of
    the run out on the model: each worker first finishes its running cell
    (``running``: (workload, seconds it has run[, block])) and the rest of that cell's
    block; then every worker that falls free takes the longest pending unit (a
    block of cells that one worker runs in turn, or a cell without a block:
    ``pending`` items are workloads or (workload, block or None)), as the pool does. The
    answer is when the last worker is done: never less than the longest unit,
    and the work spread over ``workers`` when units are small. ``ref``: the
    reference time to price the cells at (:class:`Pace`; None: the model's own)."""
    loads: list[float] = []
    held: dict[Hashable, int] = {}  # block -> the worker running it
    for item in running:
        loads.append(_left(model, item[0], item[1], ref))
        if len(item) > 2 and item[2] is not None:
            held[item[2]] = len(loads) - 1
    units: dict[Hashable, float] = {}
    for n, item in enumerate(pending):
        workload, block = item if isinstance(item, tuple) else (item, None)
        c = model.cost(workload, ref)
        if block is not None and block in held:
            loads[held[block]] += c
        else:
            key = ("cell", n) if block is None else block
            units[key] = units.get(key, 0.0) + c
    counts: dict[float, int] = {}
    for c in units.values():
        counts[c] = counts.get(c, 0) + 1
    return _play_out(loads, counts, workers)


class Backlog:
    """The cells of a run not yet finished, kept for the ETA and the priority.

    Blocks no worker has begun are counted by their signature (the workloads of their
    cells), so :meth:`eta` costs the number of distinct signatures (about the
    number of depths), not of cells: over every cell, four ETAs a second made
    the parent of a 20,000-cell run busier than its workers."""

    def __init__(self, cells: Iterable[tuple[Hashable, Workload, Hashable | None]]):
        """``cells``: (cell id, workload, block or None), in submission order."""
        self._workload: dict[Hashable, Workload] = {}
        self._block: dict[Hashable, Hashable] = {}
        self._members: dict[Hashable, dict[Hashable, None]] = {}  # not started
        self._free: dict[tuple[Workload, ...], int] = {}  # signature -> free blocks
        self._begun: set[Hashable] = set()
        self._running: dict[Hashable, float] = {}  # cell id -> when it started
        self._left: dict[tuple, int] = {}  # cells left per (config, size, solvable)
        for cell, workload, block in cells:
            block = ("cell", cell) if block is None else block
            self._workload[cell], self._block[cell] = workload, block
            self._members.setdefault(block, {})[cell] = None
            self._left[workload.key] = self._left.get(workload.key, 0) + 1
        for block in self._members:
            self._count(block, +1)

    def __len__(self) -> int:
        return len(self._workload)

    def workload(self, cell: Hashable) -> Workload | None:
        return self._workload.get(cell)

    def running_workloads(self) -> Iterator[Workload]:
        return (self._workload[c] for c in self._running)

    def start(self, cell: Hashable, now: float) -> None:
        """A worker began ``cell`` at ``now`` (monotonic seconds)."""
        if cell not in self._workload:
            return
        self._take(cell)
        self._running[cell] = now

    def finish(self, cell: Hashable) -> tuple[Workload | None, float | None]:
        """Forget a finished cell: its workload and when it started (None: unknown)."""
        if cell not in self._workload:
            return None, None
        self._take(cell)
        workload = self._workload.pop(cell)
        del self._block[cell]
        self._left[workload.key] -= 1
        return workload, self._running.pop(cell, None)

    def unmeasured(self, model: CostModel) -> bool:
        """Whether a group with cells left has none measured yet."""
        return any(n and not model.measured(k) for k, n in self._left.items())

    def eta(
        self, model: CostModel, now: float, workers: int, ref: float | None = None,
        setups: Mapping[Hashable, float] | None = None,
    ) -> float:
        """Seconds until the last cell is expected to finish, priced at the
        reference time ``ref`` (see :func:`eta`). ``setups``: the running cells
        still in a set-up (tables, compilation), with its seconds left: priced
        apart, then the whole cell (none of its own time has passed)."""
        loads, held = [], {}
        setups = setups or {}
        for cell, began in self._running.items():
            if cell in setups:
                loads.append(setups[cell] + model.cost(self._workload[cell], ref))
            else:
                loads.append(_left(model, self._workload[cell], now - began, ref))
            held[self._block[cell]] = len(loads) - 1
        counts: dict[float, int] = {}
        for block in self._begun:
            members = self._members.get(block, ())
            c = sum(model.cost(self._workload[m], ref) for m in members)
            if block in held:
                loads[held[block]] += c
            elif c:
                counts[c] = counts.get(c, 0) + 1
        for sig, n in self._free.items():
            c = sum(model.cost(j, ref) for j in sig)
            counts[c] = counts.get(c, 0) + n
        return _play_out(loads, counts, workers)

    def _count(self, block: Hashable, step: int) -> None:
        sig = tuple(self._workload[m] for m in self._members[block])
        n = self._free.get(sig, 0) + step
        if n:
            self._free[sig] = n
        else:
            del self._free[sig]

    def _take(self, cell: Hashable) -> None:
        """``cell`` leaves its block's cells to start: a free block begins."""
        block = self._block[cell]
        members = self._members.get(block)
        if members is None or cell not in members:
            return
        if block not in self._begun:
            self._count(block, -1)
            self._begun.add(block)
        del members[cell]
        if not members:
            del self._members[block]
            self._begun.discard(block)


def _left(
    model: CostModel, workload: Workload, elapsed: float, ref: float | None
) -> float:
    """Expected seconds left of a running cell: past its estimate, a little more."""
    c = model.cost(workload, ref)
    return max(c - elapsed, 0.1 * c)


def _play_out(loads: list[float], units: dict[float, int], workers: int) -> float:
    """When the last worker is done, if each falls free with its ``loads`` and
    then takes the longest unit left (``units``: cost -> how many)."""
    loads = loads + [0.0] * max(workers - len(loads), 0) or [0.0]
    for cost in sorted(units, reverse=True):
        loads = _add_equal(loads, cost, units[cost])
    return max(loads)


def _add_equal(loads: list[float], cost: float, count: int) -> list[float]:
    """The loads after ``count`` units of ``cost`` each went, one by one, to the
    least loaded worker, in O(workers x log count) rather than O(count)."""
    if cost <= 0 or count <= 0:
        return loads
    if count <= len(loads):
        heapq.heapify(loads)
        for _ in range(count):
            heapq.heapreplace(loads, loads[0] + cost)
        return loads
    # The steps take the ``count`` smallest of the values load + j * cost (each
    # worker's next loads, merged): find the level they reach by bisection.
    def taken(level: float) -> int:
        return sum(int((level - x) // cost) + 1 for x in loads if x <= level)

    lo, hi = min(loads), min(loads) + count * cost
    while hi - lo > cost * 1e-9 and hi > lo:
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        lo, hi = (lo, mid) if taken(mid) >= count else (mid, hi)
    k = [int((hi - x) // cost) + 1 if x <= hi else 0 for x in loads]
    # Values at the level itself may be more than needed: the workers whose last
    # unit came latest give theirs back.
    last = sorted(
        (i for i in range(len(loads)) if k[i]),
        key=lambda i: loads[i] + (k[i] - 1) * cost,
        reverse=True,
    )
    for i in last[: sum(k) - count]:
        k[i] -= 1
    return [x + n * cost for x, n in zip(loads, k, strict=True)]
