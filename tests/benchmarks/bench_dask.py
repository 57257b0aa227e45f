"""Dask executor overhead and scaling: the figures of issue 12 (not a pytest file).

    .venv/bin/python tests/benchmarks/bench_dask.py              # overhead, 2 rounds
    .venv/bin/python tests/benchmarks/bench_dask.py --rounds 3 --scale 8-uniform

Overhead: the same grid (default ``--datasets 8-mini --solvers all``) through
``LocalPool`` with 2 jobs and through a 2-worker LocalCluster (``--executor dask
--jobs 2``), interleaved round by round so load drifts hit both alike. Printed: wall
time of each, the dask/local wall ratio (goal <= 1.15) and the per-cell overhead
(wall difference / cells). Wall time is the runner's ``execute`` (cells in, rows
stored), plus, for Dask, starting and closing the LocalCluster, which a user pays too.

Scale (``--scale DATASETS``): the grid on a 1-worker and on a 2-worker LocalCluster;
prints both walls and the ideal-speedup efficiency T1 / (2 x T2). On a machine with
2 cores shared with other work this is a lower bound of what 2 free cores give.

Set-up (numba compilation, pattern databases) is warmed by one untimed local run
first, so neither side pays a cold cache the other does not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from harness import results as res
from harness.measure import runner


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def one_run(plan, executor: str, jobs: int) -> tuple[float, int, dict]:
    """Wall seconds of one run (executor start and close included), cells, and
    details: the seconds spent starting the executor, rows, failures."""
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        if executor == "dask":
            chosen = runner.make_dask_executor(None, jobs)
            run_dir, meta = runner.start(plan, out, jobs=chosen.jobs, argv=["bench"])
        else:
            run_dir, meta = runner.start(plan, out, jobs=jobs, argv=["bench"])
            chosen = runner.make_executor(jobs, run_dir)
        started = time.perf_counter() - t0
        outcome = runner.execute(plan, run_dir, meta, executor=chosen)
        wall = time.perf_counter() - t0
        stored = res.read_row_dicts(run_dir)
    bad = sum(r["status"] in ("error", "timeout") for r in stored)
    batches = getattr(chosen, "batches", None)
    info = {"start_s": round(started, 2), "rows": len(stored), "error_or_timeout": bad}
    if batches is not None:
        info["batches"] = batches
    return wall, outcome.total, info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="8-mini")
    ap.add_argument("--solvers", default="all")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scale-only", action="store_true",
                    help="only the scale check")  # fmt: skip
    ap.add_argument("--no-warm", action="store_true",
                    help="skip the warm-up run (caches already warm)")  # fmt: skip
    ap.add_argument("--scale-solvers", default=None,
                    help="solvers of the scale check (default: --solvers)")  # fmt: skip
    ap.add_argument("--scale", default=None, metavar="DATASETS",
                    help="also run the scale check on these datasets")  # fmt: skip
    args = ap.parse_args()

    plan = runner.make_plan(args.solvers, args.datasets, repeats=args.repeats)
    print(f"grid: --solvers {args.solvers} --datasets {args.datasets}, "
          f"repeats {args.repeats}, memory pass; {load()}")  # fmt: skip
    if not args.no_warm:
        t = time.perf_counter()
        one_run(plan, "local", 2)  # warm caches (numba, pattern databases)
        print(f"warm-up run (local, 2 jobs): {time.perf_counter() - t:.1f} s")

    walls: dict[str, list[float]] = {"local": [], "dask": []}
    cells = 0
    for r in range(args.rounds if not args.scale_only else 0):
        for kind in ("local", "dask") if r % 2 == 0 else ("dask", "local"):
            wall, cells, info = one_run(plan, kind, 2)
            walls[kind].append(wall)
            print(f"round {r + 1} {kind:5s}: {wall:7.2f} s  {cells} cells  {info}  "
                  f"({load()})")  # fmt: skip
    if walls["local"]:
        report(walls, cells)
    if args.scale:
        scale(args)


def report(walls: dict[str, list[float]], cells: int) -> None:
    local, dask = statistics.median(walls["local"]), statistics.median(walls["dask"])
    print(f"median wall: local {local:.2f} s, dask {dask:.2f} s; "
          f"dask/local ratio {dask / local:.3f} (goal <= 1.15); "
          f"per-cell overhead {1e3 * (dask - local) / cells:+.2f} ms over {cells} "
          f"cells")  # fmt: skip
    ratios = [d / x for d, x in zip(walls["dask"], walls["local"], strict=True)]
    print("per-round ratios: " + ", ".join(f"{x:.3f}" for x in ratios))


def scale(args) -> None:
    solvers = args.scale_solvers or args.solvers
    splan = runner.make_plan(solvers, args.scale, repeats=args.repeats)
    if not args.no_warm:
        one_run(splan, "local", 2)
    w1, n, _ = one_run(splan, "dask", 1)
    w2, _, _ = one_run(splan, "dask", 2)
    print(f"scale (--solvers {solvers} --datasets {args.scale}, {n} cells): "
          f"1 worker {w1 / 60:.2f} min, 2 workers {w2 / 60:.2f} min; "
          f"speed-up {w1 / w2:.2f}, efficiency {w1 / (2 * w2):.2f} "
          f"({load()})")  # fmt: skip


if __name__ == "__main__":
    main()
