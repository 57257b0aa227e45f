"""The runner: every selected solver config on every instance, measured honestly.

All measurement lives here and in the worker (:mod:`harness.measure.worker`): the timed
region is the solve call alone (``perf_counter_ns`` wall, ``process_time_ns`` CPU),
with ``gc.collect()`` before and the collector off during it; set-up (imports,
heuristic tables, ``prepare``) is timed separately into meta.json. Memory is a
separate untimed pass. Every answer is replayed and checked against the dataset's
optimum (or the exact 3x3 oracle), and counters must agree across all passes.

Rows are appended to ``rows.csv`` as each cell (config x instance) finishes, so an
interrupted or killed run resumes without redoing or duplicating a row.

This module runs a plan; the plan and its cells are in :mod:`harness.measure.plan`,
reopening a stored run in :mod:`harness.measure.resume`, a finished cell's rows in
:mod:`harness.measure.rows`, meta.json in :mod:`harness.measure.meta`, the order and
the ETA in :mod:`harness.measure.schedule`.
"""

from __future__ import annotations

import math
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from harness import results as res
from harness.core.machine import core_count
from harness.core.options import IN_TASK
from harness.measure.eta import Backlog, Pace
from harness.measure.executors import Executor, ExecutorError
from harness.measure.executors.registry import (
    DEFAULT_EXECUTOR,
    Launch,
    executor_kind,
)
from harness.measure.instructions.phase import count_for_run
from harness.measure.meta import (
    PhaseClock,
    new_meta,
    note_executor,
    note_lost_batches,
    place_cell,
    setup_entry,
)
from harness.measure.plan import (
    DEFAULT_OUT,
    Cell,
    Plan,
    RunError,
    plan_cells,
    slow_setups,
)
from harness.measure.rows import (
    FAILURES,
    build_rows,
    skipped_rows,
)
from harness.measure.schedule import CostModel, Priorities, Workload
from harness.measure.tasks import Task, TaskResult, TaskStarted
from harness.results import RunMeta
from harness.results.lock import lock_run

#: Seconds between two ETA computations: playing the rest of a 900-cell run out on
#: the model after a refit takes 1.5-2.5 ms of the parent's CPU, which the pinned
#: workers share; a bar needs no more than four a second.
ETA_EVERY = 0.25
#: Seconds between two writes of meta.json while cells finish, at least.
META_EVERY = 1.0


class RunInterrupted(Exception):
    """Ctrl-C (or SIGTERM) stopped the run; finished rows are stored."""

    def __init__(self, run_dir: Path, done: int, total: int) -> None:
        super().__init__(f"interrupted after {done} of {total} cells")
        self.run_dir = run_dir
        self.done = done
        self.total = total


class RunStopped(Exception):
    """A failure stopped the run (a full disk, a lost cluster, a bug): finished
    rows are stored and the run can be resumed; ``reason`` is one line naming
    the file or the cause."""

    def __init__(self, run_dir: Path, done: int, total: int, reason: str) -> None:
        super().__init__(
            f"{reason}; {done} of {total} cells stored in {run_dir} (resume it)"
        )
        self.run_dir = run_dir
        self.done = done
        self.total = total
        self.reason = reason


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Progress(Protocol):
    """What the runner tells whoever shows the run going (``harness run``'s bar,
    a benchmark's recorder). ``shows_estimate`` False: no ETA is computed.
    ``counting_began`` and ``counted``: the counting phase (``--instructions``),
    before ``start``: its cells, then how many are counted so far (from its
    threads), with a line when a config is done."""

    shows_estimate: bool

    def start(self, total: int, done: int, failures: int) -> None: ...
    def started(self, config: str, dataset: str) -> None: ...
    def finished(self, done: int, failures: int, failure_line: str | None) -> None: ...
    def estimate(self, seconds_left: float) -> None: ...
    def no_estimate(self, why: str) -> None: ...
    def setup_began(self, config: str, worker: int) -> None: ...
    def setup_ended(self, config: str, worker: int, seconds: float | None) -> None: ...
    def observed(
        self, workload: Workload, expected: float | None, took: float
    ) -> None: ...
    def counting_began(self, cells: int, line: str) -> None: ...
    def counted(self, cells: int, line: str | None) -> None: ...
    def stop(self) -> None: ...


