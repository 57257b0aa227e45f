"""The one summary of a run: the table ``harness run`` prints at the end, the table
``harness report --format table`` prints and the "Summary" section of report.md and
report.html are rendered from the same blocks, so the numbers agree everywhere.

One block per dataset and kind of board (a dataset holding both solvable and
unsolvable boards is two blocks, as the report splits it: a proof of
unsolvability is a different question and would swamp one median). Per config:
coverage, the share of optimal paths, and the median and geometric mean time and
the median nodes expanded over the instances that every config answered in that
block (:func:`harness.analysis.aggregate.fair_summary`). Configs that declined
every cell of a block are not rows of it; every declined cell is counted in the
skipped lines under the tables (:func:`skip_lines`), with the solver's reason.
As text the tables fit a given width: columns are left out, least important
first, and a note says which.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from harness.analysis import PROBLEMS, Run, aggregate, skipped_reasons
from harness.analysis.verdict import run_verdicts
from harness.report.tables import quality_varies
from harness.results.columns import shown_in_summary

#: (key, header, right-aligned). Headers carry their unit.
COLUMNS = (
    ("config", "config", False),
    ("place", "place", False),
    ("solved", "solved", True),
    ("optimal", "optimal", True),
    ("quality", "len/opt", True),
    ("median_ms", "median ms", True),
    ("gmean_ms", "gmean ms", True),
    ("nodes", "median nodes", True),
    ("per_node", "instr/node", True),
    ("skipped", "skipped", True),
    ("failed", "failed", False),
)


def table_columns() -> tuple[tuple[str, str, bool], ...]:
    """:data:`COLUMNS` with the registered columns that have a summary header
    (harness.results.columns) after the node counts."""
    at = [k for k, _, _ in COLUMNS].index("nodes") + 1
    added = tuple((c.name, c.header, True) for c in shown_in_summary())
    return COLUMNS[:at] + added + COLUMNS[at:]


#: The order in which columns are left out when a table is too wide (registered
#: columns go before these).
DROP_FIRST = ("median_ms", "optimal", "skipped", "per_node", "quality", "nodes",
              "place", "gmean_ms", "solved")  # fmt: skip
LEGEND = (
    "place: among the optimal searches that answered every common board at the "
    "optimum, by geometric mean time (bounded searches ranked apart; a lookup is "
    "not a search); solved: boards answered of those run (an unsolvable board "
    "counts when proved "
    "so); optimal: answers of optimal length; median ms, gmean ms (geometric mean, "
    "milliseconds of wall time per solve) and median nodes (boards expanded) are "
    "over the boards every config answered in that block, never a config's own "
    "easier set."
)
#: What "optimal" and "len/opt" mean in a block under a tile cost model
#: (NAME@MODEL): the cheapest path, not the shortest.
COSTS_LEGEND = (
    "Under tile costs ({datasets}): optimal: answers of optimal cost (the "
    "cheapest path, not the fewest moves); len/opt: path cost over the optimum "
    "(the cheapest cost)."
)
#: Said under the tables when instructions were counted.
PER_NODE_LEGEND = (
    "instr/node: instructions per node expanded, the sum of the instructions over "
    "the sum of the nodes on the boards every config answered (the cost of a node, "
    "weighted by the solves that expand most)."
)
#: Said under the tables when the length/opt column is shown.
QUALITY_LEGEND = (
    "len/opt: median path length over the optimum, shown when some config is "
    "not optimal (* over the shortest path any config found, where the dataset "
    "knows no optimum)."
)


@dataclass(frozen=True, slots=True)
class SummaryBlock:
    """One dataset (or its solvable / unsolvable part): a title (the verdict's
    header: boards, common boards, configs that answered none), the verdict's
    sentence, one row of display strings per config that ran (keys of
    :data:`COLUMNS`) and the configs that declined every cell, with a reason."""

    title: str
    rows: list[dict[str, str]]
    declined: list[tuple[str, str]] = field(default_factory=list)
    verdict: str = ""
    #: The block's dataset when it runs under a tile cost model (NAME@MODEL).
    costs: str = ""

    def frame(self, keys: Sequence[str]) -> pd.DataFrame:
        """The rows as a table of strings under the display headers of ``keys``
        (:func:`summary_columns`)."""
        names = dict((k, h) for k, h, _ in table_columns())
        return pd.DataFrame(
            [[r[k] for k in keys] for r in self.rows], columns=[names[k] for k in keys]
        )


def summary_blocks(run: Run) -> list[SummaryBlock]:
    """The run's summary, one block per dataset part, in the report's order."""
    table = aggregate.run_summary(run)
    quality = quality_varies(table)
    reasons = {(c, d): r for c, d, _, r in skipped_reasons(run.stored)}
    said = {v.dataset: v for v in run_verdicts(run)}
    blocks = []
    for dataset, cells in table.groupby("dataset", sort=False):
        ran = cells[cells["instances"] > cells["skipped"]]
        gone = cells[cells["instances"] == cells["skipped"]]
        verdict = said.get(str(dataset))
        declined = [
            (c, reasons.get((c, str(d)), "declined"))
            for c, d in zip(gone["config"], gone["dataset_name"], strict=True)
        ]
        places = verdict.places() if verdict else {}
        rows = [_row(r, quality) | {"place": places.get(r["config"], "")}
                for r in ran.to_dict("records")]  # fmt: skip
        title = verdict.header() if verdict else str(dataset)
        sentence = verdict.sentence() if verdict else ""
        name = str(cells["dataset_name"].iloc[0])
        costs = name if "@" in name else ""
        blocks.append(SummaryBlock(title, rows, declined, sentence, costs))
    return blocks


def legends(blocks: list[SummaryBlock], keys: Sequence[str]) -> list[str]:
    """The paragraphs said under the summary: the legend, len/opt's when shown,
    the registered columns', instr/node's, and what optimal and len/opt mean
    under tile costs when a block runs under a cost model."""
    out = [LEGEND] + [QUALITY_LEGEND] * ("quality" in keys) + legend_lines(keys)
    out += [PER_NODE_LEGEND] * ("per_node" in keys)
    costed = sorted({b.costs for b in blocks if b.costs})
    if costed:
        out.append(COSTS_LEGEND.format(datasets=", ".join(costed)))
    return out


def _row(r: dict, quality: bool = False) -> dict[str, str]:
    failed = ", ".join(f"{r[s]} {s}" for s in sorted(PROBLEMS) if r[s])
    in_common = bool(r.get("in_common"))
    ratio = r.get("median_suboptimality", float("nan"))
    relative = "*" if r.get("quality_basis") in ("best found", "mixed") else ""
    return {
        "config": r["config"],
        "solved": f"{r['answered']}/{r['instances'] - r['skipped']}",
        "optimal": "-" if r["optimal_share"] != r["optimal_share"]
        else f"{100 * r['optimal_share']:.0f}%",
        "quality": "" if not quality else "-" if ratio != ratio
        else f"{ratio:.3f}{relative}",
        "median_ms": number(r["common_median_ms"]) if in_common else "-",
        "gmean_ms": number(r["common_gmean_ms"]) if in_common else "-",
        "nodes": nodes(r["common_median_expanded"]) if in_common else "-",
        "per_node": number(r.get("common_instructions_per_node"))
        if in_common else "-",
        "skipped": str(r["skipped"]) if r["skipped"] else "",
        "failed": failed,
        **{c.name: _registered(c, r.get(c.summary_key)) if in_common else "-"
           for c in shown_in_summary()},
    }  # fmt: skip


def _registered(column, value) -> str:
    """A registered column's per-config value as its declaration renders it."""
    if value is None or value != value:
        return "-"
    return (column.render or number)(value)


