"""Solution quality, derived by the readers from stored columns (never stored).

A row stores ``suboptimality`` = path_length / optimal_length when the dataset
knows the optimum (schema 6 on). Where it does not, or where a run proved the
label wrong (a shorter valid path), the best length found by any config of the
run stands in: :func:`mark_quality` fills ``suboptimality`` against it and says
so in ``quality_basis`` (``optimum`` or ``best found``). Runs written before
schema 6 get the same derived values from their path lengths. Rows under a tile
cost model other than unit (schema 7, ``cost_model``) are judged by cost:
path_cost over optimal_cost, else over the cheapest path any config found.
"""

from __future__ import annotations

#: Derived columns (see :func:`mark_quality`).
BEST_LENGTH = "best_length"
QUALITY_BASIS = "quality_basis"
#: quality_basis values: the dataset's exact optimum, or the shortest path any
#: config of the run found (an upper bound on the optimum: suboptimality >= 1 is
#: then relative to it, and may understate the true value).
OPTIMUM = "optimum"
BEST_FOUND = "best found"


def mark_quality(frame):
    """Add ``best_length`` (per dataset and instance: the shortest path any
    solved row of the frame returned) and ``quality_basis``, and fill
    ``suboptimality`` of every solved row: path_length over the optimum where
    the dataset's label holds (``label_contradicted`` false), else over
    ``best_length``. Rows without a solved path keep it empty (basis "").
    Expects the typed frame of :func:`harness.analysis.read_run`."""
    import numpy as np
    import pandas as pd

    if len(frame) == 0:
        frame[BEST_LENGTH] = pd.Series(dtype="Int64")
        frame[QUALITY_BASIS] = pd.Series(dtype="string")
        return frame
    length = pd.to_numeric(frame["path_length"], errors="coerce").astype(float)
    solved = (frame["status"] == "solved").fillna(False).to_numpy(dtype=bool)
    keys = [frame["dataset"].astype(str), frame["instance"].astype(str)]
    best = length.where(solved).groupby(keys).transform("min")
    label = pd.to_numeric(frame["optimal_length"], errors="coerce").astype(float)
    contradicted = (
        frame["label_contradicted"].to_numpy(dtype=bool)
        if "label_contradicted" in frame
        else np.zeros(len(frame), dtype=bool)
    )
    measure, label_m, best_m = length, label, best
    if "cost_model" in frame:  # tile costs: cost, not length (harness.core.costs)
        costed = (frame["cost_model"].astype(str) != "unit").to_numpy(dtype=bool)
        cost = pd.to_numeric(frame["path_cost"], errors="coerce").astype(float)
        best_cost = cost.where(solved).groupby(keys).transform("min")
        optimal = pd.to_numeric(frame["optimal_cost"], errors="coerce").astype(float)
        measure = pd.Series(np.where(costed, cost, length), index=frame.index)
        label_m = pd.Series(np.where(costed, optimal, label), index=frame.index)
        best_m = np.where(costed, best_cost, best)
    exact = label_m.notna().to_numpy() & ~contradicted
    reference = np.where(exact, label_m, best_m)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(
            reference == 0, np.where(measure == 0, 1.0, np.nan), measure / reference
        )
    has = solved & np.isfinite(ratio)
    frame["suboptimality"] = pd.array(np.where(has, ratio, np.nan), dtype="float64")
    frame[BEST_LENGTH] = pd.array(
        np.where(np.isfinite(best), best, np.nan), dtype="float64"
    ).astype("Int64")
    basis = np.where(exact, OPTIMUM, BEST_FOUND)
    frame[QUALITY_BASIS] = pd.array(np.where(has, basis, ""), dtype="string")
    return frame