class NoProgress:
    """Shows nothing."""

    shows_estimate = False

    def start(self, total: int, done: int, failures: int) -> None: ...
    def started(self, config: str, dataset: str) -> None: ...
    def finished(self, done: int, failures: int, failure_line: str | None) -> None: ...
    def estimate(self, seconds_left: float) -> None: ...
    def no_estimate(self, why: str) -> None: ...
    def setup_began(self, config: str, worker: int) -> None: ...
    def setup_ended(self, config: str, worker: int, seconds: float | None) -> None: ...
    def observed(
        self, workload: Workload, expected: float | None, took: float
    ) -> None: ...
    def counting_began(self, cells: int, line: str) -> None: ...
    def counted(self, cells: int, line: str | None) -> None: ...
    def stop(self) -> None: ...


# ---------------------------------------------------------------- the run


@dataclass(slots=True)
class Outcome:
    run_dir: Path
    meta: RunMeta
    total: int
    done: int
    failures: int
    resumed: bool = False


def make_executor(jobs: int, run_dir: Path, *, pin: bool = True) -> Executor:
    """The ``local`` executor: ``jobs`` >= 1: a process pool, worker i pinned to
    core i when ``pin``; 0: inline in this process (no isolation)."""
    return executor_kind(DEFAULT_EXECUTOR).start(Launch(jobs, run_dir, pin=pin))


