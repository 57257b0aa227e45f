"""``harness merge RUN_DIR... --out DIR``: runs that do not overlap as one run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli.common import app, fail


@app.command()
def merge(
    runs: Annotated[
        list[str],
        typer.Argument(help="Run directories (or run ids under ./results).",
                       show_default=False),
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
) -> None:
    """Combine runs into one reportable run directory; every row keeps the run_id
    of the run that measured it. Then: harness report DIR."""
    from harness.reuse import ReuseError, merge as merge_runs

    dirs = [
        Path(r) if Path(r).exists() or not (Path("results") / r).is_dir()
        else Path("results") / r
        for r in runs
    ]
    for d in dirs:
        if not d.is_dir():
            raise fail(f"{d}: no such run directory")
    try:
        merged, warnings = merge_runs(dirs, out, prefer)
    except ReuseError as err:
        raise fail(str(err)) from None
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)
    typer.echo(str(merged))
