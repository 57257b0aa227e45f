"""The 3x3 edge of ``harness solve``: per-board cost in a batch (issue 13, section 2).

    .venv/bin/python tests/benchmarks/bench_solve_edge.py            # ~1 min
    .venv/bin/python tests/benchmarks/bench_solve_edge.py --boards 2000
    .venv/bin/python tests/benchmarks/bench_solve_edge.py --only noop,table
    .venv/bin/python tests/benchmarks/bench_solve_edge.py --against 83a1f18  # A/B

Every figure comes from the real command (``harness.cli.main``, boards on standard
input, answers on standard output, every answer replayed and checked) in a fresh
process, clocked inside it: reading the batch divided by N, plus the time from the
first answer written to the end of the output divided by N - 1 (each board's
solve, checks and output), so start-up and set-up stay out (the interpreter, the
imports -- numpy included, which ``harness solve`` imports up front for a long
input --, ``prepare``, the batch entry point's compiled code loaded); best of
``--repeats`` batches, after a warm-up batch. CPU is the process's own
(``time.process_time``). Boards go in groups (1, 2, 4, ... 4096), so the first
answer comes after one board.

Under each figure, the CPU parts per board (of the batch with the best CPU):
``read`` (the batch reader), ``solve`` (the solver's calls, ``solve_many`` or
``solve`` per board), ``judge`` (replay and solvability), ``write`` (the output
lines), ``other`` (the rest: the group loop, the first board, the flush at exit).

- ``noop``: a solver that returns a precomputed answer (a dict lookup): what
  ``harness solve`` itself costs per board (read, parse, solvability, replay,
  print). Goal: <= 20 us wall per board over 10,000 uniform random boards (half of
  them unsolvable).
- ``table``: the exact table walk, <= 5 us CPU per board (same boards).
- the fastest search solvers on uniform solvable boards of the median depth (22),
  <= 25 us per board.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

#: Run in the child: registers ``noop`` (answers read from $NOOP_ANSWERS) and then
#: runs the real command line.
CHILD = """
import atexit, json, os, sys, time
if os.environ.get("EDGE_OTHER_TREE"):  # --against: that tree's harness, not ours
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in str(f)]
    sys.path.insert(0, os.environ["EDGE_OTHER_TREE"])
from harness.solver import register
answers = {tuple(json.loads(k)): v for k, v in
           json.load(open(os.environ["NOOP_ANSWERS"])).items()}

@register("noop", optimal=True, sizes="3x3 (precomputed answers)")
def noop(start, goal, grid, *, counters, heuristic=None):
    return answers[start]

# Clocks: around reading the boards, and at the first and last answer written.
import harness.cli.solve as cli_solve
try:  # the input's reader moved to board_input; an older tree has it in solve
    import harness.cli.board_input as cli_input
except ImportError:
    cli_input = cli_solve
marks = {}
read = cli_input.read_batch  # plain input: the reader harness solve uses
def timed_read(text, g):
    w, c = time.perf_counter(), time.process_time()
    boards = read(text, g)
    marks["read"] = (time.perf_counter() - w, time.process_time() - c, len(boards))
    return boards
cli_input.read_batch = timed_read
# The parts: process CPU time inside each step of the group loop (a few calls per
# group of up to 4096 boards, so the wrappers cost nothing measurable).
parts = marks["parts"] = {}
def timed(name, fn):
    def wrapper(*args, **kwargs):
        c = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            parts[name] = parts.get(name, 0.0) + time.process_time() - c
    return wrapper
for name, attr in (("solve", "_solve_many"), ("solve", "_solve_each"),
                   ("judge", "judge_many"), ("judge", "judge"), ("write", "_write")):
    if hasattr(cli_solve, attr):  # (an older tree may lack some)
        setattr(cli_solve, attr, timed(name, getattr(cli_solve, attr)))
out = sys.stdout
class Counting:  # one flag test per answer; the clock stops at exit
    def write(self, text):
        if "first" not in marks:
            marks["first"] = (time.perf_counter(), time.process_time())
        return out.write(text)
    def __getattr__(self, name):
        return getattr(out, name)
sys.stdout = Counting()
def stop():
    out.flush()
    marks["last"] = (time.perf_counter(), time.process_time())
    os.write(2, ("\\n" + json.dumps(marks) + "\\n").encode())
atexit.register(stop)