def execute(
    plan: Plan,
    run_dir: Path,
    meta: RunMeta,
    *,
    executor: Executor,
    progress: Progress | None = None,
    cells: Sequence[Cell] | None = None,
) -> Outcome:
    """Run every cell of ``plan`` whose rows are not yet in ``run_dir``; append rows
    as cells finish. ``cells``: the plan's cells if already built. RunInterrupted
    after a clean stop on KeyboardInterrupt."""
    progress = progress or NoProgress()
    run_id = meta.run_id
    passes = plan.passes()
    stored_rows = res.read_row_dicts(run_dir)
    stored_by_cell: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for row in stored_rows:
        stored_by_cell.setdefault(
            (row["config"], row["dataset"], row["instance"]), []
        ).append(row)
    passes_needed = {(p.measure, p.repeat) for p in passes}

    def stored_passes(key: tuple[str, str, str]) -> set[tuple[str, int]]:
        rows = stored_by_cell.get(key, [])
        have = {(r["measure"], int(r["repeat"])) for r in rows}
        if res.stopped_early(rows):  # the repeats it lacks were skipped on purpose
            have |= {(p.measure, p.repeat) for p in passes if p.measure == "time"}
        return have

    def needed(cell: Cell) -> bool:
        key = (cell.config.label, cell.dataset.name, cell.instance.id)
        return cell.refusal is None and not passes_needed <= stored_passes(key)

    cells = slow_setups(
        plan_cells(plan) if cells is None else cells, plan.setup_timeout, needed, _say
    )
    total = len(cells)
    done = failures = 0
    skipped: list[res.ResultRow] = []
    by_task: dict[int, Cell] = {}
    tasks: list[Task] = []
    for cell in cells:
        key = (cell.config.label, cell.dataset.name, cell.instance.id)
        have = stored_passes(key)
        # (one tuple shared by every fresh cell: passes are planned up front)
        todo = tuple(p for p in passes if (p.measure, p.repeat) not in have) if (
            have
        ) else passes
        if not any(p.measure == "time" for p in todo):
            todo = tuple(p for p in todo if p.measure != "warmup")  # nothing to warm
        optimum = plan.optimum(cell.dataset, cell.instance)
        if not todo:
            done += 1
            failures += any(r["status"] in FAILURES for r in stored_by_cell[key])
        elif cell.refusal is not None:
            skipped += skipped_rows(run_id, cell, todo, optimum)
            done += 1
        else:
            task = Task(
                id=len(by_task),
                config=cell.config.key,
                plugins=plan.plugins,
                rows=cell.instance.grid.rows,
                cols=cell.instance.grid.cols,
                start=cell.instance.start,
                goal=cell.instance.goal,
                passes=todo,
                timeout=plan.timeout_for(cell.config),
                dataset=cell.dataset.name,
                instance=cell.instance.id,
                block=cell.block,
                # the options a worker needs, under their one names
                **{o.name: getattr(plan, o.name) for o in IN_TASK},
                cost_model=cell.dataset.cost_model,
            )
            by_task[task.id] = cell
            tasks.append(task)
    # Longest expected first, so no long cell starts last; a pool that can ask
    # again at every hand-off does so as the model learns (harness.measure.schedule).
    model = CostModel()
    model.observe_all(_stored_costs(plan, cells, stored_by_cell, passes))
    workloads = {t.id: _workload(by_task[t.id], t, plan) for t in tasks}
    order = model.order(workloads[t.id] for t in tasks)
    backlog = Backlog(
        (tasks[i].id, workloads[tasks[i].id], tasks[i].block) for i in order
    )
    for i in order:
        executor.submit(tasks[i])
    # cells of one workload share a priority: a hand-off asks once per workload
    ask = Priorities(model, backlog.running_workloads)
    executor.prioritize(
        lambda t: ask(workloads[t.id]),
        key=lambda t: workloads[t.id],
        token=ask.token,  # (unchanged model: the last hand-off's answers hold)
    )
    workers = max(executor.jobs, 1)

    said: dict[int, float] = {}  # the cost expected when each cell started
    # The machine's speed, read off the reference solves: the model learns in
    # units of the reference and the ETA prices what is left at its pace now.
    pace = Pace()
    last_left: list[float | None] = [None]  # the pace looks back by the last ETA

    # Set-ups (tables, compilation) are one-time costs, priced apart from the
    # cells' pace: a cell's cost is learnt without its set-up, and a set-up in
    # flight is priced at the longest one measured for its config.
    ready: set[tuple] = set()  # (worker, setup key) set up, or being set up
    in_setup: dict[int, tuple[str, int, float]] = {}  # task -> config, worker, since
    setup_took: dict[str, float] = {}  # config -> its longest set-up measured

    def setups_left(now: float) -> dict[int, float] | None:
        """Per cell in a set-up, its set-up's seconds left; None while one has no
        set-up of its config measured yet (nothing to price it by)."""
        left = {}
        for task_id, (config, _, since) in in_setup.items():
            if config not in setup_took:
                return None
            left[task_id] = max(setup_took[config] - (now - since), 0.0)
        return left

    def seconds_left() -> float | None:
        """The ETA; None while a config with cells left has none measured (its
        level would be borrowed from the others: '~2 s left' a second into a
        one-minute run, so the bar shows nothing until each has one), or a
        set-up nothing prices is in flight."""
        if backlog.unmeasured(model):
            return None
        now = time.monotonic()
        setups = setups_left(now)
        if setups is None:
            return None
        ref = pace.seconds(now, last_left[0])
        last_left[0] = backlog.eta(model, now, workers, ref, setups)
        return last_left[0]

    def no_estimate_why() -> str:
        """What the bar says instead of an ETA: the set-ups under way, if any."""
        names = sorted({config for config, _, _ in in_setup.values()})
        if names:
            more = f" and {len(names) - 2} more" if len(names) > 2 else ""
            return f"setting up {', '.join(names[:2])}{more}"
        return "ETA after each config's first cell"

    # Until this session ends cleanly it counts as interrupted: a session stopped
    # by a full disk may not be able to write meta.json again, nor one killed.
    meta.interrupted = True
    lost_seen = 0
    try:
        if skipped:
            res.append_rows(run_dir, skipped)
        res.write_meta(run_dir, meta)
        executor.set_run_dir(run_dir)
        executor.set_pin(plan.pin)  # a cluster: pin as plan.pin says
        note_executor(meta, executor)
        res.write_meta(run_dir, meta)
        # (the queued cells start in executor.events(), after the counts)
        here = executor.describe().get("kind") in ("local", "inline")
        counts = count_for_run(
            plan, tasks, by_task, executor.jobs, progress, on_workers=not here
        )
        progress.start(total, done, failures)
        last_meta, meta_every = 0.0, META_EVERY
        last_eta = -math.inf

        def update_eta() -> None:
            nonlocal last_eta
            left = seconds_left()
            if left is not None:
                progress.estimate(left)
            else:
                progress.no_estimate(no_estimate_why())
            last_eta = time.monotonic()  # (a None costs a pass over the cells too)

        if progress.shows_estimate:  # (a resume can know every config already)
            update_eta()
        clock = PhaseClock(workers)
        for event in executor.events():
            if isinstance(event, TaskStarted):
                backlog.start(event.task.id, clock.started())
                workload = backlog.workload(event.task.id)
                if workload is not None:
                    ref = pace.seconds(time.monotonic(), last_left[0])
                    said[event.task.id] = model.cost(workload, ref)
                progress.started(event.task.config.label, event.task.dataset)
                if (event.worker, event.task.setup_key) not in ready:
                    ready.add((event.worker, event.task.setup_key))
                    label = event.task.config.label
                    in_setup[event.task.id] = (label, event.worker, time.monotonic())
                    progress.setup_began(label, event.worker)
                    if progress.shows_estimate:
                        update_eta()
                continue
            setups_done = [s for s in event.setups if s.ok]
            if event.setups and not setups_done:  # failed: the next cell tries again
                ready.discard((event.worker, event.task.setup_key))
            for s in setups_done:
                setup_took[s.config] = max(setup_took.get(s.config, 0.0), s.seconds)
            if event.task.id in in_setup:
                label, worker, _ = in_setup.pop(event.task.id)
                took_setup = sum(s.seconds for s in setups_done) if setups_done else None
                progress.setup_ended(label, worker, took_setup)
            workload, began = backlog.finish(event.task.id)
            clock.finished(began, event.phases)
            if began is not None and workload is not None:
                setup = sum(s.seconds or 0.0 for s in event.setups)
                took = max(time.monotonic() - began - setup, 0.0)
                # An executor that reports a cell only when its batch comes back
                # (Dask) starts and ends it in one instant here: the measuring
                # process's own clock of its passes says what it took.
                took = max(took, _worker_seconds(event))
                refs = [a.ref_seconds for a in event.attempts]
                core = (event.worker_id or event.host, event.cpu, event.worker)
                unit = pace.reference(core, refs, time.monotonic())
                model.observe(workload, took, unit)
                # (benchmarks: how right the model was)
                progress.observed(workload, said.get(event.task.id), took)
                said.pop(event.task.id, None)
            if progress.shows_estimate and time.monotonic() - last_eta >= ETA_EVERY:
                update_eta()
            cell = by_task[event.task.id]
            key = (cell.config.label, cell.dataset.name, cell.instance.id)
            optimum = plan.optimum(cell.dataset, cell.instance)
            rows = build_rows(
                run_id, cell, event, optimum, stored_by_cell.get(key, ()),
                count=counts.get(event.task.id),
            )  # fmt: skip
            res.append_rows(run_dir, rows)
            place_cell(meta, executor, cell, event)
            if event.setups:
                meta.setup.extend(setup_entry(s) for s in event.setups)
            lost_before, lost_seen = lost_seen, note_lost_batches(
                meta, executor, lost_seen
            )
            # placement must survive a SIGKILL too: meta.json at least every second
            # (or, as it grows with the cells, every 50 times its writing time)
            if (
                event.setups
                or lost_seen > lost_before
                or time.monotonic() - last_meta >= meta_every
            ):
                wrote = time.monotonic()
                res.write_meta(run_dir, meta)
                last_meta = time.monotonic()
                meta_every = max(META_EVERY, 50 * (last_meta - wrote))
            done += 1
            bad = next((r for r in rows if r.status in FAILURES), None)
            failures += bad is not None
            line = (
                f"{bad.status}: {cell.config.label} on {cell.dataset.name} "
                f"{cell.instance.id}: {bad.message}"
                if bad is not None
                else None
            )
            progress.finished(done, failures, line)
            clock.handled()
    except KeyboardInterrupt:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second ^C waits
        try:
            executor.shutdown(cancel=True)
            progress.stop()
            note_lost_batches(meta, executor, lost_seen)
            meta.interrupted = True
            try:
                res.write_meta(run_dir, meta)
            except OSError:
                pass  # it already says interrupted
        finally:
            signal.signal(signal.SIGINT, previous)
        raise RunInterrupted(run_dir, done, total) from None
    except Exception as err:  # storage, the executor, or a bug: stop, resumable
        executor.shutdown(cancel=True)
        progress.stop()
        note_lost_batches(meta, executor, lost_seen)
        raise _stopped(run_dir, meta, done, total, err) from err
    except BaseException:
        executor.shutdown(cancel=True)
        progress.stop()
        raise
    try:
        executor.shutdown()
        progress.stop()
        note_lost_batches(meta, executor, lost_seen)
        for line in executor.notes():  # e.g. cells a late worker ran unpinned
            if line not in meta.warnings:
                meta.warnings.append(line)
        meta.phases = clock.summary()
        meta.finished_utc = res.utc_now()
        meta.load_average_end = res.load_average()
        meta.interrupted = False
        meta.stopped_by = None
        meta.complete = True
        res.write_meta(run_dir, meta)
    except Exception as err:
        meta.complete = False
        raise _stopped(run_dir, meta, done, total, err) from err
    return Outcome(run_dir, meta, total, done, failures)


