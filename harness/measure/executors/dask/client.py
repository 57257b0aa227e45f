"""The client's side: :class:`DaskExecutor` sends the runner's tasks as batches
to a Dask cluster (or a LocalCluster it starts), hears which batch started where,
queues lost batches again and hands the runner its events."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from harness.measure.executors.base import ExecutorError, fill_not_run
from harness.measure.executors.dask import address as where
from harness.measure.executors.dask.address import (
    AddressError,
    parse_address,
    plain_warning,
    probe,
)
from harness.measure.executors.dask.batching import (
    BATCHES_PER_SLOT,
    DEFAULT_MAX_BATCH,
    DEFAULT_SLICE_SECONDS,
    batch_cells,
    plan_batches,
)
from harness.measure.executors.dask.cluster import (
    DaskSetupError,
    DaskUnavailable,
    import_distributed,
    quiet_client_logs,
    restore_logs,
    start_local_cluster,
)
from harness.measure.executors.dask.environment import (
    RESOURCE,
    by_name_too,
    client_environ,
    core_plan,
    restore_environ,
)
from harness.measure.executors.dask.losses import BatchLosses
from harness.measure.executors.dask.payloads import (
    Batch,
    BatchResult,
    code_fingerprint,
    host_info,
)
from harness.measure.executors.dask.worker_side import (
    check_programs,
    program_needs,
    run_batch,
    worker_info,
)
from harness.measure.tasks import Event, Task, TaskResult, TaskStarted

#: Seconds to reach a scheduler (and for it to have a worker) before giving up.
CONNECT_TIMEOUT = 30.0
#: Seconds between two looks at the cluster while no batch finishes, and how long
#: the run waits with no worker connected before it stops (resumable).
WATCH_SECONDS = 2.0
NO_WORKERS_SECONDS = 60.0


class _Submitted:
    """Where the loop adds a batch it submitted (``_submit`` has already put it
    in ``_futures``, which ``_finished`` waits on)."""

    def add(self, future: Any) -> None:
        pass


class DaskExecutor(BatchLosses):
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
        security: Any = None,
    ) -> None:
        distributed = import_distributed()

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
        self.unpinned: dict[str, int] = {}  # worker -> cells measured unpinned
        self.log_path: str | None = None
        self.batches = 0
        self.programs = program_needs(plugins)
        self._plain: str | None = None  # plain tcp to another machine
        self._program_warnings: list[str] = []
        self._logs: dict[str, int] = {}  # Dask's log levels before ours
        try:
            if scheduler is None:
                n = host_info()["cpu_count"] if jobs is None else jobs
                self._cluster = start_local_cluster(n, self.environ)
                self._client = distributed.Client(self._cluster)
            else:
                where = parse_address(scheduler)
                self._plain = plain_warning(where)
                # nothing listening, or no scheduler: said now, in bounded time
                probe(where, answer_timeout=connect_timeout)
                self._logs = quiet_client_logs()
                self._client = distributed.Client(
                    str(where), timeout=f"{connect_timeout}s", security=security
                )
                self._client.wait_for_workers(1, timeout=connect_timeout)
        except AddressError as err:
            self.shutdown(cancel=True)
            raise DaskSetupError(str(err)) from None
        except (OSError, TimeoutError) as err:
            self.shutdown(cancel=True)
            where = scheduler or "a LocalCluster"
            raise DaskSetupError(
                f"--scheduler {where}: cannot reach a scheduler with workers "
                f"({type(err).__name__}: {err})".replace(": )", ")")
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

    def prioritize(self, priority, key=None, token=None) -> None:
        """Expected seconds of a task (the runner's cost model): blocks of cells are
        batched costliest first, as the local pool hands them out (once, so
        ``key`` and ``token``, which spare the local pool's hand-offs, are not
        needed)."""
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
        out += [self._plain] if self._plain else []
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
        sources = _plugin_sources(self._tasks)
        batch_size = batch_cells(len(self._tasks), self.jobs, self.max_batch)
        pending = self._tasks
        self._tasks = []
        completed = _Submitted()
        for chunk in self._batches(pending, batch_size):
            completed.add(self._submit(chunk, sources))
        for future in self._finished():
            _, batch, losses = self._futures.pop(future.key)
            priority = self._priorities.pop(batch.id, 0)
            try:
                result: BatchResult = future.result()
            except Exception as err:  # the Dask worker died under the batch
                future.release()
                if self._client.status != "running":  # or the scheduler did
                    raise self._scheduler_lost(err) from None
                yield from self._lost(batch, losses, err, completed, sources, priority)
                continue
            future.release()
            if result.refused:
                raise DaskSetupError(result.refused)
            if result.worker["address"] not in self.workers:  # joined later
                self.workers[result.worker["address"]] = result.worker
                self.cores = core_plan(self.workers, bool(self.resources))
            for cell in result.cells:
                if self.pin and self.cores and cell.cpu is None:
                    where = result.worker["address"]
                    self.unpinned[where] = self.unpinned.get(where, 0) + 1
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

    def _finished(self) -> Iterator[Any]:
        """The submitted batches' futures as they finish. ExecutorError when the
        scheduler is lost, or when no worker has been connected for
        NO_WORKERS_SECONDS (every worker died: the run waited silently forever)."""
        import distributed

        alone_since: float | None = None
        while self._futures:
            futures = [f for f, _, _ in self._futures.values()]
            try:
                done = distributed.wait(
                    futures, timeout=WATCH_SECONDS, return_when="FIRST_COMPLETED"
                ).done
            except TimeoutError:
                done = set()
            except Exception as err:  # futures cancelled: the scheduler went away
                raise self._scheduler_lost(err) from None
            if done:
                alone_since = None
                yield from done
                continue
            if self._client.status != "running":
                raise self._scheduler_lost(None)
            try:
                workers = self._client.scheduler_info(n_workers=-1)["workers"]
            except Exception as err:
                raise self._scheduler_lost(err) from None
            if workers:
                alone_since = None
                continue
            now = time.monotonic()
            alone_since = alone_since or now
            if now - alone_since >= NO_WORKERS_SECONDS:
                where = self.scheduler or "the LocalCluster"
                raise ExecutorError(
                    f"no Dask worker connected to {where} for {NO_WORKERS_SECONDS:g} "
                    f"s (every worker died or left; {len(self._by_id)} cells not "
                    "measured): start workers, then resume"
                )

    def _scheduler_lost(self, err: BaseException | None) -> ExecutorError:
        where = self.scheduler or "the LocalCluster's scheduler"
        why = f" ({type(err).__name__})" if err is not None else ""
        return ExecutorError(f"lost the Dask scheduler {where}{why}")

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
            self._batch_cores() if self.pin else None,
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

    def _batch_cores(self) -> dict[Any, tuple[int, ...]]:
        return by_name_too(self.cores, self.workers)

    def notes(self) -> list[str]:
        """meta.json warnings learnt during the run: cells a worker measured
        unpinned although the run pins (a worker that joined late, unnamed)."""
        return [
            f"{n} cells measured unpinned on Dask worker {address} (it joined after "
            "the cores were planned): their times may be noisier"
            for address, n in sorted(self.unpinned.items())
        ]

    def _programs_for(self, tasks: Sequence[Task]) -> tuple[tuple[str, str, str], ...]:
        names = {t.config.solver for t in tasks}
        return tuple(n for n in self.programs if n[0] in names)

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
        restore_logs(self._logs)
        self._logs = {}
        self._tasks = []


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


def start_dask_executor(
    scheduler: str | None = None,
    jobs: int | None = None,
    plugins: Sequence[str] = (),
    *,
    tls: tuple[str | None, str | None, str | None] | None = None,
    security: Any = None,
) -> DaskExecutor:
    """A :class:`DaskExecutor` on the cluster at ``scheduler``, or on a
    LocalCluster of ``jobs`` workers (default: one per core).
    ``tls``: the client's (CA, certificate, key) files for a ``tls://`` scheduler;
    ``security``: a ``distributed.Security`` instead (default: Dask's config).
    Imports Dask only now; ExecutorError (one line) if it is missing or unreachable, or
    a worker lacks an external program of ``plugins``."""
    files = where.TLSFiles(*(str(p) if p is not None else None for p in tls or ()))
    if scheduler is None and (files or security is not None):
        raise ExecutorError("--tls-ca/--tls-cert/--tls-key need --scheduler tls://HOST:PORT")
    if scheduler is not None:
        try:
            security = where.security_for(
                where.parse_address(scheduler), files, security
            )
        except (where.AddressError, ImportError) as err:
            raise ExecutorError(str(err)) from None
    if jobs is not None and jobs < 1:
        raise ExecutorError(f"--jobs {jobs}: the dask executor needs at least 1 worker")
    if jobs is not None and scheduler is not None:
        raise ExecutorError(
            "--jobs applies to the LocalCluster the harness starts; with --scheduler "
            "the cluster's workers decide (start them with --nthreads 1)"
        )
    try:
        return DaskExecutor(scheduler, jobs=jobs, plugins=plugins, security=security)
    except (DaskUnavailable, DaskSetupError) as err:
        raise ExecutorError(str(err)) from None
