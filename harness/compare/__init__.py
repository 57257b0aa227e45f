"""Compare two stored runs: exact counter changes, status changes, noise-aware time.

Cells are matched on (solver, heuristic, dataset, instance). Counters of a
deterministic solver are compared exactly: any difference is a *change*; more
nodes expanded or generated, a longer path, or a worse status is a *regression*.
Time is compared per solver config as the geometric mean over instances of
``median(new repeats) / median(base repeats)``, on CPU time when both runs have it,
*normalized*: each repeat divided by the reference solve the runner timed next to
it in the same worker on the same core (:mod:`harness.compare.noise`), with the raw CPU
ratio shown beside. Several runs per side (``A1,A2`` vs ``B1,B2``, best alternated
A B A B) are bootstrapped over runs and instances; one run per side over instances
and repeats. A slowdown is a regression only when it is significant (the interval
excludes 1), at least ``min_ratio`` and above the calibrated noise floor, over at
least 5 timed instances.

Exit codes: 0 nothing regressed, 1 a regression, 2 the runs cannot be compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.compare.comparability import (
    check_datasets,
    check_schema,
    environment_warnings,
    host_warnings,
    load_warnings,
    missing_cells,
    name_list,
    schema_notes,
    source_changes,
)
from harness.compare.counters import cell_table, compare_counters
from harness.compare.instructions import compare_instructions
from harness.compare.model import (
    CELL_KEY,
    COUNTERS,
    EXIT_INCOMPARABLE,
    EXIT_OK,
    EXIT_REGRESSION,
    GOOD_STATUSES,
    STATUS_SEVERITY,
    SUPPORTED_SCHEMAS,
    WORSE_WHEN_HIGHER,
    Comparison,
    ConfigSummary,
    CounterChange,
    Incomparable,
    InstructionVerdict,
    QualityChange,
    StatusChange,
    Thresholds,
    TimeVerdict,
)
from harness.compare.render import render
from harness.compare.times import compare_times

if TYPE_CHECKING:  # pandas is imported lazily: this module is reached from the CLI
    import pandas as pd

    from harness.analysis import Run

__all__ = [
    "CELL_KEY",
    "COUNTERS",
    "EXIT_INCOMPARABLE",
    "EXIT_OK",
    "EXIT_REGRESSION",
    "GOOD_STATUSES",
    "STATUS_SEVERITY",
    "SUPPORTED_SCHEMAS",
    "WORSE_WHEN_HIGHER",
    "Comparison",
    "ConfigSummary",
    "CounterChange",
    "Incomparable",
    "InstructionVerdict",
    "QualityChange",
    "StatusChange",
    "Thresholds",
    "TimeVerdict",
    "compare",
    "compare_frames",
    "compare_runs",
    "read_run",
    "render",
    "resolve_run",
    "resolve_runs",
]


# ------------------------------------------------------------------- reading runs


def resolve_run(text: str, results_dir: Path) -> Path:
    """A run directory given as a path or as a run id under ``results_dir``."""
    from harness.results import ResultsError, find_run_dir

    try:
        return find_run_dir(text, results_dir)
    except ResultsError as err:
        raise Incomparable(str(err)) from None


def resolve_runs(text: str, results_dir: Path) -> list[Path]:
    """One side of a comparison: a run, or several separated by commas."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise Incomparable(f"run {text!r}: no run named")
    return [resolve_run(p, results_dir) for p in parts]


def read_run(run_dir: Path) -> tuple[dict, pd.DataFrame]:
    """(meta, rows) of a stored run; Incomparable with the reason if unreadable."""
    from harness.analysis import read_run as read_stored_run
    from harness.results import ResultsError

    try:
        return read_stored_run(run_dir)
    except ResultsError as err:  # already one line naming the file
        raise Incomparable(str(err)) from None


def compare_runs(
    base: Path | list[Path],
    new: Path | list[Path],
    thresholds: Thresholds = Thresholds(),
) -> Comparison:
    """Compare two run directories, or two lists of runs of the same code (each
    side's runs pooled; time bootstrapped over runs); raises Incomparable with a
    one-line reason."""
    import pandas as pd

    sides = []
    for runs in (base, new):
        runs = [runs] if isinstance(runs, str | Path) else list(runs)
        metas, frames = [], []
        for i, run in enumerate(runs):
            meta, rows = read_run(run)
            rows = rows.copy()
            rows["_run"] = i
            metas.append(meta)
            frames.append(rows)
        sides.append((metas, pd.concat(frames, ignore_index=True)))
    (base_metas, base_rows), (new_metas, new_rows) = sides
    comp = compare_frames(
        base_metas[0],
        base_rows,
        new_metas[0],
        new_rows,
        thresholds,
        base_metas=base_metas,
        new_metas=new_metas,
    )
    return comp