def failure_text(err: BaseException) -> str:
    """One line on what stopped a run, naming the file for a storage error."""
    if isinstance(err, OSError) and err.strerror:
        return f"{err.filename}: {err.strerror}" if err.filename else err.strerror
    if isinstance(err, RunError | ExecutorError | res.ResultsError):
        return str(err)
    return f"{type(err).__name__}: {err}"


def _stopped(run_dir, meta, done: int, total: int, err: BaseException) -> RunStopped:
    """Record why the session stopped, if meta.json can still be written."""
    meta.interrupted = True
    meta.stopped_by = failure_text(err)
    try:
        res.write_meta(run_dir, meta)
    except OSError:
        pass  # meta.json already says interrupted (see execute)
    return RunStopped(run_dir, done, total, failure_text(err))


def _worker_seconds(event: TaskResult) -> float:
    """Wall seconds the measuring process spent on a cell's passes (its own
    clock; set-up excluded; 0 when the executor does not report phases)."""
    return sum(wall for phase, (wall, _) in event.phases.items() if phase != "setup")


def _workload(cell: Cell, task: Task, plan: Plan) -> Workload:
    """The cost model's view of one cell (see harness.measure.schedule)."""
    inst = cell.instance
    return Workload(
        key=(cell.config.label, inst.grid.label, inst.solvable),
        depth=plan.optimum(cell.dataset, inst) if inst.solvable else None,
        passes=len(task.passes),
        limit=sum(task.pass_budget(p) for p in task.passes),
    )


