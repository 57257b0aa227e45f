"""Paper figures: per-instance scatter plots and performance profiles.

- :func:`scatter_plot`: one point per instance, config X against config Y (or one
  config in two runs), log-log with the diagonal; an instance one side failed on
  (timeout, memout, error, invalid, skipped) sits on a dashed border line beyond
  the limit; colour by dataset or by optimal depth; a relative mode draws Y/X
  against X. The standard figure of heuristic-search papers (as in Downward Lab).
- :func:`profile_plot`: performance profiles (Dolan & Moré 2002, "Benchmarking
  optimization software with performance profiles", Math. Programming 91):
  for each config the fraction of instances it answered within a factor tau of
  the best config on that instance, tau on a log axis. A failure has ratio
  infinity, so a config that failed anything never reaches 1.

Input is the per-instance table (``dataset``, ``instance``, ``config``,
``status``, ``seconds``, ``expanded``, ``optimal_length``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from harness.results import ANSWERED  # noqa: E402

#: measure -> (column, scale to display unit, axis words)
MEASURES = {
    "time": ("seconds", 1e3, "time (ms)"),
    "expanded": ("expanded", 1.0, "nodes expanded"),
}
#: Values clamped from below before ratios and logs: the timer's floor is ~0.3 us,
#: and a board that is already the goal expands no node.
CLAMP = {"time": 1e-3, "expanded": 1.0}  # in display units (ms, nodes)
DPI = 110
PLAIN = FuncFormatter(lambda v, _pos: f"{v:,.10g}")


def _compact(value: float, _pos=None) -> str:
    """Log-axis labels that fit side by side: 0.1, 1, 10, 100, 1k, 10k, 1M."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= div:
            return f"{value / div:,.10g}{suffix}"
    return f"{value:,.10g}"


COMPACT = FuncFormatter(_compact)


class FigureError(ValueError):
    """A figure that cannot be drawn as asked (unknown config, no data)."""


@dataclass(slots=True)
class Panel:
    """One scatter panel: ``frame`` has dataset, instance, optimal_length, x, y
    (display units, NaN where that side failed) and x_ok, y_ok."""

    frame: pd.DataFrame
    xlabel: str
    ylabel: str
    title: str = ""


def pair_frame(
    x: pd.DataFrame, y: pd.DataFrame, measure: str, by_config: bool = False
) -> pd.DataFrame:
    """Instances of two tables side by side (outer join on dataset and instance,
    and config with ``by_config``: the same configs in two runs), values in display
    units; a side is ok when it answered with a value."""
    if measure not in MEASURES:
        raise FigureError(f"measure {measure!r} is not one of {', '.join(MEASURES)}")
    column, scale, _ = MEASURES[measure]
    on = ["dataset", "instance", *(["config"] if by_config else [])]
    keep = [*on, "optimal_length", "status", column]

    def side(frame: pd.DataFrame) -> pd.DataFrame:
        part = frame[keep].copy()
        part["ok"] = part["status"].isin(ANSWERED) & part[column].notna()
        part["value"] = np.maximum(part[column] * scale, CLAMP[measure])
        return part

    both = side(x).merge(side(y), on=on, how="outer", suffixes=("_x", "_y"))
    both["optimal_length"] = both["optimal_length_x"].fillna(both["optimal_length_y"])
    both["x_ok"] = both["ok_x"].fillna(False).astype(bool)
    both["y_ok"] = both["ok_y"].fillna(False).astype(bool)
    both["x"] = both["value_x"].where(both["x_ok"])
    both["y"] = both["value_y"].where(both["y_ok"])
    if not by_config:
        both["config"] = ""
    return both[["dataset", "instance", "config", "optimal_length", "x", "y",
                 "x_ok", "y_ok"]]  # fmt: skip


def config_pair(
    inst: pd.DataFrame, x: str, y: str, measure: str, label: str = ""
) -> Panel:
    """A panel of config ``x`` against config ``y`` from one per-instance table."""
    configs = set(inst["config"])
    for name in (x, y):
        if name not in configs:
            raise FigureError(
                f"config {name!r} is not in the run (it has: "
                f"{', '.join(sorted(configs)) or 'none'})"
            )
    unit = MEASURES[measure][2]
    frame = pair_frame(inst[inst["config"] == x], inst[inst["config"] == y], measure)
    return Panel(frame, f"{x}: {unit}", f"{y}: {unit}", label)


