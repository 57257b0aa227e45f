"""The reporter: tables, plain-word findings and a self-contained report of stored runs.

- :mod:`harness.analysis` loads runs and makes the summary tables (re-exported here);
- :mod:`.findings`: what stands out, in plain words;
- :mod:`.tables`: display names, number formatting, Markdown / text / HTML tables;
- :mod:`.plots`: the figures (matplotlib, imported only when files are written);
- :mod:`.first_screen`: what a report opens with: the verdict per block
  (:mod:`harness.analysis.verdict`) and the podium;
- :mod:`.document`: ``write_report`` (report.md, report.html, plots/*.png) and the
  ``harness report --format`` summaries.
"""

from __future__ import annotations

from harness.analysis import (
    ANSWERED,
    PROBLEMS,
    SEVERITY,
    ReportError,
    Run,
    effective_branching_factor,
    instances,
    load_run,
    load_runs,
    summary,
)
from harness.report.comparison import comparison_table
from harness.report.document import (
    HOW_TO_READ,
    format_summary,
    summary_blocks,
    write_report,
)
from harness.report.findings import compare_findings, findings
from harness.report.tables import (
    display_compare,
    display_table,
    is_numeric_column,
    markdown_table,
    text_table,
)

__all__ = [
    "ANSWERED", "HOW_TO_READ", "PROBLEMS", "SEVERITY",
    "ReportError", "Run", "comparison_table", "compare_findings", "display_compare",
    "display_table", "effective_branching_factor", "findings", "format_summary",
    "instances", "is_numeric_column", "load_run", "load_runs", "markdown_table",
    "summary", "summary_blocks", "text_table", "write_report",
]
