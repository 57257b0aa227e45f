"""``harness gate``: the exact counters gate (see :mod:`harness.compare.gate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli.common import app


@app.command()
def gate(
    update: Annotated[
        bool,
        typer.Option(
            "--update", help="Regenerate the baseline after an intended change."
        ),
    ] = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            help="Baseline file.",
            show_default="harness/data/golden_counters.json, shipped in the package",
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Print each config's gate time.")
    ] = False,
) -> None:
    """Check every built-in solver's exact counters on fixed boards against the
    committed baseline. Exit 0 match, 1 something moved, 2 no usable baseline."""
    from harness.compare import gate as counters_gate

    path = baseline or counters_gate.BASELINE
    raise typer.Exit(counters_gate.check_and_print(
        path, update_baseline=update, verbose=verbose
    ))