def _border(panels: Sequence[Panel], limit: float | None) -> float:
    """Where failures are drawn: twice the limit, or 4x the largest value."""
    values = np.concatenate(
        [p.frame[["x", "y"]].to_numpy(dtype=float).ravel() for p in panels]
    )
    values = values[np.isfinite(values)]
    top = float(values.max()) if len(values) else 1.0
    if limit is not None and limit > 0:
        return max(float(limit), top) * 2.0
    return top * 4.0


def scatter_plot(
    panels: Sequence[Panel],
    path: Path,
    *,
    measure: str,
    limit: float | None = None,
    color_by: str = "dataset",
    relative: bool = False,
    title: str = "",
    styles: dict | None = None,
    formats: Sequence[str] = (),
) -> Path:
    """Draw the panels side by side into ``path`` (the suffix picks PNG, PDF or
    PGF). ``limit``: the measure's limit in display units (time: the time limit in
    ms), beyond which the failure border is drawn. ``color_by``: dataset, depth
    or config (``styles``: config -> Style, for panels of several configs)."""
    if color_by not in ("dataset", "depth", "config"):
        raise FigureError(f"colour by {color_by!r}: use dataset or depth")
    if color_by == "config" and not styles:
        raise FigureError("colour by config needs the config styles")
    if not panels or all(p.frame.empty for p in panels):
        raise FigureError("no instance to draw")
    border = _border(panels, limit)
    failures = any((~(p.frame["x_ok"] & p.frame["y_ok"])).any() for p in panels)
    datasets = sorted({d for p in panels for d in p.frame["dataset"]})
    cmap = plt.get_cmap("tab10" if len(datasets) <= 10 else "tab20")
    ds_color = {d: cmap(i % cmap.N) for i, d in enumerate(datasets)}
    depths = np.concatenate([p.frame["optimal_length"].to_numpy(float) for p in panels])
    depths = depths[np.isfinite(depths)]
    norm = plt.Normalize(*(depths.min(), depths.max()) if len(depths) else (0, 1))
    ncols = 2 if len(panels) == 4 else min(len(panels), 3)
    nrows = -(-len(panels) // ncols)
    fig, grid = plt.subplots(
        nrows, ncols, figsize=(4.4 * ncols + 1.6, 4.4 * nrows), squeeze=False,
        layout="constrained",
    )  # fmt: skip
    for ax in grid.ravel()[len(panels):]:
        ax.set_visible(False)
    axes = [list(grid.ravel()[: len(panels)])]
    mappable = None
    for ax, panel in zip(axes[0], panels, strict=True):
        f = panel.frame
        finite = f[["x", "y"]].to_numpy(dtype=float)
        finite = finite[np.isfinite(finite)]
        lo = float(finite.min()) / 2 if len(finite) else border / 100
        x = f["x"].fillna(border).to_numpy(dtype=float)
        y = f["y"].fillna(border).to_numpy(dtype=float)
        failed = ~(f["x_ok"] & f["y_ok"]).to_numpy()
        if relative:
            both = ~failed
            ratio = np.where(both, y / x, np.nan)
            r = ratio[np.isfinite(ratio)]
            span = max(float(np.abs(np.log10(r)).max()) if len(r) else 1.0, 1.0)
            r_top, r_bot = 10 ** (span + 0.5), 10 ** -(span + 0.5)
            # Y failed: top border; X failed: bottom border, at the value answered.
            ratio = np.where(~f["y_ok"] & f["x_ok"], r_top, ratio)
            ratio = np.where(~f["x_ok"] & f["y_ok"], r_bot, ratio)
            x = np.where(f["x_ok"], x, y)
            keep = np.isfinite(ratio)
            y_plot, x_plot, fail_plot = ratio[keep], x[keep], failed[keep]
            colors_src = f[keep]
        else:
            x_plot, y_plot, fail_plot, colors_src = x, y, failed, f
        if color_by == "dataset":
            colors = [ds_color[d] for d in colors_src["dataset"]]
            kw = {"c": colors}
        elif color_by == "config":
            kw = {"c": [styles[c].color for c in colors_src["config"]]}
        else:
            kw = {"c": colors_src["optimal_length"].to_numpy(float), "cmap": "viridis",
                  "norm": norm}  # fmt: skip
        ok_pts = ~fail_plot
        sub = {k: (np.asarray(v)[ok_pts] if k == "c" else v) for k, v in kw.items()}
        mappable = ax.scatter(
            x_plot[ok_pts], y_plot[ok_pts], s=22, marker="o", edgecolors="black",
            linewidths=0.4, alpha=0.85, **sub,
        )  # fmt: skip
        if fail_plot.any():
            sub = {k: (np.asarray(v)[fail_plot] if k == "c" else v)
                   for k, v in kw.items()}  # fmt: skip
            ax.scatter(
                x_plot[fail_plot], y_plot[fail_plot], s=34, marker="X",
                edgecolors="black", linewidths=0.4, **sub,
            )  # fmt: skip
        if failures:
            hi = border * 1.6
        else:  # nothing to draw on a border: the axes end near the data
            top = float(finite.max()) if len(finite) else border
            hi = top * 1.6
        if relative:
            ax.axhline(1.0, color="black", linewidth=1)
            ax.axhline(r_top, color="grey", linestyle="--", linewidth=0.8)
            ax.axhline(r_bot, color="grey", linestyle="--", linewidth=0.8)
            ax.set(xscale="log", yscale="log", xlim=(lo, hi),
                   ylim=(r_bot / 2, r_top * 2))  # fmt: skip
            ax.set_xlabel(panel.xlabel + " (log)")
            ax.set_ylabel(f"ratio {panel.ylabel.split(':')[0]} / "
                          f"{panel.xlabel.split(':')[0]} (log)")  # fmt: skip
            ax.annotate("Y failed", (lo * 1.1, r_top), fontsize=7, va="bottom",
                        color="grey")  # fmt: skip
            ax.annotate("X failed", (lo * 1.1, r_bot), fontsize=7, va="top",
                        color="grey")  # fmt: skip
        else:
            ax.plot([lo, hi], [lo, hi], color="black", linewidth=1)
            ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi),
                   aspect="equal")  # fmt: skip
            ax.set_xlabel(panel.xlabel + " (log)")
            ax.set_ylabel(panel.ylabel + " (log)")
            if failures:
                ax.axvline(border, color="grey", linestyle="--", linewidth=0.8)
                ax.axhline(border, color="grey", linestyle="--", linewidth=0.8)
                ax.annotate("failed", (border, lo * 1.2), rotation=90, fontsize=7,
                            color="grey", ha="right", va="bottom")  # fmt: skip
                ax.annotate("failed", (lo * 1.2, border), fontsize=7, color="grey",
                            va="bottom")  # fmt: skip
        ax.xaxis.set_major_formatter(COMPACT)
        ax.yaxis.set_major_formatter(COMPACT)
        ax.grid(True, which="major", alpha=0.3)
        if panel.title:
            ax.set_title(panel.title, fontsize=10)
    if title:
        fig.suptitle(title)
    if color_by == "depth" and mappable is not None and len(depths):
        fig.colorbar(mappable, ax=list(axes[0]), label="optimal depth (moves)",
                     shrink=0.8)  # fmt: skip
    else:
        names = datasets
        colors_of = ds_color
        if color_by == "config":
            names = sorted({c for p in panels for c in p.frame["config"]})
            colors_of = {c: styles[c].color for c in names}
        handles = [
            plt.Line2D([], [], linestyle="none", marker="o", color=colors_of[d],
                       markeredgecolor="black", label=d)
            for d in names
        ]  # fmt: skip
        if failures:
            handles.append(
                plt.Line2D([], [], linestyle="none", marker="X", color="grey",
                           label="one side failed")
            )  # fmt: skip
        fig.legend(handles=handles, loc="outside right center", fontsize=8,
                   frameon=False, title=color_by)  # fmt: skip
    return _save(fig, path, formats)


