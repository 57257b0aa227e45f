"""Weighted pattern databases (issue 36 item 3): build time and memory per
partition and cost model, and admissibility on sampled 4x4 boards against exact
search. Not a pytest file.

    .venv/bin/python tests/benchmarks/bench_pdb_costs.py                  # pdb555
    .venv/bin/python tests/benchmarks/bench_pdb_costs.py --tables pdb555,pdb663 \\
        --models heavy,inverse --boards 200

Each build runs in a fresh process (cache folder of its own, so it builds) that
prints its CPU seconds, wall seconds and peak resident memory (ru_maxrss, the
whole process: Python, numba and the search's arrays). Then, with the tables
cached, every sampled board (a random walk of 10-40 moves from the blank-first
goal, fixed seed) is solved exactly by A* with cost-weighted Manhattan
(``wastar_jit[w=1]``: optimal with an admissible h), and the weighted PDB's
bound is checked against that cost: h(s) <= optimal cost, or the board is
printed. Also printed: the mean of h over the optimal cost (how tight), for
cost-weighted Manhattan as well, and the boards A* with each bound expands.
Node counts, costs and h are deterministic; times are taken under whatever load
the machine has (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

from harness.configs import parse_config
from harness.core.costs import cost_at_most, path_cost
from harness.heuristics import make_heuristic
from harness.puzzle import apply_moves, goal_board, grid
from harness.solver import Counters

G4 = grid(4)
GOAL = goal_board("blank-first", G4)

_CHILD = """
import json, resource, sys, time
from harness.heuristics.pdb import weighted
from harness.puzzle import goal_board, grid
name, model = sys.argv[1], sys.argv[2]
g = grid(4)
cpu, wall = time.process_time(), time.perf_counter()
w = weighted(name, goal_board("blank-first", g), g, model, say=print)
print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
                  "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "mib": w.nbytes / 2**20, "summary": w.summary()}))
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def build(name: str, model: str) -> dict:
    """Build ``name`` under ``model`` in a fresh process and cache; its figures.
    Numba's cache stays the shared one (compilation is not the build)."""
    with tempfile.TemporaryDirectory(prefix="bench-pdb-costs-") as folder:
        env = dict(os.environ, NPUZZLE_CACHE=folder)
        if "NUMBA_CACHE_DIR" not in env:
            from harness.core.cache import cache_dir

            env["NUMBA_CACHE_DIR"] = str(cache_dir("numba"))
        out = subprocess.run([sys.executable, "-c", _CHILD, name, model], env=env,
                             capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def walks(count: int, seed: int = 36) -> list:
    rng = random.Random(seed)
    boards = []
    for _ in range(count):
        board, back = GOAL, None
        for _ in range(rng.randrange(10, 41)):
            moves = [(m, t) for m, t in G4.neighbours[board.index(0)] if t != back]
            back = board.index(0)
            board = apply_moves(board, rng.choice(moves)[0], G4)
        boards.append(board)
    return boards


def check(name: str, model: str, boards: list) -> None:
    exact = parse_config("wastar_jit[w=1]")
    manhattan = make_heuristic("manhattan", GOAL, G4, model)
    weighted = make_heuristic(name, GOAL, G4, model)
    exact.spec.prepare(G4, GOAL, manhattan)
    exact.spec.prepare(G4, GOAL, weighted)
    solve = exact.solve_for(model)
    over, tight_w, tight_m, nodes_m, nodes_w = 0, [], [], 0, 0
    for board in boards:
        counted = Counters()
        moves = solve(board, GOAL, G4, counters=counted, heuristic=manhattan)
        nodes_m += counted.expanded
        best = path_cost(board, moves, G4, model)
        counted = Counters()
        again = solve(board, GOAL, G4, counters=counted, heuristic=weighted)
        nodes_w += counted.expanded
        assert cost_at_most(path_cost(board, again, G4, model), best)
        if not cost_at_most(weighted(board), best):
            over += 1
            print(f"  NOT ADMISSIBLE: {board}: h {weighted(board)} > {best}")
        if best > 0:
            tight_w.append(weighted(board) / best)
            tight_m.append(manhattan(board) / best)
    n = len(boards)
    print(f"  {name} {model}: {n} boards, h > optimal cost on {over}; mean h/optimal "
          f"{sum(tight_w) / len(tight_w):.3f} (cost-weighted Manhattan "
          f"{sum(tight_m) / len(tight_m):.3f}); A* expanded {nodes_w:,} with it, "
          f"{nodes_m:,} with Manhattan ({nodes_m / max(nodes_w, 1):.1f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="pdb555")
    parser.add_argument("--models", default="heavy,inverse,sqrt,reverse")
    parser.add_argument("--boards", type=int, default=100)
    args = parser.parse_args()
    print(f"weighted PDB builds ({load()})")
    for name in args.tables.split(","):
        for model in args.models.split(","):
            f = build(name, model)
            print(f"  {name} {model}: {f['cpu']:.1f} s CPU, {f['wall']:.1f} s wall, "
                  f"peak RSS {f['rss_mib']:.0f} MiB, tables {f['mib']:.1f} MiB")
    print(f"admissibility against exact search ({load()})")
    boards = walks(args.boards)
    for name in args.tables.split(","):
        for model in args.models.split(","):
            check(name, model, boards)
    print(f"done ({load()})")


if __name__ == "__main__":
    main()
