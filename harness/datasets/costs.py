"""A dataset's boards as tasks under a tile cost model (:mod:`harness.core.costs`).

``8-strata@heavy`` is the dataset ``8-strata`` with heavy tiles: the same boards
and goal, another task, so it is another dataset in a run (its own name in every
row, table and comparison). Its instances carry the cheapest path's cost where it
is known: from the exact cost oracle on 3x3 and smaller, else what the file says
(nothing, for Korf's 100: no optimum claimed, and none checked).
"""

from __future__ import annotations

from dataclasses import replace

from harness.core.costs import UNIT, check_cost_model
from harness.datasets.model import (
    COST_SEPARATOR,
    ORACLE_MAX_SQUARES,
    Dataset,
    DatasetError,
    Instance,
)
from harness.puzzle import Board, Grid, unrank


def split_cost(token: str) -> tuple[str, str | None]:
    """``"8-strata@heavy"`` -> ``("8-strata", "heavy")``; no ``@``: (token, None).
    DatasetError for an unknown model."""
    name, sep, model = token.rpartition(COST_SEPARATOR)
    if not sep:
        return token, None
    try:
        return name, check_cost_model(model)
    except ValueError as err:
        raise DatasetError(f"{token}: {err}") from None


def under_costs(ds: Dataset, model: str) -> Dataset:
    """``ds`` as tasks under ``model``: named ``NAME@MODEL`` (its own name when it
    declares that model already), with optimal costs from the 3x3 oracle.
    DatasetError when ``ds`` declares another non-unit model."""
    check_cost_model(model)
    if ds.cost_model != UNIT and ds.cost_model != model:
        raise DatasetError(f"dataset {ds.name} declares {ds.cost_model} costs; it "
                           f"cannot be taken under {model} costs")  # fmt: skip
    if model == UNIT:
        return ds
    name = ds.name if ds.cost_model == model else f"{ds.name}{COST_SEPARATOR}{model}"
    instances = ds.instances
    if ds.grid.squares <= ORACLE_MAX_SQUARES:
        from harness.core.cost_oracle import optimal_costs
        from harness.puzzle import rank

        table = optimal_costs(ds.goal, ds.grid, model)
        instances = tuple(
            replace(i, optimal_cost=float(table[rank(i.start)]) if i.solvable else None)
            for i in instances
        )
    return replace(ds, name=name, cost_model=model, instances=instances)



def cost_strata_dataset(
    name: str, g: Grid, goal: Board, model: str, *, bins: int, count: int, seed: int,
    description: str,
) -> Dataset:
    """3x3 boards stratified by their cheapest cost under ``model``: the oracle's
    range 0..max cut into ``bins`` equal bins, ``count`` boards drawn from each
    (all of them where fewer exist), every one labelled with its optimal length
    and cost. Ids ``cBB-KKKK`` (bin BB, K-th board)."""
    import numpy as np

    from harness.core import oracle
    from harness.core.cost_oracle import optimal_costs
    from harness.datasets.generators import BitStream, sample
    from harness.datasets.jsonl import make_dataset

    check_cost_model(model)
    cost = optimal_costs(goal, g, model)
    depth = oracle.distances(goal, g)
    top = float(cost[np.isfinite(cost)].max())
    stream = BitStream.for_dataset("cost_strata", seed)
    # bin of each reachable board; the dearest board falls in the last bin
    reachable = np.isfinite(cost)
    which = np.minimum((np.where(reachable, cost, 0) / top * bins).astype(np.int64),
                       bins - 1)  # fmt: skip
    instances = []
    for b in range(bins):
        ranks = np.flatnonzero(reachable & (which == b)).tolist()
        for k, r in enumerate(sample(ranks, count, stream), start=1):
            instances.append(Instance(
                f"c{b:02d}-{k:04d}", unrank(r, g.squares), goal, g, True,
                int(depth[r]), "oracle", optimal_cost=float(cost[r]),
            ))  # fmt: skip
    ds = make_dataset(
        name, g, goal, generator="cost_strata",
        params={"model": model, "bins": bins, "count": count}, seed=seed,
        instances=instances, description=description,
        command=f"harness datasets rebuild {name}",
    )
    return replace(ds, cost_model=model)
