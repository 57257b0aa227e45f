"""LaTeX tables (harness.report.latex) from the fair fixture tests/data/run_fair."""

from __future__ import annotations

from where import DATA

from harness.analysis import aggregate
from harness.report import latex, load_run

RUN = DATA / "run_fair"


def test_booktabs_tables_carry_the_fair_numbers() -> None:
    run = load_run(RUN)
    fair = aggregate.fair_summary(run.instances(), aggregate.time_limit(run.meta))
    text = latex.latex_tables(fair, aggregate.score_totals(fair))
    assert text.count(r"\toprule") == 2 and text.count(r"\bottomrule") == 2
    assert r"median (ms, 10 common)" in text
    # alpha: 10/20 answered, median 5.5 ms, geometric mean 4.53 ms, median
    # expanded 550, scores 4.18 (time) and 8.91 (expanded); see test_aggregate.
    assert (r"\texttt{alpha[manhattan]} & 10/20 & 5.50 & 4.53 & 550 & 453 & 4.18 & "
            r"8.91 \\") in text  # fmt: skip
    assert r"\texttt{beta[manhattan]} & 20/20 & 22.0 & 18.1 & 1{,}100 & 906" in text
    assert r"\texttt{beta[manhattan]} & 20/20 & 3.86 & 10.65 \\" in text


def test_escape() -> None:
    assert latex.escape("a_b & 50% #1 {x} ~ ^ \\") == (
        r"a\_b \& 50\% \#1 \{x\} \textasciitilde{} \textasciicircum{} "
        r"\textbackslash{}"
    )
