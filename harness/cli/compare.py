"""``harness compare BASE NEW``: what changed between two stored runs."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from harness import defaults
from harness.cli.common import app


class Format(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"


@app.command()
def compare(
    base: Annotated[str, typer.Argument(help="Base run: a run directory or run id.")],
    new: Annotated[str, typer.Argument(help="New run: a run directory or run id.")],
    format: Annotated[
        Format, typer.Option("--format", "-f", help="Output format.")
    ] = Format.table,
    min_ratio: Annotated[
        float,
        typer.Option(
            min=1.0,
            help="A config's time ratio (new/base geomean) must reach this, and be "
            "significant, to count as a regression.",
        ),
    ] = 1.25,
    time_threshold: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="Seconds. Instances whose median time is below this in both runs "
            "are left out of the time ratio (timer noise dominates there).",
        ),
    ] = 1e-4,
    confidence: Annotated[
        float,
        typer.Option(
            min=0.5, max=0.999, help="Confidence level of the bootstrap interval."
        ),
    ] = 0.95,
    reference: Annotated[
        str | None,
        typer.Option(
            help="Divide every config's time ratio by this config's ratio (an "
            "unchanged reference workload absorbs a machine-wide drift).",
        ),
    ] = None,
    no_time: Annotated[
        bool,
        typer.Option(
            "--no-time",
            help="Compare counters and statuses only (runs from different machines).",
        ),
    ] = False,
    results_dir: Annotated[
        Path, typer.Option(help="Where run ids are looked up.")
    ] = defaults.RESULTS_DIR,
) -> None:
    """Compare two runs: exact counter and status changes, noise-aware time ratios.

    Exit status: 0 nothing regressed; 1 a regression (more nodes expanded or
    generated, a longer path, a worse status, or a significant slowdown of at least
    --min-ratio); 2 the runs cannot be compared (schema, datasets, no common cells).
    """
    from harness.compare import (
        Incomparable,
        Thresholds,
        compare_runs,
        render,
        resolve_run,
    )

    thresholds = Thresholds(
        min_ratio=min_ratio,
        time_threshold=time_threshold,
        confidence=confidence,
        check_time=not no_time,
        reference=reference,
    )
    try:
        result = compare_runs(
            resolve_run(base, results_dir), resolve_run(new, results_dir), thresholds
        )
    except Incomparable as err:
        if format is Format.json:
            typer.echo(
                json.dumps({"comparable": False, "exit_code": 2, "reason": str(err)})
            )
        typer.echo(f"error: cannot compare: {err}", err=True)
        raise typer.Exit(2) from None
    typer.echo(render(result, format.value))
    raise typer.Exit(result.exit_code)
