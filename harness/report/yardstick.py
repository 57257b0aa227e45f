"""Findings from the necessary expansions (harness/results/columns/necessary.py):
each config's expansions beside the necessary set of its heuristic, and the
boards where a search expanded fewer than that set, which a bidirectional search
can do (the point of MM: Holte et al., AAAI 2016), and breadth-first search too:
it stops when it generates the goal, not when it expands it."""

from __future__ import annotations

import pandas as pd

#: Boards named in a sentence, at most.
_EXAMPLES = 2


def necessary_findings(inst: pd.DataFrame) -> list[str]:
    """Per dataset, one sentence of expanded / necessary per config (summed over
    the boards that have a count), then one per config that expanded fewer boards
    than the necessary set on some board. Empty for runs without the columns."""
    if "necessary" not in inst or inst["necessary"].isna().all():
        return []
    have = inst[(inst["necessary"] > 0) & inst["expanded"].notna()]
    out = []
    for dataset, part in have.groupby("dataset", sort=True):
        sums = part.groupby("config", sort=False)[["expanded", "necessary"]].sum()
        ratios = (sums["expanded"] / sums["necessary"]).sort_values()
        boards = part.groupby("config", sort=False)["instance"].nunique()
        listed = ", ".join(
            f"{config} {ratio:.3g}x ({boards[config]} boards)"
            for config, ratio in ratios.items()
        )
        out.append(
            f"Expansions beside the necessary set on {dataset} (the boards every "
            "search with the config's heuristic that tests for the goal when it "
            "expands a board must expand, "
            f"g* + h < C*, exact; summed over the boards): {listed}."
        )
        for config, cells in part.groupby("config", sort=True):
            below = cells[cells["expanded"] < cells["necessary"]]
            if below.empty:
                continue
            below = below.assign(share=below["expanded"] / below["necessary"])
            below = below.sort_values("share")
            examples = "; ".join(
                f"{r.instance}: {int(r.expanded):,} vs {int(r.necessary):,}"
                for r in below.head(_EXAMPLES).itertuples()
            )
            out.append(
                f"{config} on {dataset} expanded fewer boards than A* or IDA* with "
                f"its heuristic must on {len(below)} of {len(cells)} boards (e.g. "
                f"{examples}): the bound binds a search that tests for the goal "
                "when it expands a board; one from both ends, or one that stops "
                "when it generates the goal (breadth-first), need not reach it."
            )
    return out
