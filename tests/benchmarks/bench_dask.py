"""Dask executor overhead and scaling: the figures of issue 12 (not a pytest file).

    .venv/bin/python tests/benchmarks/bench_dask.py             # overhead, ~8 min
    .venv/bin/python tests/benchmarks/bench_dask.py --scale     # scale, ~3-4 min

Overhead: the same grid (default ``--datasets 8-mini --solvers all``) through the
local pool with 2 jobs and through a 2-worker LocalCluster (``--executor dask
--jobs 2``), interleaved local, dask, local, dask ... so load drifts hit both
alike. Each run's wall time is split into: start (the executor: for Dask, importing
distributed and starting the LocalCluster, its two worker processes and the
check of their code), cells (the runner's ``execute`` until the last row is stored)
and close (shutting the executor down: for Dask, closing the cluster). Printed:
the dask/local ratio of the whole wall (what a user waits for) and of the cells
phase alone (without start-up and close), each with the overhead per cell (wall
difference / cells), medians over the rounds. The goal of issue 12 is <= 1.15.

Scale (``--scale``): the same grid on a 1-worker and on a 2-worker LocalCluster,
interleaved (1, 2, 2, 1, ...); prints both walls and the ideal-speedup efficiency
T1 / (2 x T2) of the whole wall and of the cells alone, with the load average. The
default scale grid (``--scale-solvers``, 216 cells) should take about 1 min on 1
worker and 30 s on 2 on a quiet 2-core machine: with 2 rounds, the cluster
start-ups and the warm-up, 3-4 minutes (``--rounds 1`` halves it). On a machine
whose cores are shared with other work, the efficiency says little (printed
anyway).

Before timing, one untimed local run of the first two instances of each dataset
warms the caches (numba's compiled kernels, pattern databases), so no timed run
pays a cold cache that another does not (``--no-warm`` skips it).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import tempfile
import time

from harness import results as res
from harness.measure import runner
from harness.measure.executors.dask import start_dask_executor
from harness.measure.plan import make_plan

#: configs of the default scale grid: on 8-mini (216 cells), 78-91 s on the local
#: pool's 2 workers at load average ~15; on a quiet machine ~30 s on 2 workers
SCALE_SOLVERS = "astar_dict,astar_cantor_jit,ida_star,ida_star_jit,bidir_bfs,table"


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


@dataclasses.dataclass
class Timing:
    wall: float  # start + cells + close
    start: float
    cells: float
    close: float
    count: int
    info: dict


def one_run(plan, executor: str, jobs: int) -> Timing:
    """One run in a fresh run directory, its wall time split into start (the
    executor), cells (until the last row is stored) and close (the executor)."""
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        if executor == "dask":
            chosen = start_dask_executor(None, jobs)
            run_dir, meta = runner.start(plan, out, jobs=chosen.jobs, argv=["bench"])
        else:
            run_dir, meta = runner.start(plan, out, jobs=jobs, argv=["bench"])
            chosen = runner.make_executor(jobs, run_dir, pin=plan.pin)
        t1 = time.perf_counter()
        shutdown = chosen.shutdown
        closing: list[float] = []

        def timed_shutdown(**kw) -> None:
            t = time.perf_counter()
            shutdown(**kw)
            closing.append(time.perf_counter() - t)

        chosen.shutdown = timed_shutdown  # type: ignore[method-assign]
        outcome = runner.execute(plan, run_dir, meta, executor=chosen)
        t2 = time.perf_counter()
        stored = res.read_row_dicts(run_dir)
    close = sum(closing)
    bad = sum(r["status"] in ("error", "timeout") for r in stored)
    # the timed solves' own wall time: more under Dask = the solves were slowed
    # (by Dask's processes, say), not only the hand-offs between them
    timed = [r for r in stored if r["measure"] == "time"]
    solves = sum(float(r["seconds"] or 0) for r in timed)
    info = {"rows": len(stored), "failed": bad, "solves_s": round(solves, 2)}
    if getattr(chosen, "batches", None) is not None:
        info["batches"] = chosen.batches
    return Timing(t2 - t0, t1 - t0, t2 - t1 - close, close, outcome.total, info)


def warm(plan) -> None:
    """Set-ups (compiled kernels, tables) into the caches: a short local run."""
    small = dataclasses.replace(
        plan,
        datasets=[dataclasses.replace(d, instances=d.instances[:2])
                  for d in plan.datasets],
        repeats=1, warmup=0, memory_pass=False,
    )  # fmt: skip
    t = time.perf_counter()
    one_run(small, "local", 2)
    print(f"warm-up (local, 2 instances per dataset): {time.perf_counter() - t:.1f} s")


def overhead(args) -> None:
    plan = make_plan(args.solvers, args.datasets, repeats=args.repeats)
    print(f"overhead: --solvers {args.solvers} --datasets {args.datasets}, repeats "
          f"{args.repeats} + warm-up solve + memory pass; {load()}")  # fmt: skip
    if not args.no_warm:
        warm(plan)
    runs: dict[str, list[Timing]] = {"local": [], "dask": []}
    for r in range(args.rounds):
        for kind in ("local", "dask") if r % 2 == 0 else ("dask", "local"):
            t = one_run(plan, kind, 2)
            runs[kind].append(t)
            print(f"round {r + 1} {kind:5s}: wall {t.wall:7.2f} s = start "
                  f"{t.start:5.2f} + cells {t.cells:7.2f} + close {t.close:5.2f}; "
                  f"{t.count} cells {t.info} ({load()})")  # fmt: skip
    cells = runs["local"][-1].count

    def report(name: str, of) -> None:
        local = statistics.median(of(t) for t in runs["local"])
        dask = statistics.median(of(t) for t in runs["dask"])
        per_round = ", ".join(
            f"{of(d) / of(x):.3f}"
            for d, x in zip(runs["dask"], runs["local"], strict=True)
        )
        print(f"{name}: local {local:.2f} s, dask {dask:.2f} s; dask/local "
              f"{dask / local:.3f} (goal <= 1.15; rounds: {per_round}); overhead "
              f"{1e3 * (dask - local) / cells:+.1f} ms per cell over {cells} "
              f"cells")  # fmt: skip

    report("with start-up and close (whole wall)", lambda t: t.wall)
    report("without start-up and close (cells)", lambda t: t.cells)
    print(f"dask start-up {statistics.median(t.start for t in runs['dask']):.2f} s, "
          f"close {statistics.median(t.close for t in runs['dask']):.2f} s "
          f"(medians); {load()}")  # fmt: skip


def scale(args) -> None:
    solvers = args.scale_solvers
    plan = make_plan(solvers, args.scale_datasets, repeats=args.repeats)
    print(f"scale: --solvers {solvers} --datasets {args.scale_datasets}, repeats "
          f"{args.repeats} + warm-up solve + memory pass; {load()}")  # fmt: skip
    if not args.no_warm:
        warm(plan)
    walls: dict[int, list[float]] = {1: [], 2: []}
    cells: dict[int, list[float]] = {1: [], 2: []}
    count = 0
    for r in range(args.rounds):
        for workers in (1, 2) if r % 2 == 0 else (2, 1):
            t = one_run(plan, "dask", workers)
            walls[workers].append(t.wall)
            cells[workers].append(t.cells)
            count = t.count
            print(f"round {r + 1}, {workers} worker(s): wall {t.wall:7.2f} s (start "
                  f"{t.start:.2f}, close {t.close:.2f}); {t.count} cells {t.info} "
                  f"({load()})")  # fmt: skip
    for name, of in (("whole wall", walls), ("cells (no start-up, close)", cells)):
        t1, t2 = statistics.median(of[1]), statistics.median(of[2])
        print(f"scale, {name} ({count} cells): 1 worker {t1 / 60:.2f} min, 2 "
              f"workers {t2 / 60:.2f} min; speed-up {t1 / t2:.2f}, efficiency "
              f"T1/(2 T2) {t1 / (2 * t2):.2f} ({load()})")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="8-mini")
    ap.add_argument("--solvers", default="all")
    ap.add_argument("--rounds", type=int, default=2,
                    help="rounds (each: both sides once, interleaved)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-warm", action="store_true",
                    help="skip the warm-up run (caches already warm)")  # fmt: skip
    ap.add_argument("--scale", action="store_true",
                    help="run the scale check (1 vs 2 workers)")  # fmt: skip
    ap.add_argument("--scale-solvers", default=SCALE_SOLVERS)
    ap.add_argument("--scale-datasets", default="8-mini")
    args = ap.parse_args()
    if args.scale:
        scale(args)
    else:
        overhead(args)


if __name__ == "__main__":
    main()
