"""``harness solve --cost``: the done-when check of issue 36 end to end, every
cost model on 3x3 boards of every depth, and the option's errors."""

from __future__ import annotations

import random

import numpy as np
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.core import cost_oracle, oracle
from harness.core.costs import COST_MODELS, costs_equal, path_cost
from harness.puzzle import apply_moves, format_board, goal_board, grid, unrank

G3 = grid(3)
GOAL = goal_board("standard", G3)
runner = CliRunner()


def _boards() -> list:
    depth = oracle.distances(GOAL, G3)
    rng = random.Random(7)
    return [unrank(int(rng.choice(np.flatnonzero(depth == d).tolist())), 9)
            for d in range(32)]  # fmt: skip


@pytest.mark.parametrize("model", COST_MODELS)
def test_solve_prints_the_cheapest_path_for_every_cost_model(model):
    boards = _boards()
    if model == "heavy":  # the issue's own example first
        boards[0] = (8, 6, 7, 2, 5, 4, 3, 0, 1)
    stdin = "\n".join(format_board(b) for b in boards) + "\n"
    result = runner.invoke(app, ["solve", "--cost", model, "--solver", "astar_dict"],
                           input=stdin)  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == len(boards)
    for board, moves in zip(boards, lines):
        assert apply_moves(board, moves, G3) == GOAL
        best = cost_oracle.optimal_cost(board, GOAL, G3, model)
        assert costs_equal(path_cost(board, moves, G3, model), best), (board, moves)


def test_stats_show_each_paths_cost():
    result = runner.invoke(app, ["solve", "--cost", "heavy", "--stats"],
                           input="8 6 7 2 5 4 3 x 1\n")  # fmt: skip
    assert result.exit_code == 0
    assert "heavy cost 136" in result.stderr


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--cost", "hevy"], "--cost: unknown cost model 'hevy' (did you mean"),
        (["--cost", "heavy", "--solver", "bfs"], "bfs does not take tile costs"),
        (["--cost", "sqrt", "--solver", "ida_star_jit[linear_conflict]"],
         "linear_conflict has no form for tile costs"),
    ],
)  # fmt: skip
def test_cost_errors_are_one_line(args, fragment):
    result = runner.invoke(app, ["solve", *args], input="1 2 3 4 5 6 7 x 8\n")
    assert result.exit_code != 0 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0]


def test_run_takes_cost_for_every_dataset(tmp_path):
    """``harness run --cost heavy`` runs each dataset under the model (NAME@MODEL);
    an unknown model is one line. (The flag's import was broken from eeeb770 to
    this test: every ``run --cost`` ended in an internal error.)"""
    import csv
    from pathlib import Path

    args = ["run", "--solvers", "astar_dict", "--datasets", "8-seeds", "--repeats",
            "1", "--no-memory", "--jobs", "0", "--no-report", "-q",
            "--out", str(tmp_path)]  # fmt: skip
    result = runner.invoke(app, [*args, "--cost", "heavy"], env={"CI": "1"})
    assert result.exit_code == 0, result.output
    run_dir = Path(result.stdout.strip().splitlines()[-1])
    with open(run_dir / "rows.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    given = {(r["dataset"], r["cost_model"]) for r in rows}
    assert given == {("8-seeds@heavy", "heavy")}
    assert {r["status"] for r in rows} == {"solved"}
    wrong = runner.invoke(app, [*args, "--cost", "hevy"], env={"CI": "1"})
    assert wrong.exit_code == 2
    assert "--cost" in str(wrong.exception) + wrong.stderr
