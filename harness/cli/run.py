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
from harness.cli.run_options import given_options, with_run_options
from harness.core import defaults
from harness.core.requirements import requirement_problems
from harness.core.tables import output_width
from harness.measure.executors.registry import DEFAULT_EXECUTOR, executor_help


@app.command("run")
@with_run_options
def run_command(
    ctx: typer.Context,
    solvers: Annotated[
        str, typer.Option(help="'all', or a comma list of NAME or NAME[HEURISTIC].")
    ] = "all",
    datasets: Annotated[
        str,
        typer.Option(
            help="'default', 'all', or a comma list of names or .jsonl paths; "
            "NAME@MODEL takes a dataset under a tile cost model."
        ),
    ] = "default",
    cost: Annotated[
        str | None,
        typer.Option(
            "--cost",
            help="Tile cost model of every dataset: unit | heavy | inverse | sqrt | "
            "reverse (moving tile t costs 1, t, 1/t, sqrt t, N - t); optimality and "
            "bounds are then judged by cost. Default: each dataset's own (unit).",
            show_default=False,
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
    executor: Annotated[
        str, typer.Option(help=executor_help())
    ] = DEFAULT_EXECUTOR,
    scheduler: Annotated[
        str | None,
        typer.Option(
            metavar="tcp://HOST:PORT",
            help="Dask scheduler to run on (with --executor dask). Without it the "
            "harness starts a local Dask cluster of --jobs workers.",
        ),
    ] = None,
    tls_ca: Annotated[
        Path | None,
        typer.Option(
            "--tls-ca",
            help="With --scheduler tls://...: the cluster's CA certificate (PEM). "
            "Without the --tls options, Dask's configuration (distributed.comm.tls) "
            "is used.",
        ),
    ] = None,
    tls_cert: Annotated[
        Path | None,
        typer.Option("--tls-cert", help="This client's certificate (PEM)."),
    ] = None,
    tls_key: Annotated[
        Path | None,
        typer.Option(
            "--tls-key",
            help="This client's private key (PEM; omit if the certificate file "
            "holds it).",
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option(help="Folder for run directories.")
    ] = defaults.RESULTS_DIR,
    resume: Annotated[
        str | None,
        typer.Option(metavar="RUN_ID", help="Complete an interrupted run (in --out)."),
    ] = None,
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
    **flags: Any,  # one per run option of harness.core.options (run_options.py)
) -> None:
    """Run every selected solver on every instance of the selected datasets and store
    the rows in a new run directory (its path is the last line printed).

    A bare `harness run` is the main job: every solver config on the default
    datasets, 71.8-77.4 s measured on a quiet 2-core machine with numba's kernels
    and the pattern databases cached (docs/benchmarks.md); the first run also
    compiles and builds them, and other jobs on the cores stretch it (about 3.5
    min at a load average of 2-4)."""
    # import cost: the run path (pandas, numba's kernels: about 2 s) loads only
    # when a run starts, not for `harness --help` or the other commands
    from harness import api
    from harness import results as res
    from harness.measure import runner
    from harness.measure.executors import ExecutorError
    from harness.measure.meta import advice
    from harness.measure.plan import RunError
    from harness.measure.session import CLI_SPELLING, RunOptions

    def typed(name: str, value: Any) -> Any:
        """The option's value if the user typed it, else None (not given)."""
        return value if _given(ctx, name) else None

    options = RunOptions(
        solvers=typed("solvers", solvers),
        datasets=_with_cost(typed("datasets", datasets), cost, config, resume),
        programs=exec_ or None,
        **given_options(ctx, flags),
        executor=typed("executor", executor),
        scheduler=scheduler,
        tls=(tls_ca, tls_cert, tls_key) if tls_ca or tls_cert or tls_key else None,
        out=out,
        resume=resume,
        repair=repair,
        reuse=reuse or (),
        dry_run=dry_run,
        config=config,
        argv=res.python_argv(),
    )
    # CI and process managers stop jobs with SIGTERM: stop as cleanly as on Ctrl-C.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if dry_run:
            for line in api.dry_run(options, spell=CLI_SPELLING.__getitem__):
                typer.echo(line)
            return
        session = api.open_session(options, spell=CLI_SPELLING.__getitem__)
    except RunError as err:
        raise fail(str(err)) from None
    ctx.call_on_close(session.release)  # the run's lock, held through the report
    for note in session.notes:
        to_stderr(note)

    plan, run_dir, meta, chosen = (
        session.plan, session.run_dir, session.meta, session.executor
    )
    say = to_stderr
    if quiet:  # the summary and the run directory only (and errors)

        def say(text: str) -> None:
            pass
    verb = "resuming" if resume else "run"
    on_dask = session.options.executor == "dask"
    say(
        f"{verb} {run_dir.name}: {len(plan.configs)} solver configs x "
        f"{sum(len(d.instances) for d in plan.datasets)} instances in "
        f"{len(plan.datasets)} datasets = {len(session.cells)} cells; warm-up "
        f"{plan.warmup}, repeats {plan.repeats}"
        f"{', memory pass' if plan.memory_pass else ''}"
        f"{', instructions' if plan.instructions else ''}; jobs {session.jobs}"
        + (
            f" on Dask ({session.options.scheduler or 'local cluster'})"
            if on_dask
            else ""
        )
    )
    later = advice(session.jobs)
    for problem in requirement_problems():  # said before the cells, not after
        say(f"warning: {problem}; the summary and report may fail to import")
    before = meta.warnings + _executor_warnings(chosen, meta)
    for warning in before:
        if warning not in later:
            # who can run code on the cluster is said even with --quiet
            (to_stderr if "plain tcp" in warning else say)(f"warning: {warning}")
    progress = progress_bar.make_progress(quiet)
    try:
        outcome = session.run(progress)
    except (RunError, ExecutorError) as err:  # before the first cell
        to_stderr(f"error: {err}")
        to_stderr(f"resume with: harness run --resume {run_dir.name} --out {out}")
        raise typer.Exit(2) from None
    except runner.RunStopped as stop:  # a full disk, a lost cluster, a bug
        to_stderr(f"stopped: {stop.reason}")
        to_stderr(f"{stop.done} of {stop.total} cells stored in {run_dir}")
        to_stderr(f"resume with: harness run --resume {run_dir.name} --out {out}")
        typer.echo(str(run_dir))
        raise typer.Exit(1) from None
    except runner.RunInterrupted as stop:
        to_stderr(f"interrupted: {stop.done} of {stop.total} cells stored in {run_dir}")
        to_stderr(f"resume with: harness run --resume {run_dir.name} --out {out}")
        typer.echo(str(run_dir))
        raise typer.Exit(130) from None

    try:  # every cell is stored: whatever fails now, the rows are safe
        finished = api.finish(run_dir, report=False)  # rows.csv read once, here
        for entry in finished.contradicted:
            typer.echo(f"label contradicted: {res.contradiction_text(entry)}; "
                       "optimality of that instance is unknown")  # fmt: skip
        _print_summary(finished.run)
    except Exception as err:
        raise _after_measuring("the summary", err, run_dir) from None
    if not no_report and not _report(finished.run, meta, say):
        typer.echo(str(run_dir))
        raise typer.Exit(1)
    if not quiet:
        for warning in outcome.meta.warnings:  # learnt during the run
            if warning not in before and warning not in later:
                say(f"warning: {warning}")
        for note in later:
            say(f"note: {note}")
    typer.echo(str(run_dir))
    if strict and (outcome.failures or finished.contradicted):
        raise typer.Exit(1)


def _after_measuring(what: str, err: Exception, run_dir: Path) -> typer.Exit:
    """The one line for a failure after every cell was stored (and, when the
    harness's own dependencies moved, the likely cause): exit status 1."""
    reason = " ".join(f"{type(err).__name__}: {err}".split())[:300]
    to_stderr(
        f"error: {what} failed after every cell was measured ({reason}); the rows "
        f"are safe in {run_dir}: `harness report {run_dir}` rebuilds the summary "
        "and the report"
    )
    for problem in requirement_problems():
        to_stderr(f"likely cause: {problem}")
    return typer.Exit(1)


def _report(run: Any, meta: Any, progress) -> bool:
    """Write the report of ``run`` (loaded; ``progress`` hears what it writes)
    through :func:`harness.api.write_run_report`, which notes a failure in
    meta.json (the run's RunMeta); on failure (a full disk, a moved dependency,
    Ctrl-C) say so on stderr, even with --quiet, with the command that writes it
    later; return False."""
    from harness.api import write_run_report  # import cost: as in run_command

    run_dir = Path(run.path)
    try:
        why = write_run_report(run, meta, progress)
    except KeyboardInterrupt:
        why = "interrupted"
    if why is None:
        return True
    to_stderr(f"note: no report written ({why}); the rows are safe in {run_dir}: "
              f"`harness report {run_dir}` rebuilds it")  # fmt: skip
    if why == "interrupted":
        raise typer.Exit(130)
    for cause in requirement_problems():
        to_stderr(f"likely cause: {cause}")
    return False


def _executor_warnings(executor, meta) -> list[str]:
    return [w for w in executor.warnings() if w not in meta.warnings]


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
    # import cost: the reporter (pandas, matplotlib) loads after the run only
    from harness.report.summary_table import skip_lines, summary_blocks, summary_text

    typer.echo(summary_text(summary_blocks(run), output_width(), skip_lines(run)))


def _with_cost(
    datasets: str | None, cost: str | None, config: Any, resume: Any
) -> str | None:
    """The ``--datasets`` selection under ``--cost`` (every dataset NAME@MODEL);
    one-line error for an unknown model, or with --config / --resume, which
    carry their datasets already."""
    if cost is None:
        return datasets
    # import cost: the datasets (56 ms) load only with --cost
    from harness.datasets import DatasetError
    from harness.datasets.catalogue import cost_spec

    if config is not None or resume is not None:
        raise fail("--cost: an experiment file sets cost per grid (cost = ...), and "
                   "a resumed run keeps its datasets' costs")  # fmt: skip
    try:
        return cost_spec(datasets or "default", cost)
    except (DatasetError, ValueError) as err:
        raise fail(f"--cost: {err}") from None
