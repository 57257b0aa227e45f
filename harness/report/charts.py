"""The charts of a run's report (matplotlib, Agg backend), each drawn from the
per-instance table of :func:`harness.analysis.instances`: solve time, nodes and
the like against the optimal depth, peak memory per config, the cactus plot,
the heuristics' quality and the time to answer 'unsolvable'.

A chart returns (figure, caption), or in words why it is not drawn;
:mod:`harness.report.plots` registers the plots that draw them and writes the
files, as it does for :mod:`harness.report.quality`'s figures.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from harness.report.styles import (  # noqa: E402
    HATCHES,
    HIGHLIGHT_CAPTION,
    MUTED,
    Style,
    legend,
)

#: Plain tick labels (0.01, 30, 1,000) instead of 10^k: read by people, not reviewers.
PLAIN = FuncFormatter(lambda v, _pos: f"{v:,.10g}")


def _scale_y(ax: plt.Axes, values: np.ndarray, unit: str, quantity: str) -> None:
    """Log y when the values span more than 20x, linear from 0 otherwise."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if len(values) and values.max() / values.min() > 20:
        ax.set_yscale("log")
        ax.set_ylabel(f"{quantity} ({unit}, log scale)")
    else:
        ax.set_ylim(0, (values.max() if len(values) else 1) * 1.15)
        ax.set_ylabel(f"{quantity} ({unit})")
    ax.yaxis.set_major_formatter(PLAIN)


def _boxes(ax: plt.Axes, values: list[np.ndarray], labels: list[str],
           faces: list[tuple], **ticks) -> None:
    """One box per array (no fliers; ``faces``: (facecolor, hatch) each), black
    medians, and the x ticks ``label (n=N)``; ``ticks``: their text options."""
    box = ax.boxplot(values, widths=0.5, patch_artist=True, showfliers=False)
    for patch, (face, hatch) in zip(box["boxes"], faces, strict=True):
        patch.set(facecolor=face, hatch=hatch, edgecolor="black")
    for median in box["medians"]:
        median.set(color="black", linewidth=2)
    ax.set_xticks(
        range(1, len(values) + 1),
        [f"{label}\n(n={len(v)})" for label, v in zip(labels, values, strict=True)],
        **ticks,
    )


