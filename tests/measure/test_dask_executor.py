"""``--executor dask`` on a real cluster: a ``dask scheduler`` and two ``dask worker
--nthreads 1`` processes started from the command line on loopback, in another
folder than the client (so nothing reaches them through a shared ``sys.path``, as it
would in a LocalCluster). The same grid -- a ``--plugin`` file written to a temporary
folder, every misbehaving solver -- runs locally and on the cluster; the rows must
agree, every cell must come from a measuring process (a child of a Dask worker, not
the worker itself), and no cluster process may outlive the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plugins.tiny import make_dataset, walk
from where import PLUGINS

import harness
from harness.analysis import read_run
from harness.measure.executors.dask import start_dask_executor
from harness.measure.plan import RunError
from harness.puzzle import goal_board, grid
from harness.solver import load_plugin, scoped_registry

distributed = pytest.importorskip("distributed", reason="needs the dask extra")
psutil = pytest.importorskip("psutil")

MISBEHAVING = str(PLUGINS / "misbehaving.py")

#: Written to a temporary folder: the workers get it only by value, in the payload.
WHOAMI = '''
import os
from harness.solver import register


@register("whoami", optimal=False, budget_seconds=5)
def whoami(start, goal, grid, *, counters, heuristic):
    """Reports the process that ran it, whether it is the shipped copy, the
    variables a Dask nanny sets (-1: unset) and how many cores it may use."""
    counters.extra["pid"] = os.getpid()
    counters.extra["ppid"] = os.getppid()
    counters.extra["shipped"] = int("npuzzle-harness-" in __file__
                                    and "plugins" in __file__)
    for key in ("MALLOC_TRIM_THRESHOLD_", "OMP_NUM_THREADS", "PYTHONHASHSEED"):
        counters.extra[key.lower()] = int(os.environ.get(key, "-1"))
    counters.extra["cores"] = len(os.sched_getaffinity(0))
    return None if start != goal else ""
'''

SOLVERS = [
    "good_bfs", "good_astar[manhattan]", "hang", "hang_hard", "raises", "exits",
    "segfault", "hog", "illegal", "says_unsolvable", "long_optimal", "wrong_type",
    "flaky_counters", "whoami",
]  # fmt: skip
COMPARED = ("status", "moves", "path_length", "is_optimal", "expanded", "generated",
            "max_frontier", "iterations")  # fmt: skip


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("client_only") / "whoami_plugin.py"
    path.write_text(WHOAMI)
    return str(path)


@pytest.fixture(scope="module", autouse=True)
def _registry(plugin):
    with scoped_registry():
        load_plugin(MISBEHAVING)
        load_plugin(plugin)
        yield


def _dataset():
    g = grid(2, 3)
    goal = goal_board("standard", g)
    swapped = list(goal)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    return make_dataset("dask23", [walk(goal, g, 7, seed=1), tuple(swapped)], g, goal)


def _dask_cli() -> str:
    return str(Path(sys.executable).parent / "dask")


@contextlib.contextmanager
def real_cluster(where: Path, workers: int = 2, tls: tuple[str, ...] | None = None):
    """A scheduler and ``workers`` single-threaded workers, started as a user
    would (``tls``: (CA, certificate, key) files, for every endpoint); on exit
    every process of theirs (measuring processes included) is stopped, and
    ``family`` holds them all for the caller to check."""
    secure = [] if tls is None else [
        "--tls-ca-file", tls[0], "--tls-cert", tls[1], "--tls-key", tls[2]
    ]  # fmt: skip
    sched_file = where / "scheduler.json"
    log = open(where / "cluster.log", "ab")
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    # the workers' own programs on PATH (another build of a program than the
    # client's): a folder only they have on PATH
    worker_bin = where / "worker_bin"
    worker_bin.mkdir(exist_ok=True)
    _script(worker_bin / "npz_twin", "echo unsolvable  # the workers' build")
    env["PATH"] = f"{worker_bin}{os.pathsep}{env.get('PATH', '')}"
    procs: list[subprocess.Popen] = []
    family: list[psutil.Process] = []

    def start(*args: str) -> None:
        procs.append(
            subprocess.Popen(
                [_dask_cli(), *args],
                cwd=where,
                stdout=log,
                stderr=log,
                env=env,
                start_new_session=True,
            )  # fmt: skip
        )

    try:
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
              "--scheduler-file", str(sched_file), *secure,
              *(["--protocol", "tls"] if tls else []))  # fmt: skip
        deadline = time.monotonic() + 60
        address = None
        while address is None:  # (the file appears before its text is whole)
            assert time.monotonic() < deadline, (where / "cluster.log").read_text()
            try:
                address = json.loads(sched_file.read_text())["address"]
            except (FileNotFoundError, ValueError, KeyError):
                time.sleep(0.1)
        for i in range(workers):
            start("worker", address, "--nthreads", "1", "--name", f"w{i}",
                  "--no-dashboard", "--memory-limit", "2GB",
                  "--local-directory", str(where / f"w{i}"), *secure)  # fmt: skip
        security = None if tls is None else distributed.Security(
            tls_ca_file=tls[0], tls_client_cert=tls[1], tls_client_key=tls[2],
            require_encryption=True,
        )  # fmt: skip
        with distributed.Client(address, timeout="60s", security=security) as client:
            client.wait_for_workers(workers, timeout=60)
        yield address, procs, family
    finally:
        for p in procs:
            try:
                top = psutil.Process(p.pid)
                family.extend([top, *top.children(recursive=True)])
            except psutil.NoSuchProcess:
                pass
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        log.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One real cluster for the module's tests (each start costs seconds); on
    teardown no process of it, measuring processes included, may be left."""
    where = tmp_path_factory.mktemp("cluster")
    with real_cluster(where) as (address, procs, family):
        yield address, procs
    time.sleep(0.5)
    alive = [p for p in family if p.is_running() and p.status() != "zombie"]
    assert not alive, f"cluster processes outlived it: {alive}"
    assert len(family) >= 5  # scheduler, 2 workers (+ nannies), measuring processes


