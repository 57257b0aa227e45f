"""meta.json of a run: what it is (configs, datasets, timer, host, options) at the
start, which executor each session used and what it lost, where each cell ran
(placement), the set-ups, and where the wall time went (:class:`PhaseClock`), plus
the warnings printed before and after the work."""

from __future__ import annotations

import time
from typing import Any

from harness import results as res
from harness.core.machine import core_count
from harness.measure.executors import Executor
from harness.measure.plan import Cell, Plan
from harness.measure.sampling import WARM_SOLVE_BELOW
from harness.measure.stopping import LONG_REPEATS, LONG_SAMPLE_SECONDS
from harness.measure.tasks import (
    REFERENCE_BOARD,
    REFERENCE_CONFIG,
    TRACEMALLOC_BELOW_BYTES,
    TRACEMALLOC_BELOW_SECONDS,
    Setup,
    TaskResult,
)
from harness.puzzle import format_board, goal_name
from harness.results import RunMeta


def risks(jobs: int) -> list[str]:
    """Warnings worth reading before the work starts."""
    if jobs == 0:
        return [
            "--jobs 0 solves inside the harness process: no isolation, so a crash or "
            "a solver ignoring the time limit ends the whole run"
        ]
    return []


def advice(jobs: int, cores: int | None = None) -> list[str]:
    """Notes about how to read the figures, worth reading after the work. None
    while every worker has a core of its own: the reference solve timed beside
    each repeat on the same core is what comparisons divide by, so they hold with
    one worker per core (the A/A test in docs/benchmarks.md)."""
    if cores is None:
        cores = core_count()
    if jobs > cores:
        return [
            f"{jobs} workers shared {cores} cores, so solves waited for each other "
            f"and times are higher and noisier; --jobs {cores} or fewer gives each "
            "worker a core of its own"
        ]
    return []


