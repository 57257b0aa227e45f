"""The one verdict (harness.analysis.verdict): who wins a block, by how much, why.
Hand-made frames and the fixture tests/data/run_fair; every figure worked out in
the comments."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from where import DATA

from harness.analysis import load_run
from harness.analysis.verdict import duration, verdicts


def frame(rows: list[tuple]) -> pd.DataFrame:
    """(config, instance, status, seconds, expanded, is_optimal, bound) rows of
    one block."""
    cols = ["config", "instance", "status", "seconds", "expanded", "is_optimal",
            "bound"]  # fmt: skip
    out = pd.DataFrame(rows, columns=cols).assign(run_id="r", dataset="d", message="")
    return out.assign(suboptimality=np.where(out.is_optimal == 1, 1.0, 1.5))


def boards(config: str, seconds: list[float], nodes: list[float], optimal=1.0,
           bound=1.0) -> list[tuple]:  # fmt: skip
    return [
        (config, f"i{i}", "solved", s, n, optimal, bound)
        for i, (s, n) in enumerate(zip(seconds, nodes, strict=True))
    ]


def test_the_winner_answers_every_common_board_at_the_optimum() -> None:
    """greedy is fastest but not optimal; the bounded search is ranked apart; the
    lookup is stated apart; 'fast' (2 us) beats 'slow' (8 us) by 4x on 6 boards,
    with 2x fewer nodes and 2x less time per node."""
    rows = (
        boards("fast", [2e-6] * 6, [10] * 6)
        + boards("slow", [8e-6] * 6, [20] * 6)
        + boards("greedy", [1e-6] * 6, [5] * 6, optimal=0.0, bound=np.nan)
        + boards("wastar", [1.5e-6] * 6, [6] * 6, optimal=0.0, bound=2.0)
        + boards("table", [5e-7] * 6, [3] * 6)
    )
    [v] = verdicts(frame(rows), {"solvers": {"table": {"search": False}}})
    assert v.winner.config == "fast" and v.runner_up.config == "slow"
    assert v.runner_up.ratio == pytest.approx(4.0)
    # every board's ratio is 4: the bootstrap interval is 4-4, significant
    assert (v.runner_up.low, v.runner_up.high) == pytest.approx((4.0, 4.0))
    assert (v.why.nodes, v.why.per_node) == pytest.approx((2.0, 2.0))
    assert [s.config for s in v.bounded] == ["wastar"]
    assert [s.config for s in v.lookups] == ["table"]
    assert [(s.config, s.note) for s in v.others] == [
        ("greedy", "no bound on its path length")]
    assert v.places() == {"fast": "1", "slow": "2", "wastar": "bounded 1",
                          "table": "lookup", "greedy": "unranked"}  # fmt: skip
    text = v.sentence()
    assert text.startswith(
        "d: fast wins, 2.00 us per solve (geometric mean over 6 common boards), "
        "4.00x faster than slow (95% interval 4.00-4.00): 2.0x fewer nodes, 2.0x "
        "less time per node."
    )
    assert "table looks answers up in 0.500 us (a lookup, not a search)" in text
    assert "Among bounded searches, wastar is fastest, 1.50 us, 0% of its paths" in text


def test_an_interval_that_holds_one_is_a_tie_and_few_boards_give_none() -> None:
    # a is 2x faster on three boards, b 2x faster on three: geometric mean 1.0
    a = [1e-5, 1e-5, 1e-5, 2e-5, 2e-5, 2e-5]
    b = [2e-5, 2e-5, 2e-5, 1e-5, 1e-5, 1e-5]
    [v] = verdicts(frame(boards("a", a, [5] * 6) + boards("b", b, [5] * 6)))
    assert v.runner_up.ratio == pytest.approx(1.0)
    assert v.runner_up.low < 1 < v.runner_up.high and not v.runner_up.significant
    assert "a wins" in v.sentence()
    assert "tied with b (1.00x, 95% interval" in v.sentence()
    # on 2 boards: no interval, and a 1.05x lead is called level
    few = boards("a", [1e-5, 1e-5], [5, 5]) + boards("b", [1.05e-5] * 2, [5, 5])
    [v] = verdicts(frame(few))
    assert math.isnan(v.runner_up.low)
    assert "level with b (1.05x; too few boards for an interval)" in v.sentence()


def test_configs_that_answered_none_are_named_in_the_header() -> None:
    rows = boards("a", [1e-3, 2e-3], [10, 20]) + [
        ("pdb663", f"i{i}", "skipped", np.nan, np.nan, np.nan, 1.0) for i in range(2)
    ]
    data = frame(rows)
    data.loc[data.config == "pdb663", "message"] = (
        "heuristic pdb663 does not apply to 3x3: the pdb663 partition is defined "
        "for 4x4 boards"
    )
    [v] = verdicts(data)
    assert v.header() == (
        "d: 2 boards; 1 config answered none: pdb663 (they decline 3x3)"
    )
    assert v.winner.config == "a" and v.common == 2


def test_the_fair_fixture_crowns_the_faster_on_the_common_boards() -> None:
    """run_fair: alpha solves e01..e10 in 1..10 ms, beta in 4x that plus ten hard
    boards alpha timed out on. The common set is e01..e10: alpha wins by 4.00x,
    expanding half the nodes (100 NN against 200 NN); beta answered more, and
    alpha's partial coverage is said."""
    run = load_run(DATA / "run_fair")
    [v] = verdicts(run.instances(), run.meta)
    assert v.winner.config == "alpha[manhattan]"
    assert v.runner_up.config == "beta[manhattan]"
    assert v.common == 10 and v.runner_up.ratio == pytest.approx(4.0)
    assert v.winner.gmean_ms == pytest.approx(4.5287, abs=1e-4)  # (10!)^(1/10)
    assert (v.why.nodes, v.why.per_node) == pytest.approx((2.0, 2.0))
    assert v.partial == [("alpha[manhattan]", 10)]
    assert "Answered only some boards: alpha[manhattan] (10 of 20)" in v.sentence()


def test_durations_read_in_the_unit_people_use() -> None:
    assert [duration(x) for x in (0.000852, 0.331, 12.5, 1500.0)] == [
        "0.852 us", "331 us", "12.5 ms", "1.50 s"]  # fmt: skip
