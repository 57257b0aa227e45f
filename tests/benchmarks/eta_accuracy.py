"""The main job's wall time, where it goes, and how right its ETA is: run
``harness run`` (the real command, in this process, with a progress recorder in
place of the bar), record the ETA at every finished cell, then compare it with the
time that really remained at 25%, 50% and 75% of the cells (the goal: within
+-30% on the default main job; issue 13 goal: the main job in at most 90 s).

    python tests/benchmarks/eta_accuracy.py                      # the main job
    python tests/benchmarks/eta_accuracy.py --runs 3             # three, summarized
    python tests/benchmarks/eta_accuracy.py --solvers astar_dict,bfs \\
        --datasets 8-strata --repeats 1 --no-memory              # a quick look

Prints the wall time of the whole command (interpreter start-up measured apart
and added), its phases (meta.json ``phases``: the workers' set-up, warm-up, timed,
reference, memory and tracemalloc solves, idle worker slots, the tail after the
last hand-off; then the summary and report after the cells), and one line per
checkpoint: cells done, elapsed, ETA said, really left, ratio said/real. The run
is stored under a temporary folder and removed. Load average is printed beside
the figures: the machine's other work moves them.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


class Recorder:
    """A Progress that keeps (seconds since start, cells done, ETA) per event."""

    shows_estimate = True

    def __init__(self) -> None:
        self.t0 = 0.0
        self.done = 0
        self.total = 0
        self.left: float | None = None
        self.log: list[tuple[float, int, float | None]] = []
        self.shown: list[tuple[float, str]] = []
        self.cells: list[tuple[float, object, float | None, float]] = []

    def start(self, total: int, done: int, failures: int) -> None:
        self.t0, self.total, self.done = time.monotonic(), total, done

    def estimate(self, seconds_left: float) -> None:
        self.left = seconds_left
        self._show(f"~{seconds_left:.0f} s left")

    def no_estimate(self, why: str) -> None:
        self.left = None
        self._show(why)

    def _show(self, text: str) -> None:
        """What the bar said, each time it changed (seconds since start, text)."""
        if not self.shown or self.shown[-1][1] != text:
            self.shown.append((time.monotonic() - self.t0, text))

    def setup_began(self, config: str, worker: int) -> None: ...
    def setup_ended(self, config: str, worker: int, seconds: float | None) -> None: ...

    def observed(self, job, said: float | None, took: float) -> None:
        """The cost model's estimate of a cell when it started, and what it took."""
        self.cells.append((time.monotonic() - self.t0, job, said, took))

    def started(self, config: str, dataset: str) -> None: ...

    def finished(self, done: int, failures: int, failure_line: str | None) -> None:
        self.done = done
        self.log.append((time.monotonic() - self.t0, done, self.left))

    def stop(self) -> None: ...


def startup_seconds() -> float:
    """Wall seconds of a fresh interpreter importing the command line (what a shell
    pays before ``harness run`` starts; this script pays it once, up front)."""
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", "import harness.cli"], check=True)
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solvers", default="all")
    ap.add_argument("--datasets", default="default")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--runs", type=int, default=1,
                    help="run the command this many times, one after another, "
                         "and summarize (default 1)")  # fmt: skip
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="store the run under DIR and keep it")  # fmt: skip
    ap.add_argument("--record", type=Path, default=None, metavar="CSV",
                    help="write each cell's job, wall seconds, reference seconds "
                         "and core to CSV (for eta_replay.py --cells)")  # fmt: skip
    ap.add_argument("harness_options", nargs="*", metavar="-- OPTION",
                    help="more `harness run` options, after --")  # fmt: skip
    args = ap.parse_args()
    import harness.cli  # noqa: F401  (the start-up below is measured apart)

    boot = startup_seconds()
    summary = []
    for n in range(1, args.runs + 1):
        if args.runs > 1:
            print(f"== run {n} of {args.runs}")
        summary.append(one_run(args, boot))
    if args.runs > 1:
        print(f"== {args.runs} runs, one after another")
        for n, (wall, ratios, worst) in enumerate(summary, start=1):
            said = " / ".join("-" if r is None else f"{r:.2f}" for r in ratios)
            print(f"run {n}: WALL {wall:.1f} s; ETA said/real at 25/50/75%: {said}; "
                  f"worst error {100 * worst:.0f}%")  # fmt: skip
        walls = [w for w, _, _ in summary]
        worst = max(w for _, _, w in summary)
        print(
            f"worst ETA error over the runs: {100 * worst:.0f}% (goal: at most 30%); "
            f"WALL {min(walls):.1f}-{max(walls):.1f} s (goal: at most 90 s)"
        )


