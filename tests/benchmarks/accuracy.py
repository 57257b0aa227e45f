"""Accuracy of `harness run`'s times: the CPU time it records per board, against
the same solver timed in a calibrated loop in one process on the same boards.

Identical runs agreeing (the A/A test, ``aa_noise.py``) shows precision only; this
checks the figure itself against an outside reference. Config by config, from a
~2 us table lookup to a ~0.1 s BFS, interleaved:

1. the reference: a lean child process (the solver and its heuristic imported,
   nothing else; pinned to the first core, as the harness pins its first worker;
   collector paused) solves each board once (warm), then times it as the median
   of 3 loops of back-to-back solves lasting at least ``--loop-ms``, each solve's
   counters made before the clock (the solver's time only);
2. ``harness run`` (the real command, a subprocess, default options but no memory
   pass and ``--jobs 1``) of that config on the same boards: its one worker is
   pinned to the first core, as the reference is. Each core drifts on its own (up
   to 2x over seconds here), so with two workers half the boards would be timed on
   a core the reference never ran on (``--jobs 2`` to see it);
3. the reference again; its geometric mean with step 1 brackets the run (the
   machine drifts; the 'before/after' column shows by how much).

With ``--rounds N`` every config's bracket is run N times (the configs' order
reversed every other round) and each figure's median over the rounds is printed,
with every round's ratio: one bracket is a few seconds, and the drift within it is
what the 'before/after' column shows. Per config it prints the geometric mean over
boards of recorded / reference CPU time (goal: 0.9-1.1), its quartiles, and the cold
first solve's ratio for contrast (what one solve after the harness's bookkeeping read,
the figure before schema 5).

    python tests/benchmarks/accuracy.py             # 292 3x3 boards, 10 4x4 walks
    python tests/benchmarks/accuracy.py --quick     # about a quarter of the boards
    python tests/benchmarks/accuracy.py --rounds 3  # each bracket 3 times, the median
    python tests/benchmarks/accuracy.py -- --min-sample-time 0   # one solve a repeat

Boards: 8-uniform and 8-strata (292) for the compiled configs and ``table``; every
fourth of them for the pure-Python searches, every fifteenth for BFS; ten boards
of 15-walks for the 4x4 configs. Load averages are printed with the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

#: (config, which boards): "all" 3x3, "some" 3x3 (every 4th), "few" 3x3 (every
#: 15th), "4x4" (the walks)
CONFIGS = [
    ("table", "all"),
    ("ida_star_jit[pdb44]", "all"),
    ("ida_star_jit[manhattan]", "all"),
    ("astar_cantor_jit[manhattan]", "all"),
    ("astar_dict[manhattan]", "some"),
    ("ida_star[manhattan]", "some"),
    ("bfs", "few"),
    ("ida_star_jit[manhattan]", "4x4"),
    ("ida_star[manhattan]", "4x4"),
    ("astar_dict[manhattan]", "4x4"),
]
HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def boards(quick: bool) -> dict[str, object]:
    """The datasets of the run, by the name of their board set."""
    from harness.datasets import make_dataset, select_datasets

    three = [replace(i, id=f"{name[2]}{i.id}")  # ids of the two sets overlap
             for name in ("8-uniform", "8-strata")
             for i in select_datasets(name)[0].instances if i.solvable]  # fmt: skip
    walks = select_datasets("15-walks")[0]
    step = 4 if quick else 1
    picks = {
        "all": three[::step],
        "some": three[:: 4 * step],
        "few": three[:: 15 * step],
        "4x4": list(walks.instances[: 4 if quick else 10]),
    }
    out = {}
    for name, chosen in picks.items():
        first = chosen[0]
        out[name] = make_dataset(
            f"acc-{name.replace('x', 'by')}", first.grid, first.goal,
            generator="subset", params={"of": "8-uniform+8-strata" if name != "4x4"
                                        else "15-walks"},
            seed=None, instances=chosen,
        )  # fmt: skip
    return out


def reference_child(config: str, dataset: str, loop_seconds: float) -> None:
    """The reference loops, in this (child) process: print {instance: seconds}."""
    import gc

    from harness.configs import parse_config
    from harness.datasets import select_datasets
    from harness.heuristics import make_heuristic
    from harness.solver import Counters

    if hasattr(os, "sched_setaffinity"):  # as the harness pins its first worker
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    ds = select_datasets(dataset)[0]
    spec = parse_config(config)  # parameters too: "awastar_jit[manhattan,w=2]"
    g, goal = ds.grid, ds.goal
    h = make_heuristic(spec.heuristic, goal, g) if spec.heuristic else None
    if spec.spec.prepare is not None:
        spec.spec.prepare(g, goal, h)
    solve = spec.solve  # the parameters bound, as the worker calls it
    out = {"_reference": reference_solve()}
    gc.collect()
    gc.disable()  # as the harness times: the collector paused
    for inst in ds.instances:
        start = inst.start

        def loop(k: int, start=start) -> float:
            counters = [Counters() for _ in range(k)]
            c0 = time.process_time_ns()
            for c in counters:
                solve(start, goal, g, counters=c, heuristic=h)
            return (time.process_time_ns() - c0) / 1e9

        loop(1)  # warm
        k, took = 1, loop(1)
        while took < loop_seconds:
            k = max(k + 1, math.ceil(k * 1.2 * loop_seconds / max(took, 1e-9)))
            took = loop(k)
        out[inst.id] = sorted([took, loop(k), loop(k)])[1] / k
    gc.enable()
    out["_reference"] = math.sqrt(out["_reference"] * reference_solve())
    print(json.dumps(out))


def reference_solve() -> float:
    """CPU seconds of the harness's reference solve (median of 5, after a warm
    one): what its rows' ref_cpu_seconds measure beside each repeat."""
    from harness.configs import ConfigKey
    from harness.heuristics import make_heuristic
    from harness.measure.tasks import REFERENCE_BOARD, REFERENCE_GOAL, REFERENCE_KEY
    from harness.puzzle import grid
    from harness.solver import Counters

    g = grid(3)
    spec = ConfigKey(*REFERENCE_KEY).resolve()
    h = make_heuristic(spec.heuristic, REFERENCE_GOAL, g)
    times = []
    for _ in range(6):
        c0 = time.process_time_ns()
        spec.spec.solve(REFERENCE_BOARD, REFERENCE_GOAL, g, counters=Counters(),
                        heuristic=h)  # fmt: skip
        times.append((time.process_time_ns() - c0) / 1e9)
    return sorted(times[1:])[2]


