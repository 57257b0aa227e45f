"""Storage faults and files in a run directory (issue 24, items 10 and 11, safe
files): a full disk, a file-size limit or Ctrl-C after the first cell ends with
the file concerned and the resume line, exit 1 (130 for Ctrl-C), meta.json saying
interrupted, and nothing half-written left as if complete; nothing is written
through a symlink in a run directory."""

from __future__ import annotations

import errno
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness import results as res
from harness.cli import app
from harness.core import files
from harness.results import store

RUN = ["run", "--solvers", "table", "--datasets", "8-seeds", "--repeats", "1",
       "--no-memory", "--jobs", "0", "-q"]  # fmt: skip


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def full_disk_after(monkeypatch, module, name: str, calls: int) -> None:
    """``module.name`` raises ENOSPC (naming its file) from call ``calls`` on."""
    real = getattr(module, name)
    seen = 0

    def failing(path, *args, **kwargs):
        nonlocal seen
        seen += 1
        if seen >= calls:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(module, name, failing)


def only_run(out: Path) -> Path:
    (run_dir,) = [p for p in out.iterdir() if (p / res.META_FILE).is_file()]
    return run_dir


def no_temp_files(run_dir: Path) -> None:
    assert not [p.name for p in run_dir.rglob("*") if p.name.endswith(".tmp")]


@pytest.mark.parametrize("victim", ["append_durably", "write_atomic"])
def test_a_full_disk_mid_run_names_the_file_and_the_resume(monkeypatch, tmp_path,
                                                           victim):  # fmt: skip
    """Was `internal error: OSError`, no file, no resume line, a meta.json.tmp
    left and meta.json saying interrupted=false."""
    full_disk_after(monkeypatch, store, victim, 2 if victim == "append_durably" else 4)
    got = cli(*RUN, "--out", str(tmp_path))
    assert got.exit_code == 1, got.output
    assert "internal error" not in got.output and "Traceback" not in got.output
    run_dir = only_run(tmp_path)
    name = res.ROWS_FILE if victim == "append_durably" else res.META_FILE
    assert f"stopped: {run_dir / name}: No space left on device" in got.output
    assert f"resume with: harness run --resume {run_dir.name}" in got.output
    no_temp_files(run_dir)
    monkeypatch.undo()
    meta = res.read_meta(run_dir)
    assert meta["interrupted"] and not meta["complete"]
    done = cli("run", "--resume", run_dir.name, "--out", str(tmp_path), "-q",
               "--jobs", "0", "--no-report")  # fmt: skip
    assert done.exit_code == 0, done.output
    assert len(res.read_row_dicts(run_dir)) == 3  # one time row per instance


@pytest.mark.parametrize("victim", ["lock", "meta"])
def test_a_full_disk_at_run_start_names_the_file_and_leaves_no_run(monkeypatch,
                                                                   tmp_path, victim):  # fmt: skip
    """Issue 35 item 15: ENOSPC at the start said "No space left on device" with
    no path and left an empty run directory (its lock file only)."""
    from harness.results import lock

    if victim == "lock":
        def full(fd, data, offset):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(lock.os, "pwrite", full)
    else:
        full_disk_after(monkeypatch, store, "write_atomic", 1)
    got = cli(*RUN, "--out", str(tmp_path))
    assert got.exit_code == 2, got.output
    assert "internal error" not in got.output and "Traceback" not in got.output
    name = ".lock: cannot write the run's lock: " if victim == "lock" else "meta.json: "
    assert f"{name}No space left on device" in got.output
    assert str(tmp_path) in got.output
    assert os.listdir(tmp_path) == []  # no empty run directory


