"""A comparison as text: a terminal table, Markdown or JSON."""

from __future__ import annotations

import json
from typing import Any

from harness.compare.model import CLOCK_WORDS, Comparison

# ------------------------------------------------------------------- rendering


def render(comp: Comparison, fmt: str = "table", max_changes: int = 20) -> str:
    """The comparison as ``table`` (plain text), ``markdown`` or ``json``."""
    if fmt == "json":
        return json.dumps(comp.to_dict(), indent=2, default=_json_default)
    md = fmt == "markdown"
    out: list[str] = []
    title = f"compare {comp.base_id} (base) -> {comp.new_id} (new)"
    out.append(f"## {title}" if md else title)
    out.append("")
    for w in comp.warnings:
        out.append(f"- **warning:** {w}" if md else f"warning: {w}")
    for n in comp.notes:
        out.append(f"- note: {n}" if md else f"note: {n}")
    ci = f"{100 * comp.thresholds.confidence:g}% CI"
    metric = "not compared"
    if comp.metric:
        metric = f"{CLOCK_WORDS[comp.metric]} ({comp.metric}"
        if comp.normalized:
            metric += " / the reference solve timed beside each repeat: normalized)"
        else:
            metric += ", raw)"
    th = comp.thresholds
    runs = f"{comp.base_id.count(',') + 1} vs {comp.new_id.count(',') + 1} runs"
    out.append(
        f"{'- ' if md else ''}matched {comp.matched_cells} cells ({runs}); time "
        f"compared: {metric}; median of repeats, geomean over the 'timed' instances "
        f"(over {th.time_threshold:g} s); regression: significant, over at least "
        f"{th.min_instances} instances, and >= {th.threshold(comp.normalized):.2f}x"
    )
    if any(s.instructions for s in comp.configs.values()):
        out.append(
            f"{'- ' if md else ''}instructions: per solve counted under callgrind, "
            "geomean of new/base over the cells both counted; regression: >= "
            f"{th.instructions_ratio:g}x (deterministic: no interval)"
        )
    out.append("")
    header = [
        "config",
        "cells",
        "counters",
        "status",
        "paths",
        "timed",
        "new/base",
        ci,
        {"cpu_seconds": "raw cpu", "seconds": "raw wall"}.get(comp.metric or "", "raw"),
        "verdict",
    ]
    counted = any(s.instructions for s in comp.configs.values())
    if counted:
        header += ["instr", "instr/node", "instructions"]
    body = []
    for s in comp.configs.values():
        t = s.time
        counters = _changed(s.counter_changes, s.counter_regressions, "worse")
        status = _changed(s.status_changes, s.status_regressions, "worse")
        paths = _changed(s.quality_changes, s.quality_regressions, "longer")
        ratio = f"{t.ratio:.3f}" if t and t.ratio is not None else "-"
        timed = str(t.instances) if t else "-"
        interval = f"{t.low:.3f}-{t.high:.3f}" if t and t.has_noise_estimate else "-"
        raw = f"{t.raw_ratio:.3f}" if t and t.raw_ratio is not None else "-"
        verdict = t.verdict if t else "time not compared"
        if t and t.regression:
            verdict = f"REGRESSION: {verdict}"
        if s.source_changed:
            verdict += " [source changed]"
        row = [s.config, str(s.cells), counters, status, paths, timed, ratio,
               interval, raw, verdict]  # fmt: skip
        if counted:
            row += _instruction_cells(s.instructions)
        body.append(row)
    out += _table(header, body, md)
    for title, items, fmt_item in (
        (
            "counter changes (exact)",
            comp.counter_changes,
            lambda c: (
                f"{c.config}  {c.dataset}/{c.instance}  {c.text}"
                + ("  [regression]" if c.regression else "")
            ),
        ),
        (
            "path length changes (solution quality)",
            comp.quality_changes,
            lambda c: (
                f"{c.config}  {c.dataset}/{c.instance}  {c.text}"
                + ("  [regression: longer at the same bound]" if c.regression else "")
            ),
        ),
        (
            "status changes",
            comp.status_changes,
            lambda c: (
                f"{c.config}  {c.dataset}/{c.instance}  {c.base} -> {c.new}"
                + ("  [regression]" if c.regression else "")
            ),
        ),
    ):
        if not items:
            continue
        out += ["", f"### {title}" if md else f"{title}:"]
        for item in items[:max_changes]:
            out.append(f"- {fmt_item(item)}" if md else f"  {fmt_item(item)}")
        if len(items) > max_changes:
            more = f"... and {len(items) - max_changes} more (--format json lists all)"
            out.append(f"- {more}" if md else f"  {more}")
    if comp.winners:
        out += ["", "### winner per block (fastest optimal search)" if md
                else "winner per block (fastest optimal search):"]  # fmt: skip
        out += [f"- {w}" if md else f"  {w}" for w in comp.winners]
    out.append("")
    regressions = comp.regressions
    # which clock the time verdicts judged (harness compare --time)
    clock = f"; time judged on {CLOCK_WORDS[comp.metric]}" if comp.metric else ""
    if regressions:
        out.append(
            f"{'**' if md else ''}result: {len(regressions)} regression(s)"
            f"{'**' if md else ''} (exit 1){clock}"
        )
        out += [f"- {r}" if md else f"  {r}" for r in regressions]
    else:
        out.append(f"result: no regression (exit 0){clock}")
    return "\n".join(out)


def _instruction_cells(v) -> list[str]:
    """new/base instructions per solve and per node, and the verdict."""
    if v is None:
        return ["-", "-", "not counted"]
    per_node = f"{v.per_node_ratio:.3f}" if v.per_node_ratio is not None else "-"
    verdict = f"REGRESSION: {v.verdict}" if v.regression else v.verdict
    return [f"{v.ratio:.4f}", per_node, verdict]


def _changed(changes: int, regressions: int, worse: str) -> str:
    """A summary cell: ``=``, or ``3 changed, 1 worse``."""
    if not changes:
        return "="
    return f"{changes} changed" + (f", {regressions} {worse}" if regressions else "")


def _table(header: list[str], body: list[list[str]], md: bool) -> list[str]:
    if md:
        esc = [[c.replace("|", "\\|") for c in row] for row in [header, *body]]
        lines = [
            "| " + " | ".join(esc[0]) + " |",
            "|" + "|".join("---" for _ in header) + "|",
        ]
        return lines + ["| " + " | ".join(r) + " |" for r in esc[1:]]
    from harness.core.tables import table_text  # the harness's one table style

    return table_text(header, body).splitlines()


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
