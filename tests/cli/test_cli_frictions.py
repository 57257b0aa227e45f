"""What a new user ran into with the main job's report (issue 32, item 6), kept
fixed: wall-time verdicts, plugins named like built-ins, boards given as
arguments, the regression threshold the docs state."""

from __future__ import annotations

import json

import in_process
import pytest
from plugins.tiny import make_dataset, walk
from where import PLUGINS

from harness.puzzle import goal_board, grid

ENV = {"CI": "1", "COLUMNS": "200"}


def harness(*args: str, env: dict[str, str] | None = None, stdin: str | None = None):
    return in_process.harness(*args, env={**ENV, **(env or {})}, stdin=stdin)


@pytest.fixture(scope="module")
def boards_3x3(tmp_path_factory):
    from harness.datasets import save_dataset

    g = grid(3)
    goal = goal_board("standard", g)
    boards = [walk(goal, g, 6 + i, seed=i) for i in range(6)]
    return save_dataset(make_dataset("nap33", boards, g, goal),
                        tmp_path_factory.mktemp("datasets"))  # fmt: skip


def test_compare_judges_wall_time_when_asked(tmp_path, boards_3x3):
    """Two real runs of one BFS, the second sleeping 5 ms per solve: what the rows
    record as wall time grows several-fold, the CPU time hardly; ``--time wall``
    judges the first and says so, the default judges the second."""
    runs = []
    for nap in ("0", "0.005"):
        proc = harness(
            "run", "--solvers", "napping_bfs", "--plugin", str(PLUGINS / "napping.py"),
            "--datasets", str(boards_3x3), "--out", str(tmp_path), "--no-report", "-q",
            "--jobs", "1", "--min-sample-time", "0", env={"NPUZZLE_TEST_NAP": nap},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        runs.append(proc.stdout.strip().splitlines()[-1])

    def judged(*options: str) -> tuple[dict, str]:
        args = ("compare", *runs, "--time-threshold", "0", *options)
        as_json = json.loads(harness(*args, "--format", "json").stdout)
        return as_json["configs"]["napping_bfs"]["time"], harness(*args).stdout

    cpu, cpu_text = judged()
    wall, wall_text = judged("--time", "wall")
    assert cpu["metric"] == "cpu_seconds" and wall["metric"] == "seconds"
    assert wall["regression"] and wall["raw_ratio"] > 3
    assert wall["ratio"] > 2 * cpu["ratio"]  # the sleep shows on one clock only
    assert "in wall time" in wall["verdict"] and "in CPU time" in cpu["verdict"]
    assert "time judged on wall time" in wall_text
    assert "time judged on CPU time" in cpu_text


def test_solve_takes_boards_as_arguments():
    """``harness solve "1 2 3 ..."`` was typer's "unexpected extra argument": a
    board in quotes per argument, or one board's tokens unquoted, is solved as if
    it came on standard input (stdin is then not read)."""
    piped = harness("solve", stdin="2 3 4 1 5 x 7 6 8\n1 2 3 4 5 6 7 x 8\n").stdout
    quoted = harness("solve", "2 3 4 1 5 x 7 6 8", "1 2 3 4 5 6 7 x 8", stdin="junk")
    assert quoted.returncode == 0 and quoted.stdout == piped
    assert len(piped.splitlines()[0]) == 19
    unquoted = harness("solve", *"2 3 4 1 5 x 7 6 8".split())
    assert unquoted.stdout == piped.splitlines()[0] + "\n"
    sized = harness("solve", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 0 15",
                    "--solver", "ida_star")  # the size inferred: 4x4  # fmt: skip
    assert sized.returncode == 0 and sized.stdout == "r\n"
    bad = harness("solve", "1 2 3 4 5 6 7 8 8")
    assert bad.returncode == 2 and bad.stderr.startswith("error: argument line 1:")


def test_run_refuses_a_plugin_named_like_a_built_in(tmp_path):
    plugin = tmp_path / "greedy.py"
    plugin.write_text(
        "from harness.solver import register\n\n\n"
        '@register("greedy", optimal=False)\n'
        "def solve(start, goal, grid, *, counters, heuristic):\n"
        "    return None\n"
    )
    proc = harness("run", "--plugin", str(plugin), "--solvers", "greedy",
                   "--datasets", "8-seeds", "--out", str(tmp_path), "-q")  # fmt: skip
    assert proc.returncode == 2 and not list(tmp_path.glob("*/rows.csv"))
    (line,) = proc.stderr.strip().splitlines()
    assert "solver 'greedy' is registered twice" in line
    assert "built-in solvers.greedy" in line and str(plugin) in line


SLOW_HEURISTIC = '''
import time

from harness.heuristics import Heuristic, register_heuristic


@register_heuristic("slow_zero", "zero, after a pause (a table built)")
def slow_zero(goal, grid):
    time.sleep(0.4)
    return Heuristic("slow_zero", goal, grid, lambda board: 0)
'''


def test_a_long_set_up_says_what_it_builds_on_a_terminal(tmp_path, monkeypatch):
    """``harness solve --size 5x5`` built pdb6666 for minutes in silence: a set-up
    past SETUP_NOTICE_SECONDS says what it builds and how long it took, on a
    terminal; in a pipe or CI (the tests' stderr) it stays quiet."""
    from harness.cli import progress

    plugin = tmp_path / "slow_zero.py"
    plugin.write_text(SLOW_HEURISTIC)
    args = ("solve", "--plugin", str(plugin), "--solver", "astar_dict[slow_zero]",
            "1 2 3 4 5 6 7 x 8")  # fmt: skip
    piped = harness(*args)
    assert piped.stdout == "r\n" and "setting up" not in piped.stderr
    said: list[str] = []
    monkeypatch.setattr(progress, "SETUP_NOTICE_SECONDS", 0.1)
    monkeypatch.setattr("harness.cli.solve.setup_lines", lambda: said.append)
    assert harness(*args).stdout == "r\n"
    assert said[0] == "setting up: building the slow_zero tables for 3x3 (once: " \
        "cached after) ..."
    assert said[-1].startswith("set up in ") and "the slow_zero tables" in said[-1]