def test_a_file_size_limit_mid_run_is_a_resumable_stop(tmp_path):
    """The real thing: RLIMIT_FSIZE makes a write fail with EFBIG (Python ignores
    SIGXFSZ). meta.json (~7 KB) fits; rows.csv (3 cells x 40 rows, ~24 KB)
    outgrows the limit."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (16_000, 16_000))

    proc = subprocess.run(
        [sys.executable, "-c", "from harness.cli import main; main()", "run",
         "--solvers", "table", "--datasets", "8-seeds", "--repeats", "40",
         "--no-adaptive", "--no-memory", "--jobs", "0", "-q", "--no-report",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, preexec_fn=limit,
        env={**os.environ, "CI": "1"},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr
    run_dir = only_run(tmp_path)
    assert f"{run_dir / res.ROWS_FILE}: File too large" in proc.stderr
    assert f"resume with: harness run --resume {run_dir.name}" in proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == str(run_dir)
    meta = res.read_meta(run_dir)
    assert meta["interrupted"] and "File too large" in meta["stopped_by"]
    no_temp_files(run_dir)


def test_a_report_that_cannot_be_written_is_an_error_even_with_quiet(
    monkeypatch, tmp_path
):
    """Was exit 0 with no report, and with --quiet nothing printed at all."""
    from harness.report import plots

    full_disk_after(monkeypatch, plots, "write_atomic", 1)  # the first plot
    got = cli(*RUN, "--out", str(tmp_path))
    assert got.exit_code == 1, got.output
    run_dir = only_run(tmp_path)
    assert f"note: no report written ({run_dir / 'plots'}/" in got.output
    assert (
        f".png: No space left on device); the rows are safe in {run_dir}: "
        f"`harness report {run_dir}` rebuilds it"
    ) in got.output
    assert not (run_dir / "report.md").exists()
    meta = res.read_meta(run_dir)
    assert meta["complete"] and "No space left" in meta["report_error"]


def test_ctrl_c_while_the_report_is_written_leaves_no_report(monkeypatch, tmp_path):
    """Was exit 130 with no message, a truncated PNG, and meta.json saying
    complete with no report."""
    from harness.report import plots

    def interrupted(fh):
        fh.write(b"\x89PNG half")
        raise KeyboardInterrupt

    real = plots.write_atomic
    monkeypatch.setattr(plots, "write_atomic", lambda p, data: real(p, interrupted))
    got = cli(*RUN, "--out", str(tmp_path))
    assert got.exit_code == 130, got.output
    run_dir = only_run(tmp_path)
    assert "note: no report written (interrupted); the rows are safe" in got.output
    assert not (run_dir / "report.md").exists()
    assert not [p for p in (run_dir / "plots").iterdir()]  # no half-written PNG
    assert res.read_meta(run_dir)["report_error"] == "interrupted"


# ------------------------------------------------------------ files themselves


def test_an_atomic_write_leaves_the_old_file_or_the_new_one(tmp_path):
    target = tmp_path / "meta.json"
    target.write_text("old")

    def half(fh):
        fh.write(b"ne")
        raise OSError(errno.EFBIG, "File too large")

    with pytest.raises(OSError, match=f"File too large: '{target}'"):
        files.write_atomic(target, half)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["meta.json"]
    files.write_atomic(target, "new")
    assert target.read_text() == "new"


def test_files_are_group_readable_as_the_umask_allows(tmp_path):
    old = os.umask(0o022)
    try:
        files.write_atomic(tmp_path / "a", b"x")
        files.append_durably(tmp_path / "b", b"x")
        os.umask(0o077)
        files.write_atomic(tmp_path / "c", b"x")
    finally:
        os.umask(old)
    assert (tmp_path / "a").stat().st_mode & 0o777 == 0o644  # mkstemp made 0600
    assert (tmp_path / "b").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "c").stat().st_mode & 0o777 == 0o600


def test_report_and_rows_never_write_through_a_symlink(tmp_path, monkeypatch):
    """`harness report` overwrote the target of a report.md symlink."""
    from harness.report import figures, plots

    monkeypatch.setattr(plots, "make_plots", lambda *a, **k: [])  # (time)
    monkeypatch.setattr(figures, "report_figures", lambda *a, **k: [])
    got = cli(*RUN, "--out", str(tmp_path), "--no-report")
    assert got.exit_code == 0, got.output
    run_dir = only_run(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (run_dir / "report.md").symlink_to(victim)
    assert cli("report", str(run_dir)).exit_code == 0
    assert victim.read_text() == "keep me"
    assert not (run_dir / "report.md").is_symlink()
    # a symlinked folder is refused, not written into
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for p in (run_dir / "plots").iterdir():
        p.unlink()
    (run_dir / "plots").rmdir()
    (run_dir / "plots").symlink_to(outside, target_is_directory=True)
    refused = cli("report", str(run_dir))
    assert refused.exit_code == 2, refused.output
    assert f"{run_dir / 'plots'}: is a symbolic link" in refused.output
    assert list(outside.iterdir()) == []
    # rows.csv as a link: appending would write into its target
    rows = run_dir / res.ROWS_FILE
    rows.rename(tmp_path / "rows-elsewhere.csv")
    rows.symlink_to(tmp_path / "rows-elsewhere.csv")
    with pytest.raises(OSError, match="is a symbolic link"):
        res.append_rows(run_dir, [])