def _both_workers(address: str) -> list[str]:
    """The cluster's worker addresses, once both are up (a test may have killed
    one: its nanny starts another)."""
    with distributed.Client(address, timeout="30s") as client:
        client.wait_for_workers(2, timeout=60)
        return list(client.scheduler_info(n_workers=-1)["workers"])


def _run(tmp_path, plugin, **kw):
    frame = harness.run(
        SOLVERS, [_dataset()], repeats=2, memory_limit_mb=300,
        out=tmp_path / "results", plugins=[MISBEHAVING, plugin], **kw,
    )  # fmt: skip
    meta, _ = read_run(frame.attrs["run_dir"])
    return frame, meta


def _key(frame):
    return frame.set_index(["config", "instance", "measure", "repeat"]).sort_index()


@pytest.mark.slow
def test_cluster_rows_equal_local_rows(plugin, tmp_path, cluster):
    address, procs = cluster
    local, _ = _run(tmp_path / "local", plugin, jobs=2)
    workers_seen = _both_workers(address)
    dask, meta = _run(tmp_path / "dask", plugin, executor="dask", scheduler=address)
    assert all(p.poll() is None for p in procs), "a fault took a Dask process down"

    a, b = _key(local), _key(dask)
    assert list(a.index) == list(b.index)
    assert (a["status"] == b["status"]).all(), (a["status"] != b["status"]).sum()
    ok = a["status"].isin(["solved", "unsolvable"]) & (
        a.index.get_level_values("config") != "whoami"
    )
    for column in COMPARED:
        left, right = a.loc[ok, column], b.loc[ok, column]
        assert left.equals(right), column
    # the fault matrix, as locally (tests/measure/test_runner.py)
    first = b.xs(("time", 0), level=("measure", "repeat"))
    first = first[first["solvable"].astype(bool)]
    expect = {"hang": "timeout", "hang_hard": "timeout", "raises": "error",
              "exits": "error", "segfault": "error", "hog": "memout",
              "illegal": "invalid", "long_optimal": "invalid",
              "wrong_type": "invalid", "flaky_counters": "invalid"}  # fmt: skip
    for config, status in expect.items():
        statuses = set(first.loc[config, "status"])
        assert statuses == {status}, (config, statuses)

    # every cell was measured by a measuring process, a child of a Dask worker
    workers = meta["workers"]
    assert set(workers) <= set(workers_seen)
    worker_pids = {w["pid"] for w in workers.values()}
    assert len(worker_pids) == 2
    who = dask[(dask["config"] == "whoami") & (dask["status"] != "skipped")]
    extras = [json.loads(e) for e in who["extra"]]
    assert extras and all(e["shipped"] == 1 for e in extras)
    # measured in the client's environment (not the nanny's), pinned like locally
    here = [json.loads(e) for e in local[local["config"] == "whoami"]["extra"] if e]
    nanny_set = ("malloc_trim_threshold_", "omp_num_threads", "pythonhashseed")
    assert {tuple(e[k] for k in nanny_set) for e in extras} == {
        tuple(e[k] for k in nanny_set) for e in here
    }
    assert os.environ.get("MALLOC_TRIM_THRESHOLD_") is not None or all(
        e["malloc_trim_threshold_"] == -1 for e in extras
    )
    assert {e["cores"] for e in extras} == {e["cores"] for e in here} == {1}
    assert all(e["ppid"] in worker_pids and e["pid"] not in worker_pids for e in extras)
    # placement names a worker (and through it a host) for every cell
    placed = {tuple(c) for cells in meta["placement"].values() for c in cells}
    cells = set(zip(dask["config"], dask["dataset"], dask["instance"], strict=True))
    skipped = set(
        zip(*(dask[dask["status"] == "skipped"][c] for c in ("config", "dataset",
                                                              "instance")),
            strict=True)
    )  # fmt: skip
    assert placed == cells - skipped
    assert set(meta["hosts"]) == {w["host"] for w in workers.values()}
    assert all(h["cpu_model"] for h in meta["hosts"].values())
    assert meta["executors"][-1]["kind"] == "dask"
    # the measuring processes' phases reach meta.json as a local run's do
    assert meta["phases"]["worker_time_seconds"] > 0
    assert meta["phases"]["worker_setup_seconds"] > 0



