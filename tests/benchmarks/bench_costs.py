"""Tile costs benchmark (issue 36): prints, per cost model on 8-strata, the nodes,
CPU time and path quality of A*, IDA*, weighted A* (w = 1.5, 2, 5) and greedy,
and Korf's 100 under heavy costs with weighted A*. Not a pytest file.

    .venv/bin/python tests/benchmarks/bench_costs.py                 # ~2-4 min
    .venv/bin/python tests/benchmarks/bench_costs.py --rounds 5 --korf 100
    .venv/bin/python tests/benchmarks/bench_costs.py --skip-3x3 --korf-budget 300

Nodes (boards expanded) and path costs are deterministic. Times are CPU seconds
summed over the boards, measured interleaved: each round solves every board
with every config under every model in turn (configs and models alternate per
board), so a drift of the cores lands on all of them alike; the figure is the
median of the rounds, and "x unit" is a config's time under the model over its
own time under unit costs in the same rounds. Set-up (heuristic tables, kernel
compilation) is outside every timed solve. Quality: the mean of path cost over
the oracle's cheapest cost (3x3); on Korf's 100 no optimum is known, so the
mean cost is printed against w = 5's. Korf's boards run in order within a wall
budget (``--korf-budget``), every config on each board (weighted A* with
cost-weighted Manhattan and with the weighted 6-6-3 PDB; its tables are built
once per cost model, ~45 s CPU, before the clock starts).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from harness.configs import parse_config
from harness.core.costs import COST_MODELS, path_cost
from harness.datasets import load_dataset
from harness.heuristics import make_heuristic
from harness.solver import Counters

CONFIGS = (
    "astar_dict",
    "astar_cantor_jit",
    "ida_star_jit",
    "wastar_jit[w=1.5]",
    "wastar_jit[w=2]",
    "wastar_jit[w=5]",
    "greedy_jit",
)
KORF_CONFIGS = ("wastar_jit[w=2]", "wastar_jit[w=5]", "wastar_jit[pdb663,w=2]",
                "wastar_jit[pdb663,w=1.5]")  # fmt: skip


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def _prepared(label: str, goal, g, model: str):
    config = parse_config(label)
    h = make_heuristic(config.heuristic, goal, g, model) if config.heuristic else None
    if config.spec.prepare is not None:
        config.spec.prepare(g, goal, h)
    return config.solve_for(model), h


def bench_3x3(rounds: int) -> None:
    ds = load_dataset("8-strata")
    boards = [i for i in ds.instances if i.solvable]
    g, goal = ds.grid, ds.goal
    from harness.core.cost_oracle import optimal_costs
    from harness.puzzle import rank

    best = {m: optimal_costs(goal, g, m) for m in COST_MODELS}
    ready = {(c, m): _prepared(c, goal, g, m) for c in CONFIGS for m in COST_MODELS}
    seconds = {key: [] for key in ready}
    nodes = dict.fromkeys(ready, 0)
    quality = {key: [] for key in ready}
    for r in range(rounds):
        spent = dict.fromkeys(ready, 0.0)
        keys = list(ready)
        for k, inst in enumerate(boards):
            turn = k % len(keys)  # rotate the order per board: no config always first
            for key in keys[turn:] + keys[:turn]:
                solve, h = ready[key]
                counters = Counters()
                c0 = time.process_time()
                moves = solve(inst.start, goal, g, counters=counters, heuristic=h)
                spent[key] += time.process_time() - c0
                if r == 0:
                    nodes[key] += counters.expanded
                    cheapest = float(best[key[1]][rank(inst.start)])
                    cost = path_cost(inst.start, moves, g, key[1])
                    quality[key].append(cost / cheapest if cheapest else 1.0)
        for key, s in spent.items():
            seconds[key].append(s)
    print(f"\n8-strata: {len(boards)} solvable boards, {rounds} interleaved rounds; "
          "CPU s summed over the boards (median of rounds)")
    for model in COST_MODELS:
        print(f"\n  {model}")
        print(f"  {'config':28} {'nodes':>10} {'CPU s':>8} {'x unit':>7} "
              f"{'cost/opt':>9} {'worst':>7}")
        for label in CONFIGS:
            key = (label, model)
            cpu = statistics.median(seconds[key])
            ratio = statistics.median(
                a / b for a, b in zip(seconds[key], seconds[(label, "unit")])
            )
            q = quality[key]
            print(f"  {label:28} {nodes[key]:>10,} {cpu:>8.3f} {ratio:>7.2f} "
                  f"{statistics.fmean(q):>9.3f} {max(q):>7.3f}")


def bench_korf(count: int, budget: float) -> None:
    """Korf's boards under heavy costs, board by board, every config on each board
    (the order rotated per board), until ``count`` boards or ``budget`` seconds of
    wall time are spent (whole boards only: every config covers the same ones)."""
    ds = load_dataset("15-korf100-heavy")
    g, goal = ds.grid, ds.goal
    ready = {label: _prepared(label, goal, g, "heavy") for label in KORF_CONFIGS}
    nodes = dict.fromkeys(ready, 0)
    cpu = dict.fromkeys(ready, 0.0)
    costs = {label: [] for label in ready}
    lengths = {label: [] for label in ready}
    began = time.perf_counter()
    done = 0
    for k, inst in enumerate(ds.instances[:count]):
        if time.perf_counter() - began > budget:
            break
        keys = list(ready)
        for label in keys[k % len(keys):] + keys[: k % len(keys)]:
            solve, h = ready[label]
            counters = Counters()
            c0 = time.process_time()
            moves = solve(inst.start, goal, g, counters=counters, heuristic=h)
            cpu[label] += time.process_time() - c0
            nodes[label] += counters.expanded
            costs[label].append(path_cost(inst.start, moves, g, "heavy"))
            lengths[label].append(len(moves))
        done += 1
    wall = time.perf_counter() - began
    print(f"\nKorf's 100 under heavy costs (15-korf100-heavy): the first {done} boards "
          f"(of {count} asked; {wall:.0f} s wall of a {budget:g} s budget); no "
          "optimum known: nodes, CPU s, mean path cost and moves; cost vs w=5 = the "
          "mean over the boards of the path's cost over wastar_jit[w=5]'s")
    print(f"  {'config':28} {'nodes':>12} {'CPU s':>8} {'mean cost':>10} "
          f"{'mean moves':>11} {'cost vs w=5':>12}")
    base = costs.get("wastar_jit[w=5]")
    for label in ready:
        if not done:
            break
        versus = (statistics.fmean(a / b for a, b in zip(costs[label], base))
                  if base else float("nan"))  # fmt: skip
        print(f"  {label:28} {nodes[label]:>12,} {cpu[label]:>8.2f} "
              f"{statistics.fmean(costs[label]):>10.1f} "
              f"{statistics.fmean(lengths[label]):>11.1f} {versus:>12.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--korf", type=int, default=100, help="Korf boards (0: none)")
    parser.add_argument("--korf-budget", type=float, default=600.0,
                        help="wall seconds for Korf's boards (whole boards only)")
    parser.add_argument("--skip-3x3", action="store_true")
    args = parser.parse_args()
    print(f"before: {load()}")
    if not args.skip_3x3:
        bench_3x3(args.rounds)
    if args.korf:
        bench_korf(args.korf, args.korf_budget)
    print(f"\nafter: {load()}")


if __name__ == "__main__":
    main()
