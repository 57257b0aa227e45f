"""Stored results: one directory per run, ``rows.csv`` plus ``meta.json``.

The contract is ``results/README.md`` (reporter and compare read it):
``results/<run_id>/`` is created once and never overwritten; rows are appended as
cells finish, each batch flushed and fsynced, one physical line per row (text fields
are kept on one line), so a run killed at any moment leaves at most one torn last
line, which readers drop and :func:`repair_rows` cuts off before a resume appends.
Standard library only; :func:`harness.analysis.read_run` is the typed reader.

The package: :mod:`~harness.results.schema` (columns, statuses, version),
:mod:`~harness.results.store` (run folders, meta.json, rows.csv),
:mod:`~harness.results.environment` (the machine),
:mod:`~harness.results.contradictions` (dataset labels the rows contradict),
:mod:`~harness.results.placement` (hosts and cells); the first four's public
names are re-exported here.
"""

from __future__ import annotations

from harness.results.contradictions import (
    CONTRADICTED,
    contradicted_labels,
    contradiction_text,
    mark_contradicted_labels,
    stored_contradictions,
)
from harness.results.environment import (
    ENVIRONMENT_KEYS,
    PACKAGES,
    cpu_frequency,
    cpu_model,
    environment_meta,
    load_average,
    timer_meta,
)
from harness.results.runmeta import RunMeta
from harness.results.schema import (
    ANSWERED,
    COLUMNS,
    COLUMNS_V1,
    COLUMNS_V2,
    COLUMNS_V3,
    COLUMNS_V4,
    MAX_TEXT,
    MEASURES,
    META_FILE,
    PROBLEMS,
    READABLE_VERSIONS,
    REJECTED_FILE,
    ROWS_FILE,
    SCHEMA_VERSION,
    SEVERITY,
    SEVERITY_GROUPS,
    STATE_KEPT,
    STATUSES,
    STOPPED_STABLE,
    SUPPORTED_SCHEMAS,
    WORST_LAST,
    ResultRow,
    ResultsError,
    row_key,
    stopped_early,
)
from harness.results.store import (
    COLD_TIMES,
    append_rows,
    find_run_dir,
    format_rows,
    git_info,
    make_run_id,
    new_run_dir,
    python_argv,
    quarantine_rows,
    read_meta,
    read_row_dicts,
    repair_rows,
    schema_gaps,
    stored_keys,
    utc_now,
    write_meta,
)

__all__ = [
    "ANSWERED",
    "COLD_TIMES",
    "COLUMNS",
    "COLUMNS_V1",
    "COLUMNS_V2",
    "COLUMNS_V3",
    "COLUMNS_V4",
    "CONTRADICTED",
    "ENVIRONMENT_KEYS",
    "MAX_TEXT",
    "MEASURES",
    "META_FILE",
    "PACKAGES",
    "PROBLEMS",
    "READABLE_VERSIONS",
    "REJECTED_FILE",
    "ROWS_FILE",
    "ResultRow",
    "ResultsError",
    "RunMeta",
    "SCHEMA_VERSION",
    "SEVERITY",
    "SEVERITY_GROUPS",
    "STATE_KEPT",
    "STATUSES",
    "STOPPED_STABLE",
    "SUPPORTED_SCHEMAS",
    "WORST_LAST",
    "append_rows",
    "contradicted_labels",
    "contradiction_text",
    "cpu_frequency",
    "cpu_model",
    "environment_meta",
    "find_run_dir",
    "format_rows",
    "git_info",
    "load_average",
    "make_run_id",
    "mark_contradicted_labels",
    "new_run_dir",
    "python_argv",
    "quarantine_rows",
    "read_meta",
    "read_row_dicts",
    "repair_rows",
    "row_key",
    "schema_gaps",
    "stopped_early",
    "stored_contradictions",
    "stored_keys",
    "timer_meta",
    "utc_now",
    "write_meta",
]
