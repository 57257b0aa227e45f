"""External solver programs (``--exec``, ``[[external]]`` in a .toml plugin).

The example C solver in examples/external/ is compiled when a C compiler and make
exist (skipped otherwise, with the reason) and run through ``harness run`` beside
``ida_star_jit``. Misbehaving programs are small shell commands: one that is not
there, prints garbage, exits non-zero, dies of a signal, never reads its input.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import in_process
import pytest
from where import ROOT

from harness.measure.external import (
    ExternalError,
    make_program,
    parse_answer,
    parse_exec,
)

ROOT = ROOT
EXAMPLE = ROOT / "examples" / "external"
HARNESS = [sys.executable, "-c", "from harness.cli import main; main()"]
ENV = {"CI": "1", "COLUMNS": "200"}


def harness(*args: str, stdin: str = ""):
    return in_process.harness(*args, env=ENV, stdin=stdin)


def assert_one_line_error(proc, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def rows_of(proc) -> list[dict[str, str]]:
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    with open(run_dir / "rows.csv", newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def c_solver(tmp_path_factory) -> Path:
    """The example solver, built by its Makefile in a scratch copy."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None or shutil.which("make") is None:
        pytest.skip("no C compiler or make on PATH: examples/external not built")
    build = tmp_path_factory.mktemp("external")
    for name in ("ida_manhattan.c", "Makefile"):
        shutil.copy(EXAMPLE / name, build / name)
    done = subprocess.run(
        ["make", "-s", f"CC={cc}"], cwd=build, capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"examples/external did not compile with {cc}: {done.stderr}")
    return build / "ida_manhattan"


def test_c_solver_beside_ida_star_jit(tmp_path, c_solver):
    proc = harness(
        "run", "--exec", f"c_ida:optimal,sizes=3x3={c_solver}",
        "--exec", f"c_batch:optimal,batch,sizes=3x3={c_solver}",
        "--solvers", "c_ida,c_batch,ida_star_jit", "--datasets", "8-seeds,8-mini",
        "--repeats", "2", "--out", str(tmp_path), "--quiet", "--no-report",
    )  # fmt: skip
    rows = rows_of(proc)
    by_config: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_config.setdefault(row["config"], []).append(row)
    assert set(by_config) == {"c_ida", "c_batch", "ida_star_jit[manhattan]"}
    lengths = {
        config: {
            (r["instance"], r["measure"], r["repeat"]): r["path_length"] for r in rs
        }
        for config, rs in by_config.items()
    }
    # Same optimal lengths as the compiled IDA*, on every instance and pass.
    assert lengths["c_ida"] == lengths["ida_star_jit[manhattan]"] == lengths["c_batch"]
    for config in ("c_ida", "c_batch"):
        rs = by_config[config]
        assert {r["status"] for r in rs} == {"solved", "unsolvable"}
        solved = [r for r in rs if r["status"] == "solved"]
        assert all(r["is_optimal"] == "True" for r in solved)
        # A program reports no counters: empty, never zero.
        assert all(r[c] == "" for r in rs for c in ("expanded", "generated"))
        timed = [r for r in rs if r["measure"] == "time"]
        assert all(float(r["raw_seconds"]) > 0 for r in timed)
        assert all(float(r["raw_seconds"]) >= float(r["seconds"]) for r in timed)
        assert all(
            float(r["raw_cpu_seconds"]) >= float(r["cpu_seconds"]) for r in timed
        )
        # on the footing of an in-process solver: a reference beside each repeat,
        # the cell's first solve apart; a batch program answers loops of lines
        assert all(float(r["ref_cpu_seconds"]) > 0 for r in timed)
        assert all(float(r["first_cpu_seconds"]) > 0 for r in timed)
        loops = {int(r["loops"]) for r in timed}
        assert loops == {1} if config == "c_ida" else max(loops) > 1
        memory = [r for r in rs if r["measure"] == "memory"]
        # The program's own peak (a few MB), not the Python worker's tens of MB
        # that ru_maxrss would carry over from the spawn.
        assert all(0 < int(r["peak_rss_bytes"]) < 16 * 2**20 for r in memory)
        assert all(r["peak_bytes"] == "" for r in memory)
    jit = by_config["ida_star_jit[manhattan]"]
    assert all(r["raw_seconds"] == "" for r in jit)
    assert all(r["expanded"] != "" for r in jit if r["status"] == "solved")
    meta = (Path(proc.stdout.strip().splitlines()[-1]) / "meta.json").read_text()
    assert "start-up on the goal board" in meta


