"""Fair aggregation (harness.analysis.aggregate) on the hand-made fixture tests/data/run_fair:
alpha solves 10 easy boards quickly, beta solves them 4x slower plus 10 hard ones.
Every expected number is worked out by hand in the comments."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from where import DATA

from harness.analysis import aggregate
from harness.report import load_run

RUN = DATA / "run_fair"
LOG10_10_FACTORIAL = math.log10(math.factorial(10))  # 6.559763...


@pytest.fixture(scope="module")
def fair() -> pd.DataFrame:
    run = load_run(RUN)
    limit = aggregate.time_limit(run.meta)
    return aggregate.fair_summary(run.instances(), limit).set_index("config")


def test_time_limit_comes_from_the_run_options() -> None:
    assert aggregate.time_limit({"options": {"timeout": 10.0}}) == 10.0
    per = {"options": {"timeout": None, "timeout_by_config": {"a": 5, "b": 60}}}
    assert aggregate.time_limit(per) == 60.0


def test_coverage_puts_beta_ahead(fair) -> None:
    assert (fair.loc["alpha[manhattan]", "answered"], fair.loc["beta[manhattan]", "answered"]) == (10, 20)
    assert fair.loc["alpha[manhattan]", "coverage"] == 0.5
    assert fair.loc["beta[manhattan]", "coverage"] == 1.0


def test_common_instance_numbers_rank_alpha_faster(fair) -> None:
    a, b = fair.loc["alpha[manhattan]"], fair.loc["beta[manhattan]"]
    # The common set is e01..e10 for both.
    assert a.common_n == b.common_n == 10
    # alpha: 1..10 ms, median 5.5; beta: 4..40 ms, median 22.
    assert a.common_median_ms == pytest.approx(5.5)
    assert b.common_median_ms == pytest.approx(22.0)
    # geometric mean of 1..10 = (10!)^(1/10) = 4.5287 ms; beta 4x that.
    assert a.common_gmean_ms == pytest.approx(10 ** (LOG10_10_FACTORIAL / 10))
    assert a.common_gmean_ms == pytest.approx(4.5287, abs=1e-4)
    assert b.common_gmean_ms == pytest.approx(4 * 4.5287, abs=4e-4)
    assert (a.common_median_expanded, b.common_median_expanded) == (550, 1100)
    assert a.common_gmean_expanded == pytest.approx(452.87, abs=0.01)
    # Own-set medians: alpha over its 10 (5.5 ms); beta over all 20: the sorted
    # times are 4..40 ms then 1000..10000 ms, so (40 + 1000) / 2 = 520 ms.
    assert a.own_median_ms == pytest.approx(5.5)
    assert b.own_median_ms == pytest.approx(520.0)


def test_scores_by_hand(fair) -> None:
    # time: floor 1e-4 s, limit 10 s, range log10(1e5) = 5.
    # alpha eNN (NN ms): 1 - log10(10 NN)/5 = (4 - log10 NN)/5; the timeouts 0.
    a, b = fair.loc["alpha[manhattan]"], fair.loc["beta[manhattan]"]
    assert a.score_time == pytest.approx((40 - LOG10_10_FACTORIAL) / 5)  # 6.6880
    # beta eNN (4 NN ms): (5 - log10 40 - log10 NN)/5; hNN (NN s): (1 - log10 NN)/5
    # (h10 = 10 s is at the limit: 0).
    easy = (50 - 10 * math.log10(40) - LOG10_10_FACTORIAL) / 5
    hard = (10 - LOG10_10_FACTORIAL) / 5
    assert b.score_time == pytest.approx(easy + hard)  # 5.4839 + 0.6880
    # expanded: floor 100, limit 1e8, range 6. alpha 100 NN: (6 - log10 NN)/6.
    assert a.score_expanded == pytest.approx((60 - LOG10_10_FACTORIAL) / 6)  # 8.9067
    # beta 200 NN: (6 - log10 2 - log10 NN)/6; 1e6 NN: (2 - log10 NN)/6.
    expected = (60 - 10 * math.log10(2) - LOG10_10_FACTORIAL) / 6 + (
        20 - LOG10_10_FACTORIAL
    ) / 6
    assert b.score_expanded == pytest.approx(expected)  # 10.645: coverage counts
    assert b.score_expanded > a.score_expanded and a.score_time > b.score_time


def test_score_bounds() -> None:
    got = aggregate.score([1e-5, 1e-4, 1e-3, 10.0, 20.0, np.nan], 1e-4, 10.0)
    assert list(got) == pytest.approx([1.0, 1.0, 0.8, 0.0, 0.0, 0.0])


def test_findings_say_both(fair) -> None:
    run = load_run(RUN)
    table = aggregate.fair_summary(run.instances(), aggregate.time_limit(run.meta))
    (text,) = aggregate.fair_findings(table)
    assert "over the 10 instances every config answered" in text
    assert "alpha[manhattan] is fastest" in text
    assert "beta[manhattan], takes 4.00x as long" in text
    assert "Coverage: beta[manhattan] answers all, 20 of 20 (alpha[manhattan] 10)" in text
    assert "alpha[manhattan] is the fastest on the common instances but answers fewer (10 of 20)" in text


def test_configs_that_answered_nothing_stay_out_of_the_common_set() -> None:
    inst = pd.DataFrame(
        {
            "run_id": "r", "dataset": "d", "instance": ["i1", "i2"] * 3,
            "config": ["a"] * 2 + ["b"] * 2 + ["pdb"] * 2,
            "status": ["solved", "solved", "solved", "timeout", "skipped", "skipped"],
            "seconds": [0.001, 0.002, 0.004, np.nan, np.nan, np.nan],
            "expanded": [10, 20, 40, np.nan, np.nan, np.nan],
        }
    )  # fmt: skip
    fair = aggregate.fair_summary(inst, 10.0).set_index("config")
    assert list(fair.common_n) == [1, 1, 1]
    assert fair.loc["a", "common_median_ms"] == pytest.approx(1.0)
    assert fair.loc["b", "common_median_ms"] == pytest.approx(4.0)
    assert not fair.loc["pdb", "in_common"]
    assert math.isnan(fair.loc["pdb", "common_median_ms"])
    (text,) = aggregate.fair_findings(fair.reset_index())
    assert "Not in the common set (answered none): pdb." in text


def test_findings_name_the_table_walk_apart_from_the_best_search() -> None:
    """A lookup (table) is fastest but is no search: the fastest search is named
    on its own, with its nodes against the next search's (the why)."""
    inst = pd.DataFrame(
        {
            "run_id": "r", "dataset": "d", "instance": ["i1", "i2"] * 3,
            "config": ["table"] * 2 + ["pdb"] * 2 + ["md"] * 2,
            "status": "solved",
            "seconds": [1e-5, 1e-5, 1e-4, 1e-4, 4e-4, 4e-4],
            "expanded": [20, 20, 20, 22, 90, 110],
        }
    )  # fmt: skip
    fair = aggregate.fair_summary(inst, 10.0)
    (plain,) = aggregate.fair_findings(fair)
    assert "table is fastest: geometric mean 0.0100 ms" in plain
    (text,) = aggregate.fair_findings(fair, lookups=frozenset({"table"}))
    assert "table is fastest, 0.0100 ms geometric mean, but it looks the answer" in text
    assert (
        "the fastest search is pdb: geometric mean 0.100 ms (median 0.100 ms), "
        "expanding a median of 21 nodes; the next, md, takes 4.00x as long (0.400 "
        "ms, 100 nodes); it expands 4.76x the nodes" in text
    )