from harness.cli import main
sys.argv = ["harness", *sys.argv[1:]]
main()
"""


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def boards_and_answers(count: int, seed: int):
    """``count`` uniform random 3x3 boards (either parity) with their table answers,
    and uniform solvable boards of depth 22 (the median)."""
    from harness.core import oracle
    from harness.puzzle import goal_board, grid
    from harness.solver import Counters
    from solvers.table import solve as table_solve

    g = grid(3)
    goal = goal_board("standard", g)
    rng = random.Random(seed)
    boards, answers = [], {}
    for _ in range(count):
        cells = list(range(9))
        rng.shuffle(cells)
        board = tuple(cells)
        boards.append(board)
        answers[board] = table_solve(board, goal, g, counters=Counters())
    dist = oracle.distances(goal, g)
    median = []
    while len(median) < count:
        cells = list(range(9))
        rng.shuffle(cells)
        board = tuple(cells)
        from harness.puzzle import rank

        if dist[rank(board)] == 22:
            median.append(board)
    return boards, answers, median


def text_of(boards) -> bytes:
    return "".join(
        " ".join("x" if t == 0 else str(t) for t in b) + "\n" for b in boards
    ).encode()


def run(solver: str, stdin: bytes, env: dict) -> tuple[float, float, bytes]:
    """(wall, CPU) per board of one ``harness solve`` process, measured inside it:
    reading the batch over N, plus first answer to exit (output flushed) over
    N - 1."""
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "solve", "--solver", solver],
        input=stdin, capture_output=True, env=env, check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{solver}: exit {proc.returncode}: {proc.stderr.decode()}")
    marks = json.loads(proc.stderr.decode().strip().splitlines()[-1])
    read_wall, read_cpu, n = marks["read"]
    first, last = marks["first"], marks["last"]
    wall = read_wall / n + (last[0] - first[0]) / (n - 1)
    cpu = read_cpu / n + (last[1] - first[1]) / (n - 1)
    parts = {"read": read_cpu / n, **{k: v / n for k, v in marks["parts"].items()}}
    return wall, cpu, parts, proc.stdout


def per_board(solver: str, boards, repeats: int, env: dict) -> tuple:
    """Best wall and best CPU per board over ``repeats`` batches (after a warm-up),
    with the CPU parts of the batch with the best CPU."""
    big = text_of(boards)
    run(solver, text_of(boards[:2]), env)  # warm-up: numba's cache, the oracle
    best = None
    for _ in range(repeats):
        wall, cpu, parts, out = run(solver, big, env)
        assert out.count(b"\n") == len(boards), out[:200]
        if best is None or cpu < best[1]:
            best = (min(wall, best[0]) if best else wall, cpu, parts)
        else:
            best = (min(wall, best[0]), best[1], best[2])
    return best


def show(parts: dict, cpu: float) -> str:
    """``read 0.9, solve 1.2, ...`` in us per board; "other" is the rest of the CPU
    (the group loop, the first board, exit)."""
    rest = cpu - sum(parts.values())
    return ", ".join(f"{k} {v * 1e6:.2f}" for k, v in [*parts.items(), ("other", rest)])


def against(args, env: dict, tmp: str, boards, median) -> None:
    """Interleaved A/B: REV's ``harness`` and ``solvers`` (``git archive``) and this
    tree's, one process each in turn, best CPU per board of ``--repeats`` each."""
    other = os.path.join(tmp, "other")
    os.mkdir(other)
    root = os.path.dirname(os.path.dirname(HERE))
    archive = subprocess.run(["git", "-C", root, "archive", args.against, "harness",
                              "solvers"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", other], input=archive, check=True)
    envs = {args.against: dict(env, EDGE_OTHER_TREE=other), "this tree": env}
    print(f"harness solve, 3x3, {args.boards:,} boards: {args.against} against this "
          f"tree, alternating, best of {args.repeats} ({load()})")
    chosen = set(filter(None, args.only.split(",")))
    for solver, some in (("noop", boards), ("table", boards),
                         ("ida_star_jit[pdb44]", median)):
        if chosen and solver not in chosen:
            continue
        text = text_of(some)
        best = {}
        for which, e in envs.items():
            run(solver, text_of(some[:2]), e)  # warm-up
        for _ in range(args.repeats):
            for which, e in envs.items():
                wall, cpu, _parts, _out = run(solver, text, e)
                best[which] = min(best.get(which, (cpu, wall)), (cpu, wall))
        (old_cpu, old_wall), (cpu, wall) = best.values()
        print(f"  {solver:22s} {old_cpu * 1e6:6.1f} -> {cpu * 1e6:6.1f} us CPU "
              f"({old_cpu / cpu:.2f}x), {old_wall * 1e6:6.1f} -> {wall * 1e6:6.1f} us "
              "wall per board")
    print(f"  ({load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--boards", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--only", default="",
                        help="comma list of solver labels to run (default: all)")
    parser.add_argument("--against", metavar="REV",
                        help="instead: CPU per board of git revision REV's harness "
                        "and solvers against this tree's, alternating processes")
    args = parser.parse_args()

    boards, answers, median = boards_and_answers(args.boards, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "answers.json")
        with open(path, "w") as f:
            json.dump({json.dumps(list(b)): a or None for b, a in answers.items()}, f)
        env = dict(os.environ, NOOP_ANSWERS=path)
        if args.against:
            against(args, env, tmp, boards, median)
            return
        print(f"harness solve, 3x3, batches of {args.boards:,} boards, best of "
              f"{args.repeats} ({load()})")
        goals = {"noop": (20, "wall"), "table": (5, "CPU")}
        chosen = set(filter(None, args.only.split(",")))
        for solver in ("noop", "table"):
            if chosen and solver not in chosen:
                continue
            wall, cpu, parts = per_board(solver, boards, args.repeats, env)
            goal, what = goals[solver]
            got = wall if what == "wall" else cpu
            verdict = "ok" if got * 1e6 <= goal else "OVER"
            print(f"  {solver:34s} {wall * 1e6:7.1f} us wall {cpu * 1e6:7.1f} us CPU "
                  f"per board  (goal <= {goal} us {what}: {verdict})   "
                  "uniform, half unsolvable")
            print(f"  {'':34s} CPU parts: {show(parts, cpu)}")
        for solver in ("ida_star_jit[pdb44]", "ida_star_jit[walking_distance]",
                       "ida_star_jit[manhattan]", "astar_cantor_jit[manhattan]"):
            if chosen and solver not in chosen:
                continue
            wall, cpu, parts = per_board(solver, median, args.repeats, env)
            verdict = "ok" if wall * 1e6 <= 25 else "OVER"
            print(f"  {solver:34s} {wall * 1e6:7.1f} us wall {cpu * 1e6:7.1f} us CPU "
                  f"per board  (goal <= 25 us wall: {verdict})   depth 22 (median)")
            print(f"  {'':34s} CPU parts: {show(parts, cpu)}")
        print(f"  ({load()})")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))
    main()
