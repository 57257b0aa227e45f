"""``harness history RUN_DIR...``: many runs across commits as one page."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from harness.cli.common import app, fail, number
from harness.core import defaults


class Format(StrEnum):
    table = "table"
    markdown = "markdown"


@app.command()
def history(
    runs: Annotated[
        list[Path],
        typer.Argument(help="Run directories, or results folders holding runs."),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder for history.html, history.md and plots/.",
            show_default="history/ in the results folder the runs are in",
        ),
    ] = None,
    format: Annotated[
        Format,
        typer.Option(
            "--format", "-f", help="What to print: a short table or the Markdown page."
        ),
    ] = Format.table,
    top: Annotated[
        int, typer.Option(parser=number("--top", whole=True, minimum=1),
                          help="Rows in the largest-steps table.")
    ] = 10,
    min_ratio: Annotated[
        float | None,
        typer.Option(
            parser=number("--min-ratio", minimum=1.0),
            help="As in `harness compare`: a time step must reach this, and "
            f"be significant, to be a regression (default: {defaults.MIN_RATIO:.2f} "
            f"on normalized times, {defaults.MIN_RATIO_RAW:.2f} on raw CPU time).",
        ),
    ] = None,
) -> None:
    """Median CPU time and exact counters per config against each run's commit and
    date; breaks where the environment changed or counters moved; the largest steps;
    regressions flagged by the statistics of `harness compare`."""
    from harness.compare import Thresholds
    from harness.compare.history import HistoryError, build_history, largest_steps
    from harness.report.history import HistoryReport

    if out is None:
        out = _results_folder(runs) / "history"
    try:
        hist = build_history(runs, Thresholds(min_ratio=min_ratio))
        page = HistoryReport(hist, top).write(out)
    except HistoryError as err:
        raise fail(str(err)) from None
    except OSError as err:
        raise fail(f"--out {out}: {err.strerror or err}") from None
    for run_dir, why in hist.skipped:  # one damaged run must not hide the rest
        typer.echo(f"skipped {run_dir}: {why}", err=True)
    if format is Format.markdown:
        typer.echo((out / "history.md").read_text(encoding="utf-8"), nl=False)
        return
    typer.echo(
        f"{len(hist.runs)} runs, {len(hist.configs)} configs, "
        f"{len(hist.breaks)} break(s), {len(hist.regressions)} regression(s)"
    )
    for step in largest_steps(hist, top):
        run = hist.runs[step.index]
        ratio = f"{step.ratio:.2f}x" if step.ratio else "-"
        flag = "REGRESSION " if step.regression else ""
        moved = (
            f", counters moved in {step.counter_changes} cell(s)"
            if step.counter_changes
            else ""
        )
        typer.echo(
            f"  {flag}{run.commit} {run.date} {step.config}: time {ratio}{moved}"
        )
    typer.echo(str(page))


def _results_folder(runs: list[Path]) -> Path:
    """The folder the runs live in: a folder given that holds runs itself, or a
    run directory's parent; the deepest folder common to all of them."""
    from harness.results import META_FILE

    folders = [r if not (r / META_FILE).is_file() else r.parent for r in runs]
    return Path(os.path.commonpath([f.resolve() for f in folders]))
