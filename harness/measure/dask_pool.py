"""The runner's cells on a Dask distributed cluster (``harness run --executor dask``).

Dask only places the work; the measurement is the local one. Each Dask task is a
*batch* of cells of one solver config. On the Dask worker the batch goes through a
:class:`~harness.measure.pool.LocalPool` of one measuring process, the same fresh
interpreter, deadlines, memory limit and memory pass as a local run; the Dask worker
thread never calls a solver. A hang, a crash, ``os._exit`` or a memory hog costs
the measuring process and one cell, recorded as locally, and the Dask task still
returns normally: Dask never sees a failure, so it never retries one. The
measuring process (and the set-ups it has prepared) outlives the batch, so each
Dask worker warms a config once, as a local worker does.

What travels, client to worker: :class:`Batch` -- the runner's :class:`Task` objects
(every run option lives in them, so options added to ``Task`` reach the workers
unchanged), the source text of every ``--plugin`` file (workers need no copy of the
client's files; module-name plugins must be installed on the workers), and a
fingerprint of the harness code. Numba dispatchers never travel: workers import the
solvers themselves and use their own on-disk caches. Back: :class:`BatchResult` --
each finished cell's attempts and set-ups, the cells the batch left for later, and
the worker's host, address and CPU model.

Batching (overhead): in the runner's interleaved order (the default) a batch is one
instance block -- every config on one instance, in the block's order -- as one
local worker runs a block; tiny blocks are packed (at most
``BLOCK_BATCHES_PER_SLOT`` batches per slot). Costliest blocks go first (the
runner's cost model, as the local pool). Otherwise a batch holds up to
``max_batch`` cells of one config, at least ``BATCHES_PER_SLOT`` batches per
slot. A batch stops taking new cells (or blocks) after ``slice_seconds`` and hands
the rest back to be queued again, so a slow batch never pins one worker while
others idle. Dask's cost is then one scheduler round trip (~15 ms here) per batch,
not per cell.

Same conditions as a local cell: the measuring process runs in the client's values
of the variables a Dask nanny sets (``NANNY_ENV``: malloc trimming, BLAS threads,
hash seed), pinned to its own core of its host when the plan pins (``core_plan``),
and the LocalCluster we start keeps Dask's own periodic work low
(``SCHEDULER_CONFIG``).

This module is imported by the client only when ``--executor dask`` is chosen, and
by Dask workers (``run_batch``); ``distributed`` is imported inside functions.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import logging
import math
import os
import platform
import signal
import socket
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.measure.pool import (
    ExecutorError,
    LocalPool,
    available_cores,
    fill_not_run,
)
from harness.measure.tasks import Attempt, Event, Setup, Task, TaskResult, TaskStarted

#: A batch stops taking new cells this many seconds after it started.
DEFAULT_SLICE_SECONDS = 2.0
#: Most cells in one batch.
DEFAULT_MAX_BATCH = 64
#: Cut the grid into at least this many batches per measuring slot (load balance).
BATCHES_PER_SLOT = 4
#: Instance blocks (interleaved order): one per batch, unless that makes more than
#: this many batches per slot; then small blocks share a batch.
BLOCK_BATCHES_PER_SLOT = 32
#: Optional worker resource: how many measurements a Dask worker may run at once
#: (``dask worker --resources measure=2``). Without it, each worker thread is one.
RESOURCE = "measure"
#: A batch lost with its Dask worker is queued again this many times, then its
#: cells are recorded as errors.
LOST_BATCH_RETRIES = 1
#: A lost batch that had not started (it only waited on the worker that died) is
#: queued again without counting against LOST_BATCH_RETRIES, at most this often.
UNSTARTED_REQUEUES = 3
#: Seconds a batch waits for the scheduler to acknowledge its start event.
START_ACK_SECONDS = 10.0
#: Seconds to reach a scheduler (and for it to have a worker) before giving up.
CONNECT_TIMEOUT = 30.0
#: Dask settings for the LocalCluster we start. ``allowed-failures`` 0: a task whose
#: worker died fails at once (KilledWorker) instead of being re-run by Dask; we
#: decide. ``worker-saturation`` 1.0: a worker gets its next batch when it finishes
#: one (Dask's default 1.1 sends one ahead, which then waits behind a long batch
#: while another worker idles: seconds at the end of a run, against ~15 ms per
#: batch of waiting for the scheduler). The rest quiets the Dask processes' own
#: periodic work, which shares the cores with the measuring processes: the
#: worker's statistical profiler (a stack sample every 10 ms while a task runs),
#: the event-loop health tick (every 20 ms), the system and memory monitors.
#: Measured with two workers each running a task: ~13% of one core with Dask's
#: defaults, ~2% with these. (README: the cluster section, for your own cluster.)
SCHEDULER_CONFIG = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
}
#: Set by a Dask nanny for its worker (so for every process the worker starts), and
#: able to change a solver's speed or behaviour: glibc's malloc trimming
#: (``MALLOC_TRIM_THRESHOLD_``), BLAS threads, the str hash seed. Besides these, the
#: keys of the worker's ``distributed.nanny.pre-spawn-environ``. The measuring
#: process gets the client's values instead (unset where the client has none), so a
#: cell runs in the environment it would run in locally.
NANNY_ENV = (
    "MALLOC_TRIM_THRESHOLD_",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "PYTHONHASHSEED",
)


class DaskUnavailable(ImportError):
    """``distributed`` is not installed: one line saying how to get it."""


class DaskSetupError(ExecutorError):
    """The cluster cannot run the harness (unreachable, no workers, other code)."""


# ------------------------------------------------------------------ payloads


@dataclass(frozen=True, slots=True)
class Batch:
    """One Dask task: cells of one config, run in order on one measuring process."""

    id: int
    tasks: tuple[Task, ...]
    #: plugin target (absolute .py path on the client) -> its source text
    plugin_sources: dict[str, str]
    fingerprint: str
    slice_seconds: float
    #: measuring-process log; None: the Dask worker's local directory
    log_path: str | None = None
    #: external programs the cells run: (solver, file, sha256 on the client)
    programs: tuple[tuple[str, str, str], ...] = ()
    #: the client's values of the nanny-set variables (None: unset), see NANNY_ENV
    environ: dict[str, str | None] = field(default_factory=dict)
    #: Dask worker address -> the cores its measuring processes are pinned to
    #: (None: no pinning; a worker not named here runs unpinned)
    cores: dict[str, tuple[int, ...]] | None = None
    #: Dask event topic the batch's start is logged under ("": none)
    topic: str = ""


@dataclass(slots=True)
class CellResult:
    task_id: int
    attempts: list[Attempt]
    setups: list[Setup]
    h_start: int | None
    cpu: int | None = None  # the core its measuring process was pinned to
    #: (wall, CPU) seconds per phase in the measuring process (TaskResult.phases)
    phases: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(slots=True)
class BatchResult:
    batch_id: int
    cells: list[CellResult] = field(default_factory=list)
    remaining: tuple[int, ...] = ()  # task ids not started (slice over)
    worker: dict[str, Any] = field(default_factory=dict)
    refused: str = ""  # why the worker ran nothing (other harness code)


# ------------------------------------------------------------ both sides


_FINGERPRINT: str | None = None


def code_fingerprint() -> str:
    """sha256 over the harness's and built-in solvers' Python sources: a worker
    whose installed code differs would measure something else."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        root = Path(__file__).resolve().parents[2]  # harness/measure/ -> checkout
        digest = hashlib.sha256()
        for package in ("harness", "solvers"):
            for path in sorted((root / package).rglob("*.py")):
                digest.update(str(path.relative_to(root)).encode())
                digest.update(b"\0")
                digest.update(path.read_bytes())
        _FINGERPRINT = digest.hexdigest()
    return _FINGERPRINT


