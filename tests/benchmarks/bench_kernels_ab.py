"""Node rates of two versions of ``harness.kernels``, interleaved (not pytest).

    .venv/bin/python tests/benchmarks/bench_kernels_ab.py                 # ~2-4 min
    .venv/bin/python tests/benchmarks/bench_kernels_ab.py --rounds 31 --only pdb
    .venv/bin/python tests/benchmarks/bench_kernels_ab.py --base 8f1f802 --head WORKTREE
    .venv/bin/python tests/benchmarks/bench_kernels_ab.py --compile 3    # compile times

The base version is read with ``git show`` (``harness/kernels.py`` before the
kernels were a package, the package's modules after) and imported as a separate
module (its numba cache sits beside a stable copy in the temp folder, so a second
run loads it). The head is this checkout's ``harness.kernels`` (or another
git revision). Every case runs the same boards through both, A B A B ..., a short
batch each: first a check that both give the same path lengths and the same four
counters, then ``--rounds`` timed pairs, the order within a pair alternating.
``--compile N`` times instead, in fresh processes, A B A B (N pairs): the first
call of every IDA* kernel (3x3 and 4x4 boards, every heuristic but pdb78) with an
empty numba cache (compilation) and again with that cache filled (loading).
Each pair gives one ratio, head nodes/s over base nodes/s (same nodes, so it is
base time / head time); the median ratio and its quartiles are printed per case,
with both median node rates (CPU time). Below ~0.97 on a case, repeatedly, the head
is slower there.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.resources import files
from math import factorial
from pathlib import Path

import numpy as np

from harness.heuristics import all_heuristics, make_heuristic
from harness.puzzle import Board, goal_board, grid, is_solvable

#: main just before the kernels were de-duplicated (issue 11)
BEFORE = "8f1f802"
ROOT = Path(__file__).resolve().parents[2]
G3, G4 = grid(3), grid(4)


def load_version(rev: str):
    """The kernels at ``rev`` as a module of their own (``WORKTREE``: this checkout's
    ``harness.kernels``; a name ending in .py: that file). Before the kernels were
    split by family they were one file (``harness/kernels.py``, then
    ``harness/kernels/__init__.py``); after, the package is copied whole, its
    ``harness.kernels`` imports renamed to the copy."""
    if rev == "WORKTREE":
        from harness import kernels

        return kernels
    if rev.endswith(".py"):  # a file
        sources = {"__init__.py": Path(rev).read_text()}
    else:
        sources = _kernel_sources(rev)
    digest = hashlib.sha256(repr(sorted(sources.items())).encode()).hexdigest()[:12]
    name = f"npuzzle_kernels_{digest}"
    folder = Path(tempfile.gettempdir()) / name
    folder.mkdir(exist_ok=True)
    for file, source in sources.items():
        source = source.replace("harness.kernels", name)
        # harness.cache moved to harness.core.cache (issue 22)
        source = source.replace("harness.cache import", "harness.core.cache import")
        path = folder / file
        if not path.exists() or path.read_text() != source:  # keep mtime: numba's cache
            path.write_text(source)
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _kernel_sources(rev: str) -> dict[str, str]:
    """File name in the package -> source, of the kernels at git revision ``rev``."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
        ).stdout

    paths = git("ls-tree", "-r", "--name-only", rev, "--", "harness/kernels.py",
                "harness/kernels/").split()  # fmt: skip
    return {
        "__init__.py" if path == "harness/kernels.py" else Path(path).name: git(
            "show", f"{rev}:{path}"
        )
        for path in paths
        if path.endswith(".py")
    }


def random_boards(goal: Board, g, count: int, seed: int) -> list[Board]:
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = list(goal)
        rng.shuffle(board)
        if is_solvable(tuple(board), goal, g):
            out.append(tuple(board))
    return out


def korf_quick(count: int) -> list[Board]:
    """The ``count`` Korf instances cheapest for IDA* + Manhattan."""
    rows = []
    for line in files("harness").joinpath("data/korf100.tsv").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            _i, tiles, _length, nodes = line.split("\t")
            rows.append((int(nodes), tuple(map(int, tiles.split()))))
    return [board for _nodes, board in sorted(rows)[:count]]