def _stored_costs(plan: Plan, cells: Sequence[Cell], stored_by_cell, passes):
    """(workload, seconds) for cells an earlier session of this run measured: the sum of
    their timed solves, scaled to all passes (a lower bound: it leaves out the
    memory pass and the worker's own overhead)."""
    for cell in cells:
        rows = stored_by_cell.get(
            (cell.config.label, cell.dataset.name, cell.instance.id), ()
        )
        timed = [
            float(r["seconds"])
            for r in rows
            if r["measure"] == "time" and r["seconds"] not in ("", None)
        ]
        if not timed:
            continue
        inst = cell.instance
        workload = Workload(
            key=(cell.config.label, inst.grid.label, inst.solvable),
            depth=plan.optimum(cell.dataset, inst) if inst.solvable else None,
            passes=len(passes),
            limit=float("inf"),
        )
        yield workload, sum(timed) / len(timed) * len(passes)


def start(
    plan: Plan,
    out: Path | str = DEFAULT_OUT,
    *,
    jobs: int | None = None,
    argv: list[str] | None = None,
) -> tuple[Path, RunMeta]:
    """Create the run directory and its first meta.json; returns both. When
    either cannot be written (a full disk), the directory is removed again."""
    jobs = core_count() if jobs is None else jobs
    git = res.git_info()
    run_dir = res.new_run_dir(out, res.make_run_id(git))
    lock = None
    try:
        lock = lock_run(run_dir)  # held until the run ends (unlock_run)
        argv = argv if argv is not None else res.python_argv()
        meta = new_meta(plan, run_dir.name, jobs, git, argv)
        res.write_meta(run_dir, meta)
    except BaseException:
        if lock is not None:
            lock.release()
        res.discard_new_run(run_dir)
        raise
    return run_dir, meta


