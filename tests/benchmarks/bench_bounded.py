"""Bounded and greedy search on Korf's 100: what a weight buys (not a pytest file).

    .venv/bin/python tests/benchmarks/bench_bounded.py            # ~2 min quiet
    .venv/bin/python tests/benchmarks/bench_bounded.py --quick    # first 25 boards
    .venv/bin/python tests/benchmarks/bench_bounded.py --python   # + pure Python

For weighted A* at w = 1.5, 2 and 5, greedy best-first search (both with
Manhattan distance) and weighted IDA* at w = 2, beside the optimal
``ida_star_jit[pdb663]``: coverage (boards answered), median and worst path
length / optimal (Korf's published optima), total CPU time and nodes expanded,
and the largest open list. Solves are interleaved (board by board, every config
on a board before the next, in a rotated order) so that the CPU times share the
machine's drift; set-up (numba compilation, the pdb663 tables) is done before
the clock. The pure-Python ``wastar`` / ``greedy`` answer with exactly the paths
and counters of their compiled twins (tests/test_bounded.py), so only their CPU
time is new; ``--python`` measures it (w = 1.5 takes minutes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from importlib.resources import files

from harness.configs import parse_config
from harness.heuristics import make_heuristic
from harness.puzzle import apply_moves, goal_board, grid
from harness.solver import Counters

G4 = grid(4)
COMPILED = [
    "ida_star_jit[pdb663]",
    "wastar_jit[manhattan,w=1.5]",
    "wastar_jit[manhattan,w=2]",
    "wastar_jit[manhattan,w=5]",
    "greedy_jit[manhattan]",
    "wida_star[manhattan,w=2]",
    "wastar_jit[pdb663,w=1.5]",
]
PYTHON = [
    "wastar[manhattan,w=1.5]",
    "wastar[manhattan,w=2]",
    "wastar[manhattan,w=5]",
    "greedy[manhattan]",
]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def korf100() -> list[tuple[int, tuple[int, ...], int]]:
    text = files("harness").joinpath("data/korf100.tsv").read_text()
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            i, tiles, length, _nodes = line.split("\t")
            rows.append((int(i), tuple(map(int, tiles.split())), int(length)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first 25 boards")
    parser.add_argument(
        "--python", action="store_true", help="also pure-Python wastar and greedy"
    )
    args = parser.parse_args()
    boards = korf100()[: 25 if args.quick else 100]
    labels = COMPILED + (PYTHON if args.python else [])
    goal = goal_board("blank-first", G4)
    print(f"Korf's 100 ({len(boards)} boards), blank-first goal; {load()}")
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')}, Python {sys.version.split()[0]}")

    configs, heuristics = {}, {}
    began = time.perf_counter()
    for label in labels:
        config = parse_config(label)
        if config.heuristic not in heuristics:
            heuristics[config.heuristic] = make_heuristic(config.heuristic, goal, G4)
        h = heuristics[config.heuristic]
        if config.spec.prepare is not None:
            config.spec.prepare(G4, goal, h)
        configs[label] = (config, h)
    print(f"set-up (tables, compilation or cache loads): "
          f"{time.perf_counter() - began:.1f} s wall")  # fmt: skip

    stats = {label: {"ratios": [], "cpu": 0.0, "expanded": 0, "open": 0,
                     "failed": []} for label in labels}  # fmt: skip
    for n, (number, start, optimum) in enumerate(boards):
        order = labels[n % len(labels):] + labels[: n % len(labels)]  # rotated
        for label in order:
            config, h = configs[label]
            counters = Counters()
            cpu = time.process_time()
            try:
                moves = config.solve(start, goal, G4, counters=counters, heuristic=h)
            except MemoryError:
                stats[label]["failed"].append(f"#{number} memout")
                continue
            spent = time.process_time() - cpu
            s = stats[label]
            if moves is None or apply_moves(start, moves, G4) != goal:
                s["failed"].append(f"#{number} wrong answer")
                continue
            bound = config.bound
            if bound is not None and len(moves) > bound * optimum:
                s["failed"].append(f"#{number} past its bound")
            s["ratios"].append(len(moves) / optimum)
            s["cpu"] += spent
            s["expanded"] += counters.expanded
            s["open"] = max(s["open"], counters.max_frontier)

    print(f"\nafter the solves: {load()}")
    header = ("config", "coverage", "median len/opt", "worst", "total CPU s",
              "expanded", "largest open")  # fmt: skip
    rows = []
    for label in labels:
        s = stats[label]
        ratios = s["ratios"]
        rows.append((
            label, f"{len(ratios)}/{len(boards)}",
            f"{statistics.median(ratios):.3f}" if ratios else "-",
            f"{max(ratios):.3f}" if ratios else "-", f"{s['cpu']:.2f}",
            f"{s['expanded']:,}", f"{s['open']:,}",
        ))  # fmt: skip
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        print("  ".join(str(v).rjust(w) if i else str(v).ljust(w)
                        for i, (v, w) in enumerate(zip(r, widths, strict=True))))
    reference = stats["ida_star_jit[pdb663]"]["cpu"]
    print(f"\nCPU time against ida_star_jit[pdb663] ({reference:.2f} s, optimal):")
    for label in labels[1:]:
        cpu = stats[label]["cpu"]
        if cpu > 0:
            ratio = reference / cpu
            words = f"{ratio:.1f}x faster" if ratio >= 1 else f"{1 / ratio:.1f}x slower"
            print(f"  {label}: {words}")
    for label in labels:
        if stats[label]["failed"]:
            print(f"  {label}: {', '.join(stats[label]['failed'])}")


if __name__ == "__main__":
    main()