def summary_columns(blocks: list[SummaryBlock]) -> list[str]:
    """The columns some row of some block fills (config always), in display
    order: every block shows the same ones."""
    return [
        k
        for k, _, _ in table_columns()
        if k == "config" or any(r[k] not in ("", "-") for b in blocks for r in b.rows)
    ]


def summary_text(
    blocks: list[SummaryBlock], width: int, skipped: list[str] | None = None
) -> str:
    """The blocks as aligned text no wider than ``width`` columns: the same columns
    in every block, the least important left out until the widest line fits (a
    note names them), then the legend and the ``skipped`` lines (:func:`skip_lines`),
    wrapped."""
    from harness.core.tables import table_text

    if not blocks:
        return "no result rows"
    keys = summary_columns(blocks)
    right = {k for k, _, r in table_columns() if r}

    def render(keys: list[str]) -> list[str]:
        out = []
        for b in blocks:
            if not b.rows:
                continue
            frame = b.frame(keys)
            out += ["", *textwrap.wrap(b.title, width)]
            out += table_text(list(frame.columns), frame.itertuples(index=False),
                              right=[i for i, k in enumerate(keys) if k in right])\
                .splitlines()  # fmt: skip
        return out[1:]

    lines, dropped = render(keys), []
    for key in [*(c.name for c in shown_in_summary()), *DROP_FIRST]:
        if max(map(len, lines), default=0) <= width:
            break
        if key in keys:
            keys.remove(key)
            dropped.append(dict((k, h) for k, h, _ in table_columns())[key])
            lines = render(keys)
    tail = legends(blocks, keys)
    if dropped:
        tail.append(
            f"Left out to fit {width} columns: {', '.join(dropped)} (a wider "
            "terminal, or report.md, shows them)."
        )
    text = lines + [w for p in tail for w in textwrap.wrap(p, width)]
    if skipped:
        text.append("skipped (the solver declined these; not failures):")
        for line in skipped:
            text += textwrap.wrap(line, width, initial_indent="  ",
                                  subsequent_indent="    ")  # fmt: skip
    said = [b.verdict for b in blocks if b.verdict]
    if said:  # last, where the terminal leaves it in sight
        text += ["", "Verdict (the fastest optimal search per block):"]
        for line in said:
            text += textwrap.wrap(line, width, initial_indent="- ",
                                  subsequent_indent="  ")  # fmt: skip
    return "\n".join(text)


