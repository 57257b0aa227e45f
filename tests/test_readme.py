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
