"""The Dask worker's side: :func:`run_batch` (the Dask task) runs a batch in a
measuring process of this worker's, pinned and in the client's environment; and
the checks that the external programs a run needs are here."""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import dataclasses
import errno
import hashlib
import os
import socket
import stat
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.core.files import private_temp_dir, real_dir, write_atomic
from harness.measure.executors.base import fill_not_run
from harness.measure.executors.dask.environment import cores_for, measuring_env
from harness.measure.executors.dask.payloads import (
    Batch,
    BatchResult,
    CellResult,
    code_fingerprint,
    host_info,
)
from harness.measure.executors.local import LocalPool
from harness.measure.tasks import Attempt, Setup, Task, TaskResult

#: Seconds a batch waits for the scheduler to acknowledge its start event.
START_ACK_SECONDS = 10.0


#: idle measuring pools of this Dask worker process, by (environment, core)
_POOLS: dict[tuple, list[LocalPool]] = {}
_BUSY: dict[int, int | None] = {}  # id of a pool running a batch -> its core
_POOLS_LOCK = threading.Lock()
_INFO: dict[str, Any] | None = None


def worker_info(dask_worker: Any = None) -> dict[str, Any]:
    """Who runs this batch: host, Dask worker address and name, CPU, code.
    (``Client.run`` passes ``dask_worker``; inside a task ``get_worker`` finds it.)"""
    global _INFO
    if _INFO is None:
        _INFO = {"host": socket.gethostname(), **host_info()}
        _INFO["fingerprint"] = code_fingerprint()
        _INFO["pid"] = os.getpid()
    info = dict(_INFO)
    w = dask_worker
    if w is None:
        try:
            from distributed import get_worker

            w = get_worker()
        except (ImportError, ValueError):
            w = None
    if w is not None:
        info["address"] = w.address
        info["name"] = str(w.name)
        info["nthreads"] = w.state.nthreads
        info["resources"] = dict(w.state.total_resources)
        info["local_directory"] = w.local_directory
    else:
        info["address"] = info["name"] = f"pid-{os.getpid()}@{info['host']}"
    return info


def _take_pool(info: dict[str, Any], batch: Batch) -> tuple[LocalPool, tuple]:
    """An idle measuring pool for this batch's environment, pinned to a core of
    this worker's that no other running batch of this worker uses (several
    threads per worker: one core each), or a new one."""
    env = measuring_env(batch.environ)
    cores = cores_for(batch.cores or {}, info)
    stale: list[LocalPool] = []
    with _POOLS_LOCK:
        core = None
        if cores:
            busy = list(_BUSY.values())
            free = [c for c in cores if c not in busy]
            core = free[0] if free else cores[len(busy) % len(cores)]
        key = (tuple(sorted(env.items())), core)
        idle = _POOLS.get(key)
        pool = idle.pop() if idle else None
        if pool is None:  # pools of other settings on this core: retire them
            for other in [k for k in _POOLS if k[1] == core]:
                stale += _POOLS.pop(other)
            log = batch.log_path or os.path.join(
                _log_folder(info), "npuzzle-harness-workers.log"
            )
            pool = LocalPool(
                1,
                log_path=log,
                pin=core is not None,
                cores=None if core is None else [core],
                env=env,
            )
        _BUSY[id(pool)] = core
    for old in stale:
        old.shutdown(cancel=True)
    return pool, key


def _give_back(pool: LocalPool, key: tuple[Any, ...]) -> None:
    with _POOLS_LOCK:
        _BUSY.pop(id(pool), None)
        _POOLS.setdefault(key, []).append(pool)


def _drop(pool: LocalPool) -> None:
    with _POOLS_LOCK:
        _BUSY.pop(id(pool), None)
    pool.shutdown(cancel=True)