def legend_lines(keys: Sequence[str]) -> list[str]:
    """One legend line per registered column shown (its header, its doc, and
    over which boards)."""
    return [
        f"{c.header}: {c.doc} ({c.per_config} over the boards every config answered)."
        for c in shown_in_summary()
        if c.name in keys
    ]


def skip_lines(run: Run) -> list[str]:
    """One line per group of configs the solver declined for the same kind of
    reason on the same datasets: who, where, how many boards each, and one reason
    (reasons that differ only by the instance or the heuristic's name are
    counted as alike)."""
    return [
        f"{r['config']} on {r['datasets']} ({r['boards']} boards"
        f"{' each' if ', ' in r['config'] else ''}): {r['reason']}"
        for r in skip_rows(run)
    ]


def skip_rows(run: Run) -> list[dict[str, str]]:
    """The declined cells, grouped as :func:`skip_lines` says: dicts with
    ``config`` (several joined by commas), ``datasets``, ``boards`` (each) and
    ``reason`` (the first config's)."""
    per_config: dict[str, list[tuple[str, int, str]]] = {}
    for config, dataset, count, reason in skipped_reasons(run.stored):
        per_config.setdefault(config, []).append((dataset, count, reason))
    groups: dict[tuple[str, str, str], list[str]] = {}
    first_reason: dict[tuple[str, str, str], str] = {}
    for config, entries in per_config.items():
        datasets = ", ".join(dict.fromkeys(d for d, _, _ in entries))
        boards = str(sum(n for _, n, _ in entries))
        _, _, reason = max(entries, key=lambda e: e[1])
        # Reasons naming each board's depth differ per board: one is shown, the
        # others counted, so a reader knows there is more than the one shown.
        more = len({r for _, _, r in entries}) - 1
        said = f"{reason} (+{more} similar reason{'s' * (more > 1)})" if more else reason
        # The reason names the heuristic or solver; strip it to group alike ones.
        alike = reason.replace(config.split("[")[-1].rstrip("]"), "*")
        alike = re.sub(r"\d+x\d+ boards", "* boards", alike)
        key = (datasets, boards, alike)
        groups.setdefault(key, []).append(config)
        first_reason.setdefault(key, said)
    return [
        {"config": ", ".join(configs), "datasets": datasets, "boards": boards,
         "reason": first_reason[(datasets, boards, alike)]}
        for (datasets, boards, alike), configs in groups.items()
    ]  # fmt: skip


def nodes(value: float | None) -> str:
    """Node counts as counts: 124, 74.5 (a median of two), never 74.50."""
    if value is None or value != value:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def number(value: float | None) -> str:
    """Three significant figures, thousands separated: 0.0236, 1.19, 13.0, 1,036."""
    if value is None or value != value:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"
