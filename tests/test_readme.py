"""The README's promises that a test can keep: the two set-up commands lead the file,
and its "Writing a solver" example works as a plugin exactly as printed."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from harness.analysis import read_run
from harness.cli import app

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_the_two_commands() -> None:
    before_prose = README.split("\n\nThe first command")[0]
    commands = [b.strip() for b in _blocks("bash") if b.strip() in before_prose]
    assert len(commands) == 2
    main_job, tests = commands
    assert main_job.endswith("harness run --solvers all")
    assert tests.endswith("pytest -q")
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    assert tests in ci, ".ci/run must run the README's test command as written"


def test_writing_a_solver_example_runs_as_a_plugin(tmp_path: Path) -> None:
    (example,) = [b for b in _blocks("python") if "@register(" in b]
    plugin = tmp_path / "my_greedy.py"
    plugin.write_text(example)
    out = tmp_path / "results"
    result = CliRunner().invoke(
        app,
        ["run", "--plugin", str(plugin), "--solvers", "greedy,astar_dict",
         "--datasets", "8-seeds", "--repeats", "1", "--no-memory", "--jobs", "1",
         "--no-report", "--quiet", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    _, rows = read_run(Path(result.output.strip().splitlines()[-1]))
    greedy = rows[rows.solver == "greedy"]
    assert len(greedy) == 3 and set(greedy.status) == {"solved"}
    assert (greedy.path_length >= greedy.optimal_length).all()
    assert (greedy.generated > 0).all()


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "compare-heuristics.toml"


def test_experiment_file_example_is_the_committed_file() -> None:
    (block,) = [b for b in _blocks("toml") if "compare three heuristics" in b]
    assert block == EXAMPLE.read_text()
    assert "harness run --config examples/compare-heuristics.toml" in README


def test_experiment_file_example_dry_run_and_a_small_run(tmp_path: Path) -> None:
    dry = CliRunner().invoke(app, ["run", "--config", str(EXAMPLE), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    # 6 configs x (92 + 30) boards; A* with misplaced declines the 9 depth-30 boards
    assert "6 configs, 2 datasets, 732 cells" in dry.stdout
    assert "total: 723 cells to run, 0 reused, 9 skipped" in dry.stdout
    # The same file on the three seed boards runs in seconds.
    small = tmp_path / "small.toml"
    small.write_text(EXAMPLE.read_text().replace('["8-strata", "15-walks"]', '["8-seeds"]'))
    result = CliRunner().invoke(
        app, ["run", "--config", str(small), "--jobs", "1", "--no-report", "--quiet",
              "--out", str(tmp_path / "results")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    meta, rows = read_run(Path(result.output.strip().splitlines()[-1]))
    assert len(rows) == 6 * 3 and set(rows.status) == {"solved"}
    assert meta["experiment"]["file"] == "experiment.toml"


def test_readme_images_exist_and_are_small() -> None:
    root = Path(__file__).resolve().parents[1]
    images = re.findall(r"!\[[^\]]*\]\((docs/[^)]+)\)", README)
    assert images, "the README shows figures from the main job"
    for image in images:
        data = (root / image).read_bytes()
        assert data.startswith(b"\x89PNG") and len(data) < 150_000, image
