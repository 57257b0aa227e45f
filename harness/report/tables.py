"""Tables: display names, number formatting, Markdown / text / HTML tables."""

from __future__ import annotations

import html
import re
from typing import Any

import numpy as np
import pandas as pd

from harness.analysis import (
    exact_text,
)
from harness.analysis.aggregate import sig
from harness.analysis.verdict import family
from harness.results import (
    STATUSES,
)

# ------------------------------------------------------------- formatting

DISPLAY = {
    "config": "config",
    "instances": "instances",
    "solved": "solved",
    "unsolvable": "unsolvable (correct)",
    "timeout": "timeout",
    "memout": "memout",
    "error": "error",
    "invalid": "invalid",
    "skipped": "skipped",
    "optimal_share": "optimal paths (%)",
    "bound": "claimed bound",
    "median_suboptimality": "median length / optimal",
    "max_suboptimality": "worst length / optimal",
    "answered": "answered",
    "common_median_ms": "median time (ms), {n} common",
    "common_gmean_ms": "geo. mean time (ms), {n} common",
    "common_median_expanded": "median expanded, {n} common",
    "common_gmean_expanded": "geo. mean expanded, {n} common",
    "score_time": "score: time",
    "score_expanded": "score: expanded",
    "own_median_ms": "median time (ms), own answered set",
    "median_ms": "median time (ms)",
    "p90_ms": "p90 time (ms)",
    "median_expanded": "median expanded (nodes)",
    "median_generated": "median generated (nodes)",
    "median_ebf": "b* (median)",
    "rss_added_mib": "RSS added (MiB)",
    "peak_traced_mib": "peak traced (MiB)",
}
#: Columns dropped from a display table when they are empty for every config.
_OPTIONAL = ("optimal_share", "median_ebf", "peak_traced_mib", "rss_added_mib",
             "bound", "median_suboptimality", "max_suboptimality")  # fmt: skip
#: Shown only when some config is not optimal (bound above 1, or none, or a
#: path longer than the optimum): otherwise they say 1 everywhere.
_QUALITY = ("bound", "median_suboptimality", "max_suboptimality")
#: The two halves of the summary as people read it: what came back, what it cost.
PARTS = {
    "answers": ("config", "instances", *STATUSES, "optimal_share", *_QUALITY),
    "cost": (
        "config",
        "answered",
        "common_median_ms",
        "common_gmean_ms",
        "common_median_expanded",
        "common_gmean_expanded",
        "score_time",
        "score_expanded",
        "own_median_ms",
        "median_ebf",
        "rss_added_mib",
        "peak_traced_mib",
    ),
}
#: Without the fair columns (a bare summary), the cost part falls back to these.
_PLAIN_COST = ("config", "median_ms", "p90_ms", "median_expanded",
               "median_generated", "median_ebf", "peak_traced_mib", "peak_rss_mib")


def _fmt_ms(value: float) -> str:
    return sig(value)


def _count(value: float) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"


_FORMAT = {
    "optimal_share": lambda v: "–" if not np.isfinite(v) else f"{100 * v:.0f}",
    "bound": lambda v: _bound_text(v),
    "median_suboptimality": lambda v: "–" if not np.isfinite(v) else f"{v:.3f}",
    "max_suboptimality": lambda v: "–" if not np.isfinite(v) else f"{v:.3f}",
    "median_ms": sig,
    "p90_ms": sig,
    "common_median_ms": sig,
    "common_gmean_ms": sig,
    "own_median_ms": sig,
    "common_median_expanded": _count,
    "common_gmean_expanded": sig,
    "score_time": lambda v: "–" if not np.isfinite(v) else f"{v:.2f}",
    "score_expanded": lambda v: "–" if not np.isfinite(v) else f"{v:.2f}",
    "median_expanded": _count,
    "median_generated": _count,
    "median_ebf": lambda v: "–" if not np.isfinite(v) else f"{v:.2f}",
    "peak_traced_mib": sig,
    "rss_added_mib": sig,
    "peak_rss_mib": sig,
}


def display_table(
    table: pd.DataFrame, part: str = "all", keep_empty: bool = False
) -> pd.DataFrame:
    """Strings for people: rounded, units in headers, empty optional columns dropped;
    ``part`` = "answers", "cost" (see :data:`PARTS`) or "all"."""
    wanted = PARTS.get(part, ())
    if part == "cost" and "common_n" not in table.columns:
        wanted = _PLAIN_COST
    cols = [c for c in DISPLAY if c in table.columns and (part == "all" or c in wanted)]
    if not keep_empty:
        cols = [c for c in cols if c not in _OPTIONAL or table[c].notna().any()]
    if not quality_varies(table):
        cols = [c for c in cols if c not in _QUALITY]
    n = (
        int(table["common_n"].max())
        if "common_n" in table.columns and table["common_n"].notna().any()
        else 0
    )
    out = pd.DataFrame(index=table.index)
    for c in cols:
        fmt = _FORMAT.get(c, _count if c != "config" else str)
        out[DISPLAY[c].replace("{n}", str(n))] = [
            fmt(float(v)) if c != "config" else str(v) for v in table[c]
        ]
        if c in ("median_suboptimality", "max_suboptimality") and (
            "quality_basis" in table.columns
        ):  # relative to the best path found, not to an optimum: say so
            header = DISPLAY[c]
            marks = table["quality_basis"].map(_BASIS_MARK).fillna("").to_numpy()
            out[header] = [v + m if v != "–" else v for v, m in zip(
                out[header], marks, strict=True)]  # fmt: skip
    return out.reset_index(drop=True)


