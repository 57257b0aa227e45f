"""The cost of one ``ida_star_jit`` call around its search (issue 21, item 7).

    .venv/bin/python tests/benchmarks/bench_solve_call.py             # ~1 min
    .venv/bin/python tests/benchmarks/bench_solve_call.py --heuristics pdb44 --rounds 9
    .venv/bin/python tests/benchmarks/bench_solve_call.py --heuristics manhattan \
        --c-program /tmp/ida_manhattan     # make -C examples/external, copied out

In one process, on the same 3x3 boards, interleaved (A B C A B C ... per round, the
order rotated each round), per heuristic:

- ``entry``: ``solve`` as the runner calls it (the kernel's one-board entry,
  :mod:`harness.kernels.single`);
- ``general``: the way every solve went before the entry (``_solve_general``:
  the solvability test in Python, the board's array, the kernel through numba's
  dispatcher with all its arguments) -- the "before";
- ``kernel``: the same solves back to back inside one compiled loop (no Python
  per solve): the search's own cost, the floor any entry can reach.

- ``C``, with ``--c-program`` and Manhattan only: our C IDA*
  (``examples/external/ida_manhattan``) given the same boards, each ``--loops``
  lines in a row, in one process per round: its CPU time (children's rusage)
  less that of a run with no input (its start-up), per line. Lines are read,
  parsed and printed: what a batch program pays per solve.

Each figure is the CPU time (``process_time``) of a calibrated loop over the boards
(every board solved ``--loops`` times in a row, as the runner's samples do), per
solve, the median over rounds. Printed: microseconds per solve, and the ratios
general / entry and entry / kernel (entry - kernel is the cost per call left),
and with ``--c-program`` entry / C and kernel / C.
The load average is printed beside them. Counters and moves of the two call paths
are checked equal on every board first.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import time


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--heuristics", default="manhattan,pdb44,linear_conflict")
    ap.add_argument("--boards", type=int, default=40)
    ap.add_argument("--loops", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--c-program", help="examples/external/ida_manhattan, built")
    args = ap.parse_args()

    import numba
    import numpy as np

    import solvers.ida_star_jit as ida
    from harness import kernels
    from harness.heuristics import make_heuristic
    from harness.puzzle import grid, is_solvable
    from harness.solver import Counters

    g = grid(3, 3)
    goal = (1, 2, 3, 4, 5, 6, 7, 8, 0)
    rng = random.Random(args.seed)
    boards: list[tuple[int, ...]] = []
    while len(boards) < args.boards:
        b = list(range(9))
        rng.shuffle(b)
        if is_solvable(tuple(b), goal, g):
            boards.append(tuple(b))

    @numba.njit
    def kernel_loop(fn, starts, board, target, nbr, stats, path, loops, *rest):
        total = 0
        for i in range(starts.shape[0]):
            for _ in range(loops):
                board[:] = starts[i]
                stats[:] = 0
                total += fn(board, target, nbr, *rest, stats, path)
        return total

    print(f"{len(boards)} uniform solvable 3x3 boards, {args.loops} loops each, "
          f"{args.rounds} rounds; load {load()} before")  # fmt: skip
    print(f"{'heuristic':18s} {'entry us':>9s} {'general us':>11s} {'kernel us':>10s}"
          f" {'general/entry':>14s} {'entry/kernel':>13s} {'entry-kernel us':>16s}")
    for name in args.heuristics.split(","):
        h = make_heuristic(name, goal, g)
        ida._prepare(g, goal, h)
        for b in boards:  # the two paths agree, and every call is warm
            c1, c2 = Counters(), Counters()
            m1 = ida.solve(b, goal, g, counters=c1, heuristic=h)
            m2 = ida._solve_general(b, goal, g, h, c2)
            assert (m1, c1) == (m2, c2), (name, b, m1, m2, c1, c2)
        k = ida._kernel(goal, g, h)
        fn = getattr(kernels, k.function)
        starts = np.array(boards, dtype=np.int8)
        target = np.array(goal, dtype=np.int8)
        nbr = kernels.neighbour_array(g)
        stats = np.zeros(4, dtype=np.int64)
        path = np.zeros(kernels.MAX_PATH + 1, dtype=np.int8)
        board = np.zeros(9, dtype=np.int8)

        def run_entry() -> None:
            for b in boards:
                for _ in range(args.loops):
                    ida.solve(b, goal, g, counters=Counters(), heuristic=h)

        def run_general() -> None:
            for b in boards:
                for _ in range(args.loops):
                    ida._solve_general(b, goal, g, h, Counters())

        def run_kernel() -> None:
            kernel_loop(fn, starts, board, target, nbr, stats, path, args.loops,
                        *k.args)  # fmt: skip

        if k.start_args is not None:  # walking distance: no compiled loop here
            run_kernel = None  # type: ignore[assignment]
        else:
            run_kernel()
        lines = "".join(
            (" ".join(map(str, b)) + "\n") * args.loops for b in boards
        ).encode()

        def child_cpu(data: bytes) -> float:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([args.c_program], input=data, stdout=subprocess.DEVNULL,
                           check=True)  # fmt: skip
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)

        def run_c() -> float:
            """CPU seconds of the program's lines, its start-up taken off."""
            return child_cpu(lines) - child_cpu(b"")

        ways = {"entry": run_entry, "general": run_general, "kernel": run_kernel}
        if args.c_program and name == "manhattan":
            ways["C"] = run_c
        ways = {w: f for w, f in ways.items() if f is not None}
        per: dict[str, list[float]] = {w: [] for w in ways}
        order = list(ways)
        for r in range(args.rounds):
            for w in order[r % len(order):] + order[: r % len(order)]:
                c0 = time.process_time_ns()
                took = ways[w]()
                ns = took * 1e9 if took is not None else time.process_time_ns() - c0
                per[w].append(ns / 1e3 / (len(boards) * args.loops))
        med = {w: statistics.median(v) for w, v in per.items()}
        kern = med.get("kernel", float("nan"))
        print(f"{name:18s} {med['entry']:9.2f} {med['general']:11.2f} {kern:10.2f}"
              f" {med['general'] / med['entry']:13.2f}x {med['entry'] / kern:12.2f}x"
              f" {med['entry'] - kern:16.2f}")  # fmt: skip
        if "C" in med:
            print(f"{'  our C program':18s} {med['C']:9.2f} us per line; entry / C "
                  f"{med['entry'] / med['C']:.2f}x, kernel / C "
                  f"{kern / med['C']:.2f}x")  # fmt: skip
    print(f"load {load()} after")


if __name__ == "__main__":
    main()
