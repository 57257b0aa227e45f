"""Peak memory of ``harness solve`` and ``harness datasets import`` against the
size of their input (issue 35 item 10: 90 MB of stdin peaked at 1.38 GB, an
import of 10^6 boards at 870 MB). Both now read their input in parts, so the
peak should stay flat from 10^4 to 10^6 boards.

    .venv/bin/python tests/benchmarks/bench_input_memory.py            # ~4 min
    .venv/bin/python tests/benchmarks/bench_input_memory.py --sizes 10000,100000

Each figure is the peak resident set (``ru_maxrss`` of the finished child, from
``os.wait4``) of one fresh ``harness`` process on N uniform random 3x3 boards
(half of them unsolvable), one per line: ``solve --solver table`` (the exact
table walk: the least memory a solver adds) with its answers to /dev/null, and
``datasets import --label oracle`` into a temporary folder. Memory peaks are
deterministic enough under load; the wall times printed beside them are not.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The installed command's entry point, in this interpreter.
HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]


def boards_file(folder: Path, count: int, seed: int = 1) -> Path:
    """``count`` uniform random 3x3 boards, one per line."""
    path = folder / f"boards-{count}.txt"
    rng = random.Random(seed)
    with open(path, "w") as fh:
        for _ in range(count):
            tiles = list("12345678x")
            rng.shuffle(tiles)
            fh.write(" ".join(tiles) + "\n")
    return path


def peak(args: list[str], stdin: Path | None = None) -> tuple[int, float]:
    """(peak RSS in bytes, wall seconds) of one run of ``args``; it must succeed."""
    started = time.perf_counter()
    with open(stdin or os.devnull, "rb") as given, open(os.devnull, "wb") as out:
        proc = subprocess.Popen(args, stdin=given, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({proc.returncode}): {err.strip()}")
    return usage.ru_maxrss * 1024, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f}; peak RSS of one process per row")
    print(f"{'boards':>9}  {'solve MB':>9} {'s':>6}  {'import MB':>9} {'s':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for count in sizes:
            path = boards_file(folder, count)
            solve, solve_s = peak([*HARNESS, "solve", "--solver", "table"], path)
            imported, import_s = peak([
                *HARNESS, "datasets", "import", str(path), "--name", f"b{count}",
                "--label", "oracle", "--out", str(folder / "out"), "--force",
            ])  # fmt: skip
            print(f"{count:>9,}  {solve / 1e6:>9.1f} {solve_s:>6.1f}  "
                  f"{imported / 1e6:>9.1f} {import_s:>6.1f}", flush=True)  # fmt: skip
            path.unlink()
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
