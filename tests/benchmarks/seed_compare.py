"""The seed's C++ IDA* against our solvers, through `harness run` on one footing.

Seed document 002 (the task this project started from) ends with a C++ IDA*
with the Manhattan heuristic. This script extracts it from the seed documents
(outside this repository: ``--seeds DIR``), compiles it with ``g++ -O2`` in a
temporary folder, builds our C IDA* (``examples/external/ida_manhattan``) there too,
and runs both as batch programs (``--exec NAME:optimal,batch``; the seed under
``stdbuf -oL``, since it does not flush) beside our compiled search solvers in one
``harness run`` over 8-uniform and 8-strata. Every config is timed the same way:
calibrated loops of the same board after a warm solve (a batch program gets that
many lines of the board), a program's start-up line subtracted (see ``harness run
--help``). It prints, per config, the total and the geometric mean over boards of
the per-board median CPU time, and the ratios:

- the seed's IDA* against our fastest search solver (goal: at least 20x), and
  against ``ida_star_jit[manhattan]`` (the same algorithm);
- ``ida_star_jit[manhattan]`` against our C program (goal: at most 1).

    python tests/benchmarks/seed_compare.py --seeds ../shared/seeds
    python tests/benchmarks/seed_compare.py --seeds ../shared/seeds --quick   # 8-strata
    python tests/benchmarks/seed_compare.py --seed-program /tmp/seeds/seed002_ida

Load averages are printed beside the figures.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Our search solvers in the race (``table`` reads answers off a table: no search).
SEARCH = ["ida_star_jit[pdb44]", "ida_star_jit[walking_distance]",
          "ida_star_jit[linear_conflict]", "ida_star_jit[manhattan]",
          "astar_cantor_jit[manhattan]"]  # fmt: skip


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def build_seed(seeds: Path, folder: Path) -> Path:
    """Seed 002's IDA*: from ``int dir[] =`` to the end, after a header and the
    ``FOR`` macro of the document's first half (as the README shows)."""
    [doc] = sorted(seeds.glob("002_*.txt"))
    lines = doc.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("int dir[]"))
    source = folder / "seed002_ida.cpp"
    source.write_text(
        "#include <bits/stdc++.h>\nusing namespace std;\n"
        "#define FOR(i,a,b) for(int i=(a);i<(b);i++)\n" + "\n".join(lines[start:])
    )
    program = folder / "seed002_ida"
    subprocess.run(["g++", "-O2", "-o", str(program), str(source)], check=True)
    return program


def build_ours(folder: Path) -> Path:
    for name in ("ida_manhattan.c", "Makefile"):
        shutil.copy(ROOT / "examples" / "external" / name, folder / name)
    subprocess.run(["make", "-s"], cwd=folder, check=True)
    return folder / "ida_manhattan"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--seeds", type=Path, help="folder of the seed documents")
    where.add_argument("--seed-program", type=Path, help="seed 002's IDA*, compiled")
    ap.add_argument("--quick", action="store_true", help="8-strata only")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("extra", nargs="*", help="after --: more harness run options")
    args = ap.parse_args()
    import numpy as np

    from harness.analysis import read_run

    folder = Path(tempfile.mkdtemp(prefix="seed-compare-"))
    try:
        seed = args.seed_program or build_seed(args.seeds, folder)
        ours = build_ours(folder)
        stdbuf = shutil.which("stdbuf")
        seed_cmd = shlex.join(([stdbuf, "-oL"] if stdbuf else []) + [str(seed)])
        datasets = "8-strata" if args.quick else "8-uniform,8-strata"
        configs = ["seed002", "c_ida", *SEARCH]
        cmd = [sys.executable, "-c", "from harness.cli import main; main()", "run",
               "--exec", f"seed002:optimal,batch,sizes=3x3={seed_cmd}",
               "--exec", f"c_ida:optimal,batch,sizes=3x3={ours}",
               "--solvers", ",".join(configs), "--datasets", datasets,
               "--repeats", str(args.repeats), "--no-memory", "--no-report",
               "--quiet", "--out", str(folder / "runs"), *args.extra]  # fmt: skip
        before = load()
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"harness run failed:\n{done.stderr}")
        run_dir = Path(done.stdout.strip().splitlines()[-1])
        meta, rows = read_run(run_dir)
        timed = rows[(rows.measure == "time") & (rows.status == "solved")]
        per = timed.groupby(["config", "dataset", "instance"]).cpu_seconds.median()
        table = per.unstack("config").dropna()  # boards every config solved
        print(f"{len(table)} boards ({datasets}) solved by every config; harness "
              f"run jobs {meta['options']['jobs']}, load {before} before, {load()} "
              "after")  # fmt: skip
        print(f"{'config':32s} {'total ms':>9s} {'geomean us':>11s} {'loops':>6s}")
        for config in configs:
            loops = timed[timed.config == config].loops.median()
            print(f"{config:32s} {1e3 * table[config].sum():9.2f} "
                  f"{1e6 * math.exp(np.log(table[config]).mean()):11.2f} "
                  f"{loops:6.0f}")  # fmt: skip
        fastest = min(SEARCH, key=lambda c: table[c].sum())

        def ratio(a: str, b: str) -> str:
            total = table[a].sum() / table[b].sum()
            geo = math.exp((np.log(table[a]) - np.log(table[b])).mean())
            return f"{total:7.2f}x in total, {geo:7.2f}x geometric mean per board"

        print(f"\nseed002 / {fastest} (our fastest search): {ratio('seed002', fastest)}"
              "  (goal: >= 20x)")  # fmt: skip
        print(f"seed002 / ida_star_jit[manhattan] (same algorithm): "
              f"{ratio('seed002', 'ida_star_jit[manhattan]')}")
        print(f"ida_star_jit[manhattan] / c_ida (our C): "
              f"{ratio('ida_star_jit[manhattan]', 'c_ida')}  (goal: <= 1)")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
