"""``harness run`` as a user runs it: real signals, real files.

Covers one-line errors, the summary and last line, Ctrl-C, and a SIGKILL half-way
followed by ``--resume`` ending with exactly one row per cell and pass. A command
runs in a subprocess where the test needs one (signals, the recorded command line);
the rest run in this process (:mod:`in_process`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import in_process
import pytest
from plugins.tiny import make_dataset, walk
from signals import default_sigint
from where import PLUGINS

from harness import analysis
from harness import results as res
from harness.measure.plan import RunError
from harness.measure.resume import prepare_resume
from harness.puzzle import goal_board, grid

PLUGIN = str(PLUGINS / "misbehaving.py")
HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]
ENV = {**os.environ, "CI": "1", "COLUMNS": "200"}


@pytest.fixture(scope="module")
def dataset_file(tmp_path_factory) -> Path:
    """Eight solvable 2x3 boards and one unsolvable one, saved as a dataset file."""
    from harness.datasets import save_dataset

    g = grid(2, 3)
    goal = goal_board("standard", g)
    swapped = list(goal)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    boards = [walk(goal, g, 4 + i, seed=i) for i in range(8)] + [tuple(swapped)]
    ds = make_dataset("cli23", boards, g, goal)
    return save_dataset(ds, tmp_path_factory.mktemp("datasets"))


def subprocess_harness(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*HARNESS, *args], capture_output=True, text=True, timeout=timeout, env=ENV
    )


def harness(*args: str) -> subprocess.CompletedProcess:
    return in_process.harness(*args, env={"CI": "1", "COLUMNS": "200"})


def assert_one_line_error(proc: subprocess.CompletedProcess, fragment: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert fragment in lines[0]


def test_bad_selections_are_one_line_errors(tmp_path, dataset_file):
    out = str(tmp_path)
    assert_one_line_error(
        harness(
            "run", "--solvers", "nosuch", "--datasets", str(dataset_file), "--out", out
        ),
        "--solvers: unknown solver 'nosuch'",
    )
    assert_one_line_error(
        harness("run", "--solvers", "bfs", "--datasets", "no-such-set", "--out", out),
        "--datasets: unknown dataset 'no-such-set'",
    )
    assert_one_line_error(
        harness("run", "--plugin", str(tmp_path / "missing.py"), "--out", out),
        "missing.py",
    )
    assert_one_line_error(
        harness("run", "--resume", "20260101T000000Z-deadbeef", "--out", out),
        "no run directory",
    )
    assert_one_line_error(
        harness("run", "--resume", "X", "--solvers", "bfs", "--repeats", "2"),
        "drop --solvers, --repeats",
    )
    assert_one_line_error(
        harness("run", "--solvers", "bfs", "--min-sample-time", "-1", "--out", out),
        "--min-sample-time -1: must be 0 (one solve per sample) to 10 seconds",
    )
    assert list(tmp_path.iterdir()) == []  # nothing was created for a bad command


def run_args(dataset_file: Path, out: Path, solvers: str, *extra: str) -> list[str]:
    return [
        "run",
        "--solvers",
        solvers,
        "--plugin",
        PLUGIN,
        "--datasets",
        str(dataset_file),
        "--out",
        str(out),
        "--no-report",
        *extra,
    ]


def test_summary_then_run_directory_as_last_line(tmp_path, dataset_file):
    # a subprocess: meta.json records the command line as typed
    proc = subprocess_harness(
        *run_args(dataset_file, tmp_path, "good_bfs,raises", "--repeats", "2")
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    run_dir = Path(lines[-1])
    assert run_dir.parent == tmp_path and (run_dir / "rows.csv").is_file()
    header = next(line for line in lines if line.startswith("config"))
    assert header.split()[:5] == ["config", "place", "solved", "optimal", "median"]
    # the 9 boards hold one unsolvable: a block of its own, as in the report, whose
    # header names the config that answered none
    assert "cli23 (unsolvable): 1 board; 1 config answered none: raises" in lines
    bfs = [line.split() for line in lines if line.startswith("good_bfs ")]
    assert [row[1:3] for row in bfs] == [["1", "8/8"], ["1", "1/1"]]
    assert bfs[0][3] == "100%"
    raises = [line for line in lines if line.startswith("raises ")]
    assert [r.split()[1:4] for r in raises] == [
        ["answered", "none", "0/8"], ["answered", "none", "0/1"]
    ]  # fmt: skip
    assert raises[0].endswith("8 error") and raises[1].endswith("1 error")
    # the verdict closes the summary, one line per block
    assert "- cli23 (solvable): good_bfs wins," in proc.stdout
    # plain progress (CI): failures as lines, then status lines on stderr
    assert "error: raises on cli23 t000: ValueError: deliberate failure" in proc.stderr
    assert "[18/18] 100%" in proc.stderr
    meta, rows = analysis.read_run(run_dir)
    assert meta["complete"] and len(rows) == 2 * 9 * 3
    assert meta["argv"][1:4] == ["run", "--solvers", "good_bfs,raises"]

    strict = harness(*run_args(dataset_file, tmp_path, "raises", "--strict", "-q"))
    assert strict.returncode == 1
    assert Path(strict.stdout.strip().splitlines()[-1]).is_dir()


def wait_for_rows(run_dirs: Path, count: int, proc: subprocess.Popen) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for rows in run_dirs.glob("*/rows.csv"):
            if len(res.read_row_dicts(rows.parent)) >= count:
                return rows.parent
        time.sleep(0.05)
    raise AssertionError("the run stored no rows in time")


def worker_pids(run_dir: Path) -> list[int]:
    log = (run_dir / "workers.log").read_text()
    return [
        int(part.split("pid ")[1].split("]")[0])
        for part in log.splitlines()
        if "pid " in part
    ]


def is_running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def cell_keys(run_dir: Path) -> list[tuple]:
    return [
        (r["config"], r["dataset"], r["instance"], r["measure"], r["repeat"])
        for r in res.read_row_dicts(run_dir)
    ]


@pytest.mark.slow
def test_sigkill_half_way_then_resume_completes_each_cell_once(tmp_path, dataset_file):
    args = run_args(
        dataset_file, tmp_path, "sleepy,good_bfs", "--jobs", "1", "--repeats", "2", "-q",
        # one solve per sample: sleepy sleeps, so a 1 ms CPU sample would loop it
        "--min-sample-time", "0",
    )  # fmt: skip
    proc = subprocess.Popen(
        [*HARNESS, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    run_dir = wait_for_rows(tmp_path, 3 * 3, proc)  # three cells of 18
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    before = cell_keys(run_dir)
    assert 9 <= len(before) < 18 * 3
    # the workers die with the harness (no orphan keeps solving)
    time.sleep(0.5)
    assert worker_pids(run_dir) and not any(map(is_running, worker_pids(run_dir)))
    # simulate the kill landing in the middle of a write
    with open(run_dir / "rows.csv", "a") as fh:
        fh.write(f"{run_dir.name},cli23,t007,2x3,standard,True,1")
    meta = res.read_meta(run_dir)
    assert meta["complete"] is False

    resumed = harness(
        "run",
        "--resume",
        run_dir.name,
        "--out",
        str(tmp_path),
        "--no-report",
        "-q",
        "--jobs",
        "2",
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip().splitlines()[-1] == str(run_dir)
    keys = cell_keys(run_dir)
    assert len(keys) == len(set(keys)) == 2 * 9 * 3  # configs x instances x passes
    assert keys[: len(before)] == before  # nothing redone or rewritten
    meta, rows = analysis.read_run(run_dir)
    assert meta["complete"] is True and meta["finished_utc"]
    assert meta["resumes"][0]["torn_bytes_dropped"] > 0
    assert meta["options"]["jobs_by_session"] == [1, 2]
    assert set(rows["status"]) == {"solved", "unsolvable"}
    assert not (run_dir / "rows.csv").read_text().endswith(",True,1")

    again = harness(
        "run", "--resume", run_dir.name, "--out", str(tmp_path), "--no-report", "-q"
    )
    assert again.returncode == 0 and cell_keys(run_dir) == keys  # complete: no-op


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path, dataset_file):
    args = run_args(
        dataset_file,
        tmp_path,
        "sleepy",
        "--jobs",
        "1",
        "--repeats",
        "1",
        "--no-memory",
        "-q",
    )
    proc = subprocess.Popen(
        [*HARNESS, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        preexec_fn=default_sigint,  # the Ctrl-C below must reach it
    )
    run_dir = wait_for_rows(tmp_path, 2, proc)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert (
        f"resume with: harness run --resume {run_dir.name} --out {tmp_path}" in stderr
    )
    assert stdout.strip().splitlines()[-1] == str(run_dir)
    meta = res.read_meta(run_dir)
    assert meta["interrupted"] is True and meta["complete"] is False
    stored = cell_keys(run_dir)
    assert 2 <= len(stored) < 9 and not any(map(is_running, worker_pids(run_dir)))

    resumed = harness(
        "run", "--resume", run_dir.name, "--out", str(tmp_path), "--no-report", "-q"
    )
    assert resumed.returncode == 0, resumed.stderr
    keys = cell_keys(run_dir)
    assert len(keys) == len(set(keys)) == 9 and keys[: len(stored)] == stored
    assert res.read_meta(run_dir)["interrupted"] is False


def test_resume_refuses_a_changed_dataset(tmp_path, dataset_file):

    proc = harness(
        *run_args(
            dataset_file, tmp_path, "good_bfs", "--repeats", "1", "--no-memory", "-q"
        )
    )
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    meta = res.read_meta(run_dir)
    meta["datasets"]["cli23"]["sha256"] = "0" * 64
    meta["complete"] = False
    res.write_meta(run_dir, {k: v for k, v in meta.items() if k != "schema_version"})
    with pytest.raises(RunError, match="dataset cli23 changed"):
        prepare_resume(run_dir.name, tmp_path)


def test_refusals_print_one_line_per_config_and_dataset(tmp_path: Path) -> None:
    """Reasons that name each instance's depth are grouped, not listed per depth."""
    plugin = tmp_path / "shallow.py"
    plugin.write_text(
        "from harness.solver import register\n"
        "def too_deep(grid, depth, heuristic):\n"
        "    return f'depth {depth} is too deep' if depth and depth > 5 else None\n"
        "@register('shallow', optimal=False, refuses=too_deep)\n"
        "def solve(start, goal, grid, *, counters, heuristic):\n"
        "    return None\n"
    )
    out = harness(
        "run", "--plugin", str(plugin), "--solvers", "shallow",
        "--datasets", "8-seeds", "--repeats", "1", "--no-memory", "--jobs", "1",
        "--no-report", "--out", str(tmp_path / "results"),
    )  # fmt: skip
    lines = [line for line in out.stdout.splitlines() if "too deep" in line]
    # 8-seeds: depths 3, 18 and 19; the two deep ones are declined for two reasons
    assert lines == [
        "  shallow on 8-seeds (2 boards): depth 18 is too deep (+1 similar reason)"
    ] or lines == [
        "  shallow on 8-seeds (2 boards): depth 19 is too deep (+1 similar reason)"
    ], out.stdout


def test_progress_counts_the_cells_to_solve_not_those_refused(capsys) -> None:
    """943 cells of which 123 are refused: the count runs 0..820, not 123..943;
    the refused ones are said once, before (plain lines and the rich bar alike)."""
    from harness.cli.progress import PlainProgress, RichProgress

    plain = PlainProgress(every_seconds=1e9)
    plain.start(total=10, done=4, failures=0)
    for done in range(5, 11):
        plain.finished(done, 0, None)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "4 of 10 cells need no solving (refused or stored); 6 to run"
    assert [line.split()[0] for line in err[1:]] == [
        "[1/6]", "[2/6]", "[3/6]", "[4/6]", "[5/6]", "[6/6]"
    ]  # fmt: skip
    assert err[-1].startswith("[6/6] 100% ")
    bar = RichProgress()
    bar.start(total=10, done=4, failures=0)
    bar.finished(7, 0, None)
    task = bar.bar.tasks[0]
    bar.stop()
    assert (task.completed, task.total) == (3, 6)
    assert "4 of 10 cells need no solving" in capsys.readouterr().err