def reference(config: str, path: Path, loop_seconds: float) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--reference-child", config, str(path),
         str(loop_seconds)], capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(done.stdout)


def ranking(run: Path, dataset: str, loop_seconds: float) -> None:
    """Does a stored run (the main job) rank its compiled 3x3 configs on
    ``dataset`` as loops of the same solves do? Two rounds of reference loops,
    every config in each (interleaved), against the run's per-board medians."""
    from harness.analysis import read_run

    _, rows = read_run(run)
    timed = rows[
        (rows.measure == "time") & (rows.status == "solved") & (rows.dataset == dataset)
    ]
    compiled = sorted(
        c for c in timed.config.unique() if "_jit" in c or c.startswith("table")
    )
    per = timed.groupby(["config", "instance"]).agg(
        cpu=("cpu_seconds", "median"),
        wall=("seconds", "median"),
        nodes=("expanded", "median"),
    )
    print(f"load {load()}: loops of {len(compiled)} configs on {dataset}, 2 rounds")
    rounds = [
        {c: reference(c, Path(dataset), loop_seconds) for c in order}
        for order in (compiled, compiled[::-1])
    ]
    out = []
    for c in compiled:
        mine = per.loc[c]
        loop = [math.sqrt(rounds[0][c][i] * rounds[1][c][i]) for i in mine.index]
        nodes = mine.nodes
        times = (_gmean(mine.cpu), _gmean(mine.wall), _gmean(loop))
        out.append((c, *times, nodes.median(), nodes.sum(), mine.cpu.sum(), sum(loop)))

    def ranks(k: int) -> dict[str, int]:
        return {r[0]: n for n, r in enumerate(sorted(out, key=lambda r: r[k]), 1)}

    run_cpu, run_wall, loops = ranks(1), ranks(2), ranks(3)
    print(
        f"{'config':34s} {'run cpu us':>10s} {'wall us':>8s} {'loop us':>8s} "
        f"{'ranks run/wall/loop':>19s} {'med nodes':>9s} {'nodes':>9s} "
        f"{'run ms':>7s} {'loop ms':>7s}"
    )
    for c, cpu, wall, loop, med, nodes, total, ltotal in sorted(
        out, key=lambda r: r[1]
    ):
        print(f"{c:34s} {cpu * 1e6:10.1f} {wall * 1e6:8.1f} {loop * 1e6:8.1f} "
              f"{run_cpu[c]:>11d}/{run_wall[c]}/{loops[c]} {med:9.1f} {nodes:9.0f} "
              f"{total * 1e3:7.2f} {ltotal * 1e3:7.2f}")  # fmt: skip
    same = run_cpu == loops
    print(
        f"\nthe run's ranking (geometric mean of per-board median CPU) "
        f"{'equals' if same else 'differs from'} the loops'; wall (the summary's "
        f"gmean ms) {'equals' if run_wall == loops else 'differs'}; load {load()}"
    )


