"""Tile cost models, the cost oracle and the judge's verdicts by cost.

The oracle's table is checked against a plain Dijkstra (heapq) from sampled boards
at every depth; the judge against hand-made paths: optimal, within a bound, over
it, and cheaper than a wrong label."""

from __future__ import annotations

import heapq
import random
from fractions import Fraction

import numpy as np
import pytest

from harness.core import cost_oracle, oracle
from harness.core.costs import (
    COST_MODELS,
    COST_TOLERANCE,
    check_cost_model,
    costs_equal,
    path_cost,
    tile_costs,
)
from harness.core.judge import judge
from harness.puzzle import apply_moves, goal_board, grid, parse_board, unrank

G3 = grid(3)
GOAL = goal_board("standard", G3)
SEED = parse_board("8 6 7 2 5 4 3 x 1", G3)


def test_tile_costs_follow_their_definitions():
    assert tile_costs("unit", 9) == (0.0,) + (1.0,) * 8
    assert tile_costs("heavy", 9)[1:] == tuple(float(t) for t in range(1, 9))
    assert tile_costs("inverse", 9)[4] == 0.25
    assert tile_costs("sqrt", 16)[9] == 3.0
    assert tile_costs("reverse", 9)[1:] == tuple(float(9 - t) for t in range(1, 9))
    assert tile_costs("reverse", 16)[15] == 1.0


def test_an_unknown_model_is_named_with_a_suggestion():
    with pytest.raises(ValueError, match="did you mean 'heavy'"):
        check_cost_model("hevy")


def test_a_path_costs_the_tiles_it_moves():
    # from the goal, blank left moves tile 8 right, blank up moves tile 6 down
    assert path_cost(GOAL, "lu", G3, "heavy") == 8 + 5
    assert path_cost(GOAL, "lu", G3, "unit") == 2
    assert costs_equal(0.1 + 0.2, 0.3)
    assert not costs_equal(1.0, 1.0 + 10 * COST_TOLERANCE)


def _dijkstra(start, model):
    costs = tile_costs(model, G3.squares)
    best = {start: 0.0}
    heap = [(0.0, start)]
    while heap:
        d, board = heapq.heappop(heap)
        if board == GOAL:
            return d
        if d > best[board]:
            continue
        for _, child in G3.successors(board):
            nd = d + costs[board[child.index(0)]]
            if nd < best.get(child, np.inf):
                best[child] = nd
                heapq.heappush(heap, (nd, child))
    return None


@pytest.mark.parametrize("model", COST_MODELS)
def test_oracle_costs_satisfy_bellmans_equations(model):
    """With positive move costs the only table with cost(goal) = 0 and every other
    board's cost = min over its moves of (move cost + the neighbour's cost) is the
    table of cheapest paths; checked board by board with Python's successors on a
    sample of 3,000 boards."""
    cost = cost_oracle.optimal_costs(GOAL, G3, model)
    costs = tile_costs(model, G3.squares)
    rng = random.Random(36)
    for r in rng.sample(np.flatnonzero(np.isfinite(cost)).tolist(), 3000):
        board = unrank(r, 9)
        if board == GOAL:
            continue
        via = min(costs[board[child.index(0)]] + cost[oracle.rank(child)]
                  for _, child in G3.successors(board))  # fmt: skip
        assert costs_equal(via, cost[r]), (model, board)
    assert cost[oracle.rank(GOAL)] == 0


@pytest.mark.parametrize("model", ["heavy", "inverse"])
def test_oracle_costs_equal_a_plain_dijkstra(model):
    depth = oracle.distances(GOAL, G3)
    rng = random.Random(36)
    for d in (1, 9, 17):  # a Dijkstra from a 31-move board takes seconds
        ranks = np.flatnonzero(depth == d)
        board = unrank(int(rng.choice(ranks.tolist())), 9)
        found = cost_oracle.optimal_cost(board, GOAL, G3, model)
        assert costs_equal(found, _dijkstra(board, model)), (model, d, board)
    cost = cost_oracle.optimal_costs(GOAL, G3, model)
    assert np.isinf(cost[depth < 0]).all()  # the other parity class


def test_the_unit_table_is_the_distance_table():
    cost = cost_oracle.optimal_costs(GOAL, G3, "unit")
    dist = oracle.distances(GOAL, G3)
    assert (cost[dist >= 0] == dist[dist >= 0]).all()


def test_the_cost_table_comes_back_from_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NPUZZLE_CACHE", str(tmp_path))
    cost_oracle.clear_memory()
    built = cost_oracle.optimal_costs(GOAL, G3, "heavy").copy()
    files = list((tmp_path / "oracle").glob("*heavy.cost"))
    assert len(files) == 1
    cost_oracle.clear_memory()
    assert (cost_oracle.optimal_costs(GOAL, G3, "heavy") == built).all()
    files[0].write_bytes(files[0].read_bytes()[:-8])  # truncated: rebuilt
    cost_oracle.clear_memory()
    assert (cost_oracle.optimal_costs(GOAL, G3, "heavy") == built).all()
    cost_oracle.clear_memory()


def test_the_judge_checks_cost_optimality_and_the_bound_on_cost():
    best = cost_oracle.optimal_cost(SEED, GOAL, G3, "heavy")
    assert best == 136
    cheapest = "lurdruuldldrruullddrrululddrurd"  # astar_dict under heavy costs
    v = judge(cheapest, SEED, GOAL, G3, solvable=True, optimum=31, bound=1,
              cost_model="heavy", optimal_cost=best)
    assert (v.status, v.is_optimal, v.path_cost) == ("solved", True, 136)
    # the fewest moves (31) are not always the cheapest path: an optimal claim fails
    shortest = "ruullddrrulldrrulurdlulddrruldr"  # cheapest under inverse costs
    cost = path_cost(SEED, shortest, G3, "heavy")
    assert len(shortest) == 31 and cost > best
    v = judge(shortest, SEED, GOAL, G3, solvable=True, optimum=31, bound=1,
              cost_model="heavy", optimal_cost=best)
    assert v.status == "invalid" and "declares itself optimal" in v.message
    v = judge(shortest, SEED, GOAL, G3, solvable=True, bound=Fraction(2),
              cost_model="heavy", optimal_cost=best)
    assert (v.status, v.is_optimal) == ("solved", False)
    v = judge(shortest, SEED, GOAL, G3, solvable=True, bound=Fraction(101, 100),
              cost_model="heavy", optimal_cost=best)
    assert v.status == "invalid" and "1.01 x 136" in v.message
    v = judge(cheapest, SEED, GOAL, G3, solvable=True, bound=1,
              cost_model="heavy", optimal_cost=best + 1)
    assert v.status == "solved" and "label is wrong" in v.message
    v = judge(shortest, SEED, GOAL, G3, solvable=True, bound=1, cost_model="heavy")
    assert (v.status, v.is_optimal) == ("solved", None)  # no optimum: no claim


def test_an_inverse_optimum_summed_in_another_order_is_still_optimal():
    best = cost_oracle.optimal_cost(SEED, GOAL, G3, "inverse")
    moves = "uulddrruuldldrruuldldrruullddrr"  # ida_star_jit under inverse costs
    assert apply_moves(SEED, moves, G3) == GOAL
    v = judge(moves, SEED, GOAL, G3, solvable=True, bound=1, cost_model="inverse",
              optimal_cost=best)
    assert v.is_optimal is True
