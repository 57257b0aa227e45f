"""The parent process's CPU per cell as a run grows (issue 24, item 1).

For N = 1,000, 5,000 and 20,000 uniform 3x3 boards, runs the issue's command

    harness datasets generate uniform --size 3x3 --count N --seed 7 --name bigN
    harness run --solvers table --datasets bigN.jsonl --repeats 1

as a subprocess and samples the parent's own CPU time (``/proc/PID/stat``: utime +
stime of the harness process, not of its workers) and the size of its rows.csv
every 0.1 s. The cells' window runs from 5% to 95% of the final rows.csv, leaving
out start-up (imports, the plan) and the end (summary, report).

    python tests/benchmarks/bench_parent_scaling.py            # 1k, 5k, 20k, 1k again
    python tests/benchmarks/bench_parent_scaling.py --quick    # 1k, 5k, 1k again
    python tests/benchmarks/bench_parent_scaling.py --sizes 2000,8000

Prints per N: wall, the parent's CPU in all and per cell in the window, and its
share of one core during the cells. Goals: per-cell parent CPU flat (the largest
N at most 1.2x the smallest, against both runs of the smallest, taken first and
last to bracket the machine's drift) and the parent under 10% of a core. Linux
only (/proc). Load average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float | None:
    """utime + stime of one process (its threads, not its children); None once
    it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # fields 14 and 15 of stat


def one_run(n: int, folder: Path, extra: list[str]) -> dict[str, float]:
    data = folder / f"big{n}.jsonl"
    if not data.exists():
        subprocess.run(
            HARNESS + ["datasets", "generate", "uniform", "--size", "3x3",
                       "--count", str(n), "--seed", "7", "--name", f"big{n}",
                       "--out", str(folder)],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
    out = Path(tempfile.mkdtemp(prefix="runs-", dir=folder))
    load = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.Popen(
        HARNESS + ["run", "--solvers", "table", "--datasets", str(data),
                   "--repeats", "1", "--out", str(out), "--quiet", *extra],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    samples: list[tuple[float, float, int]] = []  # (wall, parent CPU, rows bytes)
    rows: Path | None = None
    while proc.poll() is None:
        cpu = cpu_seconds(proc.pid)
        if rows is None:
            rows = next(out.glob("*/rows.csv"), None)
        size = rows.stat().st_size if rows is not None and rows.exists() else 0
        if cpu is not None:
            samples.append((time.monotonic() - t0, cpu, size))
        time.sleep(0.1)
    wall = time.monotonic() - t0
    if proc.returncode:
        raise SystemExit(f"harness run exited with {proc.returncode} at N={n}")
    final = rows.stat().st_size if rows is not None else 0
    lo = next(s for s in samples if s[2] >= 0.05 * final)
    hi = next(s for s in samples if s[2] >= 0.95 * final)
    window_cpu, window_wall = hi[1] - lo[1], hi[0] - lo[0]
    cells = 0.9 * n
    return {
        "n": n,
        "wall": wall,
        "cpu": samples[-1][1],
        "per_cell_ms": 1e3 * window_cpu / cells,
        "share": window_cpu / window_wall if window_wall > 0 else float("nan"),
        "window_wall": window_wall,
        "load": load,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,5000,20000")
    ap.add_argument("--quick", action="store_true", help="N = 1,000 and 5,000 only")
    ap.add_argument("--keep", type=Path, default=None, metavar="DIR",
                    help="datasets and runs under DIR (kept)")  # fmt: skip
    ap.add_argument("harness_options", nargs="*", metavar="-- OPTION",
                    help="more `harness run` options, after --")  # fmt: skip
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.quick:
        sizes = [s for s in sizes if s <= 5000]
    order = sizes + [sizes[0]]  # the smallest again: brackets the drift
    folder = args.keep or Path(tempfile.mkdtemp(prefix="parent-scaling-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"harness run --solvers table --datasets bigN.jsonl --repeats 1 --quiet "
          f"{' '.join(args.harness_options)}; {os.cpu_count()} cores")  # fmt: skip
    print("      N   wall s   parent CPU s   per cell ms (5-95%)   share of a core"
          "   load")  # fmt: skip
    results = []
    try:
        for n in order:
            r = one_run(n, folder, args.harness_options)
            results.append(r)
            print(f"{r['n']:>7,} {r['wall']:>8.1f} {r['cpu']:>14.1f} "
                  f"{r['per_cell_ms']:>21.3f} {100 * r['share']:>16.1f}% "
                  f"{r['load']:>6.2f}", flush=True)  # fmt: skip
    finally:
        if args.keep is None:
            import shutil

            shutil.rmtree(folder, ignore_errors=True)
    small = [r["per_cell_ms"] for r in results if r["n"] == sizes[0]]
    large = next(r for r in results if r["n"] == sizes[-1])
    ratios = [large["per_cell_ms"] / s for s in small if s > 0]
    worst_share = max(r["share"] for r in results)
    print(f"per-cell parent CPU, N={sizes[-1]:,} / N={sizes[0]:,}: "
          + " and ".join(f"{x:.2f}x" for x in ratios)
          + " (first and last run of the smallest; goal: at most 1.2x)")  # fmt: skip
    print(f"parent's largest share of a core during cells: {100 * worst_share:.1f}% "
          "(goal: under 10%)")  # fmt: skip


if __name__ == "__main__":
    main()