def depth_chart(
    data: pd.DataFrame,
    styles: dict[str, Style],
    title: str,
    column: str,
    scale: float,
    ylabel: str,
    log: bool,
    top: Sequence[str] = (),
) -> tuple | str:
    """``column`` (times ``scale``) against the optimal depth, one panel per board
    size: (figure, caption), or why it is not drawn."""
    data = data[data[column].notna()] if len(data) else data
    if data.empty:
        return "no answered instance with a known optimal depth"
    sizes = sorted(data["size"].unique())
    fig, axes = plt.subplots(
        1, len(sizes), figsize=(6.5 * len(sizes) + 1.5, 4.6), squeeze=False
    )
    for ax, size in zip(axes[0], sizes, strict=True):
        part = data[data["size"] == size]
        for config in sorted(part["config"].unique()):
            s = styles[config]
            by_depth = (
                part[part["config"] == config]
                .groupby("optimal_length")[column]
                .agg(["median", "min", "max"])
                * scale
            )
            x = by_depth.index.to_numpy(dtype=float)
            muted = s.color == MUTED  # behind the top configs, thin, no band
            ax.plot(
                x,
                by_depth["median"],
                color=s.color,
                linestyle=s.linestyle,
                marker=s.marker,
                markersize=5,
                label=config,
                linewidth=1.0 if muted else 1.8,
                zorder=1 if muted else 3,
            )
            if not muted and (by_depth["max"] > by_depth["min"]).any():
                ax.fill_between(
                    x,
                    by_depth["min"],
                    by_depth["max"],
                    color=s.color,
                    alpha=0.12,
                    linewidth=0,
                )
        ax.set_xlabel(f"optimal depth (moves), {size}")
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(PLAIN)
        ax.grid(True, which="major", alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
    fig.suptitle(title)
    legend(fig, axes[0][-1], top)
    caption = (
        "Line: median over the instances at each depth"
        + (" (each instance: median over its repeats)" if column == "seconds" else "")
        + "; band: minimum to maximum. Answered instances only."
    )
    if column == "ebf":
        caption = (
            "b* solves N + 1 = 1 + b* + ... + b*^d (N = nodes generated, d = "
            "returned path length). Line: median per depth; band: min to max."
        )
    if any(styles[c].color == MUTED for c in data["config"].unique()):
        caption += HIGHLIGHT_CAPTION
    return fig, caption


def memory_chart(
    inst: pd.DataFrame, styles: dict[str, Style], title: str
) -> tuple | str:
    """Each config's largest peak memory, as bars: (figure, caption), or why not."""
    delta = "peak_rss_delta_bytes"
    if (
        inst.empty
        or "peak_bytes" not in inst
        or delta not in inst
        or (inst["peak_bytes"].isna().all() and inst[delta].isna().all())
    ):
        return (
            "the run has no memory-pass rows with what the solve added "
            "(schema-1 runs only recorded the worker's absolute peak)"
        )
    # One bar per config: its largest peak over every instance of every dataset
    # (per-dataset bars made a figure metres wide once there were 20 configs).
    peaks = inst.groupby("config")[["peak_bytes", delta]].max()
    peaks = peaks.dropna(how="all") / (1 << 20)
    configs = sorted(peaks.index, reverse=True)  # alphabetical from the top
    fig, axes = plt.subplots(
        1, 2, figsize=(12, 1.2 + 0.32 * len(configs)), layout="constrained",
        sharey=True,
    )  # fmt: skip
    for ax, col, label in (
        (axes[0], delta, "RSS added by the solve"),
        (axes[1], "peak_bytes", "tracemalloc peak"),
    ):
        values = peaks[col].reindex(configs).to_numpy(dtype=float)
        shown = np.where(np.isfinite(values) & (values > 0), values, np.nan)
        ax.barh(
            range(len(configs)),
            np.nan_to_num(shown),
            color=[styles[c].color for c in configs],
            hatch=None,
            edgecolor="black",
            linewidth=0.6,
        )
        for bar, config in zip(ax.patches, configs, strict=True):
            bar.set_hatch(styles[config].hatch)
        ax.set_yticks(range(len(configs)), configs)
        positive = shown[np.isfinite(shown)]
        if len(positive) and positive.max() / positive.min() > 20:
            ax.set_xscale("log")
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        scale = ", log scale" if ax.get_xscale() == "log" else ""
        ax.set_xlabel(f"{label} (MiB{scale})")
        ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(title)
    caption = (
        "Largest over each config's instances (all datasets), in the separate, "
        "untimed memory pass. RSS added = the worker's peak resident set during the "
        "solve minus its resident set just before: the interpreter, numba and the "
        "tables loaded in set-up (pattern databases) are not in it; compiled code's "
        "buffers are. tracemalloc counts Python allocations only, and is measured "
        "only for solves that added under 16 MiB."
    )
    return fig, caption


def cactus_chart(
    answered: pd.DataFrame,
    inst: pd.DataFrame,
    styles: dict[str, Style],
    title: str,
    time_limit_s: float | None,
    top: Sequence[str] = (),
) -> tuple | str:
    """Instances answered against a per-instance time limit, one step line per
    config: (figure, caption), or why it is not drawn."""
    data = answered[answered["seconds"].notna()] if len(answered) else answered
    if data.empty:
        return "no config answered any instance"
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for config in sorted(data["config"].unique()):
        s = styles[config]
        ms = np.sort(data.loc[data["config"] == config, "seconds"].to_numpy() * 1e3)
        muted = s.color == MUTED  # behind the top configs, thin
        ax.step(
            ms,
            np.arange(1, len(ms) + 1),
            where="post",
            color=s.color,
            linestyle=s.linestyle,
            linewidth=1.0 if muted else 1.8,
            zorder=1 if muted else 3,
            label=config,
        )
        if not muted:
            ax.plot(ms[-1:], [len(ms)], marker=s.marker, color=s.color,
                    linestyle="none")  # fmt: skip
    if time_limit_s:
        ax.axvline(time_limit_s * 1e3, color="black", linestyle=":", linewidth=1)
        ax.annotate(
            "time limit",
            (time_limit_s * 1e3, 0.02),
            xycoords=("data", "axes fraction"),
            rotation=90,
            ha="right",
            va="bottom",
            fontsize=8,
        )
    total = inst[["dataset", "instance"]].drop_duplicates().shape[0]
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(PLAIN)
    ax.set_xlabel("time limit per instance (ms, log scale)")
    ax.set_ylabel(f"instances answered (of {total})")
    ax.yaxis.get_major_locator().set_params(integer=True)  # counts: no 2.5 ticks
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title)
    legend(fig, ax, top)
    caption = (
        "How many instances (over all datasets; solved or proved unsolvable) "
        "each config answers within a given per-instance time; further right "
        "is slower, higher is more. Marker: the config's last answered instance."
    )
    if any(styles[c].color == MUTED for c in data["config"].unique()):
        caption += HIGHLIGHT_CAPTION
    return fig, caption