def new_meta(
    plan: Plan, run_id: str, jobs: int, git: dict[str, Any], argv: list[str]
) -> RunMeta:
    """meta.json at the start of a run (``finished_utc`` None, ``complete`` False)."""
    datasets = {
        d.name: {
            "sha256": d.checksum,
            "path": str(d.path) if d.path else None,
            "size": d.grid.label,
            "goal": goal_name(d.goal, d.grid),
            "instances": len(d.instances),
            "optimal_from_oracle": sum(1 for k in plan.oracle_optima if k[0] == d.name),
        }
        for d in plan.datasets
    }
    solvers = {
        c.label: {
            "solver": c.spec.name,
            "heuristic": c.heuristic_column,
            "source_sha256": c.spec.source_sha256(),
            "optimal": c.spec.optimal,
            "search": c.spec.search,
            "guarantee": c.spec.guarantee,
            "bound": None if c.bound is None else float(c.bound),
            **({"params": c.key.stored()[2]} if c.params else {}),
            "module": c.spec.module,
            "budget_seconds": c.spec.budget_seconds,
            **(
                {"external": list(c.spec.external.command),
                 "batch": c.spec.external.batch}
                if c.spec.external is not None else {}
            ),  # fmt: skip
        }
        for c in plan.configs
    }
    warnings = [*risks(jobs), *advice(jobs)]
    return RunMeta(
        run_id=run_id,
        started_utc=res.utc_now(),
        git=git,
        environment=res.environment_meta(),
        argv=argv,
        options=plan.options(jobs),
        datasets=datasets,
        solvers=solvers,
        warnings=warnings,
        timer={
            **res.timer_meta(),
            "timed_region": (
                "one sample per repeat: loops back-to-back solves of the board "
                f"(loops found in the warm-up so that a sample takes at least "
                f"{plan.min_sample_seconds:g} s of CPU; 1 for slower solves), "
                "seconds and cpu_seconds are the sample over loops; before it, in "
                "this order: gc.collect(), the memory limit, "
                + ("gc.disable(), " if not plan.gc else "")
                + "the alarm, then a warm solve of the board (solves under "
                f"{WARM_SOLVE_BELOW * 1e3:g} ms; before a sample of several loops, "
                "as many solves in all) and nothing else; worker objects "
                "from imports and set-up frozen (gc.freeze()); first_seconds: the "
                "cell's first solve, timed alone (cold caches)"
                if plan.min_sample_seconds > 0
                else "one solve per repeat, after gc.collect(), the memory limit"
                + (", gc.disable()" if not plan.gc else "")
                + " and a warm solve of the board (solves under "
                f"{WARM_SOLVE_BELOW * 1e3:g} ms)"
            ),
            "memory_pass": (
                "untimed: peak_rss_delta_bytes = what the solve added to the "
                "worker's resident set (VmHWM, reset via /proc/self/clear_refs just "
                "before the solve, minus VmRSS just before it; excludes the "
                "interpreter, imports and tables loaded in set-up); peak_rss_bytes "
                "= that absolute peak; peak_bytes = tracemalloc peak of a second "
                "solve (Python allocations only), run only when the delta is under "
                f"{TRACEMALLOC_BELOW_BYTES // 2**20} MiB and the plain solve took "
                f"under {TRACEMALLOC_BELOW_SECONDS * 1000:g} ms of CPU (traced, it "
                "runs 5-20x slower)"
            ),
            "warmup": f"{plan.warmup} untimed solve(s) per cell before the timed "
            "repeats; the first is the cell's first solve (first_seconds) and "
            "finds its loops (without a warm-up, the first repeat does)",
            "repeats": (
                f"adaptive: up to {plan.repeats} per cell; a cell stops once the "
                "repeats left could not move the median of its wall, CPU and "
                f"normalised times by more than {plan.adaptive:.0%} (stable), or "
                f"after {LONG_REPEATS} samples of {LONG_SAMPLE_SECONDS:g} s of CPU "
                "or more each (long) (rows: repeats_taken, stop_reason)"
                if plan.adaptive > 0
                else f"{plan.repeats} per cell"
            ),
            "reference": (
                f"{REFERENCE_CONFIG} on {format_board(REFERENCE_BOARD)} timed in "
                "the same worker right after every timed repeat's sample, as a "
                "calibrated sample of its own (per solve): ref_seconds, "
                "ref_cpu_seconds; compare divides by it"
                if plan.reference
                else "none"
            ),
            "order": (
                f"interleaved: instance by instance, configs rotated per instance "
                f"from a shuffle seeded {plan.order_seed}, one worker per instance"
                if plan.interleave
                else "config by config"
            ),
            "pinning": "worker i pinned to core i (os.sched_setaffinity)"
            if plan.pin
            else "none",
            "memory_limit": "RLIMIT_AS = worker size at the call + memory_limit_mb",
        },
    )


def setup_entry(s: Setup) -> dict[str, Any]:
    from harness.puzzle import parse_size

    return {
        "config": s.config,
        "size": s.size,
        "goal": goal_name(s.goal, parse_size(s.size)),
        "seconds": s.seconds,
        "note": s.note if s.ok else s.error,
        "worker": s.worker,
        "ok": s.ok,
        "import_seconds": s.import_seconds,
        "heuristic_seconds": s.heuristic_seconds,
        "prepare_seconds": s.prepare_seconds,
        "rss_baseline_bytes": s.rss_baseline_bytes,
    }


def _host_entry(meta: RunMeta) -> dict[str, Any]:
    env = meta.environment
    return {k: env.get(k) for k in ("cpu_model", "cpu_count", "platform", "python")}


def note_executor(meta: RunMeta, executor: Executor) -> None:
    """meta.json: which executor this session used, and its warnings."""
    entry = executor.describe()
    meta.executors.append({"at_utc": res.utc_now(), **entry})
    for line in executor.warnings():
        if line not in meta.warnings:
            meta.warnings.append(line)