def compare(base: Run, new: Run, thresholds: Thresholds = Thresholds()) -> Comparison:
    """The comparer: ``new`` against ``base``, two runs loaded by
    :func:`harness.analysis.load_run` (``harness compare`` and ``harness report``
    both come here). Raises Incomparable with a one-line reason."""
    return compare_frames(base.meta, base.stored, new.meta, new.stored, thresholds)


# -------------------------------------------------------------------- comparing


def compare_frames(
    base_meta: dict,
    base_rows: pd.DataFrame,
    new_meta: dict,
    new_rows: pd.DataFrame,
    thresholds: Thresholds = Thresholds(),
    *,
    base_metas: list[dict] | None = None,
    new_metas: list[dict] | None = None,
) -> Comparison:
    """Compare two runs already read (``_run`` in the rows numbers several runs
    of one side; their metas in ``base_metas`` / ``new_metas``); raises
    Incomparable with a one-line reason."""
    base_metas = base_metas or [base_meta]
    new_metas = new_metas or [new_meta]
    comp = Comparison(
        base_id=",".join(str(m.get("run_id", "base")) for m in base_metas),
        new_id=",".join(str(m.get("run_id", "new")) for m in new_metas),
        thresholds=thresholds,
    )
    for meta in base_metas + new_metas:
        check_schema(meta, meta)
    schema_notes(base_metas + new_metas, comp)
    for rows, which in ((base_rows, "base"), (new_rows, "new")):
        missing = [
            c
            for c in CELL_KEY + ["measure", "status", "repeat"]
            if c not in rows.columns
        ]
        if missing:
            raise Incomparable(
                f"{which} run rows.csv lacks column(s) {', '.join(missing)}"
            )
    common_datasets = check_datasets(base_meta, new_meta, base_rows, new_rows, comp)
    environment_warnings(base_meta, new_meta, comp)
    host_warnings(base_metas, new_metas, comp)
    load_warnings(base_metas, new_metas, comp)
    for metas in (base_metas, new_metas):
        for other in metas[1:]:
            environment_warnings(metas[0], other, comp)

    base_cells = cell_table(base_rows[base_rows.dataset.isin(common_datasets)])
    new_cells = cell_table(new_rows[new_rows.dataset.isin(common_datasets)])
    base_configs, new_configs = set(base_cells.config), set(new_cells.config)
    common_configs = base_configs & new_configs
    if not common_configs:
        raise Incomparable(
            "no solver config in common: base has "
            f"{name_list(base_configs)}; new has {name_list(new_configs)}"
        )
    for label, only in (
        ("base", base_configs - new_configs),
        ("new", new_configs - base_configs),
    ):
        if only:
            comp.notes.append(f"only in {label} (not compared): {name_list(only)}")

    merged = base_cells.merge(
        new_cells, on=CELL_KEY, how="outer", suffixes=("_b", "_n"), indicator=True
    )
    merged = merged[merged.config.isin(common_configs)]
    both = merged[merged._merge == "both"]
    if both.empty:
        raise Incomparable("no (config, dataset, instance) cell in common")
    comp.matched_cells = len(both)
    missing_cells(merged, base_meta, new_meta, comp)
    for config in sorted(common_configs):  # report order: by config label
        comp.configs[config] = ConfigSummary(config)
    source_changes(base_meta, new_meta, common_configs, comp)
    for config, group in both.groupby("config", sort=True):
        summary = comp.configs[config]
        summary.cells = len(group)
        compare_counters(group, comp, summary)
    for which, cells in (("base", base_cells), ("new", new_cells)):
        varying = cells[cells.counters_vary & cells.config.isin(common_configs)]
        if len(varying):
            comp.warnings.append(
                f"{which} run: counters differ between repeats in {len(varying)} "
                f"cell(s) (nondeterministic solver?), e.g. {varying.config.iloc[0]} "
                f"on {varying.instance.iloc[0]}"
            )
    if thresholds.check_time:
        compare_times(base_rows, new_rows, both, comp)
    # deterministic: compared even when time is not (runs from two machines)
    compare_instructions(base_rows, new_rows, both, comp)
    comp.winners = _winners(base_meta, base_rows, new_meta, new_rows)
    return comp


def _winners(base_meta: dict, base_rows: pd.DataFrame, new_meta: dict,
             new_rows: pd.DataFrame) -> list[str]:  # fmt: skip
    """Each block's winner in the first run of each side (the verdict of
    :mod:`harness.analysis.verdict`, as the runs' own reports name it)."""
    from harness.analysis import analysis_view, instances
    from harness.analysis.verdict import verdicts, winner_changes

    said = []
    for meta, rows in ((base_meta, base_rows), (new_meta, new_rows)):
        first = rows[rows["_run"] == 0] if "_run" in rows.columns else rows
        said.append(verdicts(instances(analysis_view(first)), meta))
    return winner_changes(*said)