@atexit.register
def _close_pools() -> None:
    with _POOLS_LOCK:
        pools = [p for idle in _POOLS.values() for p in idle]
        _POOLS.clear()
    for pool in pools:
        pool.shutdown(cancel=True)  # idle: nothing to lose, and a quicker exit


def _plugin_copies(sources: dict[str, str]) -> dict[str, str]:
    """Write each shipped plugin to a content-addressed file in this user's private
    folder; target -> path. A copy is used only once its bytes hash to the shipped
    text's: the folder is this user's alone (0700, checked), and what is there is
    checked anyway, so no file planted by anyone else is ever imported. OSError
    (naming the file) when a copy cannot be written or does not verify."""
    out = {}
    base = private_temp_dir("plugins")
    for target, text in sources.items():
        data = text.encode("utf-8")
        digest = hashlib.sha256(data).hexdigest()
        path = base / digest[:16] / os.path.basename(target)
        if _sha256_of(path) != digest:  # missing, or not what was shipped
            real_dir(path.parent)
            write_atomic(path, data, sync=False)
            if _sha256_of(path) != digest:
                raise OSError(errno.EIO, "changed after it was written", str(path))
        out[target] = str(path)
    return out


def _sha256_of(path: Path) -> str | None:
    """The file's sha256 (hex), read without following a symlink; None if absent
    or not a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return hashlib.file_digest(fh, "sha256").hexdigest()


def run_batch(batch: Batch) -> BatchResult:
    """The Dask task: measure the batch's cells in this worker's measuring process.
    Never raises for a solver's fault: every cell comes back with its rows."""
    info = worker_info()
    out = BatchResult(batch.id, worker=info)
    if batch.fingerprint != info["fingerprint"]:
        out.refused = (
            f"Dask worker {info['address']} on {info['host']} runs other harness code "
            f"(fingerprint {info['fingerprint'][:12]}, the client's "
            f"{batch.fingerprint[:12]}): install the same npuzzle-harness on every "
            "worker"
        )
        out.remaining = tuple(t.id for t in batch.tasks)
        return out
    label = f"Dask worker {info['name']} ({info['address']}) on {info['host']}"
    started = _log_start(batch)
    missing = check_programs(batch.programs, hashes=False)["missing"]
    if missing:  # a worker that joined later without the program
        out.refused = f"{label}: {missing[0]}"
        out.remaining = tuple(t.id for t in batch.tasks)
        return out
    try:
        local = _plugin_copies(batch.plugin_sources)
    except OSError as err:
        for task in batch.tasks:
            message = f"cannot write the shipped plugin on {info['host']}: {err}"
            out.cells.append(_failed(task, message))
        return out
    tasks = {
        t.id: dataclasses.replace(t, plugins=tuple(local.get(p, p) for p in t.plugins))
        for t in batch.tasks
    }
    pool, key = _take_pool(info, batch)
    pool.reap_idle()  # a measuring process that died between batches is replaced
    healthy = True
    try:
        _start_heard(started)  # before a cell can take this worker down
        for task in tasks.values():
            pool.submit(task)
        deadline = time.monotonic() + batch.slice_seconds
        withdrawn: list[Task] = []
        for event in pool.events():
            if not isinstance(event, TaskResult):
                continue
            setups = [_relabel(s, label, info) for s in event.setups]
            out.cells.append(
                CellResult(
                    event.task.id,
                    [_relabel_attempt(a, info) for a in event.attempts],
                    setups,
                    event.h_start,
                    event.cpu,
                    event.phases,
                )
            )
            if not withdrawn and time.monotonic() >= deadline:
                withdrawn = pool.withdraw()
        out.remaining = tuple(t.id for t in withdrawn)
    except BaseException as err:  # the harness's own bug: report, never hang Dask
        healthy = False
        done = {c.task_id for c in out.cells}
        for task in tasks.values():
            if task.id not in done:
                out.cells.append(
                    _failed(task, f"measuring pool failed on {label}: {err!r}")
                )
        out.remaining = ()
    finally:
        if healthy:
            _give_back(pool, key)
        else:
            _drop(pool)
    return out