def note_lost_batches(meta: RunMeta, executor: Executor, seen: int) -> int:
    """meta.json ``lost_batches``: the Dask batches whose worker died under them
    since the last call (``seen`` of the executor's list already noted)."""
    lost = executor.lost_batches
    if len(lost) > seen:
        session = len(meta.executors or [1]) - 1
        meta.lost_batches.extend(
            {"session": session, **entry} for entry in lost[seen:]
        )
    return max(len(lost), seen)


def place_cell(meta: RunMeta, executor: Executor, cell: Cell, event: TaskResult):
    """meta.json placement: which worker (and so which host) measured the cell."""
    import socket

    if not event.worker_id and event.worker < 0:
        return  # measured nowhere (a Dask batch lost with its workers)
    if event.worker_id:
        worker_key, host = event.worker_id, event.host
        info = dict(executor.workers.get(worker_key, {}))
    else:
        worker_key, host = f"local-{event.worker}", socket.gethostname()
        info = {}
    hosts = meta.hosts
    if host not in hosts:
        hosts[host] = (
            {k: info.get(k) for k in ("cpu_model", "cpu_count", "platform", "python")}
            if event.worker_id
            else _host_entry(meta)
        )
    workers = meta.workers
    if worker_key not in workers:
        keep = ("name", "address", "pid", "nthreads", "resources")
        workers[worker_key] = {"host": host} | {k: info[k] for k in keep if k in info}
    meta.placement.setdefault(worker_key, []).append(
        [cell.config.label, cell.dataset.name, cell.instance.id]
    )


class PhaseClock:
    """Where a session's wall time went (meta.json ``phases``, seconds; the
    workers' phases also in CPU seconds, which a loaded machine inflates less): the
    workers' own phases (set-up, warm-up, timed solves, reference solves, memory
    and tracemalloc solves), the rest of their busy time (hand-off, messages,
    worker start-up), the time worker slots sat idle (``idle_slot_seconds``;
    ``tail_seconds``: from the last hand-off to the end, when workers run out
    of cells one by one) and the parent's handling of results (judging, rows,
    meta.json, progress). An executor that reports a cell only when its batch
    returns (Dask) starts and ends it in one instant here: its busy time is then
    the workers' phases, and the rest of the slots' time (Dask's own hand-offs
    included) counts as idle."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.t0 = self.last_start = time.monotonic()
        self.busy = self.parent = 0.0
        self.phases: dict[str, float] = {}  # wall seconds
        self.cpu: dict[str, float] = {}  # CPU seconds (load inflates wall, less this)
        self._mark = self.t0

    def started(self) -> float:
        self.last_start = time.monotonic()
        return self.last_start

    def finished(
        self, began: float | None, phases: dict[str, tuple[float, float]]
    ) -> None:
        self._mark = now = time.monotonic()
        if began is not None:
            self.busy += max(now - began, sum(wall for wall, _ in phases.values()))
        for name, (wall, cpu) in phases.items():
            self.phases[name] = self.phases.get(name, 0.0) + wall
            self.cpu[name] = self.cpu.get(name, 0.0) + cpu

    def handled(self) -> None:
        self.parent += time.monotonic() - self._mark

    def summary(self) -> dict[str, Any]:
        wall = time.monotonic() - self.t0
        measured = sum(self.phases.values())
        out: dict[str, Any] = {
            "wall_seconds": wall,
            "workers": self.workers,
            **{f"worker_{k}_seconds": v for k, v in sorted(self.phases.items())},
            **{f"worker_{k}_cpu_seconds": v for k, v in sorted(self.cpu.items())},
            "worker_other_seconds": max(self.busy - measured, 0.0)
            if self.phases
            else None,
            "worker_busy_seconds": self.busy,
            "idle_slot_seconds": max(self.workers * wall - self.busy, 0.0),
            "tail_seconds": wall - (self.last_start - self.t0),
            "parent_handling_seconds": self.parent,
        }
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}