def _save(fig: plt.Figure, path: Path, formats: Sequence[str] = ()) -> Path:
    from harness.report.plots import save_figure

    return save_figure(fig, path, formats)


# ------------------------------------------------------------ profiles


def profile_ratios(inst: pd.DataFrame, measure: str) -> pd.DataFrame:
    """Dolan & Moré's performance ratios: one row per instance (dataset, instance)
    that some config answered, one column per config that answered something;
    value / best value on that instance, ``inf`` where the config did not answer."""
    column, scale, _ = MEASURES[measure]
    if inst.empty or column not in inst.columns:
        return pd.DataFrame()
    ok = inst[inst["status"].isin(ANSWERED) & inst[column].notna()]
    if ok.empty:
        return pd.DataFrame()
    values = ok.assign(v=np.maximum(ok[column] * scale, CLAMP[measure])).pivot_table(
        index=["dataset", "instance"], columns="config", values="v", aggfunc="first"
    )
    best = values.min(axis=1)
    return values.div(best, axis=0).fillna(np.inf)


def profile_curve(ratios: pd.Series, taus: np.ndarray) -> np.ndarray:
    """rho(tau): the fraction of instances with ratio <= tau."""
    r = np.sort(ratios.to_numpy(dtype=float))
    return np.searchsorted(r, taus, side="right") / len(r)


