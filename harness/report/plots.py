"""Report plots (matplotlib, Agg backend): one PNG per question, from per-instance rows.

The registry of a run's plots (:func:`register_plot`, :func:`all_plots`),
:func:`make_plots`, and writing a figure (:func:`save_figure`: PNG, PDF, PGF).
The figures themselves are drawn in :mod:`harness.report.charts` and
:mod:`harness.report.quality`. Every config keeps one colour, line style, marker
and hatch across all plots (:func:`harness.report.styles.style_map`, from the
sorted labels), so a figure still reads when printed in grey. A plot whose data
is absent is not drawn; its :class:`Plot` says why. Input is the per-instance
table of :func:`harness.analysis.instances`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from harness.core.files import real_dir, write_atomic  # noqa: E402
from harness.core.registries import (  # noqa: E402
    add,
    load_entry_points,
    registry,
    seal,
    source,
)
from harness.report import quality  # noqa: E402
from harness.report.charts import (  # noqa: E402
    PLAIN,
    cactus_chart,
    depth_chart,
    heuristic_chart,
    memory_chart,
    unsolvable_chart,
)
from harness.report.styles import Style, highlighted  # noqa: E402
from harness.results import ANSWERED  # noqa: E402

DPI = 110
#: Every plot this module can make, in report order: file stem -> title.
PLOT_NAMES: dict[str, str] = registry()
PLOT_NAMES.update({
    "time_vs_depth": "Solve time vs optimal depth",
    "instructions_vs_depth": "Instructions per solve vs optimal depth",
    "expanded_vs_depth": "Nodes expanded vs optimal depth",
    "over_necessary_vs_depth": "Nodes expanded over the necessary set vs optimal depth",
    "ebf_vs_depth": "Effective branching factor vs optimal depth",
    "peak_memory": "Peak memory per config",
    "cactus": "Cactus plot: instances answered vs time limit",
    "heuristic_quality": "Heuristic quality: h(start) / optimal length",
    "unsolvable_time": "Time to answer unsolvable boards",
    "quality_vs_time": "Solution quality vs CPU time, Pareto front",
    "suboptimality_vs_depth": "Path length / optimal vs optimal depth",
    "coverage_vs_bound": "Coverage within the time limit vs the bound w",
    "compare_time": "Per-instance time, old run vs new run",
})


@dataclass(frozen=True, slots=True)
class Plot:
    """A written plot (``path``) or a skipped one (``skipped`` says why)."""

    name: str
    title: str
    caption: str
    path: Path | None = None
    skipped: str = ""


@dataclass(frozen=True, slots=True)
class PlotData:
    """What a per-run plot is drawn from: the per-instance rows, those answered,
    the answered solvable ones with a known optimum, each config's style, the
    folder to write to, the run's time limit (seconds, or None) and the file
    types to write beside each PNG."""

    inst: pd.DataFrame
    answered: pd.DataFrame
    solvable: pd.DataFrame
    styles: dict[str, Style]
    plot_dir: Path
    time_limit_s: float | None
    #: file types written beside each PNG ("pdf", "pgf"): pass to save_figure
    formats: tuple[str, ...] = ()
    #: the verdict's best configs, best first: plots of many lines colour these
    #: and grey the rest (:func:`highlighted`)
    top: tuple[str, ...] = ()


ENTRY_POINT_GROUP = "npuzzle_harness.plots"
#: Per-run plots in report order: name -> draw(PlotData) -> Plot.
_PLOTS: dict[str, Callable[[PlotData], Plot]] = registry()


def register_plot(name: str, title: str | None = None):
    """Decorator: add ``draw(data: PlotData) -> Plot`` to every run's report, as
    ``NAME.png`` (write it with :func:`save_figure`, passing ``data.formats``;
    return ``Plot(name, title,
    caption, path)``, or one with ``skipped=reason``). Plugins register plots the
    same way, or through the entry point group ``npuzzle_harness.plots``."""
    if title is not None:
        PLOT_NAMES.setdefault(name, title)
    elif name not in PLOT_NAMES:
        raise ValueError(f"plot {name!r} needs a title")

    def wrap(draw: Callable[[PlotData], Plot]) -> Callable[[PlotData], Plot]:
        add(_PLOTS, "plot", name, draw, source(draw.__module__))
        return draw

    return wrap


def all_plots() -> dict[str, Callable[[PlotData], Plot]]:
    """Every registered per-run plot, in report order."""
    load_entry_points(ENTRY_POINT_GROUP)
    return dict(_PLOTS)


def make_plots(
    inst: pd.DataFrame,
    styles: dict[str, Style],
    plot_dir: Path,
    time_limit_s: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    formats: Sequence[str] = (),
    names: Collection[str] | None = None,
    top: Sequence[str] = (),
) -> list[Plot]:
    """Draw every standard plot of one run into ``plot_dir`` (``formats``: file
    types written beside each PNG), or those of ``names``; stale files of plots
    skipped this time are removed so the folder matches the report. ``progress``
    hears (plots drawn, plots in all) after each; ``top``: the verdict's best
    configs, highlighted in plots of many lines."""
    real_dir(plot_dir)
    answered = inst[inst["status"].isin(ANSWERED)] if len(inst) else inst
    solvable = (
        answered[answered["solvable"].astype(bool) & answered["optimal_length"].notna()]
        if len(inst)
        else inst
    )
    data = PlotData(
        inst, answered, solvable, styles, plot_dir, time_limit_s, tuple(formats),
        tuple(top),
    )  # fmt: skip
    load_entry_points(ENTRY_POINT_GROUP)
    chosen = [d for n, d in _PLOTS.items() if names is None or n in names]
    plots = []
    for draw in chosen:
        plots.append(draw(data))
        if progress is not None:
            progress(len(plots), len(chosen))
    for p in plots:
        if p.skipped:
            (plot_dir / f"{p.name}.png").unlink(missing_ok=True)
    return plots


#: File types a figure can be written as; PNG always (the HTML report embeds it).
FORMATS = ("png", "pdf", "pgf")
# Fonts embedded as TrueType (Type 42), not Type 3: what publishers ask for.
matplotlib.rcParams["pdf.fonttype"] = 42
matplotlib.rcParams["ps.fonttype"] = 42


def tex_available() -> bool:
    """Whether a LaTeX engine for the pgf backend is on PATH."""
    return any(shutil.which(t) for t in ("xelatex", "pdflatex", "lualatex"))


def save_figure(fig: plt.Figure, path: Path, formats: Sequence[str] = ()) -> Path:
    """Write ``fig`` to ``path``; a PNG also gets a file of each of ``formats``
    ("pdf", "pgf") beside it (same stem). Closes the figure."""
    path = Path(path)
    real_dir(path.parent)
    extras = [f for f in formats if f != "png"] if path.suffix == ".png" else ()
    try:
        for target in (path, *(path.with_suffix(f".{f}") for f in extras)):
            # whole or not at all: an interrupted report leaves no truncated image
            if target.suffix == ".pgf":
                write_atomic(target, lambda fh: fig.savefig(
                    fh, format="pgf", backend="pgf", bbox_inches="tight"))  # fmt: skip
            else:
                fmt = target.suffix[1:]
                write_atomic(target, lambda fh, f=fmt: fig.savefig(
                    fh, format=f, dpi=DPI, bbox_inches="tight"))  # fmt: skip
    finally:
        plt.close(fig)
    return path


def _save(fig: plt.Figure, plot_dir: Path, name: str, formats: Sequence[str]) -> Path:
    return save_figure(fig, plot_dir / f"{name}.png", formats)


def _finish(
    fig: plt.Figure, name: str, plot_dir: Path, caption: str, formats: Sequence[str]
) -> Plot:
    """Save the figure as ``NAME.png`` (and ``formats`` beside it); describe it."""
    return Plot(name, PLOT_NAMES[name], caption, _save(fig, plot_dir, name, formats))


def skipped_plot(name: str, why: str) -> Plot:
    return Plot(name, PLOT_NAMES[name], "", skipped=why)


# ------------------------------------------------------- the built-in plots


@register_plot("time_vs_depth")
def _time_vs_depth(d: PlotData) -> Plot:
    name = "time_vs_depth"
    return _drawn(name, d, depth_chart(
        d.solvable, highlighted(d.styles, d.top), PLOT_NAMES[name], "seconds", 1e3,
        "median time per instance (ms, log scale)", log=True, top=d.top,
    ))  # fmt: skip


@register_plot("instructions_vs_depth")
def _instructions_vs_depth(d: PlotData) -> Plot:
    """The time plot's axis in instructions (``harness run --instructions``)."""
    name = "instructions_vs_depth"
    if "instructions" not in d.solvable or d.solvable["instructions"].isna().all():
        return skipped_plot(name, "no instructions counted "
                            "(harness run --instructions)")  # fmt: skip
    return _drawn(name, d, depth_chart(
        d.solvable, d.styles, PLOT_NAMES[name], "instructions", 1,
        "instructions per solve (callgrind, log scale)", log=True,
    ))  # fmt: skip


