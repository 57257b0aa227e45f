"""The ETA against a replayed main job under a changing machine speed.

Replays the cells of recorded main jobs (``main_job_cells*.csv``: each cell's
wall seconds and the reference solve's seconds beside it, recorded by
``eta_accuracy.py --record``) on simulated workers (``tests/eta_sim.py``: the
pool's hand-outs, the runner's learning and ETA, no clock), while the machine's
speed follows a profile, and prints the ETA said over the time really left at
25%, 50% and 75% of the cells (goal: 0.7-1.3), and the median error over every
finished cell from 10% to 90%. Each profile is replayed with the ETA priced at
the reference's pace (``pace``: the runner's) and by the cost curves alone
(``before``: the ETA before the pace, and a run without the reference).

Profiles, as times the recorded cost (2 = twice as slow), over the wall time W
of the replay as recorded: unchanged (the recorded run's own load, which its
reference times saw too); 2x slower from W/3 on (other jobs start); 2x faster
from a third of the cells (they stop); each core drifting on its own (a random
walk of its log speed within 0.5x-2x, seeded).

    python tests/benchmarks/eta_replay.py                # the recorded main jobs
    python tests/benchmarks/eta_replay.py --quick        # every fourth cell
    python tests/benchmarks/eta_replay.py --cells F.csv  # other recordings
    python tests/benchmarks/eta_replay.py --variants     # other paces, too
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: eta_sim

from eta_sim import load, median_error, profiles, replay  # noqa: E402

from harness.measure.eta import Pace

#: Main jobs recorded on 2026-12-03 (20:34, 20:55, 21:14) under the other
#: helpers' load: steady (reference 26-72 ms), falling (50-100 ms, then 12 ms
#: from 40% of the time on) and rising (10 ms, then 60-100 ms: a second run
#: started beside it).
CELLS = [
    Path(__file__).with_name(name)
    for name in ("main_job_cells.csv", "main_job_cells_2.csv", "main_job_cells_3.csv")
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", type=Path, nargs="+", default=CELLS,
                    help="recorded runs (eta_accuracy.py --record)")  # fmt: skip
    ap.add_argument("--quick", action="store_true", help="every fourth cell")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1, help="of the per-core drift")
    ap.add_argument("--variants", action="store_true",
                    help="also other paces: a window of the last k cells per "
                         "core, other lookbacks")  # fmt: skip
    args = ap.parse_args()
    paces: dict = {"before": None, "pace": Pace}
    if args.variants:
        for k in (1, 3, 10, 25):
            paces[f"last {k}"] = functools.partial(Pace, 0.0, k)
        for f in (0.25, 1.0, 2.0):
            paces[f"{f:g}x left"] = functools.partial(Pace, f)
    started = time.process_time()
    for path in args.cells:
        cells = load(path, 4 if args.quick else 1)
        quiet = replay(cells, args.workers, pace=None).wall
        print(f"{path.name}: {len(cells)} cells, {args.workers} workers, "
              f"wall {quiet:.1f} s as recorded")  # fmt: skip
        print(f"  {'profile':19s} {'ETA':10s} {'wall':>6s}   said/really left at "
              f"25% 50% 75%   median error 10-90%")  # fmt: skip
        for name, speed in profiles(quiet, args.seed).items():
            for label, pace in paces.items():
                run = replay(cells, args.workers, speed, pace)
                said = "  ".join(
                    "   -" if r is None else f"{r:4.2f}" for r in run.ratios()
                )
                print(f"  {name:19s} {label:10s} {run.wall:5.1f}s   {said}"
                      f"        {100 * median_error(run):3.0f}%")  # fmt: skip
    print(f"({time.process_time() - started:.1f} s CPU)")


if __name__ == "__main__":
    main()