#: Kills the Dask worker that started its measuring process: a worker lost under a
#: batch, as when a node dies.
KILLER = '''
import os, signal, time
from harness.solver import register


@register("kills_worker", optimal=False, budget_seconds=5)
def kills_worker(start, goal, grid, *, counters, heuristic):
    """SIGKILLs its parent, the Dask worker, on a board whose first tile is 5: the
    first time after a moment (Dask hands the worker its next batch meanwhile),
    then at once."""
    if start[0] == 5:
        if not os.path.exists(MARK):
            open(MARK, "w").close()
            time.sleep(0.5)
        os.kill(os.getppid(), signal.SIGKILL)
    return None
'''


@pytest.mark.slow
def test_batch_lost_with_its_worker_is_recorded_and_reported(tmp_path, cluster):
    """A Dask worker dies under a batch: the batch is queued again once (and kills
    a worker again), then its cells are errors; meta.json lists both losses
    (worker, cells, what Dask said, retried or not) and the report says so. A
    batch lost while it only waited on a dying worker (the cluster has Dask's
    default worker-saturation) is queued again without counting: never an error."""
    address, procs = cluster
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER.replace("MARK", repr(str(tmp_path / "killed_once"))))
    _both_workers(address)
    g = grid(2, 3)
    goal = goal_board("standard", g)
    boards = [walk(goal, g, 7, seed=i) for i in range(40)]
    fatal = next(b for b in boards if b[0] == 5)  # the first block: first batch
    one = make_dataset("lost23", [fatal, *[b for b in boards if b[0] != 5][:5]], g,
                       goal)  # fmt: skip
    with scoped_registry():
        load_plugin(str(killer))
        frame = harness.run(
            ["kills_worker", "good_bfs"], [one], repeats=1, warmup=0,
            memory_pass=False, out=tmp_path / "results", executor="dask",
            scheduler=address, plugins=[MISBEHAVING, str(killer)], report=True,
        )  # fmt: skip
    meta, _ = read_run(frame.attrs["run_dir"])
    first = frame.instance == sorted(set(frame.instance))[0]
    killed = frame[first]  # both configs on the fatal board: one batch
    assert set(killed.status) == {"error"}
    assert killed.message.str.contains("its Dask worker died or was lost").all()
    assert "error" not in set(frame[~first].status)
    assert "local--1" not in meta.get("placement", {})  # measured nowhere
    # the killer's batch had started (its start reached the scheduler before a
    # cell ran): queued again once, then its cells are errors
    instance = killed.instance.iloc[0]
    lost = [e for e in meta["lost_batches"] if e["cells"][0][2] == instance]
    assert [(e["started"], e["retried"]) for e in lost] == [(True, True), (True, False)]
    assert lost[-1]["outcome"] == "cells recorded as error"
    # the batches that only waited on a dying worker: queued again, not counted
    waited = [e for e in meta["lost_batches"] if e not in lost]
    assert all(e["started"] is False and e["retried"] for e in waited)
    assert all("had not started" in e["outcome"] for e in waited)
    instances = sorted(killed.instance)
    for entry in lost:
        assert sorted(c[2] for c in entry["cells"]) == instances
        assert {c[0] for c in entry["cells"]} == {"kills_worker", "good_bfs"}
        # (a nanny's replacement may have joined and died since: no list to check)
        assert entry["worker"].startswith("tcp://127.0.0.1:")
        assert entry["host"] and "KilledWorker" in entry["error"]
    report = (Path(frame.attrs["run_dir"]) / "report.md").read_text()
    assert f"Dask worker {lost[0]['worker']} on {lost[0]['host']} died under batch" \
        in report  # fmt: skip
    assert "its cells were queued again" in report
    assert "its cells are recorded as errors" in report
    assert all(p.poll() is None for p in procs)  # nannies and scheduler live on