def profile_plot(
    inst: pd.DataFrame,
    measure: str,
    styles: dict,
    path: Path,
    title: str = "",
    formats: Sequence[str] = (),
) -> Path | None:
    """Draw the performance profile of ``measure`` into ``path``; None when no
    config answered anything. ``styles``: config -> Style (color, linestyle,
    marker) as in :func:`harness.report.styles.style_map`."""
    ratios = profile_ratios(inst, measure)
    if ratios.empty:
        return None
    finite = ratios.to_numpy(dtype=float)
    finite = finite[np.isfinite(finite)]
    top = max(float(finite.max()) * 2 if len(finite) else 10.0, 10.0)
    taus = np.unique(np.concatenate([[1.0], finite, [top]]))
    fig, ax = plt.subplots(figsize=(8, 4.8), layout="constrained")
    order = sorted(
        ratios.columns, key=lambda c: (-np.isfinite(ratios[c]).sum(), c)
    )
    for config in order:
        s = styles.get(config)
        rho = profile_curve(ratios[config], taus)
        ax.step(taus, rho, where="post", label=config,
                color=s.color if s else None, linestyle=s.linestyle if s else "-",
                linewidth=1.6)  # fmt: skip
        if s is not None:
            ax.plot(taus[-1:], rho[-1:], marker=s.marker, color=s.color)
    ax.set_xscale("log")
    decades = np.log10(top)
    subs = (1.0, 2.0, 5.0) if decades <= 3 else (1.0,) if decades <= 8 else None
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs or (1.0,),
                                          numticks=12))  # fmt: skip
    ax.xaxis.set_major_formatter(PLAIN)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(1, top)
    ax.set_ylim(0, 1.02)
    ax.axhline(1.0, color="black", linewidth=0.6, linestyle=":")
    unit = MEASURES[measure][2].split(" (")[0]
    ax.set_xlabel(f"tau: within this factor of the best config's {unit} (log)")
    ax.set_ylabel(f"fraction of the {len(ratios)} instances")
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title or f"Performance profile: {unit}")
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", fontsize=8,
               frameon=False, title="config")  # fmt: skip
    return _save(fig, path, formats)


# ------------------------------------------------------- the report's set

#: File stem -> title of the figures this module adds to the report.
FIGURE_NAMES = {
    "profile_time": "Performance profile: time",
    "profile_expanded": "Performance profile: nodes expanded",
    "scatter": "Nodes expanded per instance: each heuristic against manhattan",
}


def default_pairs(inst: pd.DataFrame) -> list[tuple[str, list, list[str]]]:
    """The report's scatter plots: per solver that ran with ``manhattan`` and
    another heuristic, ``(solver, [(solver[manhattan], solver[h]), ...], twins)``
    over the heuristics that answered something. A solver whose panels hold exactly
    the same node counts as one already listed (a compiled twin) is not drawn
    again; it is named in ``twins`` of the one drawn."""
    if inst.empty or "expanded" not in inst.columns:
        return []
    ok = inst[inst["status"].isin(ANSWERED)]
    answered = set(ok["config"])
    out, seen, twins = [], [], []
    solvers = sorted({c.partition("[")[0] for c in answered})
    for solver in solvers:
        base = f"{solver}[manhattan]"
        if base not in answered:
            continue
        others = sorted(
            c for c in answered if c.startswith(f"{solver}[") and c != base
        )
        if not others:
            continue
        key = []
        for other in others:
            pair = pair_frame(inst[inst.config == base], inst[inst.config == other],
                              "expanded")  # fmt: skip
            key.append((other.partition("[")[2],
                        tuple(pair.sort_values(["dataset", "instance"])[["x", "y"]]
                              .fillna(-1).to_numpy().ravel())))  # fmt: skip
        if key in seen:
            twins[seen.index(key)].append(solver)
            continue
        seen.append(key)
        twins.append([])
        out.append((solver, [(base, o) for o in others]))
    return [(s, pairs, t) for (s, pairs), t in zip(out, twins, strict=True)]


