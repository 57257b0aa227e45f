"""Accuracy of `harness run`'s times: the CPU time it records per board, against
the same solver timed in a calibrated loop in one process on the same boards.

Identical runs agreeing (the A/A test, ``aa_noise.py``) shows precision only; this
checks the figure itself against an outside reference. For every config, from a
~2 us table lookup to a ~0.1-1 s BFS:

1. the reference: in this process (pinned to the first core, as the harness pins
   its first worker), each board solved once (warm), then timed as the median of
   3 loops of back-to-back solves lasting at least ``--loop-ms`` (each solve's
   counters made before the clock: the solver's time only);
2. ``harness run`` (the real command, a subprocess, default options but no memory
   pass) on the same boards, from an experiment file;
3. the reference again, and its geometric mean with step 1 (the machine drifts:
   before and after bracket the run).

Per config it prints the geometric mean over boards of recorded / reference CPU
time (goal: 0.9-1.1), its spread, and the cold first solve's ratio for contrast.

    python tests/benchmarks/accuracy.py             # 292 3x3 boards, 10 4x4 walks
    python tests/benchmarks/accuracy.py --quick     # about a quarter of the boards
    python tests/benchmarks/accuracy.py -- --min-sample-time 0   # one solve a repeat

Boards: 8-uniform and 8-strata (292) for the compiled configs and ``table``; every
fourth of them for the pure-Python searches, every fifteenth for BFS; ten boards
of 15-walks for the 4x4 configs. Load averages are printed with the figures.
"""

from __future__ import annotations

import argparse
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


class Reference:
    """Each (config, board) timed in a loop in this process: CPU seconds a solve."""

    def __init__(self, loop_seconds: float) -> None:
        self.loop_seconds = loop_seconds
        self.prepared: dict[tuple, tuple] = {}

    def solver(self, config: str, inst) -> tuple:
        from harness.heuristics import make_heuristic
        from harness.solver import ConfigKey

        key = (config, inst.grid.label, inst.goal)
        if key not in self.prepared:
            solver, _, heuristic = config.rstrip("]").partition("[")
            spec = ConfigKey(solver, heuristic or None).resolve()
            h = (make_heuristic(spec.heuristic, inst.goal, inst.grid)
                 if spec.heuristic else None)  # fmt: skip
            if spec.spec.prepare is not None:
                spec.spec.prepare(inst.grid, inst.goal, h)
            self.prepared[key] = (spec.spec.solve, h)
        return self.prepared[key]

    def time(self, config: str, inst) -> float:
        from harness.solver import Counters

        solve, h = self.solver(config, inst)
        start, goal, g = inst.start, inst.goal, inst.grid

        def loop(k: int) -> float:
            counters = [Counters() for _ in range(k)]  # the solver's time only
            c0 = time.process_time_ns()
            for c in counters:
                solve(start, goal, g, counters=c, heuristic=h)
            return (time.process_time_ns() - c0) / 1e9

        loop(1)  # warm
        k, took = 1, loop(1)
        while took < self.loop_seconds:
            k = max(k + 1, math.ceil(k * 1.2 * self.loop_seconds / max(took, 1e-9)))
            took = loop(k)
        return statistics.median([took, loop(k), loop(k)]) / k


def measure(ref: Reference, sets: dict, gc_off: bool = True) -> dict[tuple, float]:
    import gc

    out = {}
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    if cores:  # pinned as the harness pins its first worker (not its children)
        os.sched_setaffinity(0, {min(cores)})
    if gc_off:
        gc.disable()  # as the harness times: the collector paused
    try:
        for config, which in CONFIGS:
            for inst in sets[which].instances:
                out[(config, which, inst.id)] = ref.time(config, inst)
    finally:
        gc.enable()
        if cores:
            os.sched_setaffinity(0, cores)
    return out