def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\nread board\n{body}\n")
    path.chmod(0o755)
    return path


#: A judge-format solver for 2x3 boards (BFS), run by this test's Python.
BFS_PROGRAM = """#!{python}
import sys
from collections import deque

start = tuple(sys.stdin.readline().split())
goal = ("1", "2", "3", "4", "5", "x")
moves = {{"u": -3, "d": 3, "l": -1, "r": 1}}
seen, queue = {{start: ""}}, deque([start])
while queue:
    board = queue.popleft()
    if board == goal:
        print(seen[board])
        sys.exit(0)
    i = board.index("x")
    for move, step in moves.items():
        j = i + step
        if not 0 <= j < 6 or (step in (-1, 1) and j // 3 != i // 3):
            continue
        nxt = list(board)
        nxt[i], nxt[j] = nxt[j], nxt[i]
        nxt = tuple(nxt)
        if nxt not in seen:
            seen[nxt] = seen[board] + move
            queue.append(nxt)
print("unsolvable")
"""

PROGRAMS_TOML = """
[[external]]
name = "bfs_prog"
command = ["./bfs_prog.py"]   # relative to this file's folder
optimal = true
sizes = ["2x3"]
"""


@pytest.mark.slow
def test_toml_solver_definition_reaches_workers_by_value(tmp_path, cluster):
    """A .toml plugin in a folder only the client reads: its definition travels in
    the payload (program path made absolute on the client), the program runs on
    the workers. The file is deleted before the run: workers cannot have read it."""
    from harness.measure import runner
    from harness.measure.plan import make_plan

    address, _ = cluster
    _both_workers(address)
    folder = tmp_path / "client_only"
    folder.mkdir()
    program = folder / "bfs_prog.py"
    program.write_text(BFS_PROGRAM.format(python=sys.executable))
    program.chmod(0o755)
    toml = folder / "programs.toml"
    toml.write_text(PROGRAMS_TOML)
    with scoped_registry():
        plan = make_plan(
            ["bfs_prog"], [_dataset()], plugins=[str(toml)], repeats=1, warmup=0,
            memory_pass=False,
        )  # fmt: skip
        toml.unlink()  # only this process's registry knows the definition now
        executor = start_dask_executor(address, None, plan.plugins)
        run_dir, meta = runner.start(plan, tmp_path / "results", jobs=executor.jobs)
        runner.execute(plan, run_dir, meta, executor=executor)
    meta, rows = read_run(run_dir)
    assert dict(zip(rows.instance, rows.status, strict=True)) == {
        "t000": "solved", "t001": "unsolvable"
    }, rows.message.tolist()  # fmt: skip
    solved = rows[rows.status == "solved"]
    assert (solved.path_length == solved.optimal_length).all()
    assert set(meta["workers"]) <= set(_both_workers(address))  # Dask measured it