#: Appended to a suboptimality measured against the best path found in the run
#: (no optimum known), or partly so.
_BASIS_MARK = {"best found": " (vs best found)", "mixed": " (partly vs best found)"}


def quality_varies(table: pd.DataFrame) -> bool:
    """Whether any config claims a bound above 1 or returned a path longer than
    the optimum (only then do the quality columns say something; runs stored
    before schema 6 have no bound)."""
    if "bound" not in table.columns or "max_suboptimality" not in table.columns:
        return False
    bound = pd.to_numeric(table["bound"], errors="coerce")
    worst = pd.to_numeric(table["max_suboptimality"], errors="coerce")
    return bool((bound > 1).any() or (worst > 1).any())


def _bound_text(value: float) -> str:
    if value is None or not np.isfinite(value):
        return "none"
    return "optimal" if value == 1 else f"{value:g}x optimal"


def display_compare(table: pd.DataFrame) -> pd.DataFrame:
    """The side-by-side table of :func:`compare` as strings; counters exact."""
    out = pd.DataFrame(index=table.index)
    if table.empty:
        return out
    old, new = table.old_run.iat[0], table.new_run.iat[0]
    out["config"] = table.config
    out[f"answered {old}"] = [
        _of(a, n) for a, n in zip(table.old_answered, table.old_instances, strict=True)
    ]
    out[f"answered {new}"] = [
        _of(a, n) for a, n in zip(table.new_answered, table.new_instances, strict=True)
    ]
    counts = (
        {int(v) for v in table["both"].dropna() if v}
        if "both" in table.columns
        else set()
    )
    both = (
        f", {counts.pop()} answered in both"
        if len(counts) == 1
        else ", answered in both"
    )
    out[f"median time {old} (ms){both}"] = table.old_median_ms.map(sig)
    out[f"median time {new} (ms){both}"] = table.new_median_ms.map(sig)
    metric = table.metric.iat[0]
    out[f"{metric} ratio {new}/{old}"] = [
        "–" if not np.isfinite(r) else f"{r:.2f} (n={n})"
        for r, n in zip(table.time_ratio, table.compared, strict=True)
    ]
    out[f"median expanded {old}"] = table.old_median_expanded.map(exact_text)
    out[f"median expanded {new}"] = table.new_median_expanded.map(exact_text)
    out[f"median generated {old}"] = table.old_median_generated.map(exact_text)
    out[f"median generated {new}"] = table.new_median_generated.map(exact_text)
    out["counters changed (instances)"] = table.counters_changed.map(_count)
    return out.reset_index(drop=True)


def _of(answered: float, total: float) -> str:
    return "–" if pd.isna(total) else f"{int(answered)}/{int(total)}"




def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table: number columns right-aligned, text left."""

    def esc(text: Any) -> str:
        return str(text).replace("|", "\\|")

    head = "| " + " | ".join(esc(c) for c in frame.columns) + " |"
    rule = (
        "| "
        + " | ".join(
            "--:" if is_numeric_column(frame[c]) else ":--" for c in frame.columns
        )
        + " |"
    )
    body = [
        "| " + " | ".join(esc(v) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([head, rule, *body])


_NUMBER_TEXT = re.compile(r"^(–|[\d.,]+( \(n=\d+\))?|\d+/\d+)$")


def is_numeric_column(column: pd.Series) -> bool:
    """A display column of numbers (right-aligned); text columns align left."""
    return len(column) > 0 and all(_NUMBER_TEXT.match(str(v)) for v in column)


def text_table(frame: pd.DataFrame) -> str:
    """Aligned plain text in the harness's one table style (:mod:`harness.core.tables`);
    number columns right-aligned."""
    from harness.core.tables import table_text

    right = [i for i, c in enumerate(frame.columns) if is_numeric_column(frame[c])]
    rows = [[str(v) for v in row] for row in frame.itertuples(index=False)]
    return table_text([str(c) for c in frame.columns], rows, right=right)


def html_table(frame: pd.DataFrame) -> str:
    text = [
        ' class="text"' if not is_numeric_column(frame[c]) else ""
        for c in frame.columns
    ]
    head = "".join(
        f"<th{t}>{html.escape(str(c))}</th>"
        for c, t in zip(frame.columns, text, strict=True)
    )
    families = (
        [f' data-family="{html.escape(family(str(c)))}"' for c in frame["config"]]
        if "config" in frame.columns
        else [""] * len(frame)
    )
    body = "".join(
        f"<tr{fam}>"
        + "".join(
            f"<td{t}>{html.escape(str(v))}</td>" for v, t in zip(row, text, strict=True)
        )
        + "</tr>"
        for row, fam in zip(frame.itertuples(index=False), families, strict=True)
    )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )
