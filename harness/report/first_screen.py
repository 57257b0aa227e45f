"""What a report shows first: the verdict per dataset block, one sentence each, and
the podium of the main block (the best five, the rest folded), both from
:mod:`harness.analysis.verdict`, the one place a winner is chosen. Also the compact
table of declined cells that replaces a list of them further down.
"""

from __future__ import annotations

import pandas as pd

from harness.analysis import Run
from harness.analysis.aggregate import sig
from harness.analysis.verdict import BlockVerdict, Standing, run_verdicts, times
from harness.report.render import Section
from harness.report.summary_table import skip_rows

#: Podium rows shown before the fold.
PODIUM = 5


def verdict_section(run: Run) -> Section:
    """One sentence per dataset block: who wins, by how much, why."""
    said = run_verdicts(run)
    sec = Section("Verdict", anchor="verdict", lead=True, top=True)
    sec.bullets = [v.sentence() for v in said] or ["The run holds no result rows."]
    return sec


def main_block(said: list[BlockVerdict]) -> BlockVerdict | None:
    """The block the podium shows: the most common boards among those with a
    winner (the first such block on a tie), else the first block."""
    with_winner = [v for v in said if v.winner is not None]
    if not with_winner:
        return said[0] if said else None
    return max(with_winner, key=lambda v: v.common)


def podium_section(run: Run) -> Section | None:
    """The main block's configs, best first: the best :data:`PODIUM` optimal
    searches in sight, everything else (further places, bounded searches, the
    lookup, configs not ranked or that answered none) behind a disclosure."""
    block = main_block(run_verdicts(run))
    if block is None:
        return None
    frame = podium_frame(block)
    sec = Section(f"Podium: {block.dataset}", anchor="podium", top=True)
    sec.paragraphs.append(
        f"Optimal searches on the {block.common} common boards, by geometric mean "
        "time per solve; 'vs 1st': time ratio to the first (95% interval over the "
        "boards); nodes: boards expanded (geometric mean). Other blocks: Summary."
    )
    shown = min(PODIUM, len(block.ranked))
    sec.tables.append(("", frame.iloc[:shown]))
    if len(frame) > shown:
        sec.folded.append(
            (f"The other {len(frame) - shown} configs (further places, bounded "
             "searches, lookups, not ranked)", "", frame.iloc[shown:])  # fmt: skip
        )
    return sec


def podium_frame(block: BlockVerdict) -> pd.DataFrame:
    """Every config of ``block`` in verdict order, as display strings."""
    rows = []
    places = block.places()
    for group, kind in ((block.ranked, "optimal search"), (block.bounded, "bounded"),
                        (block.lookups, "lookup, not a search")):  # fmt: skip
        rows += [_row(s, places[s.config], kind) for s in group]
    for config, share, why in block.others:
        rows.append({"place": "unranked", "config": config, "kind": why,
                     "gmean us": "", "vs 1st": "", "nodes": "", "ns per node": "",
                     "optimal": _pct(share)})  # fmt: skip
    for config, reason in block.none:
        rows.append({"place": "answered none", "config": config, "kind": reason,
                     "gmean us": "", "vs 1st": "", "nodes": "", "ns per node": "",
                     "optimal": ""})  # fmt: skip
    return pd.DataFrame(rows)


def _row(s: Standing, place: str, kind: str) -> dict[str, str]:
    interval = (
        f" ({times(s.low)}-{times(s.high)})"
        if s.ratio != 1.0 and s.low == s.low and s.high == s.high
        else ""
    )
    if kind == "bounded" and s.bound is not None:
        kind = f"bounded, w <= {s.bound:g}"
    per_node = 1e6 * s.gmean_ms / max(s.gmean_nodes, 1.0)  # ns
    return {
        "place": place,
        "config": s.config,
        "kind": kind,
        "gmean us": sig(1e3 * s.gmean_ms),
        "vs 1st": f"{times(s.ratio)}x{interval}",
        "nodes": sig(s.gmean_nodes),
        "ns per node": sig(per_node),
        "optimal": _pct(s.optimal_share),
    }


def skipped_frame(run: Run) -> pd.DataFrame | None:
    """The declined cells as one compact table: configs declined alike on the
    same datasets share a row."""
    rows = skip_rows(run)
    if not rows:
        return None
    return pd.DataFrame(
        {
            "configs": [r["config"] for r in rows],
            "datasets": [r["datasets"] for r in rows],
            "boards each": [r["boards"] for r in rows],
            "reason (the first config's)": [r["reason"] for r in rows],
        }
    )


def _pct(share: float) -> str:
    return "" if share != share else f"{100 * share:.0f}%"
