"""A run with tile costs end to end (issue 36): the solvers that take costs are
judged by cost against the 3x3 cost oracle (0 invalid, each bounded path within
w x the cheapest), the ones that cannot are skipped with the reason, and rows
carry cost_model, path_cost and optimal_cost."""

from __future__ import annotations

import harness
from harness.analysis import read_run
from harness.core.costs import COST_TOLERANCE


def test_a_heavy_run_is_judged_by_cost(tmp_path):
    frame = harness.run(
        "astar_dict,ida_star_jit,wastar_jit[w=2],greedy_jit,bfs", "8-mini@heavy",
        repeats=1, memory_pass=False, jobs=0, warmup=0, reference=False, out=tmp_path,
    )  # fmt: skip
    meta, rows = read_run(frame.attrs["run_dir"])
    assert set(rows.dataset) == {"8-mini@heavy"} and set(rows.cost_model) == {"heavy"}
    assert "invalid" not in set(rows.status)
    bfs = rows[rows.config == "bfs"]
    assert set(bfs.status) == {"skipped"}
    assert bfs.message.str.contains("does not take tile costs").all()
    solved = rows[rows.status == "solved"]
    assert len(solved) == 4 * 32  # every solvable board by every cost solver
    within = solved.path_cost <= solved.bound * solved.optimal_cost * (
        1 + COST_TOLERANCE)
    bounded = solved[solved.bound.notna()]
    assert within[bounded.index].all()
    optimal = solved[solved.bound == 1]
    assert optimal.is_optimal.all()
    assert (abs(optimal.suboptimality - 1) < 1e-9).all()
    # the cheapest path is not always the shortest: lengths may exceed the optimum
    assert (optimal.path_length >= optimal.optimal_length).all()
    wastar = solved[(solved.config == "wastar_jit[manhattan,w=2]")
                    & (solved.optimal_cost > 0)]  # fmt: skip
    assert (abs(wastar.suboptimality - wastar.path_cost / wastar.optimal_cost)
            < 1e-12).all()  # fmt: skip
    unsolvable = rows[~rows.solvable & (rows.config != "bfs")]
    assert set(unsolvable.status) == {"unsolvable"}
