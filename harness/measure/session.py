"""The one run path: ``harness run`` and ``harness.run()`` both go through a
:class:`Session`.

A session takes the options a caller gave (:class:`RunOptions`; None: not given)
and resolves them once, by one rule: **given, else the experiment file's, else
the default**. It then opens the run (a new run directory, a resumed one, or a
dry run that opens nothing), copies reused cells, chooses the executor (local
processes, inline, or Dask) and runs the cells. The plan's cells are built once,
here. What happens after the run (reading rows.csv, the summary, the report) is
above this layer, in :mod:`harness.api`.

Every refusal is a :class:`~harness.measure.plan.RunError` with one line, naming
the option as the caller spells it (``--memory-limit`` on the command line,
``memory_limit_mb=`` in Python).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from harness import results as res
from harness.core.machine import core_count
from harness.core.options import INHERITED, OPTIONS, option_fields, option_problem
from harness.measure.executors import Executor, ExecutorError
from harness.measure.executors.registry import (
    DEFAULT_EXECUTOR,
    ExecutorKind,
    Launch,
    executor_kind,
    executor_names,
)
from harness.measure.experiment import (
    Experiment,
    ExperimentError,
    load,
    matrix,
    record,
    run_arguments,
)
from harness.measure.meta import new_meta
from harness.measure.plan import (
    DEFAULT_OUT,
    Cell,
    Plan,
    RunError,
    make_plan,
    plan_cells,
    resolve_datasets,
)
from harness.measure.resume import prepare_resume, set_session_jobs
from harness.measure.reuse import ReuseError, append_raw, reusable_rows
from harness.measure.runner import execute, failure_text, start
from harness.results import RunMeta
from harness.results.lock import unlock_run


#: Every run option of the table (harness.core.options), None: not given.
GivenOptions = option_fields(
    "GivenOptions", OPTIONS, default=None,
    doc="The run options a caller gave, each None when not given.",
)  # fmt: skip


@dataclass(slots=True)
class RunOptions(GivenOptions):
    """Everything a run can be told: the run options (GivenOptions, from the
    table) and what the session itself takes. None (or empty): not given, so
    the experiment file's value applies, else the default."""

    solvers: Any = None  # "all", "a,b[h]", or a list of names / SolverConfigs
    datasets: Any = None  # "default", "all", names, .jsonl paths or Datasets
    #: external programs, ``NAME[:OPTIONS]=COMMAND`` (``--exec``)
    programs: Sequence[str] | None = None
    #: a registered executor's name (harness.measure.executors.registry); None:
    #: DEFAULT_EXECUTOR, "local" (``jobs=0``: inline, this process, no isolation)
    executor: str | None = None
    scheduler: str | None = None  # a cluster's scheduler (an executor on_cluster)
    #: the client's (CA, certificate, key) files for a ``tls://`` scheduler
    tls: tuple[str | Path | None, str | Path | None, str | Path | None] | None = None
    security: Any = None  # a distributed.Security instead of ``tls``
    out: Path | str | None = None
    resume: str | None = None  # a stored run's id (or path) to complete
    repair: bool = False  # with resume: quarantine unreadable rows
    reuse: Sequence[Path | str] = ()  # earlier runs to copy matching cells from
    dry_run: bool = False
    config: Path | str | None = None  # an experiment file
    argv: list[str] | None = None  # the command recorded in meta.json
    #: builds the executor instead of the default (tests, benchmarks)
    executor_factory: Callable[[int, Path], Executor] | None = None


#: How ``harness run`` spells each option (for messages): the run options'
#: flags (harness.core.options), then the options of this session.
CLI_SPELLING = {o.name: o.spelled for o in OPTIONS} | {
    "solvers": "--solvers", "datasets": "--datasets", "programs": "--exec",
    "executor": "--executor", "scheduler": "--scheduler",
    "tls": "--tls-ca/--tls-cert/--tls-key", "security": "security",
    "out": "--out", "resume": "--resume", "repair": "--repair", "reuse": "--reuse",
    "dry_run": "--dry-run", "config": "--config",
}  # fmt: skip

#: Options a resumed run takes from its own meta.json: giving one is an error.
FROM_THE_STORED_RUN = (
    "solvers", "datasets", "programs", *(o.name for o in INHERITED),
)  # fmt: skip


