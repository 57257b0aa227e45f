"""The history report: many stored runs as one page (asv's graphs, no server),
from the :class:`~harness.compare.history.History` that
:func:`~harness.compare.history.build_history` makes of them.

:class:`HistoryReport` writes ``history.md`` (the CI workflow's summary),
``history.html`` and one plot per config: median CPU time (log scale) and the exact
counters against the runs, breaks dashed, regressions in red.
"""

from __future__ import annotations

import html
import math
import re
from pathlib import Path

from harness.compare import Thresholds
from harness.compare.history import DEFAULT_TOP, History, Step, largest_steps
from harness.core.files import real_dir, write_atomic


class HistoryReport:
    """The page of a history of runs; ``top``: how many of the largest steps it
    lists."""

    def __init__(self, history: History, top: int = DEFAULT_TOP) -> None:
        self.history = history
        self.top = top
        #: config -> its plot's file name under ``plots/``, once drawn
        self.plots: dict[str, str] = {}

    def markdown(self) -> str:
        return _markdown(self.history, self.top)

    def html(self) -> str:
        """A self-contained page; the PNGs are referenced from ``plots/``."""
        return _html(self.history, self.top, self.plots)

    def write(self, out: Path) -> Path:
        """``out/history.html``, ``out/history.md`` and
        ``out/plots/history-*.png``; returns the HTML path."""
        out.mkdir(parents=True, exist_ok=True)
        plots = real_dir(out / "plots")
        for config in self.history.configs:
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", config).strip("_")
            name = f"history-{stem}.png"
            _plot_config(self.history, config, plots / name)
            self.plots[config] = name
        write_atomic(out / "history.md", self.markdown())
        page = out / "history.html"
        write_atomic(page, self.html())
        return page


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


def _markdown(history: History, top: int) -> str:
    """The page as Markdown (the CI workflow's summary)."""
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
    if history.skipped:
        lines.append("Left out (cannot be read):")
        lines.append("")
        lines += [f"- {run_dir}: {why}" for run_dir, why in history.skipped]
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


def _html(history: History, top: int, plots: dict[str, str]) -> str:
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
        if config in plots:
            parts.append(
                f"<img src='plots/{esc(plots[config])}' alt='{esc(config)}' "
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


def _plot_config(history: History, config: str, path: Path) -> None:
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
