"""``harness compare BASE NEW``: what changed between two stored runs."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from harness.cli.common import app, number
from harness.core import defaults


class Format(StrEnum):
    table = "table"
    markdown = "markdown"
    json = "json"


class Clock(StrEnum):
    cpu = "cpu"
    wall = "wall"


@app.command("compare")
def compare_command(
    base: Annotated[
        str,
        typer.Argument(
            help="Base run: a run directory or run id; several runs of the same "
            "code separated by commas (A1,A2) are bootstrapped over runs."
        ),
    ],
    new: Annotated[
        str,
        typer.Argument(help="New run(s), as for BASE (best alternated: A B A B)."),
    ],
    format: Annotated[
        Format, typer.Option("--format", "-f", help="Output format.")
    ] = Format.table,
    min_ratio: Annotated[
        float | None,
        typer.Option(
            parser=number("--min-ratio", minimum=1.0),
            help="A config's time ratio (new/base geomean) must reach this, and be "
            f"significant, to count as a regression. Default {defaults.MIN_RATIO:.2f} "
            "on normalized times (every repeat divided by the reference solve timed "
            "beside it: measured false-alarm and detection rates in "
            f"docs/benchmarks.md), {defaults.MIN_RATIO_RAW:.2f} on raw CPU time (runs "
            "without the reference: identical runs differ by up to ~1.8x on a shared "
            "machine). A calibrated noise floor above it wins.",
        ),
    ] = None,
    time_threshold: Annotated[
        float,
        typer.Option(
            parser=number("--time-threshold", minimum=0.0),
            help="Seconds. Instances whose median time is below this in both runs "
            "are left out of the time ratio (timer noise dominates there).",
        ),
    ] = 1e-4,
    confidence: Annotated[
        float,
        typer.Option(
            parser=number("--confidence", minimum=0.5, maximum=0.999),
            help="Confidence level of the bootstrap interval.",
        ),
    ] = 0.95,
    reference: Annotated[
        str | None,
        typer.Option(
            help="Divide every config's time ratio by this config's ratio (an "
            "unchanged reference workload absorbs a machine-wide drift).",
        ),
    ] = None,
    calibration: Annotated[
        Path | None,
        typer.Option(
            help="Noise-floor calibration from identical runs on this machine "
            "(tests/benchmarks/aa_noise.py --calibrate writes it). Default: "
            "RESULTS_DIR/noise_floor.json when it exists.",
        ),
    ] = None,
    time: Annotated[
        Clock,
        typer.Option(
            "--time",
            help="Which clock the time verdict judges: cpu (the solving process's "
            "CPU time) or wall (elapsed time: a solver that sleeps, waits on I/O "
            "or on other processes shows there only). Both are recorded for every "
            "repeat, each with the reference solve on the same clock. The verdict "
            "line names the clock.",
        ),
    ] = Clock.cpu,
    raw: Annotated[
        bool,
        typer.Option(
            "--raw",
            help="Compare raw times even when the runs have the reference solve.",
        ),
    ] = False,
    instructions_ratio: Annotated[
        float,
        typer.Option(
            parser=number("--instructions-ratio", minimum=1.0),
            help="When both runs counted instructions (run --instructions): a "
            "config whose instructions per solve (geomean of new/base) reach this "
            "ratio is a regression, 1/this an improvement. Two runs of the same "
            "configs agree within 0.5% (docs/instructions.md).",
        ),
    ] = 1.01,
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

    Time: per instance the ratio of medians new/base of CPU time (--time wall:
    wall time) divided by the reference solve timed beside each repeat on the
    same clock; the geometric mean over instances; a bootstrap interval over
    instances (and over runs, with several per side).
    Fewer than 5 timed instances: "too few instances", never a regression.

    Exit status: 0 nothing regressed; 1 a regression (more nodes expanded or
    generated, a longer path, a worse status, a significant slowdown of at least
    --min-ratio and the noise floor, or instructions per solve up by
    --instructions-ratio); 2 the runs cannot be compared (schema,
    datasets, no common cells).
    """
    from harness.compare import (
        Incomparable,
        Thresholds,
        compare_runs,
        render,
        resolve_runs,
    )
    from harness.compare.noise import CALIBRATION_FILE, read_calibration

    cal_path = calibration or results_dir / CALIBRATION_FILE
    cal = read_calibration(cal_path)
    if calibration is not None and cal is None:
        typer.echo(
            f"error: --calibration {calibration}: not a calibration file", err=True
        )
        raise typer.Exit(2)

    thresholds = Thresholds(
        min_ratio=min_ratio,
        time_threshold=time_threshold,
        confidence=confidence,
        check_time=not no_time,
        reference=reference,
        calibration=cal,
        normalize=not raw,
        time=time.value,
        instructions_ratio=instructions_ratio,
    )
    try:
        result = compare_runs(
            resolve_runs(base, results_dir), resolve_runs(new, results_dir), thresholds
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
