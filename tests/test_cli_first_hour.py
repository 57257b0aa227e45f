"""What a new user ran into in the first hour (issue 16 §2), kept fixed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.puzzle import apply_moves, format_board, goal_board, grid

HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]
ENV = {**os.environ, "CI": "1", "COLUMNS": "80"}
DATA = Path(__file__).parent / "data"
PLUGIN = str(Path(__file__).parent / "plugins" / "misbehaving.py")


def harness(*args: str, stdin: str | None = None, env=None):
    return subprocess.run(
        [*HARNESS, *args], capture_output=True, text=True, timeout=180,
        env=env or ENV, input=stdin,
    )  # fmt: skip


# ----------------------------------------------------------- harness solve


def test_solve_infers_the_size_when_every_line_holds_one_board():
    g = grid(4)
    goal = goal_board("standard", g)
    board = apply_moves(goal, "ullurd", g)
    line = " ".join(str(t) for t in board)
    proc = harness("solve", "--solver", "ida_star[manhattan]", stdin=line + "\n")
    assert proc.returncode == 0, proc.stderr
    moves = proc.stdout.strip()
    assert apply_moves(board, moves, g) == goal and len(moves) == 6
    # 3x3 lines are still 3x3, and rows on their own lines still read as 3x3
    assert harness("solve", stdin="1 2 3 4 5 6 7 0 8\n").stdout == "r\n"
    assert harness("solve", stdin="1 2 3\n4 5 6\n7 0 8\n").stdout == "r\n"
    assert format_board(board)  # (the board printed fine)


def test_solve_names_the_size_a_line_holds():
    """The issue's exact input, next to a 3x3 line: no single size fits, so the
    error says what the 16-token line is."""
    issue = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3"
    proc = harness("solve", stdin=f"{issue}\n1 2 3 4 5 6 7 8 0\n")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: stdin line 1 has 16 tokens; a 3x3 board has 9 (use --size 4x4)"
    )
    alone = harness("solve", "--solver", "ida_star[manhattan]", stdin=issue + "\n")
    assert alone.returncode == 0 and alone.stdout == "unsolvable\n"  # read as 4x4
    explicit = harness("solve", "--size", "3x3", stdin=issue + "\n")
    assert explicit.returncode == 2 and "use --size" not in explicit.stderr


def test_plugin_solvers_in_solvers_and_solve():
    listed = harness("solvers", "--plugin", PLUGIN)
    assert listed.returncode == 0, listed.stderr
    assert "  good_bfs: " in listed.stdout
    solved = harness("solve", "--plugin", PLUGIN, "--solver", "good_bfs",
                     stdin="1 2 3 4 5 6 7 0 8\n")  # fmt: skip
    assert solved.returncode == 0 and solved.stdout == "r\n", solved.stderr
    missing = harness("solvers", "--plugin", "/nonexistent/plug.py")
    assert missing.returncode == 2 and missing.stderr.startswith("error: --plugin ")


# ------------------------------------------------------- version and --help


def test_version_and_shell_completion():
    from importlib.metadata import version

    proc = harness("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"harness {version('npuzzle-harness')} (Python ")
    top = harness("--help").stdout
    assert "--install-completion" in top and "--show-completion" in top


def test_help_shows_defaults_one_way_and_no_bool_metavar():
    run = harness("run", "--help", env={**ENV, "COLUMNS": "200"}).stdout
    for option, default in [("--solvers", "all"), ("--datasets", "default"),
                            ("--repeats", "3"), ("--memory-limit", "4096"),
                            ("--out", "results")]:  # fmt: skip
        block = run.split(f" {option} ", 1)[1].split("│ --", 1)[0]
        assert f"[default: {default}]" in block, block
    assert "<bool>" not in run and "no-strict" not in run
    assert not re.search(r"\[\d+\]", run)  # the old "[3]" style is gone
    assert "main job" in run  # a bare `harness run` is the main job
    for command in (["solve"], ["report"], ["datasets", "show"]):
        assert "<bool>" not in harness(*command, "--help").stdout


def test_generator_choices_are_not_wrapped_mid_word():
    text = harness("datasets", "generate", "--help").stdout
    words = re.findall(r"[a-z_]+", text)
    for choice in ("random_walk", "uniform", "unsolvable", "depth_strata"):
        assert choice in words, text


# ------------------------------------------------------------- harness run


@pytest.fixture(scope="module")
def quiet_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    proc = harness(
        "run", "--plugin", PLUGIN, "--solvers", "good_bfs", "--datasets", "8-seeds",
        "--repeats", "2", "--jobs", "2", "--no-report", "-q", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_quiet_prints_the_summary_and_the_run_directory_only(quiet_run):
    out, proc = quiet_run
    assert proc.stderr == ""
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:4] == ["config", "dataset", "solved", "optimal"]
    assert lines[-1].startswith(str(out))
    assert len(lines) == 5  # header, rule, one row, what "common" means, run dir
    assert lines[3].startswith("common: ")


def test_node_count_medians_are_whole_numbers(quiet_run):
    _, proc = quiet_run
    row = next(x for x in proc.stdout.splitlines() if x.startswith("good_bfs"))
    assert not re.search(r"\d\.00\b", row), row
    assert re.search(r"\s\d[\d,]*\s*$", row), row  # median expanded ends the row


def test_worker_advice_comes_after_the_work(tmp_path):
    proc = harness(
        "run", "--plugin", PLUGIN, "--solvers", "good_bfs", "--datasets", "8-seeds",
        "--repeats", "1", "--no-memory", "--jobs", "2", "--no-report",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert not any("warning:" in x for x in err), err
    assert err[-1].startswith("note: 2 workers solved side by side")
    assert "run with --jobs 1" in err[-1]
    last_progress = max(i for i, x in enumerate(err) if x.startswith("["))
    assert last_progress < len(err) - 1


def test_report_resolves_run_ids_in_results_dir(tmp_path):
    import shutil

    shutil.copytree(DATA / "run_fixture", tmp_path / "r1")
    result = CliRunner().invoke(
        app, ["report", "r1", "--results-dir", str(tmp_path), "--format", "csv"]
    )
    assert result.exit_code == 0, result.output
    missing = CliRunner().invoke(
        app, ["report", "r9", "--results-dir", str(tmp_path), "--format", "csv"]
    )
    assert missing.exit_code == 2 and "r9" in missing.stderr
    assert str(tmp_path / "r9") in missing.stderr


def test_summaries_share_the_rich_table_style():
    """run, report, compare and datasets list: header, a rule of '─', rows."""
    report = CliRunner().invoke(app, ["report", str(DATA / "run_fixture"),
                                      "--format", "table"]).stdout  # fmt: skip
    compare = harness("compare", str(DATA / "run_fixture"),
                      str(DATA / "run_fixture_b"), "--no-time").stdout  # fmt: skip
    datasets = harness("datasets", "list").stdout
    for text in (report, compare, datasets):
        lines = text.splitlines()
        rules = [i for i, x in enumerate(lines) if x and set(x) == {"─"}]
        assert rules, text
        assert all(not x.endswith(" ") for x in lines)


def test_cactus_plot_ticks_whole_instance_counts(monkeypatch, tmp_path):
    import numpy as np
    import pandas as pd

    from harness.report import plots

    ticks = []

    def keep(fig, plot_dir, name):
        fig.canvas.draw()
        ticks.extend(fig.axes[0].get_yticks())
        return plot_dir / f"{name}.png"

    monkeypatch.setattr(plots, "_save", keep)
    answered = pd.DataFrame(
        {"config": ["a", "a", "b"], "seconds": [0.001, 0.002, 0.003]}
    )
    inst = pd.DataFrame({"dataset": ["d", "d"], "instance": ["i1", "i2"]})
    plots._cactus_plot(answered, inst, plots.style_map(["a", "b"]), tmp_path, None)
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    assert np.isfinite(ticks).all()


# ------------------------------------------------------------ from a wheel


def test_committed_datasets_without_files_are_built_once_then_cached(
    monkeypatch, tmp_path
):
    """An installed wheel has no datasets/ folder: the recipes build the committed
    sets, once; later loads read the cached copy (`datasets list` stays quick)."""
    from harness.datasets import catalogue

    monkeypatch.setattr(catalogue, "repo_datasets_dir", lambda: None)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NPUZZLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("NPUZZLE_DATASETS", raising=False)
    first = catalogue.load_dataset("8-seeds")
    assert first.path is None
    assert len(list((tmp_path / "cache" / "datasets").glob("*/8-seeds.jsonl"))) == 1

    def no_build(name):
        raise AssertionError(f"{name} was built again")

    monkeypatch.setattr(catalogue, "build", no_build)
    again = catalogue.load_dataset("8-seeds")
    assert again.checksum == first.checksum and again.path is None
    shown = CliRunner().invoke(app, ["datasets", "show", "8-seeds"])
    assert shown.exit_code == 0, shown.output
    path_line = next(
        x for x in shown.stdout.splitlines() if x.strip().startswith("path:")
    )
    assert "None" not in path_line and "built in" in path_line
