"""``harness merge RUN_DIR... --out DIR``: runs that do not overlap as one run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.core import defaults
from harness.cli.common import app, fail, run_dir


@app.command()
def merge(
    runs: Annotated[
        list[str],
        typer.Argument(help="Run directories or run ids (looked up in "
                       "--results-dir).", show_default=False),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="The new run directory (must not exist)."),
    ],
    prefer: Annotated[
        str | None,
        typer.Option(
            help="'newest': where runs overlap, keep the cell of the run that "
            "started last (default: overlap is an error)."
        ),
    ] = None,
    results_dir: Annotated[
        Path, typer.Option(help="Where run ids are looked up (as `harness report`).")
    ] = defaults.RESULTS_DIR,
) -> None:
    """Combine runs into one reportable run directory; every row keeps the run_id
    of the run that measured it. Then: harness report DIR."""
    from harness.measure.reuse import ReuseError, merge as merge_runs

    dirs = [run_dir(r, results_dir) for r in runs]
    try:
        merged, warnings = merge_runs(dirs, out, prefer)
    except ReuseError as err:
        raise fail(str(err)) from None
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)
    typer.echo(str(merged))
