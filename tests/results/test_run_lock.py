"""One writer per run directory, and readers that refuse what two writers left
(issue 24, items 3, 8 and 9): two ``--resume`` of one run at once wrote 1,042 rows
for 552 keys and every reader took them without a word."""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import results as res
from harness.cli import app
from harness.results import lock


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory) -> Path:
    """A finished two-instance run, made in this process (inline executor)."""
    out = tmp_path_factory.mktemp("stored")
    got = CliRunner().invoke(app, [
        "run", "--solvers", "table", "--datasets", "8-seeds", "--repeats", "1",
        "--no-memory", "--jobs", "0", "--no-report", "-q", "--out", str(out),
    ])  # fmt: skip
    assert got.exit_code == 0, got.output
    return Path(got.output.strip().splitlines()[-1])


@pytest.fixture
def run_dir(stored_run, tmp_path) -> Path:
    """A private copy of the stored run, marked unfinished (resumable)."""
    copy = Path(shutil.copytree(stored_run, tmp_path / stored_run.name))
    meta = res.read_meta(copy)
    res.write_meta(copy, {k: v for k, v in meta.items() if k != "schema_version"}
                   | {"complete": False})  # fmt: skip
    return copy


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def one_line_error(result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert "Traceback" not in result.output and "internal error" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def hold(run_dir: Path, holder: dict) -> int:
    """Lock the run as another process would (own open file, flock) -> the fd."""
    fd = os.open(run_dir / lock.LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.write(fd, json.dumps(holder).encode())
    return fd


def test_a_second_writer_gets_one_line_naming_the_first(run_dir):
    before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
    fd = hold(run_dir, {"pid": 4242, "host": "lab1", "since_utc": "T",
                        "command": "harness run --resume x"})  # fmt: skip
    try:
        out = str(run_dir.parent)
        line = one_line_error(
            cli("run", "--resume", run_dir.name, "--out", out, "-q"),
            "is being written by pid 4242 on lab1", "harness run --resume x",
        )
        assert str(run_dir / lock.LOCK_FILE) in line
        one_line_error(cli("report", str(run_dir)), "is being written by pid 4242")
    finally:
        os.ftruncate(fd, 0)  # a clean release
        os.close(fd)
    after = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
    after.pop(lock.LOCK_FILE)
    before.pop(lock.LOCK_FILE, None)
    assert after == before  # neither touched rows.csv nor meta.json
    # once the first writer is gone, the resume goes through and releases
    done = cli("run", "--resume", run_dir.name, "--out", out, "-q", "--no-report",
               "--jobs", "0")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert res.read_meta(run_dir)["complete"]
    assert (run_dir / lock.LOCK_FILE).read_text() == ""  # released cleanly
    assert "stale_lock" not in res.read_meta(run_dir)["resumes"][-1]


def test_a_lock_left_by_a_dead_writer_is_taken_over_and_said(run_dir):
    (run_dir / lock.LOCK_FILE).write_text(json.dumps(
        {"pid": 999999, "host": "lab1", "since_utc": "T", "command": "harness run"}
    ))  # fmt: skip  (a writer that was killed: its flock went with it)
    got = cli("run", "--resume", run_dir.name, "--out", str(run_dir.parent), "-q",
              "--no-report")  # fmt: skip
    assert got.exit_code == 0, got.output
    stale = res.read_meta(run_dir)["resumes"][-1]["stale_lock"]
    assert "pid 999999 on lab1" in stale and "without releasing" in stale


def test_the_lock_is_reentrant_in_one_process_and_exclusive_between_files(tmp_path):
    with lock.lock_run(tmp_path) as first:
        assert lock.lock_run(tmp_path) is first  # the run command, then its report
        first.release()
        other = os.open(tmp_path / lock.LOCK_FILE, os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.close(other)
    other = os.open(tmp_path / lock.LOCK_FILE, os.O_RDWR)
    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again
    os.close(other)


# ------------------------------------------- rows two writers (or a hand) left


def doubled(run_dir: Path) -> str:
    """Append a copy of the first row, as a second writer did: its line."""
    lines = (run_dir / res.ROWS_FILE).read_text().splitlines(True)
    (run_dir / res.ROWS_FILE).write_text("".join([*lines, lines[1]]))
    return lines[1]


def test_every_reader_refuses_duplicate_rows_and_repair_keeps_the_first(run_dir):
    first = doubled(run_dir)
    lines = (run_dir / res.ROWS_FILE).read_text().splitlines(True)
    dup = len(lines)
    hint = "--repair"
    for args in (
        ("report", str(run_dir), "--format", "table"),
        ("compare", str(run_dir), str(run_dir)),
        ("history", str(run_dir), "--out", str(run_dir.parent / "history")),
        ("run", "--resume", run_dir.name, "--out", str(run_dir.parent), "-q"),
    ):
        got = cli(*args)
        assert got.exit_code != 0, (args, got.output)
        assert f"line {dup}: repeats the row of line 2" in got.output, got.output
        assert hint in got.output and "internal error" not in got.output
    merged = cli("merge", str(run_dir), str(run_dir), "--out", str(run_dir) + "-m")
    assert merged.exit_code == 2
    repaired = cli("run", "--resume", run_dir.name, "--out", str(run_dir.parent),
                   "-q", "--repair", "--no-report", "--jobs", "0")  # fmt: skip
    assert repaired.exit_code == 0, repaired.output
    assert "1 unreadable or duplicate line(s) moved" in repaired.output
    assert (run_dir / res.REJECTED_FILE).read_text() == first
    assert (run_dir / res.ROWS_FILE).read_text().splitlines(True) == lines[:-1]


def with_field(run_dir: Path, column: str, value: str) -> str:
    """Set one field of the first row (as a hand or a bad disk did): its line."""
    path = run_dir / res.ROWS_FILE
    lines = path.read_text().splitlines(True)
    row = res.read_row_dicts(run_dir)[0] | {column: value}
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([row[c] for c in res.column_names()])
    path.write_text("".join([lines[0], buf.getvalue(), *lines[2:]]))
    return buf.getvalue()


def test_resume_repairs_a_line_the_typed_reader_rejected(run_dir):
    """seconds=abc was `internal error: ValueError` on resume, and --repair left
    the line where it was."""
    n = len(res.read_row_dicts(run_dir))
    bad = with_field(run_dir, "seconds", "abc")
    out = str(run_dir.parent)
    one_line_error(
        cli("run", "--resume", run_dir.name, "--out", out, "-q"),
        "line 2: seconds 'abc' is not a number", "--repair",
    )
    got = cli("report", str(run_dir), "--format", "table")
    assert got.exit_code == 2 and "line 2" in got.output, got.output
    fixed = cli("run", "--resume", run_dir.name, "--out", out, "-q", "--repair",
                "--no-report", "--jobs", "0")  # fmt: skip
    assert fixed.exit_code == 0, fixed.output
    assert (run_dir / res.REJECTED_FILE).read_text() == bad
    assert len(res.read_row_dicts(run_dir)) == n  # the cell was measured again


@pytest.mark.parametrize(
    "column, value, problem",
    [
        ("status", "weird", "status 'weird' is not one of"),
        ("instance", "d0\x00\x00", "instance holds NUL bytes"),
        ("expanded", "1.5", "expanded '1.5' is not a whole number"),
        # Python's literals leaked in: 1_0 was 10, Arabic-Indic digits were 12,
        # and 2**63 broke pandas' int64 later (issue 35 item 7)
        ("seconds", "1_0", "seconds '1_0' is not a number"),
        ("seconds", "١٢", r"seconds '.u0661.u0662' is not a number"),
        ("expanded", str(2**63), f"expanded '{2**63}' must be at most {2**63 - 1}"),
        ("repeat", "١", "measure 'time' / repeat '١' unreadable"),
        ("is_optimal", "maybe", "is_optimal 'maybe' is not True/False"),
        ("extra", "", None),  # text may be empty
    ],
)
def test_the_reader_and_repair_agree_on_every_field(run_dir, column, value, problem):
    bad = with_field(run_dir, column, value)
    if problem is None:
        assert len(res.read_row_dicts(run_dir)) > 0
        assert res.quarantine_rows(run_dir) == 0
        return
    with pytest.raises(res.ResultsError, match=f"line 2: {problem}"):
        res.read_row_dicts(run_dir)
    assert res.quarantine_rows(run_dir) == 1
    assert (run_dir / res.REJECTED_FILE).read_text() == bad
    res.read_row_dicts(run_dir)  # readable now


@pytest.mark.parametrize("value", ["1_0", "١٢"])
def test_numbers_python_would_misread_are_refused_by_every_reader(
    run_dir, stored_run, tmp_path, value
):
    """Such rows passed --repair, were copied by merge and --reuse with exit 0,
    and then report, compare and history failed (issue 35 item 7)."""
    with_field(run_dir, "seconds", value)
    said = "line 2: seconds '"
    for args in (
        ["merge", str(stored_run), str(run_dir), "--prefer", "newest",
         "--out", str(tmp_path / "m")],
        ["run", "--solvers", "table", "--datasets", "8-seeds", "--repeats", "1",
         "--no-memory", "--jobs", "0", "--no-report", "-q", "--out",
         str(tmp_path / "o"), "--reuse", str(run_dir)],
        ["report", str(run_dir), "--format", "table"],
        ["compare", str(stored_run), str(run_dir)],
    ):  # fmt: skip
        one_line_error(cli(*args), said, "--repair")
    assert not (tmp_path / "m").exists()
    assert not list((tmp_path / "o").glob("*/rows.csv"))  # no run was started


def test_merge_refuses_unreadable_rows_and_says_a_source_has_none(run_dir, tmp_path):
    empty = Path(shutil.copytree(run_dir, tmp_path / "empty"))
    (empty / res.ROWS_FILE).unlink()
    meta = res.read_meta(empty)
    meta = {k: v for k, v in meta.items() if k != "schema_version"}
    res.write_meta(empty, meta | {"run_id": "empty", "started_utc": "2000-01-01"})
    got = cli("merge", str(run_dir), str(empty), "--out", str(tmp_path / "m1"))
    assert got.exit_code == 0, got.output
    assert f"{empty}: no rows.csv (no cell stored); nothing merged" in got.output
    path = run_dir / res.ROWS_FILE
    lines = path.read_text().splitlines(True)
    path.write_text("".join([*lines, lines[1].replace(",time,", ",tmie,", 1)]))
    one_line_error(
        cli("merge", str(run_dir), str(empty), "--out", str(tmp_path / "m2")),
        f"line {len(lines) + 1}",
    )
    assert not (tmp_path / "m2").exists()


@pytest.mark.parametrize(
    "edit, said",
    [
        ({"datasets": [1]}, '"datasets" is [1], expected an object of objects'),
        ({"solvers": None}, '"solvers" is null, expected an object of objects'),
        ({"options": {"datasets": [1]}}, '"options.datasets" is [1], expected a list'),
    ],
)
def test_a_hand_edited_meta_json_of_wrong_types_is_one_line(
    run_dir, stored_run, edit, said
):
    """Was `internal error: AttributeError` on report, compare, merge and resume."""
    path = run_dir / res.META_FILE
    meta = json.loads(path.read_text())
    for key, value in edit.items():
        meta[key] = value if key != "options" else meta[key] | value
    path.write_text(json.dumps(meta))
    out = str(run_dir.parent)
    for args in (
        ("report", str(run_dir), "--format", "table"),
        ("compare", str(run_dir), str(run_dir)),
        ("merge", str(run_dir), str(stored_run), "--out", out + "/m"),
        ("run", "--resume", run_dir.name, "--out", out, "-q"),
    ):
        got = cli(*args)
        assert got.exit_code == 2, (args, got.output)
        assert f"{path}: {said}" in got.output, (args, got.output)
        assert "internal error" not in got.output
