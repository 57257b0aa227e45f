"""How right the run's ETA is: run a job, record the ETA at every finished cell,
then compare it with the time that really remained at 25%, 50% and 75% of the
cells (the goal: within +-30% on the default main job).

    python tests/benchmarks/eta_accuracy.py                      # the main job
    python tests/benchmarks/eta_accuracy.py --solvers astar_dict,bfs \\
        --datasets 8-strata --repeats 1 --no-memory              # a quick look

Prints one line per checkpoint: cells done, elapsed, ETA said, really left,
ratio said/real; and the wall time of the whole run. The run is stored under a
temporary folder and removed. Load average is printed beside the figures: the
machine's other work moves them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from harness.measure import runner


class Recorder:
    """A Progress that keeps (seconds since start, cells done, ETA) per event."""

    def __init__(self) -> None:
        self.t0 = 0.0
        self.done = 0
        self.total = 0
        self.left: float | None = None
        self.log: list[tuple[float, int, float | None]] = []

    def start(self, total: int, done: int, failures: int) -> None:
        self.t0, self.total, self.done = time.monotonic(), total, done

    def estimate(self, seconds_left: float) -> None:
        self.left = seconds_left

    def started(self, config: str, dataset: str) -> None: ...

    def finished(self, done: int, failures: int, failure_line: str | None) -> None:
        self.done = done
        self.log.append((time.monotonic() - self.t0, done, self.left))

    def stop(self) -> None: ...


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solvers", default="all")
    ap.add_argument("--datasets", default="default")
    ap.add_argument("--repeats", type=int, default=runner.DEFAULT_REPEATS)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--jobs", type=int, default=None)
    args = ap.parse_args()

    out = Path(tempfile.mkdtemp(prefix="eta-"))
    rec = Recorder()
    load_before = os.getloadavg()[0]
    try:
        started = time.monotonic()
        runner.run(
            args.solvers, args.datasets, repeats=args.repeats, jobs=args.jobs,
            memory_pass=not args.no_memory, out=out, progress=rec,
        )  # fmt: skip
        wall = time.monotonic() - started
    finally:
        shutil.rmtree(out, ignore_errors=True)
    end = rec.log[-1][0] if rec.log else 0.0
    print(f"{args.solvers} on {args.datasets}: {rec.total} cells, wall {wall:.1f} s "
          f"(cells {end:.1f} s); load average {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after")  # fmt: skip
    print("share  cells   elapsed   ETA said   really left   said/real")
    worst = 0.0
    for share in (0.10, 0.25, 0.50, 0.75, 0.90):
        want = share * rec.total
        hit = next(((t, d, left) for t, d, left in rec.log if d >= want), None)
        if hit is None or hit[2] is None:
            continue
        t, d, left = hit
        real = end - t
        ratio = left / real if real > 0 else float("inf")
        if share in (0.25, 0.50, 0.75):
            worst = max(worst, abs(ratio - 1))
        print(f"{share:>4.0%}  {d:>5}  {t:>7.1f} s  {left:>7.1f} s  {real:>9.1f} s"
              f"   {ratio:>8.2f}")  # fmt: skip
    print(f"worst ETA error at 25/50/75%: {100 * worst:.0f}% (goal: at most 30%)")


if __name__ == "__main__":
    main()