def one_run(args, boot: float) -> tuple[float, list[float | None], float]:
    """One `harness run` with its report printed; (wall, ETA said/real at 25, 50
    and 75% of the cells, the worst error of those)."""
    import harness.cli
    from harness.cli import progress as cli_progress

    out = args.keep or Path(tempfile.mkdtemp(prefix="eta-"))
    argv = ["run", "--solvers", args.solvers, "--datasets", args.datasets,
            "--out", str(out)]  # fmt: skip
    argv += ["--repeats", str(args.repeats)] if args.repeats else []
    argv += ["--no-memory"] if args.no_memory else []
    argv += ["--jobs", str(args.jobs)] if args.jobs is not None else []
    argv += args.harness_options
    rec = Recorder()
    cli_progress.make_progress = lambda quiet: rec  # the bar's place: record the ETA
    load_before = os.getloadavg()[0]
    try:
        started = time.monotonic()
        try:
            harness.cli.app(argv, standalone_mode=False)
        except SystemExit as stop:
            if stop.code:
                raise
        wall = time.monotonic() - started + boot
        runs = sorted(p for p in out.iterdir() if (p / "meta.json").is_file())
        meta = json.loads((runs[-1] / "meta.json").read_text()) if runs else {}
        if args.record is not None and runs:
            shown = [a.replace(str(out), "TMP") for a in argv]
            record(rec, runs[-1], args.record, shown)
    finally:
        if args.keep is None:
            shutil.rmtree(out, ignore_errors=True)
    end = rec.log[-1][0] if rec.log else 0.0
    print("harness " + " ".join(argv).replace(str(out), "TMP"))
    print(f"{rec.total} cells: WALL {wall:.1f} s for the whole command (start-up "
          f"{boot:.1f} s, cells {end:.1f} s, summary and report "
          f"{wall - boot - meta.get('phases', {}).get('wall_seconds', end):.1f} s); "
          f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    phases = meta.get("phases", {})
    if phases:
        print("phases, wall s: " + ", ".join(
            f"{k.removesuffix('_seconds')} {v:.1f}" for k, v in phases.items()
            if isinstance(v, float) and not k.endswith("_cpu_seconds")))  # fmt: skip
        print("workers' phases, CPU s: " + ", ".join(
            f"{k.removeprefix('worker_').removesuffix('_cpu_seconds')} {v:.1f}"
            for k, v in phases.items() if k.endswith("_cpu_seconds")))  # fmt: skip
    # the first minute, where one-time set-ups (tables, compilation) fall: every
    # change of what the bar said (issue 32: "40 -> 53 -> 30 min" for a 4-min job)
    early = [f"{t:.0f} s: {text} (really {end - t:.0f} s left)"
             for t, text in rec.shown if t <= 60]  # fmt: skip
    if early:
        print("first minute, the bar said: " + "; ".join(early[:12])
              + (f"; ... ({len(early) - 12} more)" if len(early) > 12 else ""))
    print("share  cells   elapsed   ETA said   really left   said/real")
    ratios: dict[float, float | None] = {0.25: None, 0.50: None, 0.75: None}
    for share in (0.10, 0.25, 0.50, 0.75, 0.90):
        want = share * rec.total
        hit = next(((t, d, left) for t, d, left in rec.log if d >= want), None)
        if hit is None or hit[2] is None:
            print(f"{share:>4.0%}  {'':>5}  no ETA yet (a config has no cell measured)"
                  if hit is not None else f"{share:>4.0%}  -")  # fmt: skip
            continue
        t, d, left = hit
        real = end - t
        ratio = left / real if real > 0 else float("inf")
        if share in ratios:
            ratios[share] = ratio
        print(f"{share:>4.0%}  {d:>5}  {t:>7.1f} s  {left:>7.1f} s  {real:>9.1f} s"
              f"   {ratio:>8.2f}")  # fmt: skip
    # a checkpoint without an ETA counts as a miss (the goal asks for one there)
    worst = max(abs(r - 1) if r is not None else float("inf") for r in ratios.values())
    print(f"worst ETA error at 25/50/75%: {100 * worst:.0f}% (goal: at most 30%)")
    # how right the cost model was, by quarter of the cells in finishing order
    cells = [c for c in rec.cells if c[2] is not None]
    quarter = max(len(cells) // 4, 1)
    for q in range(4):
        part = cells[q * quarter : (q + 1) * quarter if q < 3 else None]
        if part:
            said, took = sum(c[2] for c in part), sum(c[3] for c in part)
            print(f"cells {q * quarter + 1}-{q * quarter + len(part)} (finish order): "
                  f"expected {said:.1f} s, took {took:.1f} s of worker time "
                  f"({said / took if took else float('nan'):.2f}x)")  # fmt: skip
    return wall, list(ratios.values()), worst


def record(rec: Recorder, run_dir: Path, path: Path, argv: list[str]) -> None:
    """Write the cells in finishing order: the job, the parent's wall seconds
    (set-up excluded), the median reference seconds of its timed repeats, the
    core, when it finished (seconds from the first hand-off) and its block (the
    instance: one worker runs its cells in turn). The rows of
    rows.csv are appended cell by cell in the same order (declined cells first)."""
    with open(run_dir / "rows.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["status"] != "skipped"]
    cells: list[list[dict]] = []
    for r in rows:
        key = (r["config"], r["dataset"], r["instance"])
        if cells and (cells[-1][0]["config"], cells[-1][0]["dataset"],
                      cells[-1][0]["instance"]) == key:  # fmt: skip
            cells[-1].append(r)
        else:
            cells.append([r])
    if len(cells) != len(rec.cells) or any(
        c[0]["config"] != job.key[0]
        for c, (_, job, _, _) in zip(cells, rec.cells, strict=True)
    ):
        raise SystemExit(f"--record: {len(cells)} cells in rows.csv, "
                         f"{len(rec.cells)} observed; not in step")  # fmt: skip
    load = os.getloadavg()
    with open(path, "w", newline="") as f:
        f.write(f"# cells of `harness {' '.join(argv)}`, {time.strftime('%F %H:%M')}"
                f", load average {load[0]:.1f} at the end, in finishing order; "
                "replayed by tests/benchmarks/eta_replay.py\n")  # fmt: skip
        w = csv.writer(f)
        w.writerow(["config", "size", "solvable", "depth", "passes", "limit",
                    "cell_seconds", "ref_seconds", "core", "finished",
                    "block"])  # fmt: skip
        for c, (t, job, _, took) in zip(cells, rec.cells, strict=True):
            refs = [float(r["ref_seconds"]) for r in c if r["ref_seconds"]]
            w.writerow([*job.key, "" if job.depth is None else job.depth,
                        job.passes, f"{job.limit:g}", f"{took:.6f}",
                        f"{statistics.median(refs):.6f}" if refs else "",
                        c[0]["cpu"], f"{t:.3f}",
                        f"{c[0]['dataset']}/{c[0]['instance']}"])  # fmt: skip


if __name__ == "__main__":
    main()