def _gmean(values) -> float:
    return math.exp(sum(math.log(max(v, 1e-9)) for v in values) / len(values))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="about a quarter of it")
    ap.add_argument(
        "--loop-ms",
        type=float,
        default=10.0,
        help="each reference loop lasts at least this (default 10)",
    )
    ap.add_argument("--configs", help="only these configs (comma list of labels)")
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="harness run's workers (default 1: its one worker is pinned to the "
        "first core, where the reference loops run; each core drifts on its own)",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="repeat every config's bracket this often, configs alternating "
        "forwards and backwards; each figure's median is reported (default 1)",
    )
    ap.add_argument(
        "--ranking",
        type=Path,
        metavar="RUN",
        help="instead: rank a stored run's compiled 3x3 configs against loops",
    )
    ap.add_argument("--dataset", default="8-mini", help="with --ranking (8-mini)")
    ap.add_argument("--reference-child", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("extra", nargs="*", help="after --: more harness run options")
    args = ap.parse_args()
    if args.reference_child:
        config, dataset, seconds = args.reference_child
        reference_child(config, dataset, float(seconds))
        return
    if args.ranking:
        ranking(args.ranking, args.dataset, args.loop_ms / 1e3)
        return
    from harness.datasets import save_dataset

    sets = boards(args.quick)
    folder = Path(tempfile.mkdtemp(prefix="accuracy-"))
    paths = {w: save_dataset(d, folder / f"{d.name}.jsonl") for w, d in sets.items()}
    chosen = set(args.configs.split(",")) if args.configs else None
    todo = [(c, w) for c, w in CONFIGS if chosen is None or c in chosen]
    loads = [load()]
    print(f"load {loads[0]}; per config: reference loops, harness run (--jobs "
          f"{args.jobs}), reference loops (>= {args.loop_ms:g} ms, median of 3); "
          f"{args.rounds} round(s)", flush=True)  # fmt: skip
    by_config: dict[tuple, list] = {key: [] for key in todo}
    started = time.monotonic()
    try:
        for round_ in range(args.rounds):
            # every other round backwards: no config always first or last
            for config, which in todo if round_ % 2 == 0 else todo[::-1]:
                figures = one_config(config, which, paths[which], folder, args)
                loads.append(load())
                figures["load"] = loads[-1]
                by_config[(config, which)].append(figures)
                print(f"round {round_ + 1}: {line(config, which, [figures])}",
                      flush=True)  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"\n{'config':30s} {'boards':>6s} {'loop us':>9s} {'loops':>6s} "
        f"{'ratio':>6s} {'q1-q3':>11s} {'norm.':>6s} {'before/after':>12s} "
        f"{'cold':>6s}   " + ("rounds' ratios" if args.rounds > 1 else "load")
    )
    ratios = []
    for (config, which), rounds in by_config.items():
        ratios.append(statistics.median(f["ratio"] for f in rounds))
        print(line(config, which, rounds))
    inside = sum(0.9 <= g <= 1.1 for g in ratios)
    print(
        f"\n{inside} of {len(ratios)} configs within 0.9-1.1 (geometric mean of "
        "recorded / loop CPU per board"
        + (f", the median of {args.rounds} rounds" if args.rounds > 1 else "")
        + "); 'norm.': the same with each side divided "
        "by the reference solve timed beside it (the harness's ref_cpu_seconds, "
        "the child's own), which cancels the machine's drift; 'cold': the cells' "
        "first solve over the loop; 'before/after': the loop's drift over the "
        "config's run; "
        f"{time.monotonic() - started:.0f} s, load {loads[0]} at the start, "
        f"{loads[-1]} at the end"
    )


