"""Solution quality against cost: what a bounded or greedy search gives up for its
speed. Figures (built here, registered in :mod:`harness.report.plots`) and
findings in words, from the per-instance table of :func:`harness.analysis.instances`.

Every config is placed by two numbers per dataset, over the instances that every
config placed there answered (the common set, as the fair tables use):
``cpu_seconds`` = the total of their per-instance median CPU times, and
``suboptimality`` = the mean of path length / optimum (over the best path found
where no optimum is known, said so in the caption; under tile costs path cost /
the cheapest cost: a dataset ``NAME@MODEL`` is its own panel, so each cost model
gets its own quality-vs-time plot). A config is on the Pareto
front when no other is at least as fast and at least as short, and better in one.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from harness.analysis.aggregate import sig  # noqa: E402
from harness.results import ANSWERED  # noqa: E402

#: Datasets drawn per quality figure (one panel each), largest first.
MAX_PANELS = 4


def solved_quality(inst: pd.DataFrame) -> pd.DataFrame:
    """The solved instances with a suboptimality (solvable boards only)."""
    if inst.empty or "suboptimality" not in inst:
        return inst.iloc[0:0]
    return inst[(inst["status"] == "solved") & inst["suboptimality"].notna()]


def has_quality_spread(inst: pd.DataFrame) -> bool:
    """Whether some config claims less than optimality or returned a longer
    path than the optimum: only then are the quality figures worth drawing."""
    solved = solved_quality(inst)
    if solved.empty:
        return False
    bound = inst["bound"] if "bound" in inst else pd.Series(dtype=float)
    return bool((bound > 1).any() or (solved["suboptimality"] > 1).any())


def pareto_front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mask of the points no other point dominates (x and y both lower is better:
    another point at most as large in both and smaller in one dominates)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.ones(len(x), dtype=bool)
    for i in range(len(x)):
        beaten = (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i]))
        keep[i] = not beaten.any()
    return keep


def quality_points(inst: pd.DataFrame) -> pd.DataFrame:
    """One row per (dataset, config) that solved something: ``cpu_seconds`` and
    ``suboptimality`` (mean) over the dataset's common solved instances,
    ``median_suboptimality`` there too, ``common_n``, ``bound``, ``coverage`` (all
    answered instances of the dataset), ``instances``, ``basis`` ("optimum",
    "best found" or "mixed") and ``pareto`` (on the dataset's front)."""
    solved = solved_quality(inst)
    columns = ["dataset", "config", "solver", "heuristic", "cpu_seconds",
               "suboptimality", "median_suboptimality", "common_n", "bound",
               "coverage", "instances", "basis", "pareto"]  # fmt: skip
    if solved.empty:
        return pd.DataFrame(columns=columns)
    out = []
    for dataset, part in solved.groupby("dataset", sort=True):
        configs = sorted(part["config"].unique())
        counts = part.groupby("instance")["config"].nunique()
        common = set(counts[counts == len(configs)].index)
        everything = inst[inst["dataset"] == dataset]
        rows = []
        for config in configs:
            mine = part[(part["config"] == config) & part["instance"].isin(common)]
            cells = everything[everything["config"] == config]
            bases = set(mine.get("quality_basis", pd.Series(dtype=str))) - {""}
            rows.append({
                "dataset": dataset, "config": config,
                "solver": str(cells["solver"].iloc[0]),
                "heuristic": str(cells["heuristic"].iloc[0]),
                "cpu_seconds": float(mine["cpu_seconds"].sum()),
                "suboptimality": float(mine["suboptimality"].mean()),
                "median_suboptimality": float(mine["suboptimality"].median()),
                "common_n": len(common),
                "bound": float(cells["bound"].iloc[0]) if "bound" in cells else np.nan,
                "coverage": int(cells["status"].isin(ANSWERED).sum()),
                "instances": int(cells["instance"].nunique()),
                "basis": bases.pop() if len(bases) == 1 else ("mixed" if bases else ""),
            })  # fmt: skip
        frame = pd.DataFrame(rows)
        if common:
            frame["pareto"] = pareto_front(
                frame["cpu_seconds"].to_numpy(), frame["suboptimality"].to_numpy()
            )
        else:
            frame["pareto"] = False
        out.append(frame)
    return pd.concat(out, ignore_index=True)[columns]


def _figure(panels: int, height: float):
    """A figure of one row of ``panels`` axes, room on the right for the legend."""
    return plt.subplots(
        1, panels, figsize=(6.4 * panels + 2.4, height), layout="constrained",
        squeeze=False,
    )  # fmt: skip


def _legend(fig, axes, title: str) -> None:
    """One legend outside the panels, on the right, of every panel's entries."""
    seen: dict[str, object] = {}
    for ax in axes[0]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    fig.legend(list(seen.values()), list(seen), loc="outside right upper",
               fontsize=9, frameon=False)  # fmt: skip
    fig.suptitle(title)


def _panels(frame: pd.DataFrame) -> list[str]:
    """The datasets to draw, those with the most common instances first; a
    dataset where every config's paths were optimal has nothing to trade off
    (an empty panel of points on one line), so it is left out."""
    sizes = frame.groupby("dataset")["common_n"].max().sort_values(ascending=False)
    spread = frame.groupby("dataset")["suboptimality"].max() > 1 + 1e-9
    return [d for d in sizes.index if sizes[d] > 0 and spread.get(d, False)][
        :MAX_PANELS
    ]


def _basis_note(frame: pd.DataFrame) -> str:
    if (frame["basis"].isin(["best found", "mixed"])).any():
        return (
            " Where a dataset knows no optimum, lengths are over the shortest path "
            "any config of the run found (marked 'vs best found'), so a config can "
            "look optimal that is not."
        )
    return ""


def quality_scatter(inst: pd.DataFrame, styles: dict) -> tuple | str:
    """(figure, caption), or why there is nothing to draw: per dataset, each
    config's mean path length / optimal against its total CPU time over the
    common solved instances; the Pareto front joined by a line, its points ringed."""
    if not has_quality_spread(inst):
        return "every config returned optimal paths (nothing to trade off)"
    frame = quality_points(inst)
    datasets = _panels(frame)
    if not datasets:
        return "no instance was solved by every config that solved any"
    fig, axes = _figure(len(datasets), 4.8)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        part = frame[frame["dataset"] == dataset]
        for r in part.itertuples():
            style = styles.get(r.config)
            ax.scatter(
                max(r.cpu_seconds, 1e-7), r.suboptimality, s=46, zorder=3,
                color=style.color if style else None,
                marker=style.marker if style else "o", label=r.config,
                edgecolors="black" if r.pareto else "none", linewidths=1.2,
            )  # fmt: skip
        front = part[part["pareto"]].sort_values("cpu_seconds")
        ax.plot(
            front["cpu_seconds"].clip(lower=1e-7), front["suboptimality"],
            color="black", linewidth=1, linestyle="--", zorder=2,
            label="Pareto front",
        )  # fmt: skip
        for r in front.itertuples():
            ax.annotate(r.config, (max(r.cpu_seconds, 1e-7), r.suboptimality),
                        textcoords="offset points", xytext=(5, 4),
                        fontsize=7)  # fmt: skip
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(f"total CPU time (s) over {int(part['common_n'].max())} common "
                      "instances, log scale")  # fmt: skip
        ax.set_ylabel("mean path length / optimal")
        ax.set_title(dataset, fontsize=10)
        ax.grid(True, alpha=0.3)
    _legend(fig, axes, "Solution quality vs CPU time")
    caption = (
        "One point per config: its total CPU time (median over repeats, summed) and "
        "mean path length / optimal over the instances every config in the panel "
        "solved. Ringed points joined by the dashed line are the Pareto front: no "
        "other config is both faster and shorter." + _basis_note(frame)
    )
    return fig, caption


def depth_frame(inst: pd.DataFrame) -> pd.DataFrame:
    """The solved instances of the configs whose paths are not all optimal, for
    the suboptimality-per-depth plot (empty when every config is optimal)."""
    solved = solved_quality(inst)
    if solved.empty or "optimal_length" not in solved:
        return solved
    worse = solved.groupby("config")["suboptimality"].max() > 1
    bounded = solved.groupby("config")["bound"].first()
    keep = worse.index[worse | ~(bounded == 1).reindex(worse.index, fill_value=False)]
    return solved[solved["config"].isin(keep) & solved["optimal_length"].notna()]


def coverage_vs_bound(inst: pd.DataFrame, styles: dict, limit_s: float) -> tuple | str:
    """(figure, caption) or why not: per dataset, instances answered within the
    time limit against the claimed bound, one line per (solver, heuristic); a
    config with no bound is drawn at the right edge, marked "none"."""
    if inst.empty or "bound" not in inst or not has_quality_spread(inst):
        return "no config claims a bound other than optimality"
    solvable = inst[inst["solvable"].astype(bool)]
    per = (
        solvable.assign(ok=solvable["status"].isin(ANSWERED))
        .groupby(["dataset", "config", "solver", "heuristic"], sort=True)
        .agg(answered=("ok", "sum"), instances=("instance", "nunique"),
             bound=("bound", "first"))  # fmt: skip
        .reset_index()
    )
    per = per[per["instances"] > 0]
    finite = per["bound"].dropna()
    if finite.empty or finite.nunique() < 2 and per["bound"].notna().all():
        return "the run has configs at one bound only (a sweep of w draws a curve)"
    # a curve needs two bounds of one solver and heuristic; without one, single
    # points say nothing a table does not (the main job: every config at one bound)
    swept = per.groupby(["solver", "heuristic"])["bound"].agg(
        lambda b: b.fillna(-1.0).nunique()
    )
    if swept.max() < 2:
        return ("no solver and heuristic ran at two or more bounds (a sweep of w "
                "draws a curve)")  # fmt: skip
    datasets = list(
        per.groupby("dataset")["answered"].sum().sort_values(ascending=False).index
    )[:MAX_PANELS]
    top = float(finite.max()) if len(finite) else 1.0
    none_x = top * 1.6  # where "no bound" sits, right of the largest weight
    fig, axes = _figure(len(datasets), 4.6)
    for ax, dataset in zip(axes[0], datasets, strict=True):
        part = per[per["dataset"] == dataset]
        for (solver, heuristic), family in part.groupby(["solver", "heuristic"]):
            family = family.assign(x=family["bound"].fillna(none_x)).sort_values("x")
            style = styles.get(family["config"].iloc[0])
            ax.plot(
                family["x"], family["answered"], marker=style.marker if style else "o",
                color=style.color if style else None,
                linestyle=style.linestyle if style else "-",
                label=f"{solver}[{heuristic}]" if heuristic != "none" else solver,
            )  # fmt: skip
        ax.set_xscale("log")
        ticks = sorted(set(finite.tolist()))
        ax.set_xticks([*ticks, none_x], [*(f"{t:g}" for t in ticks), "none"])
        ax.minorticks_off()
        ax.set_ylim(bottom=0, top=float(part["instances"].max()) * 1.05)
        ax.set_xlabel("claimed bound w (path <= w x optimal; 1 = optimal), log scale")
        ax.set_ylabel(f"instances answered within {limit_s:g} s")
        ax.set_title(dataset, fontsize=10)
        ax.grid(True, alpha=0.3)
    _legend(fig, axes, "Coverage within the time limit vs the bound")
    caption = (
        f"Instances answered within the run's time limit ({limit_s:g} s per solve) "
        "at each claimed bound, one line per solver and heuristic (a sweep of w). "
        "'none': no bound (greedy). Refused cells count as not answered."
    )
    return fig, caption


def quality_findings(inst: pd.DataFrame) -> list[str]:
    """Plain sentences: per dataset, each Pareto-front config that gives up
    optimality, with its coverage, median and worst length over the optimum, and
    how much faster it is than the fastest optimal config on the instances both
    solved."""
    if not has_quality_spread(inst):
        return cost_ranking_findings(quality_points(inst))
    frame = quality_points(inst)
    solved = solved_quality(inst)
    out = cost_ranking_findings(frame)
    for dataset, part in frame.groupby("dataset", sort=True):
        optimal = part[part["bound"] == 1]
        here = solved[solved["dataset"] == dataset]
        for r in part[part["pareto"] & ~(part["bound"] == 1)].itertuples():
            mine = here[here["config"] == r.config]
            worst = mine["suboptimality"].max()
            relative = r.basis in ("best found", "mixed")
            basis = " (vs the best path found)" if relative else ""
            text = (
                f"{r.config} answers {r.coverage} of {r.instances} instances of "
                f"{dataset} at a median {mine['suboptimality'].median():.2f} of "
                f"optimal{basis} (worst {worst:.2f}"
                + (f", bound {r.bound:g}" if math.isfinite(r.bound) else ", no bound")
                + ")"
            )
            speed = _versus_optimal(solved, dataset, r.config, optimal["config"])
            out.append(text + (f", {speed}" if speed else "") + ".")
    return out


def cost_ranking_findings(frame: pd.DataFrame) -> list[str]:
    """A sentence per dataset run both with unit costs (``NAME``) and under a tile
    cost model (``NAME@MODEL``) where the configs both ran rank differently by CPU
    time (each on its dataset's common instances): tile costs change which search
    is fastest, and by how much."""
    out = []
    names = set(frame["dataset"])
    for dataset in sorted(names):
        base, sep, model = dataset.rpartition("@")
        if not sep or base not in names:
            continue
        unit = frame[frame["dataset"] == base].set_index("config")["cpu_seconds"]
        costed = frame[frame["dataset"] == dataset].set_index("config")["cpu_seconds"]
        both = sorted(set(unit.index) & set(costed.index))
        if len(both) < 2:
            continue
        before = sorted(both, key=lambda c: (unit[c], c))
        after = sorted(both, key=lambda c: (costed[c], c))
        if before == after:
            continue
        moved = [
            f"{c} {before.index(c) + 1} -> {after.index(c) + 1}"
            for c in both if before.index(c) != after.index(c)
        ]  # fmt: skip
        out.append(
            f"Tile costs change the ranking by CPU time on {base}: fastest under "
            f"unit costs {before[0]}, under {model} costs ({dataset}) {after[0]}; "
            f"places: {', '.join(moved)}."
        )
    return out


def _versus_optimal(solved: pd.DataFrame, dataset: str, config: str, optimal) -> str:
    """"40x faster than X" against the optimal config X with the least CPU time on
    the instances both solved, or "" when no optimal config shares any."""
    mine = solved[(solved["dataset"] == dataset) & (solved["config"] == config)]
    best = None
    for other in optimal:
        theirs = solved[(solved["dataset"] == dataset) & (solved["config"] == other)]
        both = set(mine["instance"]) & set(theirs["instance"])
        if not both:
            continue
        a = mine[mine["instance"].isin(both)]["cpu_seconds"].sum()
        b = theirs[theirs["instance"].isin(both)]["cpu_seconds"].sum()
        if a > 0 and (best is None or b < best[1]):
            best = (other, b, a, len(both))
    if best is None:
        return ""
    other, theirs, mine_s, n = best
    ratio = theirs / mine_s
    words = f"{sig(ratio)}x faster" if ratio >= 1 else f"{sig(1 / ratio)}x slower"
    return f"{words} than {other} (total CPU time over the {n} instances both solved)"