def check_programs(
    needs: Sequence[tuple[str, str, str]], *, hashes: bool = True
) -> dict[str, list]:
    """On this machine: which external programs the run needs are missing
    (``missing``: one-line reasons) and, with ``hashes``, which differ from the
    client's file (``differs``: (solver, file, sha256 here))."""
    from harness.measure.external import file_sha256, missing_here

    out: dict[str, list] = {"missing": [], "differs": []}
    seen = set()
    for solver, path, sha in needs:
        why = missing_here(path, executable=(solver, "first") not in seen)
        seen.add((solver, "first"))
        if why:
            out["missing"].append(
                f"external program {solver!r} needs {path}, which {why} there: "
                "install it at the same path on every worker (docs/dask.md: "
                "External programs)"
            )
        elif hashes and sha and file_sha256(path) not in ("", sha):
            out["differs"].append((solver, path, file_sha256(path)))
    return out


def program_needs(plugins: Sequence[str]) -> tuple[tuple[str, str, str], ...]:
    """(solver, file, sha256 here) for every file the plugins' external programs
    need (:func:`harness.measure.external.needed_files`), in order."""
    from harness.measure.external import file_sha256, needed_files, programs_of

    out = []
    for target in plugins:
        for program in programs_of(target):
            for path in needed_files(program):
                out.append((program.name, path, file_sha256(path)))
    return tuple(out)


def _log_start(batch: Batch) -> concurrent.futures.Future | None:
    """Tell the scheduler this batch started here (an event under ``batch.topic``),
    so that if this worker dies the client can tell the batch that ran from those
    that only waited on it. An acknowledged call, started at once and awaited by
    :func:`_start_heard` before a cell runs: ``Worker.log_event`` would only queue
    the event on the worker's stream, flushed some milliseconds later, and a cell
    that kills its worker at once would take it along unsent."""
    if not batch.topic:
        return None
    try:
        from distributed import get_worker

        worker = get_worker()
        call = worker.scheduler.log_event(topic=batch.topic, msg=batch.id)
        return asyncio.run_coroutine_threadsafe(call, worker.loop.asyncio_loop)
    except Exception:  # no worker (called directly)
        return None


def _start_heard(pending: concurrent.futures.Future | None) -> None:
    """Wait (at most START_ACK_SECONDS) until the scheduler has the start event."""
    if pending is None:
        return
    with contextlib.suppress(Exception):  # unheard: a loss counts as not started
        pending.result(timeout=START_ACK_SECONDS)


def _failed(task: Task, message: str) -> CellResult:
    p = task.passes[0]
    attempts = fill_not_run(
        task, [Attempt(p.measure, p.repeat, "error", message=message)]
    )
    return CellResult(task.id, attempts, [], None)


def _relabel(setup: Setup, label: str, info: dict[str, Any]) -> Setup:
    """Set-up notes name the Dask worker (the local pool always says worker 0)."""
    setup.note = setup.note.replace("in worker 0", f"in {label}")
    setup.error = setup.error.replace(
        "see npuzzle-harness-workers.log", _log_hint(info)
    )
    setup.worker = info["address"]  # type: ignore[assignment]
    return setup


def _relabel_attempt(attempt: Attempt, info: dict[str, Any]) -> Attempt:
    attempt.message = attempt.message.replace(
        "see npuzzle-harness-workers.log", _log_hint(info)
    )
    return attempt


def _log_hint(info: dict[str, Any]) -> str:
    folder = _log_folder(info)
    return f"see {folder}/npuzzle-harness-workers.log on {info['host']}"


def _log_folder(info: dict[str, Any]) -> str:
    """The Dask worker's own folder, or this user's private one (never the shared
    temporary folder itself, where another user could plant the log)."""
    return info.get("local_directory") or str(private_temp_dir("logs"))
