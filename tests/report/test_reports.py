"""The reports are small classes: one run gets the summary report, several the
comparison report, each with its sections in order; the page renderers take a
title and sections and nothing else."""

from __future__ import annotations

from where import DATA

from harness.analysis import load_runs
from harness.report.comparison import comparison_table
from harness.report.document import ComparisonReport, SummaryReport
from harness.report.render import Section, html_page, markdown_page


def titles(report) -> list[str]:
    return [s.title for s in report.sections()]


def test_one_run_is_a_summary_report():
    [run] = load_runs([DATA / "run_fixture"])
    report = SummaryReport(run, [])
    assert report.title == f"Benchmark report: {run.run_id}"
    # the verdict and the podium first, then the rest (collapsible in HTML)
    assert titles(report) == ["Verdict", "Podium: 8-depths", "What stands out",
                              "Summary", "Results per dataset", "Plots", "Runs",
                              "How to read the numbers"]  # fmt: skip


def test_several_runs_are_a_comparison_report():
    runs = load_runs([DATA / "run_fixture", DATA / "run_fixture_b"])
    report = ComparisonReport(runs, [], comparison_table(runs))
    assert report.title == "Benchmark comparison of 2 runs"
    assert titles(report) == [
        f"Verdict: {runs[-1].label}", "What stands out", "Side by side",
        *(f"Results per dataset: {r.label}" for r in reversed(runs)),
        "Plots", "Runs", "How to read the numbers",
    ]  # fmt: skip


def test_pages_render_a_title_and_sections():
    sections = [Section("A & B", paragraphs=["x < y"], bullets=["one"])]
    assert markdown_page("T", sections) == (
        "# T\n\n**Contents:** [A & B](#a-b)\n\n"
        '<a id="a-b"></a>\n\n## A & B\n\nx < y\n\n- one\n'
    )
    page = html_page("T", sections)
    assert '<h2 id="a-b">A &amp; B</h2>' in page and "<p>x &lt; y</p>" in page
    assert '<a href="#a-b">A &amp; B</a>' in page  # the table of contents