def one_config(config: str, which: str, path: Path, folder: Path, args) -> dict:
    """One bracket: reference loops, ``harness run`` of the config, reference loops;
    per board the recorded CPU over the loops' geometric mean, summarized."""
    import numpy as np

    from harness.analysis import read_run

    before = reference(config, path, args.loop_ms / 1e3)
    done = subprocess.run(
        [*HARNESS, "run", "--solvers", config, "--datasets", str(path),
         "--out", str(folder / "runs"), "--no-memory", "--quiet", "--no-report",
         "--jobs", str(args.jobs), *args.extra], capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"harness run failed:\n{done.stderr}")
    after = reference(config, path, args.loop_ms / 1e3)
    run_dir = Path(done.stdout.strip().splitlines()[-1])
    _meta, rows = read_run(run_dir)
    shutil.rmtree(run_dir, ignore_errors=True)
    timed = rows[(rows.measure == "time") & (rows.status == "solved")]
    by = timed.groupby("instance")
    cpu, first = by.cpu_seconds.median(), by.first_cpu_seconds.median()
    norm = (timed.cpu_seconds / timed.ref_cpu_seconds).groupby(timed.instance).median()
    ref_loop = math.sqrt(before["_reference"] * after["_reference"])
    r, n, drift, cold, loop_us = [], [], [], [], []
    for inst, recorded in cpu.items():
        loop = math.sqrt(before[inst] * after[inst])
        r.append(recorded / loop)
        n.append(norm[inst] / (loop / ref_loop))
        drift.append(after[inst] / before[inst])
        cold.append(first[inst] / loop)
        loop_us.append(loop * 1e6)
    q1, q3 = np.quantile(r, [0.25, 0.75])
    return {
        "boards": len(r),
        "loop_us": float(np.median(loop_us)),
        "loops": float(by.loops.median().median()),
        "ratio": _gmean(r),
        "q1": float(q1),
        "q3": float(q3),
        "norm": _gmean(n),
        "drift": _gmean(drift),
        "cold": math.exp(np.nanmean(np.log(cold))),
    }


def line(config: str, which: str, rounds: list[dict]) -> str:
    """One config's figures: with several rounds, the median of each figure and
    every round's ratio; with one, that round and its load."""

    def med(key: str) -> float:
        return statistics.median(f[key] for f in rounds)

    label = config + (" (4x4)" if which == "4x4" else "")
    tail = (
        " ".join(f"{f['ratio']:.3f}" for f in rounds)
        if len(rounds) > 1
        else rounds[0].get("load", "")
    )
    return (
        f"{label:30s} {rounds[0]['boards']:6d} {med('loop_us'):9.1f} "
        f"{med('loops'):6.0f} {med('ratio'):6.3f} {med('q1'):5.2f}-{med('q3'):5.2f} "
        f"{med('norm'):6.3f} {med('drift'):12.3f} {med('cold'):6.2f}   {tail}"
    )


if __name__ == "__main__":
    main()
