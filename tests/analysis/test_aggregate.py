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
    # time: floor 1e-7 s, limit 10 s, range log10(1e8) = 8.
    # alpha eNN (NN ms): log10(10 / NN e-3) / 8 = (4 - log10 NN)/8; timeouts 0.
    a, b = fair.loc["alpha[manhattan]"], fair.loc["beta[manhattan]"]
    assert a.score_time == pytest.approx((40 - LOG10_10_FACTORIAL) / 8)  # 4.1800
    # beta eNN (4 NN ms): (4 - log10 4 - log10 NN)/8; hNN (NN s): (1 - log10 NN)/8
    # (h10 = 10 s is at the limit: 0).
    easy = (40 - 10 * math.log10(4) - LOG10_10_FACTORIAL) / 8
    hard = (10 - LOG10_10_FACTORIAL) / 8
    assert b.score_time == pytest.approx(easy + hard)  # 3.4274 + 0.4300
    # expanded: floor 100, limit 1e8, range 6. alpha 100 NN: (6 - log10 NN)/6.
    assert a.score_expanded == pytest.approx((60 - LOG10_10_FACTORIAL) / 6)  # 8.9067
    # beta 200 NN: (6 - log10 2 - log10 NN)/6; 1e6 NN: (2 - log10 NN)/6.
    expected = (60 - 10 * math.log10(2) - LOG10_10_FACTORIAL) / 6 + (
        20 - LOG10_10_FACTORIAL
    ) / 6
    assert b.score_expanded == pytest.approx(expected)  # 10.645: coverage counts
    assert b.score_expanded > a.score_expanded and a.score_time > b.score_time


def test_time_scores_do_not_saturate_on_fast_solves() -> None:
    """A 1 us lookup and a 30 us search score apart (a 0.1 ms floor tied them)."""
    lookup, search = aggregate.score([1e-6, 3e-5], aggregate.TIME_FLOOR_S, 60.0)
    assert 1.0 > lookup > search > 0.0


def test_score_bounds() -> None:
    got = aggregate.score([1e-5, 1e-4, 1e-3, 10.0, 20.0, np.nan], 1e-4, 10.0)
    assert list(got) == pytest.approx([1.0, 1.0, 0.8, 0.0, 0.0, 0.0])


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