@dataclass
class Case:
    label: str
    interface: str  # "ida" or "astar_cantor"
    heuristic: str
    g: object
    goal: Board
    boards: list


def cases(only: str | None) -> list[Case]:
    std3 = goal_board("standard", G3)
    bf4 = goal_board("blank-first", G4)
    deep3 = random_boards(std3, G3, 40, 11)
    few3 = deep3[:8]
    out = [
        Case("3x3 manhattan", "ida", "manhattan", G3, std3, deep3),
        Case("3x3 misplaced", "ida", "misplaced", G3, std3, few3),
        Case("3x3 linear_conflict", "ida", "linear_conflict", G3, std3, deep3),
        Case("3x3 walking_distance", "ida", "walking_distance", G3, std3, deep3),
        Case("3x3 pdb44", "ida", "pdb44", G3, std3, deep3),
        Case("4x4 manhattan", "ida", "manhattan", G4, bf4, korf_quick(2)),
        Case("4x4 linear_conflict", "ida", "linear_conflict", G4, bf4, korf_quick(3)),
        Case("4x4 walking_distance", "ida", "walking_distance", G4, bf4, korf_quick(3)),
        Case("4x4 pdb555", "ida", "pdb555", G4, bf4, korf_quick(12)),
        Case("4x4 pdb663", "ida", "pdb663", G4, bf4, korf_quick(12)),
        Case("A* 3x3 manhattan", "astar_cantor", "manhattan", G3, std3, deep3[:6]),
        Case("A* 3x3 linear_conflict", "astar_cantor", "linear_conflict", G3, std3,
             deep3[:6]),
    ]  # fmt: skip
    return [c for c in out if only is None or only in c.label]


def runner(module, case: Case, h):
    """A function that solves every board of the case with ``module``'s kernel and
    returns (total nodes generated, CPU seconds, per-board (length, counters))."""
    info = all_heuristics()[case.heuristic]
    nbr = module.neighbour_array(case.g)
    goal = np.array(case.goal, dtype=np.int8)
    boards = [np.array(b, dtype=np.int8) for b in case.boards]
    if case.interface == "ida":
        k = info.kernel("ida", h)
        fn = getattr(module, k.function)
        starts = [k.start_args(b) if k.start_args else () for b in case.boards]
        path = np.zeros(module.MAX_PATH + 1, dtype=np.int8)

        def solve(i, stats):
            return fn(boards[i].copy(), goal, nbr, *starts[i], *k.args, stats, path)
    else:
        cost, conflicts = info.kernel("astar_cantor", h).args
        _, line_squares, line_len, goal_row, goal_col, rows, _ = module.conflict_arrays(
            case.goal, case.g
        )
        n = case.g.squares
        fact = np.array([factorial(i) for i in range(n + 1)], dtype=np.int64)
        size = factorial(case.g.squares)
        path = np.zeros(256, dtype=np.int8)

        def solve(i, stats):
            return module.astar_cantor(
                boards[i], goal, nbr, cost, conflicts, line_squares, line_len, goal_row,
                goal_col, rows, fact, np.zeros(size, dtype=np.uint8),
                np.zeros(size, dtype=np.int8), stats, path,
            )

    def run(repeat=1):
        nodes = 0
        seen = []
        cpu = 0.0
        for _ in range(repeat):
            for i in range(len(boards)):
                stats = np.zeros(4, dtype=np.int64)
                c0 = time.process_time()
                length = solve(i, stats)
                cpu += time.process_time() - c0
                nodes += int(stats[1])
                seen.append((int(length), *map(int, stats)))
        return nodes, cpu, seen

    return run


_COMPILE_CHILD = """
import sys, time
sys.path.insert(0, {here!r})
import bench_kernels_ab as b
t0 = time.process_time()
module = b.load_version({rev!r})
for case in b.cases(None):
    if case.interface == "ida" and case.label != "3x3 misplaced":
        h = b.make_heuristic(case.heuristic, case.goal, case.g)
        case.boards = case.boards[:1]
        b.runner(module, case, h)()
print(time.process_time() - t0)
"""


