"""MM and NBS (solvers/mm.py, solvers/nbs.py): optimal on every board of
8-strata, counters that add up, the backward heuristic made for the start,
table heuristics left out, and not in --solvers all."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.configs import select_solvers
from harness.datasets.catalogue import load_dataset
from harness.heuristics import make_heuristic
from harness.kernels.necessary import necessary
from harness.puzzle import apply_moves
from harness.report.yardstick import necessary_findings
from harness.solver import Counters, all_solvers


@pytest.mark.parametrize("name", ["mm", "nbs"])
def test_optimal_on_8_strata_with_counters_that_add_up(name):
    data = load_dataset("8-strata")
    spec = all_solvers()[name]
    h = make_heuristic("manhattan", data.goal, data.grid)
    below_necessary = 0
    for inst in data.instances:
        counters = Counters()
        moves = spec.solve(inst.start, inst.goal, inst.grid, counters=counters,
                           heuristic=h)  # fmt: skip
        assert apply_moves(inst.start, moves, inst.grid) == inst.goal
        assert len(moves) == inst.optimal_length, inst.id
        extra = counters.extra
        if inst.optimal_length:
            assert extra["expanded_forward"] + extra["expanded_backward"] == (
                counters.expanded
            )
            assert 0 <= extra["meeting_g"] <= inst.optimal_length
            found = necessary(inst.start, inst.goal, inst.grid, h, "manhattan")
            below_necessary += counters.expanded < found.below
    # the point of bidirectional search: below the unidirectional lower bound
    assert below_necessary > 0


def test_table_heuristics_are_left_out_and_neither_is_in_all():
    for name in ("mm", "nbs"):
        takes = all_solvers()[name].heuristics
        assert {"manhattan", "misplaced", "linear_conflict"} <= set(takes)
        assert not {"pdb44", "walking_distance"} & set(takes)
    in_all = {c.spec.name for c in select_solvers("all")}
    assert not {"mm", "nbs"} & in_all and "astar_dict" in in_all
    assert [c.label for c in select_solvers("mm[manhattan]")] == ["mm[manhattan]"]


def test_a_search_below_the_necessary_set_is_a_finding():
    inst = pd.DataFrame({
        "dataset": ["8-x"] * 4, "instance": ["a", "b", "a", "b"],
        "config": ["astar_dict[manhattan]"] * 2 + ["mm[manhattan]"] * 2,
        "expanded": [30.0, 12.0, 8.0, 12.0], "necessary": [10.0, 6.0, 10.0, 6.0],
    })  # fmt: skip
    summary, below = necessary_findings(inst)
    assert "mm[manhattan] 1.25x (2 boards), astar_dict[manhattan] 2.62x" in summary
    assert below.startswith("Below the necessary set on 8-x: mm[manhattan] on 1 "
                            "of 2 boards (e.g. a: 8 vs 10).")  # fmt: skip
    assert "astar_dict" not in below
    assert necessary_findings(inst.assign(necessary=float("nan"))) == []


def test_the_yardstick_names_the_ends_of_a_long_ranking():
    """With many configs a dataset's sentence names the three closest to the
    set and the three farthest; the Summary's column has the others."""
    configs = [f"c{i}" for i in range(8)]
    inst = pd.DataFrame({
        "dataset": "8-x", "instance": "a", "config": configs,
        "expanded": [10.0 * (i + 1) for i in range(8)], "necessary": 10.0,
    })  # fmt: skip
    (summary,) = necessary_findings(inst)
    assert "closest c0 1x (1 board), c1 2x (1 board), c2 3x (1 board); " in summary
    assert "farthest c5 6x (1 board), c6 7x (1 board), c7 8x (1 board); " in summary
    assert "the other 2 in the Summary's nodes/necessary column" in summary
    assert "c3" not in summary
    # beside a dataset of 5 boards with a set, one of 1 board says nothing
    five = pd.concat([inst.assign(dataset="8-big", instance=f"b{i}") for i in range(5)])
    said = necessary_findings(pd.concat([inst, five]))
    assert len(said) == 1 and "on 8-big" in said[0]