def test_toml_plugin_in_run_solve_and_solvers(tmp_path, c_solver):
    shutil.copy(c_solver, tmp_path / "ida_manhattan")
    toml = tmp_path / "ours.toml"
    toml.write_text(
        "[[external]]\n"
        'name = "ours"\n'
        'command = ["./ida_manhattan"]\n'  # relative to the .toml file's folder
        "batch = false\n"
        "optimal = true\n"
        'sizes = ["3x3"]\n'
    )
    listed = harness("solvers", "--plugin", str(toml))
    assert listed.returncode == 0, listed.stderr
    assert "ours: external program: " in listed.stdout
    assert "ida_manhattan; goal standard; no counters" in listed.stdout
    solved = harness(
        "solve", "--plugin", str(toml), "--solver", "ours",
        stdin="2 3 4 1 5 x 7 6 8\n1 2 3 4 5 6 8 7 x\n",
    )  # fmt: skip
    assert solved.returncode == 0, solved.stderr
    first, second = solved.stdout.split()
    assert len(first) == 19 and second == "unsolvable"
    rows = rows_of(
        harness(
            "run",
            "--plugin",
            str(toml),
            "--solvers",
            "ours",
            "--datasets",
            "8-seeds",
            "--repeats",
            "1",
            "--no-memory",
            "--out",
            str(tmp_path),
            "--quiet",
            "--no-report",
        )  # fmt: skip
    )
    assert {r["status"] for r in rows} == {"solved"}


def test_missing_program_is_a_one_line_error(tmp_path):
    missing = str(tmp_path / "nope")
    for command in ("run", "solve", "solvers"):
        assert_one_line_error(
            harness(command, "--exec", f"nope={missing}"), "--exec", "does not exist"
        )
    assert_one_line_error(
        harness("solvers", "--exec", "nope=no-such-program-anywhere"), "not found"
    )
    assert_one_line_error(harness("solvers", "--exec", "nope"), "NAME=COMMAND")
    bad = tmp_path / "bad.toml"
    bad.write_text('[[external]]\nname = "x"\ncommand = ["true"]\nbatch = "yes"\n')
    assert_one_line_error(harness("solvers", "--plugin", str(bad)), "batch")


SETSID = """#!/bin/sh
read board
setsid sh -c 'echo $$ >> PIDS; exec sleep 300' </dev/null >/dev/null 2>&1 &
echo
"""


@pytest.fixture(scope="module")
def misbehaving(tmp_path_factory) -> dict[str, list[dict[str, str]]]:
    """One run of every misbehaving program on 8-seeds; rows by config (and
    ``"orphans"``: the pids the setsid program's children wrote)."""
    folder = tmp_path_factory.mktemp("programs")
    pids = folder / "pids"
    setsid = folder / "setsid.sh"
    setsid.write_text(SETSID.replace("PIDS", str(pids)))
    setsid.chmod(0o755)
    programs = {
        "garbage": "sh -c 'read b; echo hello world'",
        "fails": "sh -c 'read b; echo oops >&2; exit 3'",
        "crash": "sh -c 'read b; kill -SEGV $$'",
        # sleep ignores its input and would run for a minute: killed at 1 s with
        # its process group (the shell and its sleep child alike).
        "sleeper:timeout=1": "sh -c 'sleep 60; echo'",
        "bsleep:batch,timeout=1": "sleep 60",
        "bcrash:batch": "sh -c 'read b; kill -SEGV $$'",
        "quits": "true",
        # closes its output and sleeps on: the worker waited for its exit (131 s
        # for 3 cells) and the row blamed the in-process alarm
        "bclosed:batch,timeout=3": "sh -c 'exec 1>&-; sleep 60'",
        # its child leaves the process group (setsid): 11 orphans were left
        "setsids": str(setsid),
    }
    args = [arg for spec in programs.items() for arg in ("--exec", "=".join(spec))]
    rows = rows_of(
        harness(
            "run",
            *args,
            "--datasets",
            "8-seeds",
            "--repeats",
            "1",
            "--out",
            str(tmp_path_factory.mktemp("runs")),
            "--quiet",
            "--no-report",
        )  # fmt: skip
    )
    out: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        out.setdefault(row["config"], []).append(row)
    out["orphans"] = [{"pid": p} for p in pids.read_text().split()]
    return out


def test_program_printing_garbage_is_an_error(misbehaving):
    rows = misbehaving["garbage"]
    assert {r["status"] for r in rows} == {"error"}
    assert "printed 'hello world': not a move string" in rows[0]["message"]


def test_program_exiting_non_zero_is_an_error(misbehaving):
    rows = misbehaving["fails"]
    assert {r["status"] for r in rows} == {"error"}
    assert "exited with code 3 (stderr: oops)" in rows[0]["message"]


def test_crash_is_an_error_naming_the_signal(misbehaving):
    for config in ("crash", "bcrash"):  # one process per board, and batch
        rows = misbehaving[config]
        assert {r["status"] for r in rows} == {"error"}
        assert "killed by SIGSEGV" in rows[0]["message"]