def heuristic_chart(inst: pd.DataFrame, title: str) -> tuple | str:
    """h(start) / optimal length per heuristic, as boxes: (figure, caption), or
    why it is not drawn."""
    if inst.empty:
        return "no rows"
    data = inst[
        (inst["heuristic"] != "none")
        & inst["h_start"].notna()
        & (inst["optimal_length"] > 0)
    ]
    data = data.drop_duplicates(["heuristic", "dataset", "instance"])
    if data.empty:
        return (
            "no heuristic value at a start board with a known, non-zero optimal depth"
        )
    heuristics = sorted(data["heuristic"].unique())
    ratios = [
        (
            data.loc[data["heuristic"] == h, "h_start"]
            / data.loc[data["heuristic"] == h, "optimal_length"]
        ).to_numpy()
        for h in heuristics
    ]
    fig, ax = plt.subplots(figsize=(max(5.5, 1.6 * len(heuristics) + 2), 4.6))
    greys = np.linspace(0.55, 0.9, len(heuristics))
    _boxes(ax, ratios, heuristics, [((g, g, g), HATCHES[i % len(HATCHES)])
                                    for i, g in enumerate(greys)])  # fmt: skip
    rng = np.random.default_rng(0)  # fixed jitter: the same data draws the same PNG
    for i, r in enumerate(ratios, start=1):
        ax.plot(
            i + rng.uniform(-0.12, 0.12, len(r)),
            r,
            "o",
            color="black",
            markersize=3,
            alpha=0.6,
        )
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    ax.annotate(
        "perfect: h = optimal",
        (0.99, 1.0),
        xycoords=("axes fraction", "data"),
        va="bottom",
        ha="right",
        fontsize=8,
    )
    ax.set_xlabel("heuristic")
    ax.set_ylabel("h(start) / optimal length (ratio)")
    ax.set_ylim(0, max(1.15, max(float(np.max(r)) for r in ratios) * 1.1))
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title)
    caption = (
        "One point per start board with a known optimum (each board counted "
        "once per heuristic). Closer to 1 is better informed; above 1 would "
        "mean the heuristic overestimates (not admissible)."
    )
    return fig, caption


def unsolvable_chart(
    answered: pd.DataFrame, inst: pd.DataFrame, styles: dict[str, Style], title: str
) -> tuple | str:
    """Time to answer 'unsolvable', one box per config: (figure, caption), or why
    it is not drawn."""
    if inst.empty or inst["solvable"].astype(bool).all():
        return "the run has no unsolvable boards"
    data = answered[(answered["status"] == "unsolvable") & answered["seconds"].notna()]
    if data.empty:
        return "no config answered an unsolvable board (all skipped or failed them)"
    configs = sorted(data["config"].unique())
    values = [
        data.loc[data["config"] == c, "seconds"].to_numpy() * 1e3 for c in configs
    ]
    # 1.5 in per box was 35 in wide for the main job's 20 configs: past 6 boxes the
    # labels stand upright and the figure stops growing at 13 in.
    wide = len(configs) > 6
    fig, ax = plt.subplots(
        figsize=(min(max(6, (0.55 if wide else 1.5) * len(configs) + 2.5), 13),
                 6.4 if wide else 4.6)
    )  # fmt: skip
    _boxes(
        ax, values, configs,
        [((*styles[c].color[:3], 0.35), styles[c].hatch) for c in configs],
        rotation=90 if wide else 15 if len(configs) > 4 else 0,
        fontsize=8 if wide else None,
    )  # fmt: skip
    _scale_y(ax, np.concatenate(values), "ms", "time to report 'unsolvable'")
    for i, (config, v) in enumerate(zip(configs, values, strict=True), start=1):
        s = styles[config]
        ax.plot(
            np.full(len(v), float(i)),
            v,
            linestyle="none",
            marker=s.marker,
            color=s.color,
            markeredgecolor="black",
            markersize=6,
        )
    ax.set_xlabel("config")
    ax.grid(True, axis="y", alpha=0.3)
    ax.set_title(title)
    caption = (
        "Median time per unsolvable board (correct 'unsolvable' answers only); "
        "a config that must exhaust the reachable half of the state space "
        "pays its full size here."
    )
    return fig, caption
