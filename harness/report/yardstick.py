"""Findings from the necessary expansions (harness/results/columns/necessary.py):
each config's expansions beside the necessary set of its heuristic, and the
boards where a search expanded fewer than that set, which only a bidirectional
search can do (the point of MM: Holte et al., AAAI 2016)."""

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
            "optimal unidirectional search with the config's heuristic must expand, "
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
                f"{config} on {dataset} expanded fewer boards than any optimal "
                f"unidirectional search with its heuristic must on {len(below)} of "
                f"{len(cells)} boards (e.g. {examples}): it searches from both "
                "ends, so the unidirectional lower bound does not bind it."
            )
    return out
