"""``harness gate``: the exact counters gate (see :mod:`harness.compare.gate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli.common import app, number


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
    instructions: Annotated[
        bool,
        typer.Option(
            "--instructions",
            help="Hold instead the instructions per solve of 4 compiled configs "
            "(one per kernel family) on the 3x3 gate boards, counted under "
            "callgrind, against "
            "harness/data/golden_instructions.json within --tolerance (a baseline "
            "holds for the kind of CPU it was counted on). Needs valgrind.",
        ),
    ] = False,
    tolerance: Annotated[
        float,
        typer.Option(
            parser=number("--tolerance", minimum=0.0),
            help="With --instructions: how far a config's count may move "
            "(a fraction: 0.01 is 1%).",
        ),
    ] = 0.01,
    jobs: Annotated[
        int,
        typer.Option(parser=number("--jobs", whole=True, minimum=1),
                     help="With --instructions: configs counted at once."),
    ] = 2,
) -> None:
    """Check every built-in solver's exact counters on fixed boards against the
    committed baseline (or, with --instructions, the compiled solvers'
    instruction counts). Exit 0 match, 1 something moved, 2 no usable baseline."""
    from harness.compare import gate as counters_gate

    if instructions:
        from harness.compare import instructions_gate

        def say(line: str) -> None:
            if verbose:
                typer.echo(f"  {line}", err=True)

        raise typer.Exit(instructions_gate.check_and_print(
            baseline or instructions_gate.BASELINE, update_baseline=update,
            tolerance=tolerance, jobs=jobs, say=say,
        ))  # fmt: skip
    path = baseline or counters_gate.BASELINE
    raise typer.Exit(counters_gate.check_and_print(
        path, update_baseline=update, verbose=verbose
    ))