@pytest.mark.slow
def test_external_programs_are_checked_on_every_worker(tmp_path, cluster, monkeypatch):
    """A program the client has but the workers lack is a one-line error naming the
    worker and the program, before any run directory; another build of it on the
    workers is a warning in meta.json naming them."""
    address, _ = cluster
    _both_workers(address)
    client_bin = tmp_path / "client_bin"
    client_bin.mkdir()
    _script(client_bin / "npz_client_only", "echo unsolvable")
    _script(client_bin / "npz_twin", "echo garbage  # the client's build: an error")
    monkeypatch.setenv("PATH", f"{client_bin}{os.pathsep}{os.environ['PATH']}")
    out = tmp_path / "results"
    with pytest.raises(RunError) as err:
        harness.run(["lonely"], [_dataset()], out=out, executor="dask",
                    scheduler=address,
                    plugins=["exec:lonely:sizes=2x3=npz_client_only"])  # fmt: skip
    message = str(err.value)
    assert "\n" not in message
    assert re.fullmatch(
        r"Dask worker w[01] \(tcp://127\.0\.0\.1:\d+\) on \S+: external program "
        r"'lonely' needs npz_client_only, which is not on its PATH there: install it "
        r"at the same path on every worker \(docs/dask\.md: External programs\)",
        message,
    ), message
    assert not out.exists()

    frame = harness.run(
        ["twin"], [_dataset()], out=out, executor="dask", scheduler=address,
        plugins=["exec:twin:sizes=2x3=npz_twin"], repeats=1, warmup=0,
        memory_pass=False,
    )  # fmt: skip
    meta, _ = read_run(frame.attrs["run_dir"])
    differs = [w for w in meta["warnings"] if w.startswith("external program 'twin'")]
    assert len(differs) == 2, meta["warnings"]  # one per worker
    assert all("npz_twin on Dask worker w" in w and "differs from this client's" in w
               for w in differs)  # fmt: skip
    assert set(frame.status) == {"unsolvable", "invalid"}  # the workers' build ran


def test_program_check_names_what_is_missing(tmp_path) -> None:
    """The check each worker runs (here in this process): every file a program's
    command names must exist, its executable be executable."""
    from harness.measure.executors.dask import check_programs

    text = tmp_path / "not_executable"
    text.write_text("#!/bin/sh\n")
    found = check_programs([
        ("a", str(tmp_path / "gone"), ""), ("b", str(text), ""),
        ("c", sys.executable, ""), ("c", str(tmp_path / "script.py"), ""),
        ("d", sys.executable, "0" * 64),
    ])  # fmt: skip
    assert found["missing"] == [
        f"external program 'a' needs {tmp_path / 'gone'}, which does not exist there: "
        "install it at the same path on every worker (docs/dask.md: External programs)",
        f"external program 'b' needs {text}, which is not executable there: install "
        "it at the same path on every worker (docs/dask.md: External programs)",
        f"external program 'c' needs {tmp_path / 'script.py'}, which does not exist "
        "there: install it at the same path on every worker (docs/dask.md: "
        "External programs)",
    ]
    assert [d[:2] for d in found["differs"]] == [("d", sys.executable)]
