"""The ETA against a replayed main job under a changing machine speed.

Replays the cells of a recorded main job (``main_job_cells.csv``: each cell's wall
seconds) on simulated workers that pick cells as the pool does
(:func:`harness.measure.schedule.priority`), learning the cost model from each
finished cell, while the machine's speed follows a profile: constant, 2x slower
from 30% of the quiet run's wall time on (other jobs start), 2x faster from there
(they stop), or slowing steadily. Prints the ETA said over the time really left at
25%, 50% and 75% of the cells (goal: within 0.7-1.3). No clock: the costs are
given, so the figures are the same on every machine.

    python tests/benchmarks/eta_replay.py             # every fourth cell, ~20 s
    python tests/benchmarks/eta_replay.py --every 1   # all 820 cells, ~5 min
"""

from __future__ import annotations

import argparse
import csv
import heapq
from collections.abc import Callable
from pathlib import Path

from harness.measure.schedule import CostModel, Job, eta, priority

CELLS = Path(__file__).with_name("main_job_cells.csv")


def load(every: int, offset: int) -> list[tuple[Job, float]]:
    lines = [ln for ln in CELLS.read_text().splitlines() if not ln.startswith("#")]
    cells = []
    for r in csv.DictReader(lines):
        depth = int(r["depth"]) if r["depth"] else None
        key = (r["config"], r["size"], r["solvable"] == "True")
        cells.append((Job(key, depth, int(r["passes"]), 1e9), float(r["cell_seconds"])))
    return cells[offset::every]


def replay(
    cells: list[tuple[Job, float]], workers: int, speed: Callable[[float], float]
) -> tuple[float, list[tuple[float, float | None, float]]]:
    """(wall seconds, [(share done, ETA said, seconds really left)] at 25/50/75%)."""
    model = CostModel()
    pending = list(range(len(cells)))
    running: dict[int, float] = {}
    heap: list[tuple[float, int]] = []
    log: list[tuple[float, int, float | None]] = []

    def start(now: float) -> None:
        busy = [cells[i][0] for i in running]
        best = max(pending, key=lambda i: priority(model, cells[i][0], busy))
        pending.remove(best)
        running[best] = now
        heapq.heappush(heap, (now + cells[best][1] * speed(now), best))

    def left(now: float) -> float | None:
        if any(not model.measured(cells[i][0].key) for i in [*pending, *running]):
            return None  # as the runner: no ETA until every config has a cell
        return eta(model, [cells[i][0] for i in pending],
                   [(cells[i][0], now - t0) for i, t0 in running.items()], workers)

    for _ in range(workers):
        start(0.0)
    done, now = 0, 0.0
    while heap:
        now, i = heapq.heappop(heap)
        model.observe(cells[i][0], now - running.pop(i))
        done += 1
        if pending:
            start(now)
        log.append((now, done, left(now)))
    out = []
    for share in (0.25, 0.5, 0.75):
        t, _, said = next(x for x in log if x[1] >= share * len(cells))
        out.append((share, said, now - t))
    return now, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--every", type=int, default=4, help="replay every Nth cell")
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    cells = load(args.every, args.offset)
    quiet, _ = replay(cells, args.workers, lambda t: 1.0)
    change = 0.3 * quiet
    profiles = {
        "constant": lambda t: 1.0,
        "2x slower from 30%": lambda t: 1.0 if t < change else 2.0,
        "2x faster from 30%": lambda t: 2.0 if t < 2 * change else 1.0,
        "slowing steadily": lambda t: 1.0 + t / quiet,
    }
    print(f"{len(cells)} cells, {args.workers} workers, quiet wall {quiet:.1f} s")
    for name, speed in profiles.items():
        wall, points = replay(cells, args.workers, speed)
        said = "  ".join(
            f"{100 * s:.0f}%: " + ("-" if e is None else f"{e / real:.2f}")
            for s, e, real in points
        )
        print(f"{name:20s} wall {wall:6.1f} s   ETA said / really left  {said}")


if __name__ == "__main__":
    main()
