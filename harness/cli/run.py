"""``harness run``: the solver x dataset grid, with progress and a summary.

The library (:mod:`harness.measure.runner`) does the work; this module converts options,
shows progress (a rich bar on a terminal, plain lines otherwise), prints the summary
and keeps the run directory's path as the last line of standard output.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Annotated, Any

import typer

from harness.cli import progress as progress_bar
from harness.cli.common import app, fail
from harness.cli.progress import to_stderr
from harness.core import defaults

#: Options a resumed run takes from its meta.json: option -> parameter name.
_RESUME_CONFLICTS = {
    "--solvers": "solvers", "--datasets": "datasets", "--plugin": "plugin",
    "--exec": "exec_", "--repeats": "repeats", "--timeout": "timeout",
    "--memory-limit": "memory_limit", "--no-memory": "no_memory", "--gc": "keep_gc",
    "--setup-timeout": "setup_timeout", "--warmup": "warmup",
    "--order-seed": "order_seed", "--adaptive/--no-adaptive": "adaptive",
    "--min-sample-time": "min_sample_time",
}  # fmt: skip


@app.command()
def run(
    ctx: typer.Context,
    solvers: Annotated[
        str, typer.Option(help="'all', or a comma list of NAME or NAME[HEURISTIC].")
    ] = "all",
    datasets: Annotated[
        str,
        typer.Option(
            help="'default', 'all', or a comma list of names or .jsonl paths."
        ),
    ] = "default",
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            help="Load solvers from a module or .py file (repeatable). Nothing else "
            "outside the harness is loaded.",
        ),
    ] = None,
    exec_: Annotated[
        list[str] | None,
        typer.Option(
            "--exec",
            metavar="NAME=COMMAND",
            help="Register an external solver program that reads a board in the "
            "judge format and prints the moves or 'unsolvable' (repeatable). "
            "NAME:optimal,batch,sizes=3x3+4x4,goal=G,timeout=S=COMMAND sets options.",
        ),
    ] = None,
    repeats: Annotated[
        int, typer.Option(min=1, help="Timed solves per cell; counters must agree.")
    ] = defaults.REPEATS,
    timeout: Annotated[
        float | None,
        typer.Option(
            help="Seconds per solve, for every solver (at most 86400).",
            show_default="each solver's own budget",
        ),
    ] = None,
    memory_limit: Annotated[
        int,
        typer.Option(
            "--memory-limit",
            help="MB of address space one solve may add to its worker (0: no limit).",
        ),
    ] = defaults.MEMORY_LIMIT_MB,
    jobs: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Worker processes, worker i pinned to core i. Each core drifts on "
            "its own, but every timed repeat is followed by a reference solve on the "
            "same core and harness compare divides by it, so comparisons hold with "
            "one worker per core (A/A rates in docs/benchmarks.md); 0 runs in this "
            "process without isolation (debugging).",
            show_default="CPU cores",
        ),
    ] = None,
    executor: Annotated[
        str,
        typer.Option(
            help="Where cells run: 'local' (worker processes here) or 'dask' (a Dask "
            "cluster; needs `pip install 'npuzzle-harness[dask]'`)."
        ),
    ] = "local",
    scheduler: Annotated[
        str | None,
        typer.Option(
            metavar="tcp://HOST:PORT",
            help="Dask scheduler to run on (with --executor dask). Without it the "
            "harness starts a local Dask cluster of --jobs workers.",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option(help="Folder for run directories.")
    ] = defaults.RESULTS_DIR,
    resume: Annotated[
        str | None,
        typer.Option(metavar="RUN_ID", help="Complete an interrupted run (in --out)."),
    ] = None,
    warmup: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="Untimed solves per cell before the timed repeats (without one, "
            "repeat 0 ran 4-10% slower: first-touch page faults).",
            show_default="1",
        ),
    ] = None,
    order_seed: Annotated[
        int | None,
        typer.Option(
            help="Seed of the interleaved order (instance by instance, configs "
            "rotated per instance); default a fresh one, recorded in meta.json.",
        ),
    ] = None,
    adaptive: Annotated[
        bool,
        typer.Option(
            "--adaptive/--no-adaptive",
            help="Stop a cell's timed repeats once the ones left could not move "
            "its median (wall, CPU and normalised time) by more than "
            f"{defaults.ADAPTIVE:.0%}: a stable cell takes 2 of 3. --no-adaptive "
            "takes all --repeats. The rows say how many were taken and why.",
        ),
    ] = True,
    min_sample_time: Annotated[
        float | None,
        typer.Option(
            "--min-sample-time",
            metavar="SECONDS",
            help="Each timed repeat is one sample of at least this much CPU time: "
            "a faster solve is timed as a loop of k back-to-back solves of the same "
            "board (k found in the warm-up; the rows' loops column) right after one "
            "warm solve, and recorded as the sample over k. Batch external programs "
            "get k lines of the board the same way; the start-up (the goal board's "
            "line: reading, parsing, printing) is subtracted, so their time is the "
            "search alone, where an in-process solver's includes its Python entry "
            "(for the compiled ones the solvability check, array conversion and "
            "move string: about 2-15 us a call). One-process-per-board programs "
            "are timed one cold process per solve. The cell's first solve is kept "
            "apart (first_cpu_seconds: cold, single-shot). 0: one solve per sample.",
            show_default=f"{defaults.MIN_SAMPLE_SECONDS:g}",
        ),
    ] = None,
    no_memory: Annotated[
        bool, typer.Option("--no-memory", help="Skip the untimed memory pass.")
    ] = False,
    keep_gc: Annotated[
        bool,
        typer.Option(
            "--gc", help="Leave the garbage collector on during timed solves."
        ),
    ] = False,
    setup_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds allowed for one solver set-up (tables, compilation)."
        ),
    ] = defaults.SETUP_TIMEOUT,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print only the summary and the run directory (errors still go "
            "to stderr). Without -q, a bar on a terminal, plain lines otherwise.",
        ),
    ] = False,
    no_report: Annotated[
        bool, typer.Option("--no-report", help="Do not write report.md/html.")
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit with status 1 if any cell is invalid, an error, a "
            "timeout or a memout, or a dataset label was contradicted.",
        ),
    ] = False,
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="With --resume: move unreadable lines of rows.csv to "
            "rows.rejected.csv and measure their cells again.",
        ),
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="An experiment file (TOML: solvers, heuristics, datasets, grids, "
            "repeats, limits, executor). Options given on the command line win.",
        ),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the matrix of cells (to run, reused, skipped and why) and "
            "run nothing.",
        ),
    ] = False,
    reuse: Annotated[
        list[Path] | None,
        typer.Option(
            "--reuse",
            metavar="RUN_DIR",
            help="Copy finished cells from earlier runs where solver source, "
            "dataset, options and environment all match (repeatable).",
        ),
    ] = None,
) -> None:
    """Run every selected solver on every instance of the selected datasets and store
    the rows in a new run directory (its path is the last line printed).

    A bare `harness run` is the main job: every solver config on the default
    datasets, 66.7-74.6 s measured on a quiet 2-core machine with numba's kernels
    and the pattern databases cached (docs/benchmarks.md); the first run also
    compiles and builds them, and other jobs on the cores stretch it (about 6 min
    at a load average of 4-9)."""
    from harness import results as res
    from harness.api import write_report_if_available
    from harness.measure import runner
    from harness.measure.meta import advice
    from harness.measure.pool import ExecutorError

    argv = res.python_argv()
    exp = scheduler_of = None
    if config is not None:
        if _given(ctx, "solvers") or _given(ctx, "datasets"):
            raise fail(
                f"--config {config} names the solvers and datasets; drop "
                + ", ".join(f"--{n}" for n in ("solvers", "datasets")
                            if _given(ctx, n))  # fmt: skip
            )
        if resume is not None:
            raise fail("--resume continues a run with its own options; drop --config")
        from harness.measure.experiment import ExperimentError, load

        try:
            exp = load(config)
        except ExperimentError as err:
            raise fail(str(err)) from None
        o = exp.options
        plugin = plugin or o.get("plugins")
        # the experiment file's options, unless typed on the command line
        if not _given(ctx, "repeats") and o.get("repeats") is not None:
            repeats = o["repeats"]
        timeout = timeout if timeout is not None else o.get("timeout")
        if not _given(ctx, "memory_limit") and o.get("memory_limit_mb") is not None:
            memory_limit = o["memory_limit_mb"]
        no_memory = no_memory or not o.get("memory", True)
        keep_gc = keep_gc or o.get("gc", False)
        if not _given(ctx, "setup_timeout") and o.get("setup_timeout") is not None:
            setup_timeout = o["setup_timeout"]
        if min_sample_time is None:
            min_sample_time = o.get("min_sample_seconds")
        if not _given(ctx, "executor") and o.get("executor") == "dask":
            executor = "dask"
        if executor == "dask" and scheduler is None and jobs is None:
            scheduler = o.get("scheduler")
            if scheduler is not None:
                scheduler_of = exp
        if jobs is None:
            jobs = 0 if o.get("executor") == "inline" else o.get("jobs")
        solvers = list(exp.values.values())  # parsed once, by the experiment
        datasets = exp.dataset_specs
    if resume is not None and (reuse or dry_run):
        raise fail("--resume completes a stored run; drop --reuse / --dry-run")
    for source in reuse or ():
        if not (source / res.META_FILE).is_file():
            raise fail(f"--reuse {source}: not a run directory (no meta.json)")
    # CI and process managers stop jobs with SIGTERM: stop as cleanly as on Ctrl-C.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    if executor not in runner.EXECUTORS:
        raise fail(
            f"--executor {executor}: choose one of {', '.join(runner.EXECUTORS)}"
        )
    if scheduler is not None and executor != "dask":
        raise fail("--scheduler needs --executor dask")
    chosen = None
    try:
        if resume is not None:
            given = [
                option
                for option, name in _RESUME_CONFLICTS.items()
                if _given(ctx, name)
            ]
            if given:
                raise fail(
                    f"--resume continues run {resume} with its own options; "
                    f"drop {', '.join(given)}"
                )
            plan, run_dir, meta = runner.prepare_resume(
                resume, out, jobs=jobs, argv=argv, repair=repair
            )
            rejected = meta["resumes"][-1]["rows_rejected"]
            if rejected:
                to_stderr(
                    f"--repair: {rejected} unreadable line(s) moved to "
                    f"{run_dir / res.REJECTED_FILE}"
                )
            if executor == "dask":
                chosen = runner.make_dask_executor(scheduler, jobs, plan.plugins)
                runner.set_session_jobs(meta, chosen.jobs)
            jobs = meta["resumes"][-1]["jobs"]
        else:
            if repair:
                raise fail("--repair only applies with --resume RUN_ID")
            plan = runner.make_plan(
                # --exec alone runs the programs it names, not every solver
                solvers
                if _given(ctx, "solvers") or not exec_
                else ",".join(e.partition("=")[0].partition(":")[0] for e in exec_),
                datasets,
                pairs=exp.pair_set() if exp is not None else None,
                plugins=[*(plugin or ()), *(f"exec:{e}" for e in exec_ or ())],
                repeats=repeats,
                timeout=timeout,
                memory_limit_mb=memory_limit,
                memory_pass=not no_memory,
                disable_gc=not keep_gc,
                setup_timeout=setup_timeout,
                warmup=runner.DEFAULT_WARMUP if warmup is None else warmup,
                order_seed=order_seed,
                adaptive=runner.DEFAULT_ADAPTIVE if adaptive else 0.0,
                min_sample_seconds=(
                    defaults.MIN_SAMPLE_SECONDS
                    if min_sample_time is None
                    else min_sample_time
                ),
            )
            if executor == "dask" and not dry_run:
                chosen = runner.make_dask_executor(scheduler, jobs, plan.plugins)
                jobs = chosen.jobs
            jobs = runner.default_jobs() if jobs is None else jobs
            if dry_run:
                _dry_run(plan, exp, jobs, argv, reuse or [], runner, res)
                return
            run_dir, meta = runner.start(plan, out, jobs=jobs, argv=argv)
            if exp is not None:
                from harness.measure.experiment import record

                record(exp, run_dir, meta)
            if reuse:
                _copy_reused(plan, run_dir, meta, reuse, runner, res)
    except (runner.RunError, res.ResultsError) as err:
        if chosen is not None:
            chosen.shutdown(cancel=True)
        if scheduler_of is not None:  # the experiment file chose the scheduler
            raise fail(scheduler_of.scheduler_error(str(err))) from None
        raise fail(str(err)) from None
    except BaseException:
        if chosen is not None:
            chosen.shutdown(cancel=True)
        raise

    cells = runner.plan_cells(plan)
    say = to_stderr
    if quiet:  # the summary and the run directory only (and errors)

        def say(text: str) -> None:
            pass
    verb = "resuming" if resume else "run"
    say(
        f"{verb} {run_dir.name}: {len(plan.configs)} solver configs x "
        f"{sum(len(d.instances) for d in plan.datasets)} instances in "
        f"{len(plan.datasets)} datasets = {len(cells)} cells; warm-up "
        f"{plan.warmup}, repeats {plan.repeats}"
        f"{', memory pass' if plan.memory_pass else ''}; jobs {jobs}"
        + (f" on Dask ({scheduler or 'local cluster'})" if chosen is not None else "")
    )
    if chosen is None:
        chosen = runner.make_executor(jobs, run_dir, pin=plan.pin)
    later = advice(jobs)
    from harness.core.requirements import requirement_problems

    for problem in requirement_problems():  # said before the cells, not after
        say(f"warning: {problem}; the summary and report may fail to import")
    for warning in meta.get("warnings", []) + _executor_warnings(chosen, meta):
        if warning not in later:
            say(f"warning: {warning}")
    progress = progress_bar.make_progress(quiet)
    try:
        outcome = runner.execute(
            plan, run_dir, meta, executor=chosen, progress=progress
        )
    except (runner.RunError, ExecutorError) as err:  # e.g. a cluster's workers
        say(f"stopped: {err}")
        say(f"resume with: harness run --resume {run_dir.name} --out {out}")
        raise fail(str(err)) from None
    except runner.RunInterrupted as stop:
        to_stderr(f"interrupted: {stop.done} of {stop.total} cells stored in {run_dir}")
        to_stderr(f"resume with: harness run --resume {run_dir.name} --out {out}")
        typer.echo(str(run_dir))
        raise typer.Exit(130) from None

    try:  # every cell is stored: whatever fails now, the rows are safe
        from harness import analysis

        stored = analysis.load_run(run_dir)
        contradicted = res.contradicted_labels(stored.stored)
        for entry in contradicted:
            typer.echo(f"label contradicted: {res.contradiction_text(entry)}; "
                       "optimality of that instance is unknown")  # fmt: skip
        _print_summary(stored)
    except Exception as err:
        raise _after_measuring("the summary", err, run_dir) from None
    if not no_report:
        problem = write_report_if_available(run_dir, progress=say)
        if problem:  # said even with --quiet: the run's files are incomplete
            to_stderr(f"note: no report written ({problem}); the rows are safe in "
                    f"{run_dir}: `harness report {run_dir}` rebuilds it")  # fmt: skip
            from harness.core.requirements import requirement_problems

            for cause in requirement_problems():
                to_stderr(f"likely cause: {cause}")
    if not quiet:
        for note in later:
            say(f"note: {note}")
    typer.echo(str(run_dir))
    if strict and (outcome.failures or contradicted):
        raise typer.Exit(1)


def _after_measuring(what: str, err: Exception, run_dir: Path) -> typer.Exit:
    """The one line for a failure after every cell was stored (and, when the
    harness's own dependencies moved, the likely cause): exit status 1."""
    from harness.core.requirements import requirement_problems

    reason = " ".join(f"{type(err).__name__}: {err}".split())[:300]
    to_stderr(
        f"error: {what} failed after every cell was measured ({reason}); the rows "
        f"are safe in {run_dir}: `harness report {run_dir}` rebuilds the summary "
        "and the report"
    )
    for problem in requirement_problems():
        to_stderr(f"likely cause: {problem}")
    return typer.Exit(1)


def _dry_run(plan, exp, jobs, argv, sources, runner, res) -> None:
    """Print what the run would do: cells per config and dataset, reuse, skips."""
    from harness.measure.experiment import Experiment, matrix

    cells = runner.plan_cells(plan)
    reused: dict[tuple[str, str], int] = {}
    if sources:
        meta = runner.new_meta(plan, "dry-run", jobs, res.git_info(), argv)
        rows, per_source, refused = _reusable(plan, cells, meta, sources)
        for r in rows:
            if r["measure"] == "time" and r["repeat"] == "0":
                key = (r["config"], r["dataset"])
                reused[key] = reused.get(key, 0) + 1
    if exp is None:
        exp = Experiment(Path("(command line)"), "-" * 64, "")
    rank = {c.label: i for i, c in enumerate(plan.configs)}
    by_config = sorted(cells, key=lambda c: rank.get(c.config.label, len(rank)))
    for line in matrix(exp, by_config, reused):  # configs as listed, not run order
        typer.echo(line)
    if sources:
        for source, n in per_source.items():
            typer.echo(f"reuse {source}: {n} cells match")
        for why, n in refused.most_common():
            typer.echo(f"  not reused: {n} cells: {why}")


def _reusable(plan, cells, meta, sources):
    from harness.measure.reuse import ReuseError, reusable_rows

    wanted = {
        (c.config.label, c.dataset.name, c.instance.id)
        for c in cells
        if c.refusal is None
    }
    try:
        return reusable_rows(sources, meta, wanted)
    except ReuseError as err:
        raise fail(f"--reuse: {err}") from None


def _copy_reused(plan, run_dir, meta, sources, runner, res) -> None:
    """Copy matching finished cells of earlier runs into the new run (their rows
    keep the run_id of the run that measured them) and note it in meta.json."""
    from harness.measure.reuse import append_raw

    rows, per_source, refused = _reusable(plan, runner.plan_cells(plan), meta, sources)
    append_raw(run_dir, rows)
    meta["reused"] = [
        {"path": str(Path(p).resolve()), "cells": n} for p, n in per_source.items()
    ]
    meta["not_reused"] = dict(refused)
    res.write_meta(run_dir, meta)
    total = sum(per_source.values())
    to_stderr(
        f"reused {total} finished cells from "
        + ", ".join(f"{p} ({n})" for p, n in per_source.items())
        + (
            "; not reused: " + "; ".join(f"{n} ({w})" for w, n in refused.items())
            if refused
            else ""
        )
    )


def _executor_warnings(executor, meta) -> list[str]:
    warn = getattr(executor, "warnings", None)
    return [w for w in (warn() if warn else []) if w not in meta.get("warnings", [])]


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the user typed option ``name`` (not just its default)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name != "DEFAULT"


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


# ---------------------------------------------------------------- summary


def _print_summary(run) -> None:
    """The run's summary (:mod:`harness.report.summary_table`, the same blocks report.md
    shows), fitted to the terminal's width."""
    from harness.core.tables import output_width
    from harness.report.summary_table import skip_lines, summary_blocks, summary_text

    typer.echo(summary_text(summary_blocks(run), output_width(), skip_lines(run)))