def experiment(folder: Path, sets: dict) -> Path:
    paths = {}
    for which, ds in sets.items():
        from harness.datasets import save_dataset

        paths[which] = save_dataset(ds, folder / f"{ds.name}.jsonl")
    lines = ["memory = false", ""]
    for which in sets:
        configs = sorted({c for c, w in CONFIGS if w == which})
        lines += ["[[grid]]", f"configs = {configs!r}".replace("'", '"'),
                  f'datasets = ["{paths[which]}"]', ""]  # fmt: skip
    path = folder / "accuracy.toml"
    path.write_text("\n".join(lines))
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="about a quarter of it")
    ap.add_argument("--loop-ms", type=float, default=10.0,
                    help="each reference loop lasts at least this (default 10)")
    ap.add_argument("extra", nargs="*", help="after --: more harness run options")
    args = ap.parse_args()
    import numpy as np
    import pandas as pd

    from harness.analysis import read_run

    sets = boards(args.quick)
    ref = Reference(args.loop_ms / 1e3)
    folder = Path(tempfile.mkdtemp(prefix="accuracy-"))
    try:
        print(f"load {load()}: reference loops (before)...", flush=True)
        t0 = time.monotonic()
        before = measure(ref, sets)
        print(f"  {time.monotonic() - t0:.0f} s; load {load()}; harness run...",
              flush=True)  # fmt: skip
        exp = experiment(folder, sets)
        t0 = time.monotonic()
        cmd = [sys.executable, "-c", "from harness.cli import main; main()", "run",
               "--config", str(exp), "--out", str(folder / "runs"), "--quiet",
               "--no-report", *args.extra]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"harness run failed:\n{done.stderr}")
        run_dir = Path(done.stdout.strip().splitlines()[-1])
        wall = time.monotonic() - t0
        print(f"  {wall:.0f} s; load {load()}; reference loops (after)...", flush=True)
        after = measure(ref, sets)
        print(f"  load {load()}", flush=True)
        meta, rows = read_run(run_dir)
        timed = rows[(rows.measure == "time") & rows.status.isin(["solved"])]
        by = timed.groupby(["config", "dataset", "instance"])
        cells = pd.DataFrame({
            "cpu": by.cpu_seconds.median(), "first": by.first_cpu_seconds.median(),
            "loops": by.loops.median(),
        }).reset_index()  # fmt: skip
        names = {ds.name: which for which, ds in sets.items()}
        print()
        print(f"harness run: jobs {meta['options']['jobs']}, min sample "
              f"{meta['options'].get('min_sample_seconds', '-')} s, {wall:.0f} s wall; "
              f"reference loops >= {args.loop_ms:g} ms, median of 3, before and "
              "after")  # fmt: skip
        print(f"{'config':30s} {'boards':>6s} {'loop us':>9s} {'loops':>6s} "
              f"{'ratio':>6s} {'q1-q3':>11s} {'before/after':>12s} {'cold':>6s}")
        ratios = []
        for config, which in CONFIGS:
            mine = cells[(cells.config == config)
                         & (cells.dataset.map(names) == which)]  # fmt: skip
            r, drift, cold, loop_us = [], [], [], []
            for row in mine.itertuples():
                key = (config, which, row.instance)
                if key not in before:
                    continue
                loop = math.sqrt(before[key] * after[key])
                r.append(row.cpu / loop)
                drift.append(after[key] / before[key])
                cold.append(row.first / loop if row.first == row.first else np.nan)
                loop_us.append(loop * 1e6)
            if not r:
                continue
            g = math.exp(np.mean(np.log(r)))
            ratios.append((config, which, g))
            q1, q3 = np.quantile(r, [0.25, 0.75])
            label = config + (" (4x4)" if which == "4x4" else "")
            print(f"{label:30s} {len(r):6d} {np.median(loop_us):9.1f} "
                  f"{mine.loops.median():6.0f} {g:6.3f} {q1:5.2f}-{q3:5.2f} "
                  f"{math.exp(np.mean(np.log(drift))):12.3f} "
                  f"{math.exp(np.nanmean(np.log(cold))):6.2f}")  # fmt: skip
        inside = sum(0.9 <= g <= 1.1 for *_, g in ratios)
        print(f"\n{inside} of {len(ratios)} configs within 0.9-1.1 (geometric mean "
              "of recorded / loop CPU per board); 'cold': the cells' first solve "
              "over the loop; 'before/after': the reference's drift over the run")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
