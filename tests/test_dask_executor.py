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
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from plugins.tiny import make_dataset, walk

import harness
from harness.analysis import read_run
from harness.puzzle import goal_board, grid
from harness.solver import load_plugin, scoped_registry

distributed = pytest.importorskip("distributed", reason="needs the dask extra")
psutil = pytest.importorskip("psutil")

MISBEHAVING = str(Path(__file__).parent / "plugins" / "misbehaving.py")

#: Written to a temporary folder: the workers get it only by value, in the payload.
WHOAMI = '''
import os
from harness.solver import register


@register("whoami", optimal=False, budget_seconds=5)
def whoami(start, goal, grid, *, counters, heuristic):
    """Reports the process that ran it, and whether it is the shipped copy."""
    counters.extra["pid"] = os.getpid()
    counters.extra["ppid"] = os.getppid()
    counters.extra["shipped"] = int("npuzzle-harness-plugins" in __file__)
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
def real_cluster(where: Path):
    """A scheduler and two single-threaded workers, started as a user would; on
    exit every process of theirs (measuring processes included) is stopped, and
    ``family`` holds them all for the caller to check."""
    sched_file = where / "scheduler.json"
    log = open(where / "cluster.log", "ab")
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
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
              "--scheduler-file", str(sched_file))  # fmt: skip
        deadline = time.monotonic() + 60
        while not sched_file.exists():
            assert time.monotonic() < deadline, (where / "cluster.log").read_text()
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        for i in range(2):
            start("worker", address, "--nthreads", "1", "--name", f"w{i}",
                  "--no-dashboard", "--memory-limit", "2GB",
                  "--local-directory", str(where / f"w{i}"))  # fmt: skip
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(2, timeout=60)
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
    # the fault matrix, as locally (tests/test_runner.py)
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



#: Kills the Dask worker that started its measuring process: a worker lost under a
#: batch, as when a node dies.
KILLER = '''
import os, signal
from harness.solver import register


@register("kills_worker", optimal=False, budget_seconds=5)
def kills_worker(start, goal, grid, *, counters, heuristic):
    """SIGKILLs its parent, the Dask worker."""
    os.kill(os.getppid(), signal.SIGKILL)
    return None
'''


@pytest.mark.slow
def test_batch_lost_with_its_worker_is_recorded_and_reported(tmp_path, cluster):
    """A Dask worker dies under a batch: the batch is queued again once (and kills
    a worker again), then its cell is an error; meta.json lists both losses
    (worker, cells, what Dask said, retried or not) and the report says so."""
    address, procs = cluster
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    before = _both_workers(address)
    g = grid(2, 3)
    one = make_dataset("lost23", [walk(goal_board("standard", g), g, 5, seed=3)], g,
                       goal_board("standard", g))  # fmt: skip
    with scoped_registry():
        load_plugin(str(killer))
        frame = harness.run(
            ["kills_worker"], [one], repeats=1, warmup=0,
            memory_pass=False, out=tmp_path / "results", executor="dask",
            scheduler=address, plugins=[MISBEHAVING, str(killer)], report=True,
        )  # fmt: skip
    meta, _ = read_run(frame.attrs["run_dir"])
    killed = frame[frame.config == "kills_worker"]
    assert set(killed.status) == {"error"}
    assert killed.message.str.contains("its Dask worker died or was lost").all()
    assert "local--1" not in meta.get("placement", {})  # measured nowhere
    lost = meta["lost_batches"]
    assert [e["retried"] for e in lost] == [True, False]
    assert [e["attempt"] for e in lost] == [1, 2]
    instances = sorted(killed.instance)
    for entry in lost:
        assert sorted(c[2] for c in entry["cells"]) == instances
        assert {c[0] for c in entry["cells"]} == {"kills_worker"}
        assert entry["worker"] in before + _both_workers(address)
        assert entry["host"] and "KilledWorker" in entry["error"]
    report = (Path(frame.attrs["run_dir"]) / "report.md").read_text()
    assert f"Dask worker {lost[0]['worker']} on {lost[0]['host']} died under batch" \
        in report  # fmt: skip
    assert "its cells were queued again" in report
    assert "its cells are recorded as errors" in report
    assert all(p.poll() is None for p in procs)  # nannies and scheduler live on
