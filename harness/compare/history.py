"""History across commits: many stored runs as one page (asv's graphs, no server).

Runs are ordered by their start time and labelled with their git commit. Per solver
config the page plots the median CPU time (median over instances of each instance's
median over repeats) and the exact counters (expanded and generated nodes summed over
the instances) against the runs. Each pair of consecutive runs is compared by
:func:`harness.compare.compare_frames`, the comparer of ``harness compare``, so a
step is flagged as a regression by the same statistics (significant and at least
``min_ratio`` for time; any rise of nodes or worse status). A break (dashed line) is
drawn where the environment changed (CPU model, Python, package versions) or a
config's counters moved; a table lists the largest steps with their commits.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.compare import Incomparable, Thresholds, compare_frames
from harness.core.files import real_dir, write_atomic
from harness.results import RunMeta, load_meta

ENVIRONMENT_KEYS = ("cpu_model", "python", "packages")
DEFAULT_TOP = 10


class HistoryError(Exception):
    """Runs that cannot be read or are too few; the message is one line."""


@dataclass(slots=True)
class RunPoint:
    """One stored run: who made it and what it measured, per config."""

    run_dir: Path
    run_id: str
    commit: str  # short hash, "nogit" when unknown (+ "-dirty")
    date: str  # the run's start, UTC
    environment: dict[str, Any]
    cpu_ms: dict[str, float] = field(default_factory=dict)  # config -> median ms
    metric: dict[str, str] = field(default_factory=dict)  # config -> column used
    expanded: dict[str, int] = field(default_factory=dict)  # config -> sum
    generated: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Step:
    """From run ``index - 1`` to run ``index``, one config."""

    index: int
    config: str
    ratio: float | None  # new / old time (the comparer's geometric mean)
    low: float | None
    high: float | None
    verdict: str
    counter_changes: int
    regression: bool
    regressions: list[str]  # the comparer's words
    time_regression: bool = False  # which part regressed: time ...
    counter_regression: bool = False  # ... or nodes / statuses

    @property
    def size(self) -> float:
        """How big the step is: |log ratio|, plus one when counters moved."""
        t = abs(math.log(self.ratio)) if self.ratio else 0.0
        return t + (1.0 if self.counter_changes else 0.0)


@dataclass(slots=True)
class History:
    runs: list[RunPoint]
    configs: list[str]
    steps: list[Step]
    #: index -> why run ``index`` starts a new segment (environment or counters)
    breaks: dict[int, list[str]]
    incomparable: dict[int, str]  # index -> why it could not be compared
    thresholds: Thresholds
    plots: dict[str, str] = field(default_factory=dict)  # config -> file name

    @property
    def regressions(self) -> list[Step]:
        return [s for s in self.steps if s.regression]


# -------------------------------------------------------------------- reading


def find_runs(paths: list[Path]) -> list[Path]:
    """Run directories among ``paths``: each is a run (has meta.json) or a folder
    of runs. HistoryError naming a path that is neither."""
    out: list[Path] = []
    for path in paths:
        if (path / "meta.json").is_file():
            out.append(path)
        elif path.is_dir():
            found = sorted(p for p in path.iterdir() if (p / "meta.json").is_file())
            if not found:
                raise HistoryError(f"{path}: no run directories (no */meta.json)")
            out.extend(found)
        else:
            raise HistoryError(f"{path}: no such run directory or results folder")
    return list(dict.fromkeys(out))


def _point(run_dir: Path, meta: RunMeta, rows) -> RunPoint:
    git = meta.git
    commit = (git.get("commit") or "nogit")[:8] + ("-dirty" if git.get("dirty") else "")
    point = RunPoint(
        run_dir=run_dir,
        run_id=meta.run_id or run_dir.name,
        commit=commit,
        date=meta.started_utc or "",
        environment={k: meta.environment.get(k) for k in ENVIRONMENT_KEYS},
    )
    timed = rows[
        (rows["measure"] == "time") & rows["status"].isin(["solved", "unsolvable"])
    ]
    for config, group in timed.groupby("config", sort=True):
        metric = "cpu_seconds" if group["cpu_seconds"].notna().all() else "seconds"
        per_instance = group.groupby(["dataset", "instance"])[metric].median()
        if per_instance.notna().any():
            point.cpu_ms[config] = 1e3 * float(per_instance.median())
            point.metric[config] = metric
        first = group[group["repeat"] == 0]
        for counter, into in (("expanded", point.expanded),
                              ("generated", point.generated)):  # fmt: skip
            if first[counter].notna().any():
                into[config] = int(first[counter].sum())
    return point


def build_history(paths: list[Path], thresholds: Thresholds | None = None) -> History:
    """Read the runs, order them by start time, compare each with the one before
    (``thresholds``: the comparer's, default as in ``harness compare``)."""
    thresholds = thresholds or Thresholds()
    from harness.analysis import read_run
    from harness.results import ResultsError

    loaded = []
    for run_dir in find_runs(paths):
        try:
            meta, rows = read_run(run_dir)
        except ResultsError as err:
            raise HistoryError(str(err)) from None
        loaded.append((str(meta.get("started_utc") or ""), run_dir.name, meta, rows))
    if not loaded:
        raise HistoryError("no runs given")
    loaded.sort(key=lambda item: (item[0], item[1]))
    runs = [_point(Path(d), load_meta(m), r) for _, d, m, r in loaded]
    for point, (_, name, _, _) in zip(runs, loaded, strict=True):
        point.run_dir = Path(name)
    configs = sorted(
        {c for r in runs for c in r.cpu_ms} | {c for r in runs for c in r.expanded}
    )
    history = History(runs, configs, [], {}, {}, thresholds)
    for i in range(1, len(loaded)):
        old, new = loaded[i - 1], loaded[i]
        changed = [
            k
            for k in ENVIRONMENT_KEYS
            if runs[i - 1].environment[k] != runs[i].environment[k]
        ]
        if changed:
            history.breaks.setdefault(i, []).append(
                "environment changed: "
                + ", ".join(
                    _env_change(k, runs[i - 1].environment[k], runs[i].environment[k])
                    for k in changed
                )
            )
        try:
            comp = compare_frames(old[2], old[3], new[2], new[3], thresholds)
        except Incomparable as err:
            history.incomparable[i] = str(err)
            history.breaks.setdefault(i, []).append(f"not comparable: {err}")
            continue
        regressed = comp.regressions
        for config, summary in comp.configs.items():
            t = summary.time
            step = Step(
                index=i,
                config=config,
                ratio=t.ratio if t else None,
                low=t.low if t else None,
                high=t.high if t else None,
                verdict=t.verdict if t else "time not compared",
                counter_changes=summary.counter_changes,
                regression=any(line.startswith(f"{config}: ") for line in regressed),
                regressions=[
                    line for line in regressed if line.startswith(f"{config}: ")
                ],
                time_regression=bool(t and t.regression),
                counter_regression=bool(
                    summary.counter_regressions or summary.status_regressions
                    or summary.quality_regressions
                ),
            )
            history.steps.append(step)
            if summary.counter_changes:
                history.breaks.setdefault(i, []).append(
                    f"{config}: counters moved in {summary.counter_changes} cell(s)"
                )
    return history


def _env_change(key: str, old: Any, new: Any) -> str:
    if isinstance(old, dict) and isinstance(new, dict):
        diffs = [
            f"{name} {old.get(name)} -> {new.get(name)}"
            for name in sorted(set(old) | set(new))
            if old.get(name) != new.get(name)
        ]
        return f"{key} ({'; '.join(diffs)})"
    return f"{key} {old} -> {new}"


# -------------------------------------------------------------------- output


def largest_steps(history: History, top: int = DEFAULT_TOP) -> list[Step]:
    """The biggest steps (time ratio away from 1, counters moved), largest first."""
    moved = [s for s in history.steps if s.size > 0]
    return sorted(moved, key=lambda s: (-s.size, s.index, s.config))[:top]


def _ratio(step: Step) -> str:
    if step.ratio is None:
        return "-"
    ci = f" [{step.low:.2f}, {step.high:.2f}]" if step.low is not None else ""
    return f"{step.ratio:.2f}x{ci}"


def _step_rows(history: History, top: int) -> list[list[str]]:
    rows = []
    for s in largest_steps(history, top):
        before, after = history.runs[s.index - 1], history.runs[s.index]
        rows.append([
            f"{before.commit} -> {after.commit}",
            after.date,
            s.config,
            _ratio(s),
            str(s.counter_changes) if s.counter_changes else "-",
            "REGRESSION: " + "; ".join(r.split(": ", 1)[1] for r in s.regressions)
            if s.regression else s.verdict,
        ])  # fmt: skip
    return rows


STEP_HEADER = ["commits", "date", "config", "time ratio [CI]", "counter changes",
               "verdict"]  # fmt: skip


def _threshold_text(th: Thresholds) -> str:
    """The time threshold as the comparer applies it."""
    if th.min_ratio is not None:
        return f"{th.min_ratio:g}x"
    return (
        f"{th.threshold(True):.2f}x on normalized times "
        f"({th.threshold(False):.2f}x on raw CPU time)"
    )


def render_markdown(history: History, top: int = DEFAULT_TOP) -> str:
    """The page as Markdown (the CI job summary)."""
    runs = history.runs
    lines = [
        f"# Performance history: {len(runs)} runs",
        "",
        f"From {runs[0].commit} ({runs[0].date}) to {runs[-1].commit} "
        f"({runs[-1].date}). Time: median over instances of each instance's median "
        "CPU time; steps judged by `harness compare`'s statistics "
        f"(regression: significant and >= {_threshold_text(history.thresholds)}, or more "
        "nodes, or a worse status).",
        "",
    ]
    regressions = history.regressions
    if regressions:
        lines.append(f"**{len(regressions)} regression(s):**")
        lines.append("")
        for s in regressions:
            lines.append(
                f"- {history.runs[s.index].commit} ({history.runs[s.index].date}): "
                + "; ".join(s.regressions)
            )
    else:
        lines.append("No regression between consecutive runs.")
    lines.append("")
    if history.breaks:
        lines.append("Breaks (comparisons across them mean less):")
        lines.append("")
        for i, why in sorted(history.breaks.items()):
            lines.append(f"- before {runs[i].commit}: {'; '.join(why)}")
        lines.append("")
    rows = _step_rows(history, top)
    if rows:
        lines.append("## Largest steps")
        lines.append("")
        lines.append("| " + " | ".join(STEP_HEADER) + " |")
        lines.append("|" + "---|" * len(STEP_HEADER))
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        lines.append("")
    lines.append("## Median CPU time (ms) per run")
    lines.append("")
    header = ["config", *(r.commit for r in runs)]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for config in history.configs:
        cells = [f"{r.cpu_ms[config]:.3g}" if config in r.cpu_ms else "-" for r in runs]
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_html(history: History, top: int = DEFAULT_TOP) -> str:
    """A self-contained page; the PNGs are referenced from ``plots/``."""
    esc = html.escape
    runs = history.runs
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        "<title>npuzzle-harness history</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}"
        ".regression{color:#b00;font-weight:bold}</style></head><body>",
        f"<h1>Performance history: {len(runs)} runs</h1>",
        f"<p>From {esc(runs[0].commit)} ({esc(runs[0].date)}) to "
        f"{esc(runs[-1].commit)} ({esc(runs[-1].date)}). Time: median over instances "
        "of each instance's median CPU time (wall time where a run has no CPU time). "
        "Each step is judged by <code>harness compare</code>'s statistics: a "
        f"regression is significant and at least {_threshold_text(history.thresholds)}, "
        "or more nodes, or a worse status. Dashed lines mark breaks: the environment "
        "changed or the counters moved.</p>",
    ]
    regressions = history.regressions
    if regressions:
        parts.append(
            f"<h2 class='regression'>{len(regressions)} regression(s)</h2><ul>"
        )
        for s in regressions:
            parts.append(
                f"<li class='regression'>{esc(runs[s.index].commit)} "
                f"({esc(runs[s.index].date)}): {esc('; '.join(s.regressions))}</li>"
            )
        parts.append("</ul>")
    else:
        parts.append("<p>No regression between consecutive runs.</p>")
    if history.breaks:
        parts.append("<h2>Breaks</h2><ul>")
        for i, why in sorted(history.breaks.items()):
            parts.append(
                f"<li>before {esc(runs[i].commit)}: {esc('; '.join(why))}</li>"
            )
        parts.append("</ul>")
    rows = _step_rows(history, top)
    if rows:
        parts.append("<h2>Largest steps</h2><table><tr>")
        parts += [f"<th>{esc(h)}</th>" for h in STEP_HEADER]
        parts.append("</tr>")
        for r in rows:
            cls = " class='regression'" if r[-1].startswith("REGRESSION") else ""
            parts.append(
                f"<tr{cls}>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>"
            )
        parts.append("</table>")
    parts.append("<h2>Per config</h2>")
    for config in history.configs:
        parts.append(f"<h3>{esc(config)}</h3>")
        if config in history.plots:
            parts.append(
                f"<img src='plots/{esc(history.plots[config])}' alt='{esc(config)}' "
                "style='max-width:100%'>"
            )
    parts.append("<h2>Runs</h2><table><tr><th>#</th><th>commit</th><th>date</th>"
                 "<th>run</th><th>CPU</th><th>Python</th></tr>")  # fmt: skip
    for i, r in enumerate(runs):
        parts.append(
            f"<tr><td>{i}</td><td>{esc(r.commit)}</td><td>{esc(r.date)}</td>"
            f"<td>{esc(r.run_id)}</td><td>{esc(str(r.environment['cpu_model']))}</td>"
            f"<td>{esc(str(r.environment['python']))}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "\n".join(parts) + "\n"


def plot_config(history: History, config: str, path: Path) -> None:
    """Median CPU time (log scale) and the exact counters against the runs, with
    breaks dashed and regressions in red."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    runs = history.runs
    xs = range(len(runs))
    has_counters = any(config in r.expanded for r in runs)
    fig, axes = plt.subplots(
        2 if has_counters else 1, 1, sharex=True, squeeze=False,
        figsize=(max(6, 0.7 * len(runs) + 3), 5.5 if has_counters else 3.2),
    )  # fmt: skip
    ax = axes[0][0]
    times = [r.cpu_ms.get(config, math.nan) for r in runs]
    ax.plot(xs, times, marker="o", color="C0")
    ax.set_yscale("log")
    known = [t for t in times if t == t and t > 0]
    if known:  # at least a 2.25x span: noise looks small, a 2x step does not
        low, high = min(known), max(known)
        pad = max(1.5, (2.25 / (high / low)) ** 0.5)
        ax.set_ylim(low / pad, high * pad)
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_ylabel("median CPU ms")
    ax.set_title(config)
    steps = [s for s in history.steps if s.config == config]
    flagged = {s.index for s in steps if s.time_regression}
    for i in flagged:
        _mark(ax, i, times[i], "time regression")
    if has_counters:
        cx = axes[1][0]
        for counter, colour in (("expanded", "C1"), ("generated", "C2")):
            values = [getattr(r, counter).get(config, math.nan) for r in runs]
            cx.plot(xs, values, marker="s", color=colour, label=counter)
        expanded = [r.expanded.get(config, math.nan) for r in runs]
        for i in {s.index for s in steps if s.counter_regression}:
            _mark(cx, i, expanded[i], "more nodes / worse status")
        cx.set_ylabel("nodes (sum)")
        cx.legend(fontsize=8)
    for row in axes:
        for i in history.breaks:
            row[0].axvline(i - 0.5, color="0.5", linestyle="--", linewidth=1)
    bottom = axes[-1][0]
    bottom.set_xticks(list(xs))
    bottom.set_xticklabels([f"{r.commit}\n{r.date[:10]}" for r in runs], fontsize=7,
                           rotation=45, ha="right")  # fmt: skip
    fig.tight_layout()
    try:
        write_atomic(path, lambda fh: fig.savefig(fh, format="png", dpi=90))
    finally:
        plt.close(fig)


def _mark(ax, x: int, y: float, text: str) -> None:
    ax.plot([x], [y], marker="o", markersize=11, color="C3", fillstyle="none")
    ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 9),
                ha="center", color="C3", fontsize=8)  # fmt: skip


def write_history(history: History, out: Path, top: int = DEFAULT_TOP) -> Path:
    """``out/history.html``, ``out/history.md`` and ``out/plots/history-*.png``;
    returns the HTML path."""
    import re

    out.mkdir(parents=True, exist_ok=True)
    plots = real_dir(out / "plots")
    for config in history.configs:
        name = "history-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", config).strip("_") + ".png"
        plot_config(history, config, plots / name)
        history.plots[config] = name
    write_atomic(out / "history.md", render_markdown(history, top))
    page = out / "history.html"
    write_atomic(page, render_html(history, top))
    return page