def compile_times(base: str, head: str, pairs: int) -> None:
    """CPU seconds to import each version and make the first call of every IDA*
    kernel: cold (empty numba cache), then warm (the cache just filled)."""
    here = str(Path(__file__).resolve().parent)
    seconds: dict[tuple[str, str], list[float]] = {}
    for i in range(pairs):
        for rev in (base, head) if i % 2 == 0 else (head, base):
            with tempfile.TemporaryDirectory() as cache:
                env = {**os.environ, "NUMBA_CACHE_DIR": cache}
                code = _COMPILE_CHILD.format(here=here, rev=rev)
                for state in ("cold", "warm"):
                    out = subprocess.run(
                        [sys.executable, "-c", code], env=env, check=True,
                        capture_output=True, text=True,
                    ).stdout
                    seconds.setdefault((rev, state), []).append(float(out.split()[-1]))
    for state in ("cold", "warm"):
        a, b = seconds[(base, state)], seconds[(head, state)]
        print(
            f"{state}: base {statistics.median(a):6.2f} s  head "
            f"{statistics.median(b):6.2f} s  (medians of {pairs}; base {a}, head {b})"
        )


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
    return q[0], statistics.median(values), q[2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default=BEFORE, help="git revision (default %(default)s)")
    ap.add_argument("--head", default="WORKTREE",
                    help="git revision, WORKTREE or a .py file")
    ap.add_argument("--rounds", type=int, default=15, help="timed A/B pairs per case")
    ap.add_argument("--batch", type=float, default=0.04,
                    help="CPU seconds per timed batch, about (default %(default)s)")
    ap.add_argument("--compile", type=int, metavar="N",
                    help="time compilation and cache loading instead (N pairs)")
    ap.add_argument("--only", help="cases whose label contains this text")
    args = ap.parse_args()
    os.environ.setdefault("NPUZZLE_CACHE", str(ROOT / ".cache" / "npz"))
    if args.compile:
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        compile_times(args.base, args.head, args.compile)
        return 0
    base, head = load_version(args.base), load_version(args.head)
    print(f"base {args.base} ({base.__file__}), head {args.head} ({head.__file__})")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
          f"{os.cpu_count()} CPUs; {args.rounds} pairs per case")
    ratios_all = []
    for case in cases(args.only):
        h = make_heuristic(case.heuristic, case.goal, case.g)
        run_a, run_b = runner(base, case, h), runner(head, case, h)
        run_a(), run_b()  # compile, or load from numba's cache
        na, ta, seen_a = run_a()
        nb, _, seen_b = run_b()
        if seen_a != seen_b:
            print(f"{case.label}: COUNTERS DIFFER\n  base {seen_a}\n  head {seen_b}")
            return 1
        repeat = max(1, round(args.batch / max(ta, 1e-6)))  # a batch >= --batch s
        na *= repeat
        nb *= repeat
        ratios, rate_a, rate_b = [], [], []
        for r in range(args.rounds):
            if r % 2 == 0:
                _, ta, _ = run_a(repeat)
                _, tb, _ = run_b(repeat)
            else:
                _, tb, _ = run_b(repeat)
                _, ta, _ = run_a(repeat)
            ratios.append(ta / tb)
            rate_a.append(na / ta)
            rate_b.append(nb / tb)
        lo, med, hi = quartiles(ratios)
        ratios_all.append(med)
        mid_a, mid_b = statistics.median(rate_a) / 1e6, statistics.median(rate_b) / 1e6
        print(
            f"{case.label:24s} {na:>11,} nodes/batch  base {mid_a:6.1f}"
            f"  head {mid_b:6.1f} M nodes/s   head/base "
            f"{med:.3f} (quartiles {lo:.3f}-{hi:.3f}, min {min(ratios):.3f}, "
            f"max {max(ratios):.3f})",
            flush=True,
        )
    print(f"geometric mean of the medians: "
          f"{statistics.geometric_mean(ratios_all):.3f}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
