"""``harness report RUN [RUN ...]``: tables, plots and an HTML report of stored runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.core import defaults
from harness.cli.common import app, fail, load_plugins, run_dir, stdout_failed

FORMATS = ("table", "markdown", "csv", "json", "latex")


@app.command()
def report(
    runs: Annotated[
        list[str],
        typer.Argument(
            help="Run directories or run ids (looked up in --results-dir). With "
            "several, the first is the baseline the others are compared with.",
            show_default=False,
        ),
    ],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Where to write report.md, report.html and plots/ (required with "
            "several runs).",
            show_default="the run's own directory",
        ),
    ] = None,
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="Print the summary instead of writing files: table, markdown, csv, "
            "json, or latex (booktabs tables of coverage, common-instance "
            "aggregates and scores).",
        ),
    ] = None,
    scatter: Annotated[
        list[str] | None,
        typer.Option(
            "--scatter",
            metavar="X,Y",
            help="Draw only a per-instance scatter plot of config X against config "
            "Y (repeatable) into plots/, and print its path.",
        ),
    ] = None,
    measure: Annotated[
        str,
        typer.Option(help="What --scatter plots: expanded or time."),
    ] = "expanded",
    relative: Annotated[
        bool,
        typer.Option("--relative", help="--scatter: plot Y/X against X."),
    ] = False,
    color_by: Annotated[
        str,
        typer.Option("--color-by", help="--scatter: colour by dataset or depth."),
    ] = "dataset",
    plots: Annotated[
        str | None,
        typer.Option(
            "--plots",
            help="Also write every plot as pdf (fonts embedded) or pgf, beside "
            "the PNGs.",
        ),
    ] = None,
    results_dir: Annotated[
        Path, typer.Option(help="Where run ids are looked up (as `harness compare`).")
    ] = defaults.RESULTS_DIR,
    plugin: Annotated[
        list[str] | None,
        typer.Option(
            "--plugin",
            help="Load report plots (and solvers, heuristics) from a module or .py "
            "file, as the run did (repeatable).",
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
    if plots is not None and plots not in ("png", "pdf", "pgf"):
        raise fail(f"--plots: {plots!r} is not one of png, pdf, pgf")
    load_plugins(plugin)
    dirs = [run_dir(r, results_dir) for r in runs]
    if scatter:
        _scatter(dirs, out, scatter, measure, relative, color_by, plots)
        _warn_incomplete(dirs)
        return
    # pandas and matplotlib are heavy: imported here, never at `harness --help`.
    from harness.report import (
        ReportError,
        format_summary,
        load_runs,
        summary_blocks,
        write_report,
    )

    try:
        if format == "table":
            runs = load_runs(dirs)
            if len(runs) == 1:  # the run's one summary, as `harness run` prints it
                from harness.core.tables import output_width
                from harness.report.summary_table import skip_lines, summary_text
                from harness.report.summary_table import summary_blocks as blocks_of

                typer.echo(summary_text(blocks_of(runs[0]), output_width(),
                                        skip_lines(runs[0])))  # fmt: skip
            else:
                _print_blocks(summary_blocks(runs))
        elif format is not None:
            typer.echo(format_summary(load_runs(dirs), format).rstrip("\n"))
        else:
            html_path = write_report(dirs, out, plot_formats=(plots,) if plots else ())
    except ReportError as err:
        raise fail(str(err)) from None
    except OSError as err:
        if stdout_failed(err):
            raise  # said once, by harness.cli.main
        raise fail(f"{err.filename or out}: {err.strerror}") from None
    _warn_incomplete(dirs)  # (after the report: an unreadable run is one error)
    if format is not None:
        return
    folder = html_path.parent
    typer.echo(f"wrote {html_path}")
    typer.echo(f"wrote {folder / 'report.md'}")
    for png in sorted((folder / "plots").glob("*.png")):
        typer.echo(f"wrote {png}")
        if plots and plots != "png" and png.with_suffix(f".{plots}").exists():
            typer.echo(f"wrote {png.with_suffix(f'.{plots}')}")


def _scatter(dirs, out, pairs, measure, relative, color_by, fmt) -> None:
    """``--scatter X,Y``: one plot per pair from the last run given."""
    from harness.analysis import aggregate
    from harness.analysis import ReportError, load_runs
    from harness.report import figures

    if measure not in figures.MEASURES:
        raise fail(f"--measure: {measure!r} is not one of expanded, time")
    if color_by not in ("dataset", "depth"):
        raise fail(f"--color-by: {color_by!r} is not one of dataset, depth")
    try:
        run = load_runs(dirs)[-1]
    except ReportError as err:
        raise fail(str(err)) from None
    folder = Path(out) if out is not None else run.path
    inst = run.instances()
    limit = (
        aggregate.time_limit(run.meta, inst) * 1e3 if measure == "time" else None
    )
    for pair in pairs:
        names = [p.strip() for p in _split_pair(pair)]
        if len(names) != 2 or not all(names):
            raise fail(f"--scatter {pair!r}: give two configs as X,Y")
        x, y = names
        stem = f"scatter_{_safe(x)}_vs_{_safe(y)}_{measure}" + (
            "_relative" if relative else ""
        )
        path = folder / "plots" / f"{stem}.{fmt or 'png'}"
        try:
            panel = figures.config_pair(inst, x, y, measure)
            figures.scatter_plot(
                [panel], path, measure=measure, limit=limit, color_by=color_by,
                relative=relative, title=f"{y} against {x}",
            )  # fmt: skip
        except figures.FigureError as err:
            raise fail(f"--scatter {pair}: {err}") from None
        typer.echo(f"wrote {path}")


def _warn_incomplete(dirs: list[Path]) -> None:
    """One warning line per run that did not finish: its tables cover only the
    cells stored so far."""
    from harness import results as res

    for folder in dirs:
        try:
            meta = res.read_meta(folder)
        except (res.ResultsError, OSError):
            continue
        sentence = res.incomplete_sentence({"run_id": folder.name, **meta})
        if sentence:
            typer.echo(f"warning: {sentence}", err=True)


def _split_pair(text: str) -> list[str]:
    """``a[x],b[y]`` -> [a[x], b[y]]: commas inside brackets do not split."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def _safe(label: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in label).strip("_")


def _print_blocks(blocks: list) -> None:
    """Each (caption, display DataFrame) block as a table in the one style, fitted
    to the output's width (columns that do not fit are named in a note)."""
    from harness.core.tables import fitted_text, output_width
    from harness.report import is_numeric_column

    if not blocks:
        typer.echo("no result rows")
    width, left_out = output_width(), set()
    for number, (caption, frame) in enumerate(blocks):
        if number:
            typer.echo("")
        right = [i for i, c in enumerate(frame.columns) if is_numeric_column(frame[c])]
        text, dropped = fitted_text(
            [str(c) for c in frame.columns],
            [[str(v) for v in row] for row in frame.itertuples(index=False)],
            width=width, right=right, title=caption,
        )  # fmt: skip
        typer.echo(text)
        left_out.update(dropped)
    if left_out:
        typer.echo(f"left out to fit {width} columns: {', '.join(sorted(left_out))} "
                   "(--format markdown shows every column)")  # fmt: skip