@register_plot("expanded_vs_depth")
def _expanded_vs_depth(d: PlotData) -> Plot:
    name = "expanded_vs_depth"
    return _drawn(name, d, depth_chart(
        d.solvable, highlighted(d.styles, d.top), PLOT_NAMES[name], "expanded", 1,
        "nodes expanded (log scale)", log=True, top=d.top,
    ))  # fmt: skip


@register_plot("over_necessary_vs_depth")
def _over_necessary_vs_depth(d: PlotData) -> Plot:
    """Expansions on the yardstick (harness.results.columns.necessary): each
    config's nodes over the boards every optimal search with its heuristic must
    expand, with the line of 1x, the least a search that tests for the goal when
    it expands a board (A*, IDA*) can do."""
    name = "over_necessary_vs_depth"
    column = "over_necessary"
    if column not in d.solvable or d.solvable[column].isna().all():
        return skipped_plot(name, "no necessary set computed (optimal searches "
                            "on 3x3 boards under unit costs only)")  # fmt: skip
    made = depth_chart(
        d.solvable, highlighted(d.styles, d.top), PLOT_NAMES[name], column, 1,
        "nodes expanded / necessary (log scale)", log=True, top=d.top,
    )
    if not isinstance(made, str):
        fig, caption = made
        for ax in fig.axes:
            ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":", zorder=2)
            ax.yaxis.set_minor_formatter(PLAIN)  # a span under 10x: minor labels
        made = fig, caption + (
            " Dotted: 1x, the necessary set (g* + h < C*): a search with a "
            "consistent heuristic that tests for the goal when it expands a board "
            "(A*, IDA*) never goes below it; a bidirectional search can, and so "
            "can breadth-first search, which stops when it generates the goal."
        )
    return _drawn(name, d, made)


