"""24-puzzle figures: ida_star_jit[pdb6666] on 25-walks and the easiest of Korf &
Felner's 50, within a time budget (not a pytest file).

    .venv/bin/python tests/benchmarks/bench_24.py --budget 600     # 10 minutes
    .venv/bin/python tests/benchmarks/bench_24.py --quick          # walks + 1 Korf

Set-up first: the pdb6666 tables are loaded from the cache (or built, printing the
build's wall and CPU time, peak memory and size), the kernel compiled or loaded.
Then every 25-walks board, then Korf & Felner's instances, easiest first, each
solved in a forked child process (tables and compiled kernel shared, nothing
rebuilt) that is killed when the budget runs out: a solve cannot be stopped from
inside the kernel, and a budget must hold. "Easiest" first: the twelve instances a
public re-implementation ran (forum.cubeman.org, "Pattern databases for the 5x5
sliding puzzle", 2017), in its order (#38 is the paper's easiest), then the rest by
the gap between the optimal length and the start's pdb6666 value (IDA* needs an
iteration per two moves of gap, each several times the last). ``--instance-budget``
caps one instance (a timeout then moves on to the next).

Per instance: the length found against the published optimum (a mismatch is
printed as WRONG and makes the exit status 1), the start's h, nodes generated
(Korf's count: every child, cut-off ones included, plus the root once), CPU seconds
of the solve, nodes per CPU second, and the published node count beside it where
one is known (none yet: see harness/data/korf50.tsv). The load average is printed
beside every section; the machine's cores are shared, so compare rates within one
run.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import time

from harness.datasets import load_dataset
from harness.heuristics import make_heuristic, pdb
from harness.puzzle import apply_moves, goal_board, grid
from harness.solver import Counters, all_solvers

G5 = grid(5)
GOAL = goal_board("blank-first", G5)

#: Korf & Felner (2002) nodes generated per instance with the same partition and
#: its reflection, where a public source gives them (none found yet).
PUBLISHED_NODES: dict[str, int] = {}

#: The instances the forum post above solved (and matched the paper's node counts
#: on), in its order: the paper's twelve easiest.
FORUM_EASIEST = (38, 40, 25, 32, 44, 37, 30, 13, 1, 28, 36, 5)


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def section(title: str) -> None:
    print(f"\n== {title} ({load()})", flush=True)


def setup():
    """The pdb6666 heuristic, prepared kernel; prints where the tables came from."""
    section("set-up: pdb6666 tables and the compiled kernel")
    cached = pdb.cached("pdb6666", GOAL, G5)
    if not cached:
        estimate = pdb.setup_estimate("pdb6666", GOAL, G5)
        print(f"tables not cached: building (~{estimate:.0f} s estimated here)")
    wall0, cpu0 = time.perf_counter(), time.process_time()
    h = make_heuristic("pdb6666", GOAL, G5)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(h.data.summary())
    for info in h.data.infos:
        print(f"  table {info.goal_squares}: {info.source}, {info.seconds:.2f} s "
              f"(built in {info.build_seconds:.0f} s)")
    print(f"{'built' if not cached else 'loaded'} in {wall:.1f} s wall, {cpu:.1f} s "
          f"CPU; peak RSS {peak:.2f} GiB")
    spec = all_solvers()["ida_star_jit"]
    t0 = time.perf_counter()
    spec.prepare(G5, GOAL, h)
    print(f"kernel ready in {time.perf_counter() - t0:.2f} s")
    return spec, h


def solve(spec, h, board) -> tuple[int, int, float]:
    """(path length, nodes generated, CPU seconds) of one solve; the path is
    replayed to the goal."""
    counters = Counters()
    cpu0 = time.process_time()
    moves = spec.solve(board, GOAL, G5, counters=counters, heuristic=h)
    cpu = time.process_time() - cpu0
    assert apply_moves(board, moves, G5) == GOAL, "the path does not reach the goal"
    return len(moves), counters.generated, cpu


def _child(conn, spec, h, board) -> None:
    conn.send(solve(spec, h, board))
    conn.close()


def solve_within(spec, h, board, seconds: float):
    """solve() in a forked child killed after ``seconds``; None when it was."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, spec, h, board))
    proc.start()
    child.close()
    result = parent.recv() if parent.poll(max(seconds, 0.0)) else None
    if result is None:
        proc.kill()
    proc.join()
    return result


def row(ident: str, length: int, h0: int, result) -> str:
    if result is None:
        return f"{ident:8} {length:4} {'-':>5} {h0:4} {'timeout':>15}"
    got, nodes, cpu = result
    verdict = "ok" if got == length else "WRONG"
    rate = nodes / cpu / 1e6 if cpu > 0 else float("nan")
    published = PUBLISHED_NODES.get(ident)
    beside = (f"{published:>15,} {nodes / published:6.3f}" if published
              else f"{'-':>15} {'-':>6}")
    return (f"{ident:8} {length:4} {got:5} {h0:4} {nodes:15,} {cpu:9.2f} "
            f"{rate:7.2f} {beside} {verdict}")


HEADER = (f"{'id':8} {'opt':>4} {'found':>5} {'h0':>4} {'nodes':>15} {'cpu s':>9} "
          f"{'M/s':>7} {'published':>15} {'ratio':>6}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=600.0,
                    help="seconds for Korf's instances, all together (600)")
    ap.add_argument("--instance-budget", type=float, default=None,
                    help="seconds for one Korf instance (default: what is left)")
    ap.add_argument("--quick", action="store_true",
                    help="the walks and the easiest Korf instance (budget 120 s)")
    args = ap.parse_args()
    budget = 120.0 if args.quick else args.budget
    spec, h = setup()
    bad = 0

    section("25-walks (optimal lengths from the dataset; every one solved)")
    walks = load_dataset("25-walks")
    print(HEADER)
    total_nodes, total_cpu = 0, 0.0
    for inst in walks.instances:
        result = solve(spec, h, inst.start)
        total_nodes += result[1]
        total_cpu += result[2]
        line = row(inst.id, inst.optimal_length, h(inst.start), result)
        bad += line.endswith("WRONG")
        print(line, flush=True)
    print(f"all {len(walks.instances)}: {total_nodes:,} nodes in {total_cpu:.2f} s CPU "
          f"({total_nodes / max(total_cpu, 1e-9) / 1e6:.2f} M nodes/s)")

    section(f"Korf & Felner's 50, easiest first, budget {budget:.0f} s")
    korf = load_dataset("25-korf50")
    rank = {f"kf-{n:02d}": k for k, n in enumerate(FORUM_EASIEST)}
    order = sorted(
        korf.instances,
        key=lambda i: (rank.get(i.id, len(rank)), i.optimal_length - h(i.start),
                       h(i.start), i.id),
    )
    print(HEADER)
    deadline = time.perf_counter() + budget
    solved = 0
    for inst in order[:1] if args.quick else order:
        left = deadline - time.perf_counter()
        if left <= 0:
            break
        cap = min(left, args.instance_budget or left)
        result = solve_within(spec, h, inst.start, cap)
        line = row(inst.id, inst.optimal_length, h(inst.start), result)
        bad += line.endswith("WRONG")
        solved += result is not None
        print(line + ("" if result else f" after {cap:.0f} s"), flush=True)
    print(f"{solved} of {len(order)} solved within the budget; "
          f"{'all at' if not bad else 'NOT all at'} the published optimal length")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