def report_figures(
    inst: pd.DataFrame,
    styles: dict,
    plot_dir: Path,
    time_limit_s: float | None,
    formats: Sequence[str] = (),
) -> list:
    """The profiles and the default scatter plots for the report, as
    :class:`harness.report.plots.Plot` (skipped ones say why); ``formats``: file
    types written beside each PNG."""
    from harness.report.plots import Plot

    made = []
    for measure in ("time", "expanded"):
        name = f"profile_{measure}"
        path = profile_plot(inst, measure, styles, plot_dir / f"{name}.png",
                            title=FIGURE_NAMES[name], formats=formats)  # fmt: skip
        if path is None:
            made.append(Plot(name, FIGURE_NAMES[name], "",
                             skipped="no config answered any instance"))  # fmt: skip
            continue
        n = len(profile_ratios(inst, measure))
        made.append(Plot(name, FIGURE_NAMES[name], (
            f"Dolan & Moré performance profile over the {n} instances some config "
            f"answered: for each config, the fraction of instances it answered "
            f"within a factor tau of the best config's {MEASURES[measure][2]} on "
            "that instance. At tau = 1: how often it is the best; the height at "
            "the right: its coverage (a config that failed or skipped anything "
            "never reaches 1). Values below "
            f"{CLAMP[measure]:g} {'ms' if measure == 'time' else 'nodes'} count "
            "as that floor."
        ), path))  # fmt: skip
    pairs = default_pairs(inst)
    if not pairs:
        made.append(Plot("scatter", FIGURE_NAMES["scatter"], "", skipped=(
            "no solver ran with manhattan and another heuristic")))  # fmt: skip
    for solver, configs, twins in pairs:
        name = f"scatter_{solver}"
        title = f"{solver}: nodes expanded per instance, against manhattan"
        same = (
            f" {', '.join(twins)} expanded exactly the same nodes on every instance, "
            "so it is not drawn again." if twins else ""
        )

        def draw(p, configs=configs, title=title):
            panels = [config_pair(inst, x, y, "expanded", y.partition("[")[2][:-1])
                      for x, y in configs]  # fmt: skip
            return scatter_plot(
                panels, p, measure="expanded", title=title, formats=formats
            )

        path = draw(plot_dir / f"{name}.png")
        made.append(Plot(name, title, (
            f"One point per instance: nodes expanded by {solver}[manhattan] (x) "
            "against the heuristic named above each panel (y), log-log. Below the "
            "diagonal the other heuristic expands fewer nodes. A cross on a dashed "
            "line beyond the largest value: that side did not answer (timeout, "
            "error or skipped). Colour: dataset." + same
        ), path))  # fmt: skip
    return made


def compare_plot(
    per_run: Sequence[pd.DataFrame],
    styles: dict,
    plot_dir: Path,
    formats: Sequence[str] = (),
):
    """Per-instance median time of each later run against the first, one panel per
    later run, through the same scatter function as the report's config-against-
    config plots (log-log, diagonal = unchanged, failures on the border line);
    ``per_run`` are instance tables with a ``run`` column."""
    from harness.report.plots import PLOT_NAMES, Plot, skipped_plot

    name = "compare_time"
    base = per_run[0]
    old_label = base["run"].iat[0]
    panels = []
    for new in per_run[1:]:
        frame = pair_frame(base, new, "time", by_config=True)
        frame = frame[frame["x_ok"] | frame["y_ok"]]
        if (frame["x_ok"] & frame["y_ok"]).any():
            label = new["run"].iat[0]
            panels.append(
                Panel(frame, f"{old_label}: time (ms)", f"{label}: time (ms)")
            )
    if not panels:
        (plot_dir / f"{name}.png").unlink(missing_ok=True)
        return skipped_plot(
            name, "no instance was answered by the same config in two runs"
        )
    path = scatter_plot(
        panels, plot_dir / f"{name}.png", measure="time", color_by="config",
        styles=styles, title=PLOT_NAMES[name], formats=formats,
    )  # fmt: skip
    caption = (
        "One point per instance and config answered in at least one of the runs. "
        "On the diagonal: same time; below it: the newer run is faster. A cross "
        "on a dashed line: that run did not answer the instance."
    )
    return Plot(name, PLOT_NAMES[name], caption, path)
