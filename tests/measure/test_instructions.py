"""Instructions per solve under callgrind (``harness run --instructions``): two
counting processes agree within the A/A bound on a compiled solver, an external C
program is counted less its goal board, a machine without valgrind gets one
line saying what to install before anything runs, and Ctrl-C during the counting
phase stops the run as during the cells. Skipped (with the reason) where
valgrind or a C compiler is missing; the A/A and detection figures are
tests/benchmarks/instructions_aa.py's."""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import in_process
import pytest
from signals import default_sigint
from where import ROOT

from harness import results as res

from harness.measure.instructions.model import COMPILED_OK
from harness.measure.instructions.phase import count_tasks
from harness.measure.instructions.shim import missing
from harness.measure.tasks import Pass, Task
from harness.configs import ConfigKey

GOAL = (1, 2, 3, 4, 5, 6, 7, 8, 0)
needs_valgrind = pytest.mark.skipif(
    missing() is not None, reason=f"instructions cannot be counted: {missing()}"
)


def _task(i: int, start: tuple[int, ...]) -> Task:
    return Task(id=i, config=ConfigKey("ida_star_jit", "manhattan"), plugins=(),
                rows=3, cols=3, start=start, goal=GOAL, passes=(Pass("time", 0),),
                timeout=30.0, memory_limit_mb=None)  # fmt: skip


@needs_valgrind
def test_two_counting_processes_agree_on_a_compiled_solver(monkeypatch):
    # Side by side, both compile the kernels (a cold cache: CI) or both load them:
    # counting on kernels compiled in-process spares CI a second set-up under
    # valgrind per process (36 s -> 65 s on a cold cache); the benchmark
    # (instructions_aa.py) holds a cold run against warm ones.
    monkeypatch.setenv(COMPILED_OK, "1")
    board = (8, 6, 7, 2, 5, 4, 3, 0, 1)  # 31 moves: the deepest 3x3 boards
    with ThreadPoolExecutor(2) as pool:  # two processes, side by side
        first, second = pool.map(
            lambda i: count_tasks([(_task(i, board), None)], jobs=1)[i], (0, 1)
        )
    assert first.outcome == second.outcome == "returned", (first, second)
    assert first.counters == second.counters and first.moves == second.moves
    assert len(first.moves) == 31 and first.instructions > 10_000
    # the A/A bound: identical counts in two processes within 0.5%
    assert abs(second.instructions / first.instructions - 1) < 0.005


@needs_valgrind
def test_an_external_c_program_is_counted_less_its_goal_board(tmp_path):
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    program = tmp_path / "ida_manhattan"
    subprocess.run([cc, "-O2", "-o", str(program),
                    str(ROOT / "examples" / "external" / "ida_manhattan.c")],
                   check=True)  # fmt: skip
    boards = tmp_path / "boards.txt"
    boards.write_text("1 2 3 4 5 6 7 8 x\n1 2 3 4 5 6 x 7 8\n8 6 7 2 5 4 3 x 1\n")
    proc = in_process.harness(
        "run", "--exec", f"c_ida:optimal={program}", "--datasets", str(boards),
        "--instructions", "--repeats", "1", "--warmup", "0", "--no-memory",
        "--no-report", "--quiet", "--jobs", "1", "--out", str(tmp_path / "runs"),
        env={"CI": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    with open(run_dir / "rows.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["measure"] == "time"]
    by_depth = {int(r["optimal_length"]): int(r["instructions"]) for r in rows}
    assert by_depth[0] == 0  # the goal board less itself
    assert 0 < by_depth[2] < by_depth[31]  # a search costs what it searches


def test_without_valgrind_one_line_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no valgrind, no compiler
    out = tmp_path / "runs"
    proc = in_process.harness(
        "run", "--solvers", "ida_star_jit[manhattan]", "--datasets", "8-mini",
        "--instructions", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "apt-get install valgrind" in lines[0], proc.stderr
    assert not out.exists()  # nothing ran, nothing was written


#: ``harness run`` whose counting processes are fakes that never finish setting
#: up (each writes its pid to $FAKE_PIDS): no valgrind needed.
FAKE_COUNTING = """
import os, sys
import harness.measure.instructions.phase as phase
import harness.measure.instructions.shim as shim
shim.missing = lambda: None
code = "import os, sys, time; open(sys.argv[1], 'a').write(f'{os.getpid()} '); time.sleep(600)"
phase.child_command = lambda out, fd: [sys.executable, "-c", code, os.environ["FAKE_PIDS"]]
from harness.cli import main
main()
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_ctrl_c_while_counting_stops_the_run_and_its_counting_processes(tmp_path):
    pids = tmp_path / "pids"
    boards = tmp_path / "boards.txt"
    boards.write_text("1 2 3 4 5 6 7 8 x\n1 2 3 4 5 6 x 7 8\n")
    out = tmp_path / "runs"
    proc = subprocess.Popen(
        [sys.executable, "-c", FAKE_COUNTING, "run", "--solvers",
         "bfs,astar_dict[manhattan]", "--datasets", str(boards), "--instructions",
         "--jobs", "2", "--repeats", "1", "--warmup", "0", "--no-memory", "-q",
         "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "CI": "1", "FAKE_PIDS": str(pids),
             "NPUZZLE_PRECOMPILE": "0"},
        preexec_fn=default_sigint,  # the Ctrl-C below must reach it
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (pids.exists() and len(pids.read_text().split()) == 2):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    # (before the fix: waited for the counts, 50 min of set-up limit)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    run_dir = Path(stdout.strip().splitlines()[-1])
    lines = stderr.strip().splitlines()  # -q: nothing of the phase, as of the cells
    assert lines == [
        f"interrupted: 0 of 4 cells stored in {run_dir}",
        f"resume with: harness run --resume {run_dir.name} --out {out}",
    ], stderr
    assert not any(_alive(int(pid)) for pid in pids.read_text().split())
    assert res.read_meta(run_dir)["interrupted"] is True
    assert not res.read_row_dicts(run_dir)


def test_a_cluster_run_says_its_counts_are_made_on_this_machine(monkeypatch):
    from types import SimpleNamespace

    from harness.measure.instructions import phase
    from harness.measure.runner import NoProgress

    monkeypatch.setattr(phase, "count_tasks", lambda todo, jobs, say, tick: {})
    said: list[str] = []

    class Lines(NoProgress):
        def counting_began(self, cells: int, line: str) -> None:
            said.append(line)

    plan = SimpleNamespace(instructions=True)
    cell = SimpleNamespace(config=SimpleNamespace(spec=SimpleNamespace(external=None)))
    for on_workers in (False, True):
        phase.count_for_run(plan, [_task(0, GOAL)], {0: cell}, 2, Lines(),
                            on_workers=on_workers)  # fmt: skip
    here, cluster = said
    assert "cluster" not in here
    assert cluster.startswith(here) and "not the cluster's workers" in cluster
