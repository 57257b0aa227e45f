"""The runner's own cost: ``python tests/benchmarks/overhead.py [--cells N]``.

Prints three figures (issue 4, section 7):

1. runner cost per cell: a no-op solver over N cells through the real pipeline
   (worker process, pipe, validation, rows.csv append + fsync), wall time / N;
2. timing floor: the median ``seconds`` the runner records for the no-op call (two
   clock reads and a Python call: the smallest time it can report);
3. the gap between the timed region and the solver's own work: for a real solver on
   one instance, the runner's median against a bare ``perf_counter_ns`` loop around
   the same call in this process.

Importing this module registers the ``overhead_noop`` solver; it is loaded into
workers as a plugin (this file), so the normal solver selection never sees it.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time

from harness.configs import SolverConfig
from harness.puzzle import Board, Grid
from harness.solver import Counters, register


@register("overhead_noop", optimal=False, budget_seconds=10)
def overhead_noop(
    start: Board, goal: Board, grid: Grid, *, counters: Counters, heuristic
) -> str:
    """Returns the empty path at once (correct: every start board is the goal)."""
    return ""


def _noop_dataset(cells: int):
    from harness.datasets import Dataset, Instance
    from harness.puzzle import goal_board, grid

    g = grid(3)
    goal = goal_board("standard", g)
    instances = tuple(
        Instance(f"n{i:05d}", goal, goal, g, True, 0, "oracle") for i in range(cells)
    )
    return Dataset("overhead-noop", g, goal, "overhead", {}, None, instances, "n/a")


def runner_cost(cells: int, jobs: int, memory_pass: bool) -> dict[str, float]:
    """Wall seconds per cell of the whole pipeline for the no-op solver."""
    from harness.measure import runner
    from harness.measure.plan import make_plan

    plan = make_plan(
        ["overhead_noop"],
        [_noop_dataset(cells)],
        plugins=[__file__],
        repeats=1,
        memory_pass=memory_pass,
    )
    with tempfile.TemporaryDirectory() as out:
        run_dir, meta = runner.start(plan, out, jobs=jobs, argv=["overhead"])
        t0 = time.perf_counter()
        runner.execute(
            plan, run_dir, meta, executor=runner.make_executor(jobs, run_dir)
        )
        wall = time.perf_counter() - t0
        from harness.analysis import read_run

        _, rows = read_run(run_dir)
        setup = sum(s["seconds"] for s in meta["setup"])
    timed = rows[rows["measure"] == "time"]
    assert (timed["status"] == "solved").all()
    return {
        "wall": wall,
        "per_cell": wall / cells,
        "setup": setup,
        "floor_median": float(timed["seconds"].median()),
        "floor_min": float(timed["seconds"].min()),
    }


def _bare_median(
    config: SolverConfig, start: Board, goal: Board, g: Grid, n: int
) -> float:
    from harness.heuristics import make_heuristic

    h = make_heuristic(config.heuristic, goal, g) if config.heuristic else None
    if config.spec.prepare is not None:
        config.spec.prepare(g, goal, h)
    times = []
    for _ in range(n):
        gc.collect()
        gc.disable()
        t0 = time.perf_counter_ns()
        config.solve(start, goal, g, counters=Counters(), heuristic=h)
        times.append((time.perf_counter_ns() - t0) / 1e9)
        gc.enable()
    return statistics.median(times)


def gap(config_label: str, board_text: str, repeats: int) -> dict[str, float]:
    """Median seconds of one solve: through the runner vs a bare loop here."""
    from harness.datasets import Dataset, Instance
    from harness.measure import runner
    from harness.measure.plan import make_plan, resolve_solvers
    from harness.puzzle import goal_board, grid, is_solvable, parse_board

    g = grid(3)
    goal = goal_board("standard", g)
    start = parse_board(board_text, g)
    inst = Instance("gap", start, goal, g, is_solvable(start, goal, g), None)
    ds = Dataset("overhead-gap", g, goal, "overhead", {}, None, (inst,), "n/a")
    config = resolve_solvers(config_label)[0]
    plan = make_plan([config], [ds], repeats=repeats, memory_pass=False)
    with tempfile.TemporaryDirectory() as out:
        run_dir, meta = runner.start(plan, out, jobs=1, argv=["overhead"])
        runner.execute(plan, run_dir, meta, executor=runner.make_executor(1, run_dir))
        from harness.analysis import read_run

        _, rows = read_run(run_dir)
    measured = float(rows["seconds"].median())
    bare = _bare_median(config, start, goal, g, repeats)
    return {"runner": measured, "bare": bare, "ratio": measured / bare}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python tests/benchmarks/overhead.py", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--config", default="astar_dict[manhattan]")
    parser.add_argument(
        "--board",
        default="8 6 7 2 5 4 3 x 1",
        help="3x3 start board for the gap figure (default: depth 31)",
    )
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)

    cost = runner_cost(args.cells, args.jobs, memory_pass=False)
    print(
        f"runner cost, no-op solver, {args.cells} cells, jobs {args.jobs}, "
        f"1 timed pass: {cost['wall']:.2f} s = {1e3 * cost['per_cell']:.2f} ms/cell "
        f"(incl. {cost['setup']:.2f} s worker set-up)"
    )
    with_memory = runner_cost(args.cells, args.jobs, memory_pass=True)
    print(f"  with the memory pass: {1e3 * with_memory['per_cell']:.2f} ms/cell")
    print(
        f"timing floor (no-op solve as recorded): median "
        f"{1e6 * cost['floor_median']:.2f} us, min {1e6 * cost['floor_min']:.2f} us"
    )
    g = gap(args.config, args.board, args.repeats)
    print(
        f"gap for {args.config} on '{args.board}' ({args.repeats} solves): runner "
        f"median {1e3 * g['runner']:.1f} ms, bare loop in-process "
        f"{1e3 * g['bare']:.1f} ms, ratio {g['ratio']:.3f}"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
