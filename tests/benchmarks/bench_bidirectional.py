"""Bidirectional search and the necessary-expansion yardstick (issue 37): prints,
on 8-strata and 15-walks, the nodes expanded and CPU time of A*, IDA*, MM, NBS
and bidirectional BFS, with expanded / necessary on 3x3. Not a pytest file.

    .venv/bin/python tests/benchmarks/bench_bidirectional.py       # ~1 min, loaded
    .venv/bin/python tests/benchmarks/bench_bidirectional.py --rounds 5
    .venv/bin/python tests/benchmarks/bench_bidirectional.py --korf-only \
        --korf-budget 150  # Korf's 100 alone, ~2.5 min

15-walks (4x4, 30 boards of 12-30 moves) runs one round (``--deepest-4x4 N``:
only the boards up to N moves). Korf's 100 (``--korf-budget SECONDS``, 0: not
run) goes board by board, easiest first (by optimal length, ties by Korf's
published IDA* node count), every config on each board (the order rotated per
board), and starts no new board once the wall budget is spent. The solvers take
no node or time limit, so each solve runs in a forked child (kernels compiled
and tables built before the fork) that measures its own CPU time and is killed
after ``--korf-solve-cap`` wall seconds: a killed solve prints "capped at" and
the cap, and the totals cover only the boards every config finished. No
expanded/necessary on 4x4 (the necessary set is not enumerable there).

Nodes and necessary sets are deterministic. Times are CPU seconds summed over
the boards, measured interleaved: each round solves every board with every
config in turn, the order rotated per board, so a drift of the cores lands on
all of them alike; the figure is the median of the rounds, and "x A*" its ratio
to astar_dict[manhattan]'s in the same rounds. Set-up (kernel compilation) is
outside every timed solve. nodes/necessary: summed expansions over summed
necessary sets (g* + h < C* for the config's heuristic; blind: h = 0), over the
boards with a non-empty set; "below" counts the boards where a config expanded
fewer than its necessary set (only a bidirectional search can). The last line
checks the theorem on every board of 8-strata: astar_dict with misplaced and
Manhattan expands at least the necessary set and at most it plus its ties.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time

from harness.configs import parse_config
from harness.datasets import load_dataset
from harness.heuristics import make_heuristic
from harness.kernels.necessary import necessary
from harness.solver import Counters

CONFIGS = ("astar_dict[manhattan]", "ida_star_jit[manhattan]", "mm[manhattan]",
           "nbs[manhattan]", "bidir_bfs")  # fmt: skip


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def _prepared(label: str, goal, g):
    config = parse_config(label)
    h = make_heuristic(config.heuristic, goal, g) if config.heuristic else None
    if config.spec.prepare is not None:
        config.spec.prepare(g, goal, h)
    return config, h


def bench(name: str, rounds: int, deepest: int | None = None) -> None:
    ds = load_dataset(name)
    boards = [i for i in ds.instances if i.solvable
              and (deepest is None or i.optimal_length <= deepest)]  # fmt: skip
    ready = {label: _prepared(label, ds.goal, ds.grid) for label in CONFIGS}
    small = ds.grid.squares <= 9
    nodes = dict.fromkeys(ready, 0)
    per_board: dict[tuple[str, str], int] = {}
    seconds: dict[str, list[float]] = {label: [] for label in ready}
    for r in range(rounds):
        spent = dict.fromkeys(ready, 0.0)
        labels = list(ready)
        for k, inst in enumerate(boards):
            turn = k % len(labels)
            for label in labels[turn:] + labels[:turn]:
                config, h = ready[label]
                counters = Counters()
                t0 = time.process_time()
                moves = config.solve(inst.start, inst.goal, inst.grid,
                                     counters=counters, heuristic=h)  # fmt: skip
                spent[label] += time.process_time() - t0
                assert moves is not None and len(moves) == inst.optimal_length
                if r == 0:
                    nodes[label] += counters.expanded
                    per_board[label, inst.id] = counters.expanded
        for label in ready:
            seconds[label].append(spent[label])
    base = statistics.median(seconds[CONFIGS[0]])
    upto = f" (optimum <= {deepest})" if deepest is not None else ""
    print(f"\n{name}: {len(boards)} boards{upto}, {rounds} rounds ({load()})")
    print(f"{'config':26} {'nodes':>10} {'CPU s':>8} {'x A*':>6}"
          + (f" {'nodes/necessary':>16} {'below':>8}" if small else ""))  # fmt: skip
    for label, (config, h) in ready.items():
        cpu = statistics.median(seconds[label])
        line = f"{label:26} {nodes[label]:>10,} {cpu:>8.3f} {cpu / base:>6.2f}"
        if small:
            spent_n = needed = below = counted = 0
            for inst in boards:
                found = necessary(inst.start, inst.goal, inst.grid, h,
                                  config.heuristic or "none")  # fmt: skip
                if found is None or found.below == 0:
                    continue
                counted += 1
                spent_n += per_board[label, inst.id]
                needed += found.below
                below += per_board[label, inst.id] < found.below
            line += f" {spent_n / needed:>15.3g}x {below:>4}/{counted}"
        print(line)


KORF_CONFIGS = ("astar_dict[manhattan]", "ida_star_jit[manhattan]", "mm[manhattan]",
                "nbs[manhattan]")  # fmt: skip


def _child(conn, config, h, inst) -> None:
    counters = Counters()
    t0 = time.process_time()
    moves = config.solve(inst.start, inst.goal, inst.grid, counters=counters,
                         heuristic=h)  # fmt: skip
    conn.send((None if moves is None else len(moves), counters.expanded,
               time.process_time() - t0))  # fmt: skip


def _capped_solve(config, h, inst, cap: float):
    """(moves, expanded, CPU s) from a forked child, or None when killed at ``cap``."""
    ctx = multiprocessing.get_context("fork")
    here, there = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(there, config, h, inst), daemon=True)
    child.start()
    there.close()
    got = here.recv() if here.poll(cap) else None
    if got is None:
        child.kill()
    child.join()
    return got


def bench_korf(budget: float, cap: float) -> None:
    ds = load_dataset("15-korf100")
    boards = sorted((i for i in ds.instances if i.solvable), key=lambda i: (
        i.optimal_length, i.extra.get("published_nodes", 0)))  # fmt: skip
    ready = {label: _prepared(label, ds.goal, ds.grid) for label in KORF_CONFIGS}
    print(f"\n15-korf100: easiest first within {budget:g} s wall, each solve capped "
          f"at {cap:g} s wall ({load()}); nodes expanded / CPU s per config; no "
          "expanded/necessary on 4x4 (not computed)")
    print(f"{'board':9} {'C*':>3} {'Korf IDA*':>10} " + " ".join(
        f"{label:>24}" for label in ready))  # fmt: skip
    began = time.perf_counter()
    totals = {label: [0, 0.0] for label in ready}
    finished: list[str] = []
    started: list[str] = []
    for k, inst in enumerate(boards):
        if time.perf_counter() - began > budget:
            break
        started.append(inst.id)
        labels = list(ready)
        turn = k % len(labels)
        got = {}
        for label in labels[turn:] + labels[:turn]:
            config, h = ready[label]
            got[label] = _capped_solve(config, h, inst, cap)
            if got[label] is not None:
                assert got[label][0] == inst.optimal_length, (label, inst.id)
        cells = [f"{got[x][1]:>12,} {got[x][2]:>10.2f}s" if got[x] else
                 f"{'capped at':>12} {cap:>10g}s" for x in ready]  # fmt: skip
        print(f"{inst.id:9} {inst.optimal_length:>3} "
              f"{inst.extra.get('published_nodes', 0):>10,} " + " ".join(cells))
        if all(got.values()):
            finished.append(inst.id)
            for label in ready:
                totals[label][0] += got[label][1]
                totals[label][1] += got[label][2]
    wall = time.perf_counter() - began
    print(f"{len(started)} boards started, {len(finished)} finished by every config "
          f"({wall:.0f} s wall); finished: {', '.join(finished) or 'none'}")
    for label, (nodes, cpu) in totals.items():
        print(f"  {label:26} {nodes:>12,} nodes {cpu:>9.2f} CPU s (finished boards)")
    print(f"after: {load()}")


def check_theorem() -> None:
    ds = load_dataset("8-strata")
    config = parse_config("astar_dict")
    held = 0
    for name in ("manhattan", "misplaced"):
        h = make_heuristic(name, ds.goal, ds.grid)
        for inst in ds.instances:
            counters = Counters()
            config.solve(inst.start, inst.goal, inst.grid, counters=counters,
                         heuristic=h)  # fmt: skip
            found = necessary(inst.start, inst.goal, inst.grid, h, name)
            assert found.below <= counters.expanded <= found.below + found.ties, (
                name, inst.id)  # fmt: skip
            held += 1
    print(f"\nnecessary <= astar_dict's expansions <= necessary + ties on all "
          f"{held} (board, heuristic) pairs of 8-strata (manhattan, misplaced)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-theorem", action="store_true")
    parser.add_argument("--deepest-4x4", type=int, default=None, help="only "
                        "15-walks boards up to this optimum (default: all, 12-30)")
    parser.add_argument("--korf-budget", type=float, default=0.0, help="wall "
                        "seconds for Korf's 100, whole boards only (default 0: none)")
    parser.add_argument("--korf-solve-cap", type=float, default=30.0,
                        help="wall seconds per Korf solve before it is killed")
    parser.add_argument("--korf-only", action="store_true",
                        help="skip 8-strata, 15-walks and the theorem")
    args = parser.parse_args()
    if not args.korf_only:
        bench("8-strata", args.rounds)
        bench("15-walks", 1, args.deepest_4x4)
        if not args.skip_theorem:
            check_theorem()
    if args.korf_budget > 0:
        bench_korf(args.korf_budget, args.korf_solve_cap)


if __name__ == "__main__":
    main()
