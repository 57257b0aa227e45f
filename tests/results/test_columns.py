"""The column registry (harness.results.columns): a column declared in one module
is written, read, repaired, reused and shown with no edit elsewhere."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from harness import results as res
from harness.analysis import load_run
from harness.solver import load_plugin, scoped_registry
from in_process import harness

TOY = str(Path(__file__).resolve().parents[1] / "plugins" / "toy_column.py")


def _run(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "runs"
    proc = harness(
        "run", "--solvers", "astar_dict[manhattan]", "--datasets", "8-seeds",
        "--repeats", "1", "--no-memory", "--jobs", "0", "--no-report",
        "--out", str(out), *extra, env={"CI": "1", "COLUMNS": "200"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1]), proc.stdout


def test_the_type_lists_derive_from_the_declarations():
    """Every column's kind is declared once: the core ones by ResultRow's field
    types, a registered one by its Column; the schema's versions by where each
    version's first column is."""
    assert res.names_of("bool") == ("solvable", "is_optimal")
    assert "expanded" in res.names_of("int") and "seconds" in res.names_of("float")
    assert "message" in res.names_of("text")
    assert res.schema_columns(10) == res.column_names()  # no plugin loaded
    assert res.schema_columns(9) == res.column_names()[:-3]  # before necessary
    assert res.schema_columns(8) == res.column_names()[:-6]  # before tile costs
    with pytest.raises(ValueError, match="already declared"):
        res.register_column(res.Column("expanded", "int", "again"))
    with pytest.raises(ValueError, match="bumps SCHEMA_VERSION"):
        res.register_column(res.Column("later", "int", "x", since=99))


def test_a_toy_column_in_one_module_is_stored_read_and_shown(tmp_path):
    with scoped_registry():  # the plugin's column is forgotten after the block
        run_dir, stdout = _run(tmp_path, "--plugin", TOY)
        _check_toy_run(run_dir, stdout)
    problem = harness("report", str(run_dir), "--format", "table")
    assert problem.returncode != 0
    assert "toy_moves_x2" in problem.stderr and "--plugin" in problem.stderr
    assert "Traceback" not in problem.stderr


def _check_toy_run(run_dir: Path, stdout: str) -> None:
    with open(run_dir / res.ROWS_FILE, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0])[-1] == "toy_moves_x2"  # after the schema's columns
    for row in rows:
        if row["status"] == "solved":
            assert int(row["toy_moves_x2"]) == 2 * int(row["path_length"])
    run = load_run(run_dir)  # typed by its declaration
    assert str(run.stored["toy_moves_x2"].dtype) == "Int64"
    # the summary at the run's end and the report show it, with its legend
    assert "toy x2" in stdout and " toy" in stdout
    assert "toy x2: twice the moves" in stdout
    report = harness("report", str(run_dir), "--plugin", TOY)
    assert report.returncode == 0, report.stderr
    page = (run_dir / "report.md").read_text()
    assert "| toy x2 |" in page and "toy x2: twice the moves" in page
    assert res.quarantine_rows(run_dir) == 0  # the repair keeps every row


def test_resuming_with_other_columns_is_refused(tmp_path):
    """A resume loads the plugins the run was started with (its columns come
    back); one that would add a column the run's rows.csv lacks is refused: its
    rows would not line up with the header."""
    with scoped_registry():
        run_dir, _ = _run(tmp_path, "--plugin", TOY)
        resumed = harness("run", "--resume", run_dir.name, "--out",
                          str(run_dir.parent), "--no-report")  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
    run_dir, _ = _run(tmp_path / "plain")
    with scoped_registry():  # e.g. an entry point installed since the run began
        load_plugin(TOY)
        resumed = harness("run", "--resume", run_dir.name, "--out",
                          str(run_dir.parent), "--no-report")  # fmt: skip
    assert resumed.returncode != 0
    assert "toy_moves_x2" in resumed.stderr and "Traceback" not in resumed.stderr
