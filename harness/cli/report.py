"""``harness report RUN [RUN ...]``: tables, plots and an HTML report of stored runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from harness.cli import app, fail

FORMATS = ("table", "markdown", "csv", "json")


@app.command()
def report(
    runs: Annotated[
        list[str],
        typer.Argument(
            help="Run directories (or run ids under ./results). With several, the "
            "first is the baseline the others are compared with.",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Where to write report.md, report.html and plots/ (default: the "
            "run's own directory; required with several runs).",
        ),
    ] = None,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="Print the summary instead of writing files: table, markdown, csv "
            "or json.",
        ),
    ] = None,
) -> None:
    """Summarise stored runs; never runs a solver.

    Without --format, writes report.md, a self-contained report.html and plots/*.png
    and prints their paths. With --format, prints the summary table (several runs:
    the side-by-side comparison) to standard output.
    """
    if format is not None and format not in FORMATS:
        raise fail(f"--format: {format!r} is not one of {', '.join(FORMATS)}")
    dirs = [_resolve(r) for r in runs]
    # pandas and matplotlib are heavy: imported here, never at `harness --help`.
    from harness.report import (
        ReportError,
        format_summary,
        load_runs,
        summary_blocks,
        write_report,
    )

    try:
        if format == "table" and sys.stdout.isatty():
            _print_rich(summary_blocks(load_runs(dirs)))
            return
        if format is not None:
            typer.echo(format_summary(load_runs(dirs), format).rstrip("\n"))
            return
        html_path = write_report(dirs, out)
    except ReportError as err:
        raise fail(str(err)) from None
    except OSError as err:
        raise fail(f"{err.filename or out}: {err.strerror}") from None
    folder = html_path.parent
    typer.echo(f"wrote {html_path}")
    typer.echo(f"wrote {folder / 'report.md'}")
    for png in sorted((folder / "plots").glob("*.png")):
        typer.echo(f"wrote {png}")


def _resolve(token: str) -> Path:
    """A directory as given, else ``results/<token>`` if that exists."""
    path = Path(token)
    if not path.exists() and (Path("results") / token).is_dir():
        return Path("results") / token
    return path


def _print_rich(blocks: list) -> None:
    """Each (caption, display DataFrame) block as a rich table."""
    from rich.console import Console
    from rich.table import Table

    from harness.report import is_numeric_column

    console = Console()
    if not blocks:
        console.print("no result rows")
    for caption, frame in blocks:
        table = Table(title=caption, title_justify="left")
        for col in frame.columns:
            right = is_numeric_column(frame[col])
            table.add_column(str(col), justify="right" if right else "left")
        for row in frame.itertuples(index=False):
            table.add_row(*(str(v) for v in row))
        console.print(table)
