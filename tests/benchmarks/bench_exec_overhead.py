"""Per-board overhead of ``--exec``: ``python tests/benchmarks/bench_exec_overhead.py``.

Every board is the goal, so a program that prints nothing and exits at once is a
correct solver: what the runner records per board is then the overhead alone. In
one run, interleaved round by round, for N cells each:

- ``noop``: the in-process no-op solver of ``overhead.py`` beside this script (the
  baseline);
- ``exec_true``: ``/bin/true``, one process per board (spawn, pipe, wait4, replay);
- ``exec_c``: a compiled C program that reads its line and exits (if cc exists);
- ``exec_batch``: a compiled C batch program answering an empty line per board.

Printed: wall per cell of the whole pipeline, and the median raw time the rows
record (spawn to reap, or the line's round trip in batch mode), with ratios to noop.
Then, in this process and interleaved call by call, what the worker spends per
board on each program (``harness.measure.external.run_pass``: spawn, write, wait4 or the
line's round trip, /proc reads): the --exec overhead without the runner's per-cell
cost, which every solver pays alike and which dominates on a loaded machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import overhead  # tests/benchmarks/overhead.py, beside this script

from harness import analysis
from harness.measure import runner
from harness.measure.plan import make_plan

C_ONCE = (
    "#include <stdio.h>\nint main(void){char b[256];fgets(b,256,stdin);return 0;}\n"
)
C_BATCH = (
    "#include <stdio.h>\nint main(void){char b[256];"
    'while(fgets(b,256,stdin)){puts("");fflush(stdout);}return 0;}\n'
)


def _compile(source: str, folder: Path, name: str) -> str | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    (folder / f"{name}.c").write_text(source)
    subprocess.run([cc, "-O2", "-o", str(folder / name), str(folder / f"{name}.c")],
                   check=True)  # fmt: skip
    return str(folder / name)


def measure(label: str, plugins: list[str], cells: int) -> dict[str, float]:
    plan = make_plan([label], [overhead._noop_dataset(cells)], plugins=plugins,
                            repeats=1, memory_pass=False)  # fmt: skip
    with tempfile.TemporaryDirectory() as out:
        run_dir, meta = runner.start(plan, out, jobs=1, argv=["bench"])
        t0 = time.perf_counter()
        runner.execute(plan, run_dir, meta, executor=runner.make_executor(1, run_dir))
        wall = time.perf_counter() - t0
        _, rows = analysis.read_run(run_dir)
    setup = sum(s["seconds"] for s in meta["setup"])
    assert (rows["status"] == "solved").all(), rows["message"].iloc[0]
    raw = rows["raw_seconds"].dropna()
    return {
        "per_cell": (wall - setup) / cells,
        "raw_median": float((raw if len(raw) else rows["seconds"]).median()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    configs = {"noop": ("overhead_noop", [overhead.__file__]),
               "exec_true": ("t", ["exec:t=true"])}  # fmt: skip
    once = _compile(C_ONCE, folder, "once")
    batch = _compile(C_BATCH, folder, "batch")
    if once:
        configs["exec_c"] = ("c", [f"exec:c={once}"])
    if batch:
        configs["exec_batch"] = ("b", [f"exec:b:batch={batch}"])
    results: dict[str, list[dict[str, float]]] = {k: [] for k in configs}
    for _ in range(args.rounds):  # interleaved: drift hits every config alike
        for name, (label, plugins) in configs.items():
            results[name].append(measure(label, plugins, args.cells))
    base = statistics.median(r["per_cell"] for r in results["noop"])
    print(f"load average {os.getloadavg()[0]:.2f}; {args.cells} cells x "
          f"{args.rounds} rounds, jobs 1, 1 timed pass, no memory pass")  # fmt: skip
    for name, rs in results.items():
        per_cell = statistics.median(r["per_cell"] for r in rs)
        raw = statistics.median(r["raw_median"] for r in rs)
        print(f"{name:11s} {1e3 * per_cell:7.3f} ms/cell "
              f"({per_cell / base:5.2f}x noop), "
              f"overhead vs noop {1e3 * (per_cell - base):+.3f} ms/board; "
              f"recorded raw time median {1e3 * raw:.3f} ms")  # fmt: skip
    direct(configs, args.cells)
    shutil.rmtree(folder)


def direct(configs: dict[str, tuple[str, list[str]]], calls: int) -> None:
    from harness.measure.external import close_all, parse_exec, run_pass
    from harness.puzzle import goal_board, grid

    g = grid(3)
    goal = goal_board("standard", g)
    programs = {
        name: parse_exec(plugins[0].removeprefix("exec:"))
        for name, (_, plugins) in configs.items()
        if plugins[0].startswith("exec:")
    }
    times: dict[str, list[float]] = {name: [] for name in programs}
    for _ in range(calls):
        for name, program in programs.items():
            t0 = time.perf_counter_ns()
            done = run_pass(program, g, goal, goal, measure="time", timeout=10,
                            memory_limit_mb=4096)  # fmt: skip
            times[name].append((time.perf_counter_ns() - t0) / 1e6)
            assert done.outcome == "returned", done.message
    close_all()
    print(f"in-process run_pass, {calls} calls each, interleaved "
          f"(load average {os.getloadavg()[0]:.2f}):")  # fmt: skip
    for name, ms in times.items():
        q = statistics.quantiles(ms, n=10)
        print(f"  {name:11s} median {statistics.median(ms):.3f} ms per board "
              f"(p10 {q[0]:.3f}, p90 {q[-1]:.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
