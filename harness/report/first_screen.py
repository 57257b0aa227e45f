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


def plot_top(run: Run) -> tuple[str, ...]:
    """The configs plots of many lines colour, best first: the main block's best
    :data:`PODIUM` optimal searches, its best bounded search and its lookup."""
    block = main_block(run_verdicts(run))
    if block is None:
        return ()
    picked = [*block.ranked[:PODIUM], *block.bounded[:1], *block.lookups[:1]]
    return tuple(s.config for s in picked)


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
        rest = len(frame) - shown
        what = "The other config" if rest == 1 else f"The other {rest} configs"
        sec.folded.append(
            (f"{what} (further places, bounded searches, lookups, not ranked)", "",
             frame.iloc[shown:])  # fmt: skip
        )
    return sec


def podium_frame(block: BlockVerdict) -> pd.DataFrame:
    """Every config of ``block`` in verdict order, as display strings; 'vs 1st' is
    each time over the winner's (with the interval for the optimal searches)."""
    first = block.winner.gmean_ms if block.winner else float("nan")
    places = block.places()
    rows = [_row(s, places[s.config], "optimal search", first) for s in block.ranked]
    for s in block.bounded:
        rows.append(_row(s, places[s.config], f"bounded, w <= {s.bound:g}", first))
    rows += [_row(s, "lookup", "lookup, not a search", first) for s in block.lookups]
    rows += [_row(s, "unranked", s.note, first) for s in block.others]
    for config, reason in block.none:
        rows.append({"place": "answered none", "config": config, "kind": reason}
                    | dict.fromkeys(PODIUM_COLUMNS[3:], ""))  # fmt: skip
    return pd.DataFrame(rows, columns=PODIUM_COLUMNS)


#: The podium's columns (times in us: the same unit down a column sorts right).
PODIUM_COLUMNS = ["place", "config", "kind", "gmean us", "vs 1st (95% interval)",
                  "gmean nodes", "ns per node", "optimal"]  # fmt: skip


def _row(s: Standing, place: str, kind: str, first: float) -> dict[str, str]:
    ranked = kind == "optimal search"
    ratio = s.ratio if ranked else s.gmean_ms / first
    interval = (
        f" ({times(s.low)}-{times(s.high)})"
        if ranked and s.ratio != 1.0 and s.low == s.low
        else ""
    )
    per_node = 1e6 * s.gmean_ms / max(s.gmean_nodes, 1.0)  # ns
    return dict(zip(PODIUM_COLUMNS, [
        place, s.config, kind, sig(1e3 * s.gmean_ms), f"{times(ratio)}x{interval}",
        sig(s.gmean_nodes), sig(per_node), _pct(s.optimal_share),
    ], strict=True))  # fmt: skip


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
