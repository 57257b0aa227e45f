"""Dataset labels the measurements contradict: an optimal solver's path shorter
than the instance's stated optimum, marked in the rows and said in the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.results.schema import META_FILE, ResultsError
from harness.results.store import read_meta, read_row_dicts

CONTRADICTED = "label_contradicted"


def mark_contradicted_labels(frame):
    """Add the boolean column ``label_contradicted`` and empty ``is_optimal`` on
    every row of an instance whose dataset label some row proved wrong: a replayed
    path (status ``solved``) shorter than ``optimal_length``. The label is then no
    optimum, so no row of that instance can be called optimal or not. Derived from
    stored columns, so it holds for runs written before it existed."""
    import pandas as pd

    if len(frame) == 0:
        frame[CONTRADICTED] = pd.Series(dtype=bool)
        return frame
    length = pd.to_numeric(frame["path_length"], errors="coerce")
    label = pd.to_numeric(frame["optimal_length"], errors="coerce")
    proof = (frame["status"] == "solved").fillna(False) & (length < label).fillna(False)
    keys = ["dataset", "instance"]
    wrong = set(map(tuple, frame.loc[proof, keys].astype(str).to_numpy()))
    hit = (
        pd.Series(
            [tuple(k) in wrong for k in frame[keys].astype(str).to_numpy()],
            index=frame.index,
        )
        if wrong
        else pd.Series(False, index=frame.index)
    )
    frame[CONTRADICTED] = hit.astype(bool)
    if wrong:
        frame["is_optimal"] = frame["is_optimal"].where(~hit)
    return frame


def contradicted_labels(rows) -> list[dict[str, Any]]:
    """One entry per (dataset, instance) whose label ``rows`` contradict:
    ``dataset``, ``instance``, ``label`` (the dataset's optimum), ``found`` (the
    shortest replayed path) and ``config`` (who found it). ``rows`` is a frame from
    a reader (the ``label_contradicted`` column set)."""
    import pandas as pd

    if len(rows) == 0 or CONTRADICTED not in rows or not rows[CONTRADICTED].any():
        return []
    hit = rows[rows[CONTRADICTED] & (rows["status"] == "solved")].copy()
    hit["_len"] = pd.to_numeric(hit["path_length"], errors="coerce")
    out = []
    for (dataset, instance), g in hit.groupby(["dataset", "instance"], sort=True):
        best = g.sort_values(["_len", "config"]).iloc[0]
        out.append({
            "dataset": str(dataset), "instance": str(instance),
            "label": int(best["optimal_length"]), "found": int(best["_len"]),
            "config": str(best["config"]),
        })  # fmt: skip
    return out


def stored_contradictions(
    results_dir: Path | str, dataset: str, checksum: str | None = None
) -> list[dict[str, Any]]:
    """Contradicted labels of ``dataset`` found by the runs stored under
    ``results_dir`` (entries as :func:`contradicted_labels`, plus ``run_id``), one
    per instance, shortest path first found. Runs of another version of the dataset
    (``checksum`` differs) and unreadable runs are passed over. Pure Python: no
    pandas, so ``harness datasets show`` stays quick."""
    best: dict[str, dict[str, Any]] = {}
    folder = Path(results_dir)
    if not folder.is_dir():
        return []
    for meta_path in sorted(folder.glob(f"*/{META_FILE}")):
        run_dir = meta_path.parent
        try:
            meta = read_meta(run_dir)
            if dataset not in (meta.get("datasets") or {}):
                continue
            want = meta["datasets"][dataset].get("sha256")
            if checksum is not None and want is not None and want != checksum:
                continue
            rows = read_row_dicts(run_dir)
        except (ResultsError, OSError, ValueError, AttributeError):
            continue
        for row in rows:
            if row["dataset"] != dataset or row["status"] != "solved":
                continue
            try:
                found, label = int(row["path_length"]), int(row["optimal_length"])
            except ValueError:
                continue
            have = best.get(row["instance"])
            if found < label and (have is None or found < have["found"]):
                best[row["instance"]] = {
                    "dataset": dataset, "instance": row["instance"], "label": label,
                    "found": found, "config": row["config"],
                    "run_id": meta.get("run_id", run_dir.name),
                }  # fmt: skip
    return [best[k] for k in sorted(best)]


def contradiction_text(entry: dict[str, Any]) -> str:
    """One line for one :func:`contradicted_labels` entry."""
    return (
        f"{entry['dataset']} {entry['instance']}: the dataset labels it "
        f"{entry['label']} moves, but {entry['config']} found a valid "
        f"{entry['found']}-move path"
    )
