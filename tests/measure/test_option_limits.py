"""Run options out of range are one line before anything starts, on the command
line (named by flag) and in experiment files (named by file and line) (issue 24,
item 2 and the --jobs and TOML risks): --repeats 1000000000 grew the parent to
1 GB in 15 s, and repeats = 99999999999999999999 passed --dry-run then hung."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.core import options
from harness.core.machine import core_count
from harness.measure.executors.local import LocalPool


def one_line_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "internal error" not in lines[0]
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def test_a_billion_repeats_is_refused_before_anything_is_planned(tmp_path):
    got = CliRunner().invoke(app, [
        "run", "--solvers", "table", "--datasets", "8-seeds", "--repeats",
        "1000000000", "--out", str(tmp_path),
    ])  # fmt: skip
    one_line_error(got, "--repeats 1000000000: must be a whole number from 1 to 1,000")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "line, said",
    [
        ("repeats = 99999999999999999999",
         "repeats = 99999999999999999999: must be a whole number from 1 to 1,000"),
        ("timeout = 1e12", "timeout = 1000000000000.0: must be more than 0 and at "
         "most 86,400 seconds"),
        ("setup_timeout = inf", "setup_timeout = inf: must be more than 0"),
        ("memory_limit_mb = 2000000", "memory_limit_mb = 2000000: must be 0 (no "
         "limit) to 1,048,576 MB"),
        ("jobs = 100000", "jobs = 100000: must be 0 to"),
    ],
)  # fmt: skip
def test_out_of_range_values_in_an_experiment_file_name_its_line(tmp_path, line, said):
    """They were reported by the command-line flag (--timeout 1e+12: ...), and the
    huge repeat count passed --dry-run."""
    exp = tmp_path / "exp.toml"
    exp.write_text(f'solvers = ["table"]\ndatasets = ["8-seeds"]\n\n{line}\n')
    got = CliRunner().invoke(
        app, ["run", "--config", str(exp), "--dry-run", "--out", str(tmp_path)]
    )
    one_line_error(got, f"{exp}: line 4: {said}")


def test_jobs_have_an_upper_bound_and_sharing_cores_is_said(tmp_path):
    cores = core_count()
    most = options.MAX_JOBS_PER_CORE * cores
    got = CliRunner().invoke(app, [
        "run", "--solvers", "table", "--datasets", "8-seeds", "--jobs",
        str(most + 1), "--out", str(tmp_path),
    ])  # fmt: skip
    one_line_error(got, f"--jobs {most + 1}: must be 0 to {most} here", "per core")
    assert list(tmp_path.iterdir()) == []
    assert LocalPool(cores).warnings() == []
    (said,) = LocalPool(cores + 1).warnings()  # no worker starts before a task
    assert f"--jobs {cores + 1} on {cores} cores: workers share cores" in said