def python_spelling(name: str) -> str:
    """How ``harness.run()`` spells an option: ``memory_limit_mb``."""
    return name


@dataclass(slots=True)
class Session:
    """One run, from options to stored rows (see the module docstring)."""

    options: RunOptions
    spell: Callable[[str], str] = python_spelling
    #: lines for the user about what opening the run did (reuse, repair)
    notes: list[str] = field(default_factory=list)
    experiment: Any = None
    plan: Plan | None = None
    run_dir: Path | None = None
    meta: RunMeta | None = None
    executor: Executor | None = None
    jobs: int | None = None
    #: the experiment file chose the Dask scheduler (its errors name the file)
    _scheduler_from_file: bool = False
    _cells: list[Cell] | None = None

    def __post_init__(self) -> None:
        self.options = self._resolve(self.options)

    # ---- options

    def _flag(self, name: str) -> str:
        return self.spell(name)

    def _resolve(self, given: RunOptions) -> RunOptions:
        """Check the combination given and merge in the experiment file: given,
        else the file's, else the default (filled in when the plan is made)."""
        o = replace(given)
        if o.resume is not None:
            if o.config is not None:
                raise RunError(
                    f"{self._flag('resume')} continues a run with its own options; "
                    f"drop {self._flag('config')}"
                )
            if o.reuse or o.dry_run:
                raise RunError(
                    f"{self._flag('resume')} completes a stored run; drop "
                    f"{self._flag('reuse')} / {self._flag('dry_run')}"
                )
            clash = [
                n
                for n in FROM_THE_STORED_RUN
                if getattr(o, n) is not None and not _datasets_in_memory(o, n)
            ]
            if clash:
                raise RunError(
                    f"{self._flag('resume')} continues run {o.resume} with its own "
                    f"options; drop {', '.join(map(self._flag, clash))}"
                )
        elif o.repair:
            raise RunError(
                f"{self._flag('repair')} only applies with {self._flag('resume')} "
                "RUN_ID"
            )
        for source in o.reuse:
            if not (Path(source) / res.META_FILE).is_file():
                raise RunError(
                    f"{self._flag('reuse')} {source}: not a run directory "
                    "(no meta.json)"
                )
        if o.config is not None:
            o = self._merge_experiment(o)
        if o.scheduler is not None and not self._on_cluster(o.executor):
            raise RunError(
                f"{self._flag('scheduler')} needs {self._flag('executor')} "
                + " or ".join(n for n in executor_names() if self._on_cluster(n))
            )
        if (o.tls is not None or o.security is not None) and o.scheduler is None:
            given = "tls" if o.tls is not None else "security"
            raise RunError(
                f"{self._flag(given)} needs {self._flag('scheduler')} tls://HOST:PORT"
            )
        if o.jobs is not None:
            problem = option_problem("jobs", o.jobs)
            if problem:
                raise RunError(f"{self._flag('jobs')} {o.jobs}: {problem}")
        return o

    @staticmethod
    def _on_cluster(name: str | None) -> bool:
        kind = executor_kind(name) if name is not None else None
        return kind is not None and kind.on_cluster

    def _kind(self) -> ExecutorKind:
        """The executor chosen (plugins loaded: the plan is made); RunError naming
        the registered ones when there is none of that name."""
        name = self.options.executor or DEFAULT_EXECUTOR
        kind = executor_kind(name)
        if kind is None:
            raise RunError(
                f"{self._flag('executor')} {name}: choose one of "
                f"{', '.join(executor_names())}"
            )
        jobs = self.options.jobs
        if kind.fixed_jobs is not None and jobs not in (None, kind.fixed_jobs):
            raise RunError(
                f"{self._flag('jobs')} {jobs}: the {name} executor runs with "
                f"{self._flag('jobs')} {kind.fixed_jobs}"
            )
        return kind

    def _merge_experiment(self, o: RunOptions) -> RunOptions:

        named = [n for n in ("solvers", "datasets") if getattr(o, n) is not None]
        if named:
            raise RunError(
                f"{self._flag('config')} {o.config} names the solvers and datasets; "
                f"drop {', '.join(map(self._flag, named))}"
            )
        try:
            exp = load(o.config)
        except ExperimentError as err:
            raise RunError(str(err)) from None
        self.experiment = exp
        from_file = run_arguments(exp)
        file_scheduler = from_file.pop("scheduler", None)
        file_tls = from_file.pop("tls", None)
        merged = replace(
            o, **{k: v for k, v in from_file.items() if getattr(o, k) is None}
        )
        # The file's scheduler belongs to the file's cluster: not when the caller
        # chose a LocalCluster of --jobs workers, or no Dask at all.
        if (
            self._on_cluster(merged.executor)
            and o.scheduler is None
            and o.jobs is None
            and file_scheduler is not None
        ):
            merged.scheduler = file_scheduler
            self._scheduler_from_file = True
            if o.tls is None and o.security is None:  # the file's, with its own
                merged.tls = file_tls
        return merged

    # ---- the plan

    def make_plan(self) -> Plan:
        """The plan of a new run (the options not given take their defaults)."""
        opts = self.options
        solvers = opts.solvers if opts.solvers is not None else "all"
        if opts.programs and opts.solvers is None:
            # --exec alone runs the programs it names, not every solver
            solvers = ",".join(
                p.partition("=")[0].partition(":")[0] for p in opts.programs
            )
        given = {o.name: getattr(opts, o.name) for o in INHERITED
                 if o.name != "plugins" and getattr(opts, o.name) is not None}  # fmt: skip
        return make_plan(
            solvers,
            opts.datasets if opts.datasets is not None else "default",
            plugins=[*(opts.plugins or ()), *(f"exec:{p}" for p in opts.programs or ())],
            **given,
        )

    @property
    def cells(self) -> list[Cell]:
        """The plan's cells, built once."""
        if self._cells is None:
            assert self.plan is not None, "open() or dry_run() first"
            self._cells = plan_cells(self.plan)
        return self._cells

    # ---- a dry run

    def dry_run(self) -> list[str]:
        """What the run would do, as lines: cells per config and dataset, reused,
        skipped and why. Opens nothing and starts no executor."""

        self.plan = self.make_plan()
        self._kind()  # a name no executor has is refused here too
        o = self.options
        reused: dict[tuple[str, str], int] = {}
        lines_after: list[str] = []
        if o.reuse:
            jobs = core_count() if o.jobs is None else o.jobs
            meta = new_meta(self.plan, "dry-run", jobs, res.git_info(), self._argv())
            rows, per_source, refused = self._reusable(meta)
            for r in rows:
                if r["measure"] == "time" and r["repeat"] == "0":
                    key = (r["config"], r["dataset"])
                    reused[key] = reused.get(key, 0) + 1
            lines_after += [
                f"reuse {s}: {n} cells match" for s, n in per_source.items()
            ]
            lines_after += [
                f"  not reused: {n} cells: {why}" for why, n in refused.most_common()
            ]
        exp = self.experiment or Experiment(Path("(command line)"), "-" * 64, "")
        rank = {c.label: i for i, c in enumerate(self.plan.configs)}
        # configs as listed, not in the order they run
        by_config = sorted(
            self.cells, key=lambda c: rank.get(c.config.label, len(rank))
        )
        return matrix(exp, by_config, reused) + lines_after

    # ---- opening the run

    def open(self) -> None:
        """Create (or reopen, to resume) the run directory and choose the executor.
        On any failure the executor started so far is shut down."""
        try:
            if self.options.resume is not None:
                self._open_resumed()
            else:
                self._open_new()
            if self.executor is None:
                self.executor = self._start_executor()
        except BaseException as err:
            self.close(cancel=True)
            if isinstance(err, res.ResultsError):
                raise self._error(str(err)) from None
            if isinstance(err, (RunError, ExecutorError)):  # ExecutorError: a start
                raise self._error(str(err)) from None
            if isinstance(err, OSError):  # e.g. a full disk at the first meta.json
                raise RunError(failure_text(err)) from None
            raise

    def _error(self, message: str) -> RunError:
        if self._scheduler_from_file:  # the experiment file chose the scheduler
            return RunError(self.experiment.scheduler_error(message))
        return RunError(message)

    def _open_resumed(self) -> None:

        o = self.options
        datasets = o.datasets if _datasets_in_memory(o, "datasets") else None
        self.plan, self.run_dir, self.meta = prepare_resume(
            o.resume,
            o.out if o.out is not None else DEFAULT_OUT,
            jobs=o.jobs,
            argv=self._argv(),
            datasets=resolve_datasets(datasets) if datasets is not None else None,
            repair=o.repair,
        )
        rejected = self.meta.resumes[-1]["rows_rejected"]
        if rejected:
            self.notes.append(
                f"{self._flag('repair')}: {rejected} unreadable or duplicate line(s) "
                f"moved to "
                f"{self.run_dir / res.REJECTED_FILE}"
            )
        if self._kind().sets_jobs:
            self.executor = self._start_executor()
            set_session_jobs(self.meta, self.executor.jobs)
        self.jobs = self.meta.resumes[-1]["jobs"]

    def _open_new(self) -> None:

        o = self.options
        self.plan = self.make_plan()
        kind = self._kind()
        jobs = o.jobs if kind.fixed_jobs is None else kind.fixed_jobs
        if kind.sets_jobs:
            self.executor = self._start_executor()
            jobs = self.executor.jobs
        self.jobs = core_count() if jobs is None else jobs
        self.run_dir, self.meta = start(
            self.plan,
            o.out if o.out is not None else DEFAULT_OUT,
            jobs=self.jobs,
            argv=self._argv(),
        )
        if self.experiment is not None:
            record(self.experiment, self.run_dir, self.meta)
        if o.reuse:
            self._copy_reused()

    def _argv(self) -> list[str]:
        return self.options.argv if self.options.argv is not None else res.python_argv()

    def _start_executor(self) -> Executor:
        """The chosen executor, started: a kind that sets its jobs before the run
        directory exists (with ``--jobs`` as given), the others after it."""
        o = self.options
        kind = self._kind()
        if o.executor_factory is not None and not kind.sets_jobs:
            return o.executor_factory(self.jobs, self.run_dir)
        return kind.start(Launch(
            o.jobs if kind.sets_jobs else self.jobs,
            None if kind.sets_jobs else self.run_dir,
            pin=self.plan.pin, plugins=self.plan.plugins, scheduler=o.scheduler,
            tls=o.tls, security=o.security,
        ))  # fmt: skip

    def _reusable(self, meta: RunMeta):

        wanted = {
            (c.config.label, c.dataset.name, c.instance.id)
            for c in self.cells
            if c.refusal is None
        }
        try:
            return reusable_rows(list(self.options.reuse), meta.to_json(), wanted)
        except ReuseError as err:
            raise RunError(f"{self._flag('reuse')}: {err}") from None

    def _copy_reused(self) -> None:
        """Copy matching finished cells of earlier runs into the new run (their rows
        keep the run_id of the run that measured them) and note it in meta.json."""

        rows, per_source, refused = self._reusable(self.meta)
        append_raw(self.run_dir, rows)
        self.meta.reused = [
            {"path": str(Path(p).resolve()), "cells": n} for p, n in per_source.items()
        ]
        self.meta.not_reused = dict(refused)
        res.write_meta(self.run_dir, self.meta)
        total = sum(per_source.values())
        self.notes.append(
            f"reused {total} finished cells from "
            + ", ".join(f"{p} ({n})" for p, n in per_source.items())
            + (
                "; not reused: " + "; ".join(f"{n} ({w})" for w, n in refused.items())
                if refused
                else ""
            )
        )

    # ---- running

    def run(self, progress: Any = None):
        """Run the cells not stored yet; the runner's Outcome. RunInterrupted
        after a clean stop on Ctrl-C; RunError or ExecutorError on failure."""

        assert self.executor is not None, "open() first"
        return execute(
            self.plan,
            self.run_dir,
            self.meta,
            executor=self.executor,
            progress=progress,
            cells=self.cells,
        )

    def close(self, *, cancel: bool = False) -> None:
        """Shut the executor down (idempotent: the runner shuts it down too) and
        give the run directory's lock up."""
        if self.executor is not None:
            self.executor.shutdown(cancel=cancel)
        self.release()

    def release(self) -> None:
        """Give up the run directory's writer lock, taken when the run was opened
        (idempotent); the caller's report, if any, comes first."""
        if self.run_dir is not None:
            unlock_run(self.run_dir)


def _datasets_in_memory(o: RunOptions, name: str) -> bool:
    """Datasets given as objects: a resumed run needs them again (they were never
    files it could reopen)."""
    return (
        name == "datasets"
        and o.datasets is not None
        and not isinstance(o.datasets, str)
        and all(not isinstance(d, str | Path) for d in o.datasets)
    )
