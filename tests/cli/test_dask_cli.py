"""``--executor dask`` from the command line: Dask is loaded only when chosen, bad
choices are one-line errors, a run started on a LocalCluster and killed is resumed
by the local executor, and no process of the LocalCluster outlives the run."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plugins.tiny import make_dataset, walk
from signals import default_sigint
from typer.testing import CliRunner
from where import PLUGINS

from harness.cli import app
from harness.puzzle import goal_board, grid

PLUGIN = str(PLUGINS / "misbehaving.py")
DASK_MODULES = "('dask', 'distributed')"
#: the dask executor's client (asyncio, batching): loaded when a run starts on
#: Dask, not because --executor's help lists the registered executors
DASK_CLIENT = "harness.measure.executors.dask.client"
CELLS = 30

_PROBE = (
    "import sys, atexit\n"
    "atexit.register(lambda: print('DASK-LOADED' if any(m.split('.')[0] in "
    f"{DASK_MODULES} or m == {DASK_CLIENT!r} for m in sys.modules) else "
    "'DASK-ABSENT'))\n"
    "sys.argv = ['harness', *sys.argv[1:]]\n"
    "from harness.cli import main\n"
    "main()\n"
)


def _probe(*args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        input=stdin, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    return done.stdout


def test_help_and_solve_do_not_import_dask() -> None:
    assert "DASK-ABSENT" in _probe("--help")
    assert "DASK-ABSENT" in _probe("run", "--help")
    out = _probe("solve", stdin="8 1 3 4 0 2 7 6 5\n")
    assert "DASK-ABSENT" in out and out.splitlines()[0].strip()


def test_local_run_does_not_import_dask(tmp_path: Path) -> None:
    from harness.datasets import save_dataset

    g = grid(2, 3)  # 2x3 boards: BFS on 8-seeds' 19-move board took seconds a solve
    goal = goal_board("standard", g)
    boards = [walk(goal, g, 5, seed=i) for i in range(3)]
    dataset = save_dataset(make_dataset("local23", boards, g, goal), tmp_path)
    out = _probe(
        "run", "--solvers", "good_bfs", "--plugin", PLUGIN, "--datasets", str(dataset),
        "--repeats", "1", "--no-memory", "--jobs", "1", "--no-report", "--quiet",
        "--out", str(tmp_path / "results"),
    )  # fmt: skip
    assert "DASK-ABSENT" in out and (tmp_path / "results").is_dir()


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--executor", "spark"], "--executor spark: choose one of local, dask, inline"),
        (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler needs --executor dask"),
        (["--executor", "dask", "--jobs", "0"], "--jobs 0: the dask executor needs"),
        (["--executor", "dask", "--jobs", "2", "--scheduler", "tcp://127.0.0.1:1"],
         "--jobs applies to the LocalCluster"),
    ],
)  # fmt: skip
def test_bad_executor_choices_are_one_line_errors(tmp_path, args, fragment) -> None:
    result = CliRunner().invoke(
        app, ["run", "--solvers", "bfs", "--datasets", "8-seeds", "--out",
              str(tmp_path), *args],
    )  # fmt: skip
    assert result.exit_code == 2
    assert fragment in result.output
    assert "Traceback" not in result.output
    assert not list(tmp_path.iterdir())  # no run directory for a refused run


def test_unreachable_scheduler_is_a_one_line_error(tmp_path: Path, monkeypatch) -> None:
    pytest.importorskip("distributed")
    from harness.measure.executors.dask import client

    monkeypatch.setattr(client, "CONNECT_TIMEOUT", 1.0)
    result = CliRunner().invoke(
        app, ["run", "--solvers", "bfs", "--datasets", "8-seeds", "--out",
              str(tmp_path), "--executor", "dask", "--scheduler",
              "tcp://127.0.0.1:9"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "--scheduler tcp://127.0.0.1:9: cannot connect" in result.output
    assert len(result.output.strip().splitlines()) == 1


def _descendants(pid: int) -> set[int]:
    import psutil

    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


@pytest.fixture
def dask_run(tmp_path: Path):
    """``start(name, lines)``: ``harness run --executor dask`` (one worker, the
    sleepy solver on CELLS 2x3 boards, one solve per sample: sleepy's 0.15 s is a
    sleep, not CPU, so calibrating a 1 ms CPU sample would loop it ~10 times, 3.5 s
    a cell) in a session of its own, returned once its rows.csv has more than
    ``lines`` lines (or after 120 s) as (client process, results folder, rows.csv or
    None, every descendant pid seen). A client still running at teardown is killed
    with its process group."""
    pytest.importorskip("psutil")
    pytest.importorskip("distributed")
    from harness.datasets import save_dataset

    started: list[subprocess.Popen] = []

    def start(name: str, lines: int):
        g = grid(2, 3)
        goal = goal_board("standard", g)
        boards = [walk(goal, g, 3 + i % 5, seed=i) for i in range(CELLS)]
        dataset = save_dataset(make_dataset(name, boards, g, goal), tmp_path)
        out = tmp_path / "results"
        client = subprocess.Popen(
            [sys.executable, "-c", "from harness.cli import main; main()", "run",
             "--executor", "dask", "--jobs", "1", "--solvers", "sleepy", "--plugin",
             PLUGIN, "--datasets", str(dataset), "--repeats", "1", "--no-memory",
             "--min-sample-time", "0", "--no-report", "--quiet", "--out", str(out)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=default_sigint,  # the test's Ctrl-C must reach it
        )  # fmt: skip
        started.append(client)
        rows = None
        family: set[int] = set()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            family |= _descendants(client.pid)
            found = list(out.glob("*/rows.csv"))
            if found and len(found[0].read_text().splitlines()) > lines:
                rows = found[0]
                break
            time.sleep(0.2)
        family |= _descendants(client.pid)
        return client, out, rows, family

    yield start
    for client in started:
        if client.poll() is None:
            os.killpg(client.pid, signal.SIGKILL)
            client.wait(30)


@pytest.mark.slow
def test_killed_dask_run_resumes_locally_and_leaves_no_process(dask_run) -> None:
    """SIGKILL of the client mid-run: its LocalCluster and measuring processes go
    with it, and ``--resume`` on the local executor completes the same rows."""
    psutil = pytest.importorskip("psutil")
    client, out, rows, family = dask_run("kill23", 4)
    os.kill(client.pid, signal.SIGKILL)
    client.wait(30)
    assert rows is not None, client.stdout.read().decode()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        alive = [p for p in family if psutil.pid_exists(p)
                 and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]  # fmt: skip
        if not alive:
            break
        time.sleep(0.2)
    assert not alive, f"processes outlived the killed client: {alive}"
    assert len(family) >= 2  # at least a Dask worker and its measuring process

    run_dir = rows.parent
    stored = len(rows.read_text().splitlines()) - 1
    result = CliRunner().invoke(
        app, ["run", "--resume", run_dir.name, "--out", str(out), "--jobs", "1",
              "--no-report", "--quiet"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    with open(rows, newline="") as fh:
        table = list(csv.DictReader(fh))
    keys = [(r["config"], r["instance"], r["measure"], r["repeat"]) for r in table]
    assert len(keys) == len(set(keys)) == CELLS > stored
    assert {r["status"] for r in table} == {"solved"}
    meta = json.loads((run_dir / "meta.json").read_text())
    assert [e["kind"] for e in meta["executors"]] == ["dask", "local"]
    assert meta["complete"] is True


@pytest.mark.slow
def test_ctrl_c_to_the_process_group_stops_cleanly(dask_run) -> None:
    """Ctrl-C in a terminal reaches every process of the group, Dask's workers too:
    the harness alone stops (exit 130, resumable), with no worker tracebacks."""
    psutil = pytest.importorskip("psutil")
    client, out, _, family = dask_run("int23", 3)
    os.killpg(client.pid, signal.SIGINT)
    output = client.communicate(timeout=60)[0].decode()
    assert client.returncode == 130, output
    assert "Traceback" not in output and "resume with: harness run --resume" in output
    time.sleep(0.5)
    alive = [p for p in family if psutil.pid_exists(p)
             and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]  # fmt: skip
    assert not alive
    meta = json.loads(next(out.glob("*/meta.json")).read_text())
    assert meta["interrupted"] is True