@register_plot("ebf_vs_depth")
def _ebf_vs_depth(d: PlotData) -> Plot:
    name = "ebf_vs_depth"
    solved = d.solvable[d.solvable["status"] == "solved"] if len(d.solvable) else (
        d.solvable
    )
    return _drawn(name, d, depth_chart(
        solved, highlighted(d.styles, d.top), PLOT_NAMES[name], "ebf", 1,
        "effective branching factor b*", log=False, top=d.top,
    ))  # fmt: skip


@register_plot("peak_memory")
def _peak_memory(d: PlotData) -> Plot:
    name = "peak_memory"
    return _drawn(name, d, memory_chart(d.inst, d.styles, PLOT_NAMES[name]))


@register_plot("cactus")
def _cactus(d: PlotData) -> Plot:
    name = "cactus"
    return _drawn(name, d, cactus_chart(
        d.answered, d.inst, highlighted(d.styles, d.top), PLOT_NAMES[name],
        d.time_limit_s, top=d.top,
    ))  # fmt: skip


@register_plot("heuristic_quality")
def _heuristic_quality(d: PlotData) -> Plot:
    name = "heuristic_quality"
    return _drawn(name, d, heuristic_chart(d.inst, PLOT_NAMES[name]))


@register_plot("unsolvable_time")
def _unsolvable_time(d: PlotData) -> Plot:
    name = "unsolvable_time"
    return _drawn(
        name, d, unsolvable_chart(d.answered, d.inst, d.styles, PLOT_NAMES[name])
    )


@register_plot("quality_vs_time")
def _quality_vs_time(d: PlotData) -> Plot:
    return _drawn("quality_vs_time", d, quality.quality_scatter(d.inst, d.styles))


@register_plot("suboptimality_vs_depth")
def _suboptimality_vs_depth(d: PlotData) -> Plot:
    name = "suboptimality_vs_depth"
    frame = quality.depth_frame(d.inst)
    if frame.empty:
        return skipped_plot(name, "every config returned optimal paths")
    return _drawn(name, d, depth_chart(
        frame, d.styles, PLOT_NAMES[name], "suboptimality", 1,
        "path length / optimal", log=False,
    ))  # fmt: skip


@register_plot("coverage_vs_bound")
def _coverage_vs_bound(d: PlotData) -> Plot:
    limit = d.time_limit_s if d.time_limit_s else 60.0
    return _drawn(
        "coverage_vs_bound", d, quality.coverage_vs_bound(d.inst, d.styles, limit)
    )


def _drawn(name: str, d: PlotData, made: tuple | str) -> Plot:
    """A chart's (figure, caption) written as ``NAME.png``, or a chart's reason
    for not drawing it as a skipped plot."""
    if isinstance(made, str):
        return skipped_plot(name, made)
    fig, caption = made
    return _finish(fig, name, d.plot_dir, caption, d.formats)


seal(_PLOTS)  # the built-in plots above; plugins' are forgotten by scoped_registry
seal(PLOT_NAMES)
