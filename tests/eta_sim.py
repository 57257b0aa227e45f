"""A run replayed on simulated workers, for the ETA's test and benchmark: no
clock, so every figure is the same on every machine.

Cells are handed out as :class:`harness.measure.executors.local.LocalPool` does (a
worker goes through its block of cells in turn; a free worker takes the free block, or
the cell without a block, of the highest summed priority, :func:`priority`), and
each finished cell teaches the cost model as the runner does (its wall seconds,
and the reference time beside it read by a :class:`Pace`). After each the ETA
(:meth:`Backlog.eta`) is noted, priced at the pace then, or by the model alone
when ``pace`` is None (a run without the pace: the ETA before it).

The machine's speed is a profile ``speed(t, worker)``: how many times longer a
cell takes than recorded when it runs at ``t`` on that worker (each worker is
pinned to a core of its own); its reference solves take that many times longer
too.
"""

from __future__ import annotations

import csv
import math
import random
import statistics
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.measure.eta import Backlog, Pace
from harness.measure.schedule import CostModel, Workload, priority

CHECKPOINTS = (0.25, 0.5, 0.75)


@dataclass(frozen=True, slots=True)
class Cell:
    job: Workload
    seconds: float  # wall seconds at speed 1
    ref: float | None  # the reference's seconds beside it at speed 1 (None: none)
    block: Hashable | None = None  # one worker runs a block's cells in turn


@dataclass
class Replay:
    wall: float  # when the last cell finished
    #: (when, cells done, the ETA said then or None) after each finished cell
    log: list[tuple[float, int, float | None]]

    def ratio(self, share: float) -> float | None:
        """The ETA said over the time really left when ``share`` of the cells
        were done (None: no ETA yet)."""
        n = len(self.log)
        t, _, said = next(x for x in self.log if x[1] >= share * n)
        left = self.wall - t
        return None if said is None else said / left if left > 0 else float("inf")

    def ratios(self) -> list[float | None]:
        return [self.ratio(s) for s in CHECKPOINTS]


def replay(
    cells: Sequence[Cell],
    workers: int,
    speed: Callable[[float, int], float] = lambda t, w: 1.0,
    pace: Callable[[], Pace] | None = Pace,
    every: int = 1,
) -> Replay:
    """Replay ``cells`` (in submission order) on ``workers`` under ``speed``,
    the ETA priced at the pace ``pace()`` reads (None: by the model alone),
    after every ``every``-th cell and at the checkpoints (the runner: four
    times a second)."""
    model, meter = CostModel(), pace() if pace is not None else None
    blocks: dict[Hashable, list[int]] = {}  # block -> its pending cells, in order
    for i, cell in enumerate(cells):
        key = ("cell", i) if cell.block is None else cell.block
        blocks.setdefault(key, []).append(i)
    backlog = Backlog((i, c.job, c.block) for i, c in enumerate(cells))
    held: list[Hashable | None] = [None] * workers
    running: dict[int, int] = {}  # cell -> worker
    finishing: list[tuple[float, int]] = []  # (when, cell), latest first
    log: list[tuple[float, int, float | None]] = []
    said: float | None = None  # the last ETA: the pace looks back by it
    due = {math.ceil(share * len(cells)) for share in CHECKPOINTS}

    def hand_out(w: int, now: float) -> None:
        block = held[w]
        if block is None or not blocks.get(block):
            blocks.pop(block, None)
            free = [b for b in blocks if b not in held]
            if not free:
                held[w] = None
                return
            busy = list(backlog.running_workloads())
            asked: dict[Workload, float] = {}  # (a hand-off asks once per job)

            def ask(job: Workload) -> float:
                if job not in asked:
                    asked[job] = priority(model, job, busy)
                return asked[job]

            block = max(free, key=lambda b: sum(ask(cells[i].job) for i in blocks[b]))
            held[w] = block
        i = blocks[block].pop(0)
        backlog.start(i, now)
        # (a cell's speed: the profile's at its middle, at the recorded cost)
        took = cells[i].seconds * speed(now + cells[i].seconds * speed(now, w) / 2, w)
        running[i] = w
        finishing.append((now + took, i))
        finishing.sort(reverse=True)

    for w in range(workers):
        hand_out(w, 0.0)
    done = 0
    now = 0.0
    while finishing:
        now, i = finishing.pop()
        w = running.pop(i)
        job, began = backlog.finish(i)
        cell, took = cells[i], now - (began or 0.0)
        ref = None
        if meter is not None and cell.ref is not None:
            slow = took / cell.seconds if cell.seconds > 0 else 1.0
            ref = meter.reference(w, [cell.ref * slow], now)
        model.observe(cell.job, took, ref)
        done += 1
        hand_out(w, now)
        if backlog.unmeasured(model) or (done % every and done not in due):
            log.append((now, done, None))  # as the runner: no ETA yet
            continue
        at = meter.seconds(now, said) if meter is not None else None
        said = backlog.eta(model, now, workers, at)
        log.append((now, done, said))
    return Replay(now, log)


def load(path: Path, every: int = 1) -> list[Cell]:
    """The recorded cells in submission order (the order they finished in; a
    block's cells together, as one worker ran them)."""
    lines = [ln for ln in path.read_text().splitlines() if not ln.startswith("#")]
    cells = []
    for r in csv.DictReader(lines):
        depth = int(r["depth"]) if r["depth"] else None
        job = Workload((r["config"], r["size"], r["solvable"] == "True"), depth,
                  int(r["passes"]), float(r.get("limit") or 1e9))  # fmt: skip
        ref = float(r["ref_seconds"]) if r.get("ref_seconds") else None
        cells.append(Cell(job, float(r["cell_seconds"]), ref, r.get("block") or None))
    blocks: dict = {}
    for c in cells:  # blocks in the order of their first cell
        blocks.setdefault(c.block if c.block is not None else id(c), []).append(c)
    ordered = [c for group in blocks.values() for c in group]
    return ordered[::every] if every > 1 else ordered


def drift(seed: int, steps: int = 50) -> list[float]:
    """A random walk of log speed, ``steps`` + 1 values, kept in 0.5x-2x."""
    rng, x, out = random.Random(seed), 0.0, []
    for _ in range(steps + 1):
        out.append(math.exp(x))
        x = min(max(x + rng.gauss(0, 0.15), -math.log(2)), math.log(2))
    return out


def profiles(quiet: float, seed: int = 1) -> dict:
    """Speed profiles ``speed(t, worker)`` for a run of ``quiet`` seconds as
    recorded."""
    third = quiet / 3
    walks = [drift(seed + w) for w in range(8)]

    def per_core(t: float, w: int) -> float:
        walk = walks[w % len(walks)]
        return walk[min(int(t / quiet * (len(walk) - 1)), len(walk) - 1)]

    return {
        "unchanged": lambda t, w: 1.0,
        "2x slower from 1/3": lambda t, w: 1.0 if t < third else 2.0,
        "2x faster from 1/3": lambda t, w: 2.0 if t < 2 * third else 1.0,
        "per-core drift": per_core,
    }


def median_error(run: Replay, lo: float = 0.1, hi: float = 0.9) -> float:
    """Median of |said / really left - 1| over the cells finished from ``lo`` to
    ``hi`` of the run (no ETA yet: counted as a miss of 100%)."""
    n, errors = len(run.log), []
    for t, done, said in run.log:
        if lo * n <= done <= hi * n and run.wall > t:
            errors.append(1.0 if said is None else abs(said / (run.wall - t) - 1))
    return statistics.median(errors) if errors else float("nan")