def test_program_that_never_reads_stdin_is_killed_at_the_deadline(misbehaving):
    for config in ("sleeper", "bsleep"):
        rows = misbehaving[config]
        assert {r["status"] for r in rows} == {"timeout"}
        assert "killed with its process group" in rows[0]["message"]


def test_program_that_exits_without_reading_is_judged(misbehaving):
    # It prints nothing: the empty path, which does not reach the goal.
    assert {r["status"] for r in misbehaving["quits"]} == {"invalid"}
    assert "not at the goal" in misbehaving["quits"][0]["message"]


def test_a_batch_program_that_closes_its_output_is_killed_not_waited_for(
    misbehaving,
):
    rows = misbehaving["bclosed"]
    assert {r["status"] for r in rows} == {"error"}
    assert "closed its standard output without answering" in rows[0]["message"]
    assert "in-process alarm" not in rows[0]["message"]


def test_what_a_program_leaves_in_a_session_of_its_own_is_ended(misbehaving):
    """The worker is its programs' subreaper: a child that called setsid is
    reparented to it and killed after the pass (Linux)."""
    orphans = [int(r["pid"]) for r in misbehaving["orphans"]]
    assert len(orphans) >= 3  # one per board at least (and the start-up runs)
    assert _killed_survivors(orphans) == []


def _killed_survivors(pids: list[int]) -> list[int]:
    """The processes of ``pids`` still running, killed (nothing is left behind
    either way)."""
    alive = []
    for pid in pids:
        try:
            os.kill(pid, 0)
            alive.append(pid)
        except ProcessLookupError:
            pass
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    return alive


ESCAPER = """import os, sys, time
sys.stdin.readline()
if os.fork() == 0:
    os.setsid()
    with open(sys.argv[1], "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    os.execvp("sleep", ["sleep", "300"])
time.sleep(60)
"""


def test_a_timed_out_program_leaves_nothing_in_a_session_of_its_own(tmp_path):
    """Issue 35 item 4: a program that times out after forking a setsid'd sleeper
    left it running under init (76 sleepers in a run); the timeout skipped the
    cleanup. Through `harness solve` in a process of its own, which is no
    measuring worker: every process that starts a program is its subreaper."""
    script, pids = tmp_path / "esc.py", tmp_path / "pids"
    script.write_text(ESCAPER)
    proc = subprocess.run(
        [*HARNESS, "solve", "--exec", f"esc:timeout=1={sys.executable} {script} {pids}"],
        input="1 2 3 4 5 6 7 x 8\n", capture_output=True, text=True, timeout=120,
        env={**os.environ, **ENV, "NPUZZLE_PRECOMPILE": "0"},
    )  # fmt: skip
    assert "time limit" in proc.stderr, proc.stderr
    sleepers = [int(p) for p in pids.read_text().split()]
    assert sleepers  # (the start-up measurement may have run it too)
    assert _killed_survivors(sleepers) == []


def test_parse_answer_and_exec_options():
    assert parse_answer("ULDR\n") == "uldr"
    assert parse_answer("\n") == ""
    assert parse_answer("unsolvable\n") is None
    with pytest.raises(ExternalError, match="2 lines"):
        parse_answer("ud\nlr\n")
    program = parse_exec("p:optimal,batch,sizes=3x3+4x4,timeout=5=sh -c 'echo a=b'")
    assert program.optimal and program.batch and program.sizes == ("3x3", "4x4")
    assert program.command == ("sh", "-c", "echo a=b")
    assert program.budget_seconds == 5.0
    assert parse_exec(program.target[len("exec:") :]) == program
    with pytest.raises(ValueError, match="goal"):
        make_program("p", ["true"], goal="sideways")


def _programs_running(cmdline: bytes) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                if fh.read() == cmdline:
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_stopping_the_run_kills_a_running_program(tmp_path):
    """A program runs in its own session, so it would outlive its killed worker;
    the pool kills its process group first."""
    cmdline = b"sleep\x00301.25\x00"
    proc = subprocess.Popen(
        [*HARNESS, "run", "--exec", "hang:timeout=100=sleep 301.25",
         "--datasets", "8-seeds", "--repeats", "1", "--jobs", "1", "--no-memory",
         "--quiet", "--no-report", "--out", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **ENV},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not _programs_running(cmdline) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _programs_running(cmdline), "the program never started"
        proc.terminate()  # SIGTERM: the harness stops as on Ctrl-C
        assert proc.wait(30) == 130
        deadline = time.monotonic() + 5
        while _programs_running(cmdline) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _programs_running(cmdline)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _programs_running(cmdline):  # do not leave it behind if we failed
            os.kill(pid, 9)
