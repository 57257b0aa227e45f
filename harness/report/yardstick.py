"""Findings from the necessary expansions (harness/results/columns/necessary.py):
each config's expansions beside the necessary set of its heuristic, and the
boards where a search expanded fewer than that set, which a bidirectional search
can do (the point of MM: Holte et al., AAAI 2016), and breadth-first search too:
it stops when it generates the goal, not when it expands it."""

from __future__ import annotations

import pandas as pd

#: A dataset with fewer boards than this that have a necessary set gets no
#: sentence when another dataset of the run has enough (a run's seeds beside
#: its strata would repeat the same ranking on two or three boards).
MIN_BOARDS = 5
#: Configs named at each end of the ranking in a dataset's sentence; the
#: Summary's nodes/necessary column has every config.
_NAMED = 3


def necessary_findings(inst: pd.DataFrame) -> list[str]:
    """Per dataset, one sentence on expanded / necessary (summed over the boards
    that have a count): the configs closest to the set and the farthest, the
    rest left to the Summary's nodes/necessary column; then one sentence naming
    the configs that expanded fewer boards than the set on some board. Datasets
    with fewer than :data:`MIN_BOARDS` such boards are left out when another has
    enough. Empty for runs without the columns."""
    if "necessary" not in inst or inst["necessary"].isna().all():
        return []
    have = inst[(inst["necessary"] > 0) & inst["expanded"].notna()]
    counted = have.groupby("dataset")["instance"].nunique()
    if (counted >= MIN_BOARDS).any():
        have = have[have["dataset"].isin(counted[counted >= MIN_BOARDS].index)]
    out = []
    for dataset, part in have.groupby("dataset", sort=True):
        sums = part.groupby("config", sort=False)[["expanded", "necessary"]].sum()
        ratios = (sums["expanded"] / sums["necessary"]).sort_values(kind="stable")
        boards = part.groupby("config", sort=False)["instance"].nunique()

        def named(items) -> str:
            return ", ".join(
                f"{c} {r:.3g}x ({boards[c]} board{'' if boards[c] == 1 else 's'})"
                for c, r in items
            )

        items = list(ratios.items())
        if len(items) <= 2 * _NAMED:
            listed = named(items)
        else:
            listed = (f"closest {named(items[:_NAMED])}; farthest "
                      f"{named(items[-_NAMED:])}; the other {len(items) - 2 * _NAMED} "
                      "in the Summary's nodes/necessary column")  # fmt: skip
        out.append(
            f"Expansions beside the necessary set on {dataset} (the boards a search "
            "with the config's heuristic that tests for the goal when it expands a "
            f"board must expand, g* + h < C*, exact; summed over the boards): "
            f"{listed}."
        )
        below = []
        for config, cells in part.groupby("config", sort=True):
            fewer = cells[cells["expanded"] < cells["necessary"]]
            if fewer.empty:
                continue
            fewer = fewer.assign(share=fewer["expanded"] / fewer["necessary"])
            first = fewer.sort_values("share", kind="stable").iloc[0]
            example = f"{int(first.expanded):,} vs {int(first.necessary):,}"
            below.append(f"{config} on {len(fewer)} of {len(cells)} boards "
                         f"(e.g. {first.instance}: {example})")  # fmt: skip
        if below:
            out.append(
                f"Below the necessary set on {dataset}: {'; '.join(below)}. The set "
                "binds a search that tests for the goal when it expands a board (A*, "
                "IDA*); one from both ends, or one that stops when it generates the "
                "goal (breadth-first), need not expand all of it."
            )
    return out