def host_info() -> dict[str, Any]:
    """This machine as meta.json ``hosts`` records it."""
    from harness.results import _cpu_model

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return {
        "cpu_model": _cpu_model(),
        "cpu_count": cores,
        "cores": available_cores(),
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }


# ---------------------------------------------------------------- worker side


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


def measuring_env(environ: dict[str, str | None]) -> dict[str, str]:
    """This process's environment with the nanny-set variables (NANNY_ENV and the
    worker's ``pre-spawn-environ`` keys) as ``environ`` (the client's) has them."""
    keys = set(NANNY_ENV) | set(environ)
    try:
        import dask

        keys |= set(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    except ImportError:
        pass
    env = dict(os.environ)
    for key in keys:
        value = environ.get(key)
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _take_pool(info: dict[str, Any], batch: Batch) -> tuple[LocalPool, tuple]:
    """An idle measuring pool for this batch's environment, pinned to a core of
    this worker's that no other running batch of this worker uses (several
    threads per worker: one core each), or a new one."""
    env = measuring_env(batch.environ)
    cores = (batch.cores or {}).get(info.get("address", ""), ())
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
            folder = info.get("local_directory") or tempfile.gettempdir()
            log = batch.log_path or os.path.join(folder, "npuzzle-harness-workers.log")
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
    """Write each shipped plugin to a content-addressed file here; target -> path."""
    out = {}
    base = Path(tempfile.gettempdir()) / "npuzzle-harness-plugins"
    for target, text in sources.items():
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        path = base / digest / os.path.basename(target)
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        out[target] = str(path)
    return out


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
                "install it at the same path on every worker (README: Running on a "
                "cluster)"
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
    folder = info.get("local_directory") or tempfile.gettempdir()
    return f"see {folder}/npuzzle-harness-workers.log on {info['host']}"


# ---------------------------------------------------------------- client side


def import_distributed():
    try:
        import distributed
    except ImportError as err:
        raise DaskUnavailable(
            "--executor dask needs Dask distributed: "
            "pip install 'npuzzle-harness[dask]'"
            + (f" ({err})" if "distributed" not in str(err) else "")
        ) from None
    return distributed


class DaskExecutor:
    """Runs the runner's tasks as batches on a Dask cluster (see the module doc).

    ``scheduler``: address of a running scheduler (``tcp://HOST:PORT``); None starts
    a LocalCluster of ``jobs`` single-threaded worker processes (default: one per
    core) and closes it on shutdown.
    """

    def __init__(
        self,
        scheduler: str | None = None,
        *,
        jobs: int | None = None,
        slice_seconds: float = DEFAULT_SLICE_SECONDS,
        max_batch: int = DEFAULT_MAX_BATCH,
        connect_timeout: float | None = None,
        plugins: Sequence[str] = (),
    ) -> None:
        distributed = import_distributed()
        import dask

        #: the nanny-set variables as this client has them, before a LocalCluster's
        #: nannies change them here too; measuring processes get these values
        self.environ = client_environ()
        #: pin each worker's measuring processes to cores (plan.pin, via set_pin)
        self.pin = True
        self.cores: dict[str, tuple[int, ...]] = {}
        self._priority: Any = None
        if connect_timeout is None:
            connect_timeout = CONNECT_TIMEOUT
        self.scheduler = scheduler
        self.slice_seconds = slice_seconds
        self.max_batch = max(1, max_batch)
        self._cluster = None
        self._client = None
        self._tasks: list[Task] = []
        self._by_id: dict[int, Task] = {}
        #: future key -> (future, batch, times its worker was lost)
        self._futures: dict[str, tuple[Any, Batch, int]] = {}
        self._priorities: dict[int, int] = {}  # batch id -> its Dask priority
        #: batch id -> times it was queued again without having started
        self._unstarted: dict[int, int] = {}
        #: Dask event topic each batch logs its start under, and the ids heard of
        self.topic = f"npuzzle-harness-started-{os.getpid()}-{id(self)}"
        self._started_ids: set[int] = set()
        self._subscribed = False
        self._next_batch = 0
        self.workers: dict[str, dict[str, Any]] = {}  # address -> worker info
        self.lost_batches: list[dict[str, Any]] = []
        self.log_path: str | None = None
        self.batches = 0
        self.programs = program_needs(plugins)
        self._program_warnings: list[str] = []
        try:
            if scheduler is None:
                n = host_info()["cpu_count"] if jobs is None else jobs
                # Its worker processes share the terminal's process group: started
                # with SIGINT ignored (inherited), a Ctrl-C reaches the harness
                # alone, which closes the cluster (no tracebacks from workers).
                try:
                    with dask.config.set(SCHEDULER_CONFIG), _sigint_ignored():
                        self._cluster = distributed.LocalCluster(
                            n_workers=n,
                            threads_per_worker=1,
                            processes=True,
                            dashboard_address=None,
                            # its HTTP server (metrics only) on a free loopback
                            # port: not 8787, which may be taken (a warning)
                            scheduler_kwargs={
                                "dashboard": False,
                                "dashboard_address": "127.0.0.1:0",
                            },
                            silence_logs=logging.ERROR,
                        )
                finally:  # its nannies set their variables in this process too
                    restore_environ(self.environ)
                self._client = distributed.Client(self._cluster)
            else:
                self._client = distributed.Client(
                    scheduler, timeout=f"{connect_timeout}s"
                )
                self._client.wait_for_workers(1, timeout=connect_timeout)
        except (OSError, TimeoutError) as err:
            self.shutdown(cancel=True)
            where = scheduler or "a LocalCluster"
            raise DaskSetupError(
                f"--scheduler {where}: cannot reach a scheduler with workers "
                f"({type(err).__name__}: {err})"
            ) from None
        except BaseException:
            self.shutdown(cancel=True)
            raise
        try:  # before any batch: the scheduler pushes each batch's start here
            self._client.subscribe_topic(self.topic, self._heard_start)
            self._subscribed = True
        except Exception:  # then only the scheduler's log of the topic is asked
            pass
        self._inspect_workers()

    # ---- what the cluster offers

    def _inspect_workers(self) -> None:
        """Worker slots, the resource to request, and a check that every worker
        imports the same harness code as this client."""
        info = self._client.scheduler_info(n_workers=-1)["workers"]
        if not info:
            raise DaskSetupError(f"scheduler {self.scheduler}: no workers")
        with_resource = [
            a for a, w in info.items() if RESOURCE in (w.get("resources") or {})
        ]
        self.resources = {RESOURCE: 1} if with_resource else None
        if with_resource:
            self.jobs = int(sum(info[a]["resources"][RESOURCE] for a in with_resource))
        else:
            self.jobs = int(sum(w.get("nthreads", 1) for w in info.values()))
        try:
            reports = self._client.run(worker_info)
        except Exception as err:
            self.shutdown(cancel=True)
            raise DaskSetupError(
                "the Dask workers cannot run the harness "
                f"({type(err).__name__}: {err}); install npuzzle-harness on every "
                "worker"
            ) from None
        mine = code_fingerprint()
        for address, report in reports.items():
            if report.get("fingerprint") != mine:
                self.shutdown(cancel=True)
                raise DaskSetupError(
                    f"Dask worker {address} on {report.get('host')} runs other harness "
                    "code than this client: install the same npuzzle-harness on every "
                    "worker"
                )
            self.workers[address] = report
        self.cores = core_plan(self.workers, bool(self.resources))
        if self.programs:
            self._check_programs()

    def _check_programs(self) -> None:
        """Every worker has the external programs (and the files their commands
        name) at the paths this client uses; a copy that differs is a warning."""
        found = self._client.run(check_programs, self.programs)
        for address, report in sorted(found.items()):
            w = self.workers.get(address, {})
            name, host = w.get("name", address), w.get("host")
            label = f"Dask worker {name} ({address}) on {host}"
            if report["missing"]:
                self.shutdown(cancel=True)
                more = len(report["missing"]) - 1
                raise DaskSetupError(
                    f"{label}: {report['missing'][0]}"
                    + (f" ({more} more missing)" if more else "")
                )
            for solver, path, sha in report["differs"]:
                client = next(
                    s for n, p, s in self.programs if (n, p) == (solver, path)
                )
                self._program_warnings.append(
                    f"external program {solver!r}: {path} on {label} differs from "
                    f"this client's (sha256 {sha[:12]} vs {client[:12]}): its rows "
                    "measure that host's build"
                )

    def set_run_dir(self, run_dir: Path) -> None:
        """A LocalCluster's workers share this machine: their measuring processes
        log to the run's workers.log, as a local run's do."""
        if self._cluster is not None:
            self.log_path = str(Path(run_dir) / "workers.log")

    def set_pin(self, pin: bool) -> None:
        """Pin measuring processes to cores (``plan.pin``), as the local pool does."""
        self.pin = pin

    def prioritize(self, priority) -> None:
        """Expected seconds of a task (the runner's cost model): blocks of cells are
        batched costliest first, as the local pool hands them out."""
        self._priority = priority

    def warnings(self) -> list[str]:
        """Cores shared by more measurements than a host has (honesty of times)."""
        out = []
        hosts: dict[str, list[dict[str, Any]]] = {}
        for w in self.workers.values():
            hosts.setdefault(w["host"], []).append(w)
        for host, ws in sorted(hosts.items()):
            slots = sum(
                (w.get("resources") or {}).get(RESOURCE, w.get("nthreads", 1))
                if self.resources
                else w.get("nthreads", 1)
                for w in ws
            )
            cores = ws[0].get("cpu_count") or 1
            if slots > cores:
                out.append(
                    f"host {host} runs {slots:g} measurements at once on {cores} "
                    "cores: timed cells share cores; start its workers with "
                    f"--nthreads 1 and at most {cores} of them "
                    f"(or --resources {RESOURCE}={cores})"
                )
        out += self._program_warnings
        models = {w["cpu_model"] for w in self.workers.values()}
        if len(models) > 1:
            out.append(
                "Dask workers on hosts with different CPU models ("
                + "; ".join(sorted(models))
                + "): compare times only within one host (meta.json placement)"
            )
        return out

    def describe(self) -> dict[str, Any]:
        """meta.json ``executor`` entry."""
        import distributed

        return {
            "kind": "dask",
            "scheduler": self.scheduler or "LocalCluster (started by the harness)",
            "distributed_version": distributed.__version__,
            "slots": self.jobs,
            "resource": RESOURCE if self.resources else None,
            "slice_seconds": self.slice_seconds,
            "max_batch": self.max_batch,
            "batches_per_slot": BATCHES_PER_SLOT,
            "batching": "whole instance blocks (interleaved order), else cells of "
            "one config",
            "pinning": (
                {a: list(c) for a, c in self.cores.items()} if self.pin else None
            ),
            "measuring_env": dict(self.environ),
        }

    # ---- Executor interface

    def submit(self, task: Task) -> None:
        self._tasks.append(task)
        self._by_id[task.id] = task

    def events(self) -> Iterator[Event]:
        import distributed

        sources = _plugin_sources(self._tasks)
        batch_size = batch_cells(len(self._tasks), self.jobs, self.max_batch)
        pending = self._tasks
        self._tasks = []
        completed = distributed.as_completed()
        for chunk in self._batches(pending, batch_size):
            completed.add(self._submit(chunk, sources))
        for future in completed:
            _, batch, losses = self._futures.pop(future.key)
            priority = self._priorities.pop(batch.id, 0)
            try:
                result: BatchResult = future.result()
            except Exception as err:  # the Dask worker died under the batch
                future.release()
                yield from self._lost(batch, losses, err, completed, sources, priority)
                continue
            future.release()
            if result.refused:
                raise DaskSetupError(result.refused)
            if result.worker["address"] not in self.workers:  # joined later
                self.workers[result.worker["address"]] = result.worker
                self.cores = core_plan(self.workers, bool(self.resources))
            for cell in result.cells:
                task = self._by_id.pop(cell.task_id)
                yield TaskStarted(task, 0)
                yield TaskResult(
                    task,
                    fill_not_run(task, cell.attempts),
                    cell.setups,
                    cell.h_start,
                    worker=0,
                    worker_id=result.worker["address"],
                    host=result.worker["host"],
                    cpu=cell.cpu,
                    phases=cell.phases,
                )
            if result.remaining:
                rest = [self._by_id[i] for i in result.remaining]
                # near the end, spread what is left over the idle slots
                idle = self.jobs - len(self._futures)
                size = batch_size
                if idle > 1:
                    size = min(size, math.ceil(len(rest) / idle))
                for chunk in self._batches(rest, size):
                    completed.add(self._submit(chunk, sources, priority=priority))

    def _batches(self, tasks: Sequence[Task], size: int) -> list[list[Task]]:
        return plan_batches(tasks, size, self.jobs, self._priority)

    def _submit(
        self,
        tasks: Sequence[Task],
        sources: dict[str, str],
        losses: int = 0,
        priority: int | None = None,
    ):
        batch = Batch(
            self._next_batch,
            tuple(tasks),
            {
                t: sources[t]
                for t in {p for task in tasks for p in task.plugins}
                if t in sources
            },
            code_fingerprint(),
            self.slice_seconds,
            self.log_path,
            self._programs_for(tasks),
            self.environ,
            self.cores if self.pin else None,
            self.topic,
        )
        self._next_batch += 1
        self.batches += 1
        future = self._client.submit(
            run_batch,
            batch,
            key=f"npuzzle-batch-{os.getpid()}-{id(self)}-{batch.id}",
            pure=False,
            retries=0,
            resources=self.resources,
            priority=-batch.id if priority is None else priority,
        )
        self._futures[future.key] = (future, batch, losses)
        self._priorities[batch.id] = -batch.id if priority is None else priority
        return future

    def _known_workers(self) -> dict[str, dict[str, Any]]:
        """Workers seen so far, and the scheduler's word on those that joined
        since (a nanny's replacement for a worker that died)."""
        known = dict(self.workers)
        try:
            now = self._client.scheduler_info(n_workers=-1)["workers"]
        except Exception:
            return known
        for address, w in now.items():
            known.setdefault(address, {"host": w.get("host"), "name": w.get("name")})
        return known

    def _programs_for(self, tasks: Sequence[Task]) -> tuple[tuple[str, str, str], ...]:
        names = {t.config.solver for t in tasks}
        return tuple(n for n in self.programs if n[0] in names)

    def _heard_start(self, event: tuple[float, Any]) -> None:
        """A batch's start event, pushed by the scheduler (client's event loop)."""
        self._started_ids.add(event[1])

    def _started(self, batch: Batch) -> bool | None:
        """Whether the batch started on its worker (its logged event); None: unknown.
        A batch's cells run only once the scheduler has its start event, which it
        pushes to this client at once: before it can report the task lost (both
        travel the client's stream, in order). The scheduler's own log of the topic
        (its last ``distributed.admin.low-level-log-length`` events, 1000) covers a
        push missed across a reconnect."""
        if batch.id in self._started_ids:
            return True
        try:
            events = self._client.get_events(self.topic)
        except Exception:
            return False if self._subscribed else None
        self._started_ids.update(msg for _, msg in events)
        return batch.id in self._started_ids

    def _lost(
        self, batch: Batch, losses: int, err: BaseException, completed, sources,
        priority: int = 0,
    ):  # fmt: skip
        reason = f"{type(err).__name__}: {err}".strip()
        started = self._started(batch)
        free = self._unstarted.pop(batch.id, 0)
        waited = started is False and free < UNSTARTED_REQUEUES
        counted = losses if waited else losses + 1
        retried = waited or losses < LOST_BATCH_RETRIES
        attempt = losses + free + 1  # this batch's cells were lost this often
        entry = lost_entry(batch, err, self._known_workers(), attempt, retried, reason)
        entry["started"] = started
        if waited:
            entry["outcome"] = (
                "queued again (it had not started: it only waited on the worker)"
            )
        self.lost_batches.append(entry)
        if retried:
            completed.add(self._submit(batch.tasks, sources, counted, priority))
            self._unstarted[self._next_batch - 1] = free + waited
            return
        for task in batch.tasks:
            self._by_id.pop(task.id, None)
            p = task.passes[0]
            message = (
                f"the Dask task running this cell failed {attempt} times "
                f"(its Dask worker died or was lost): {reason[:200]}"
            )
            yield TaskStarted(task, 0)
            yield TaskResult(
                task,
                fill_not_run(
                    task, [Attempt(p.measure, p.repeat, "error", message=message)]
                ),
                [],
                None,
            )

    def shutdown(self, *, cancel: bool = False) -> None:
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None:
            try:
                if self._subscribed:
                    client.unsubscribe_topic(self.topic)
            except Exception:
                pass
            try:
                if self._futures:
                    futures = [f for f, _, _ in self._futures.values()]
                    client.cancel(futures, force=True)
            except Exception:
                pass
            self._futures.clear()
            try:
                client.close(timeout=10)
            except Exception:
                pass
        if cluster is not None:
            try:
                cluster.close(timeout=10)
            except Exception:
                pass
            restore_environ(self.environ)  # a nanny restarting a worker set them
        self._tasks = []


def lost_entry(
    batch: Batch,
    err: BaseException,
    workers: dict[str, dict[str, Any]],
    attempt: int,
    retried: bool,
    reason: str,
) -> dict[str, Any]:
    """meta.json ``lost_batches`` entry: which worker died under which cells, what
    Dask said, and whether the cells were queued again or recorded as errors."""
    last = getattr(err, "last_worker", None)  # KilledWorker names the last one
    address = getattr(last, "address", None) or (last if isinstance(last, str) else "")
    info = workers.get(address, {}) if address else {}
    return {
        "batch": batch.id,
        "worker": address or "unknown (Dask did not say)",
        "worker_name": info.get("name"),
        "host": info.get("host"),
        "cells": [[t.config.label, t.dataset, t.instance] for t in batch.tasks],
        "attempt": attempt,
        "error": reason[:300],
        "retried": retried,
        "outcome": "queued again" if retried else "cells recorded as error",
    }


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def batch_cells(cells: int, slots: int, max_batch: int = DEFAULT_MAX_BATCH) -> int:
    """Cells per batch: at least BATCHES_PER_SLOT batches per slot, at most
    ``max_batch`` cells each."""
    if cells <= 0:
        return 1
    return max(1, min(max_batch, math.ceil(cells / (max(1, slots) * BATCHES_PER_SLOT))))


def plan_batches(
    tasks: Sequence[Task],
    size: int,
    slots: int,
    priority: Callable[[Task], float] | None = None,
) -> list[list[Task]]:
    """The Dask tasks for these cells. Cells with a block (the runner's interleaved
    order: one instance, every config) go in whole blocks, as one local worker
    runs a block: one block per batch, costliest first by ``priority`` (tiny
    blocks packed: at most BLOCK_BATCHES_PER_SLOT batches per slot). Small
    batches keep the tail short; each costs one scheduler round trip (~15 ms)
    while its worker waits. Other cells: up to ``size`` consecutive cells of one
    set-up."""
    pack = math.ceil(len(tasks) / (max(1, slots) * BLOCK_BATCHES_PER_SLOT))
    blocks: dict[int, list[Task]] = {}
    loose: deque[Task] = deque()
    for task in tasks:
        if task.block is None:
            loose.append(task)
        else:
            blocks.setdefault(task.block, []).append(task)
    ordered = list(blocks.values())
    if priority is not None:
        ordered.sort(key=lambda b: -sum(priority(t) for t in b))
    out: list[list[Task]] = []
    batch: list[Task] = []
    for block in ordered:
        batch += block
        if len(batch) >= pack:
            out.append(batch)
            batch = []
    if batch:
        out.append(batch)
    out += _chunks(loose, size)
    return out


def _chunks(tasks: deque[Task], size: int) -> Iterator[list[Task]]:
    """Batches of ``size`` consecutive tasks of one set-up (config, size, goal)."""
    chunk: list[Task] = []
    while tasks:
        task = tasks.popleft()
        if chunk and (len(chunk) >= size or task.setup_key != chunk[0].setup_key):
            yield chunk
            chunk = []
        chunk.append(task)
    if chunk:
        yield chunk


def _plugin_sources(tasks: Sequence[Task]) -> dict[str, str]:
    """Source text of every file plugin the tasks name (shipped by value): a .py
    file as it is, a .toml file as the [[external]] tables this client registered
    from it (program paths absolute, so the copy's folder does not matter)."""
    from harness.measure.external import programs_of, toml_text

    out = {}
    for target in {p for t in tasks for p in t.plugins}:
        path = Path(target)
        if target.endswith(".py") and path.is_file():
            out[target] = path.read_text(encoding="utf-8")
        elif target.endswith(".toml"):
            out[target] = toml_text(programs_of(target))
    return out


def client_environ() -> dict[str, str | None]:
    """This process's values of the variables a Dask nanny sets (see NANNY_ENV)."""
    keys = set(NANNY_ENV)
    try:
        import dask

        keys |= set(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    except ImportError:
        pass
    return {key: os.environ.get(key) for key in sorted(keys)}


def restore_environ(environ: dict[str, str | None]) -> None:
    """Put these variables back as they were (a LocalCluster's nannies run in this
    process and set them here too, where later local runs would inherit them)."""
    for key, value in environ.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def core_plan(
    workers: dict[str, dict[str, Any]], by_resource: bool = False
) -> dict[str, tuple[int, ...]]:
    """Cores for each Dask worker's measuring processes, one per slot: host by host,
    worker by worker (in name order), consecutive cores of the worker's own
    affinity, round robin; so two measurements on one host share a core only when
    the host has fewer cores than slots (which the run warns about)."""

    def order(item: tuple[str, dict[str, Any]]) -> tuple:
        address, w = item
        name = str(w.get("name", ""))
        return (str(w.get("host", "")), not name.isdigit(), int(name) if name.isdigit()
                else 0, name, address)  # fmt: skip

    out: dict[str, tuple[int, ...]] = {}
    taken: dict[tuple[str, tuple[int, ...]], int] = {}
    for address, w in sorted(workers.items(), key=order):
        cores = tuple(w.get("cores") or ())
        if not cores:
            continue
        slots = (w.get("resources") or {}).get(RESOURCE, 0) if by_resource else 0
        slots = int(slots or w.get("nthreads") or 1)
        first = taken.get((w.get("host", ""), cores), 0)
        out[address] = tuple(cores[(first + j) % len(cores)] for j in range(slots))
        taken[(w.get("host", ""), cores)] = first + slots
    return out
