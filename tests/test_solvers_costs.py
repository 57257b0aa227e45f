"""Solvers under tile costs: the optimal ones return the cheapest path (the cost
oracle's optimum) on 3x3 boards of every depth, the bounded ones stay within w
times it, greedy returns a path, and the solvers without tile costs decline with
a reason (``skipped`` in a run)."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from harness.core import cost_oracle, oracle
from harness.core.costs import COST_MODELS, cost_at_most, costs_equal, path_cost
from harness.heuristics import make_heuristic
from harness.puzzle import apply_moves, goal_board, grid, unrank
from harness.configs import parse_config
from harness.solver import Counters, all_solvers

G3 = grid(3)
GOAL = goal_board("standard", G3)
MODELS = [m for m in COST_MODELS if m != "unit"]


def _one_board_per_depth(step: int = 1, deepest: int = 31) -> list:
    depth = oracle.distances(GOAL, G3)
    rng = random.Random(36)
    return [
        unrank(int(rng.choice(np.flatnonzero(depth == d).tolist())), 9)
        for d in range(0, deepest + 1, step)
    ]


BOARDS = _one_board_per_depth()


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize(
    "label", ["astar_dict", "astar_cantor_jit", "ida_star_jit", "wastar_jit[w=1]",
              "ida_star_jit[pdb44]", "wastar_jit[pdb44,w=1]"],
)  # fmt: skip
def test_optimal_solvers_return_the_cheapest_path_at_every_depth(label, model):
    config = parse_config(label)
    h = make_heuristic(config.heuristic, GOAL, G3, model)
    solve = config.solve_for(model)
    for board in BOARDS:
        moves = solve(board, GOAL, G3, counters=Counters(), heuristic=h)
        assert apply_moves(board, moves, G3) == GOAL
        best = cost_oracle.optimal_cost(board, GOAL, G3, model)
        assert costs_equal(path_cost(board, moves, G3, model), best), (board, moves)


@pytest.mark.parametrize("model", COST_MODELS)
def test_uniform_cost_search_is_optimal_without_a_heuristic(model):
    solve = parse_config("ucs").solve_for(model)
    for board in _one_board_per_depth(step=4, deepest=16):
        moves = solve(board, GOAL, G3, counters=Counters(), heuristic=None)
        best = cost_oracle.optimal_cost(board, GOAL, G3, model)
        assert costs_equal(path_cost(board, moves, G3, model), best)


@pytest.mark.parametrize("model", COST_MODELS)
def test_compiled_uniform_cost_search_answers_and_counts_as_the_python_one(model):
    python, compiled = (parse_config(n).solve_for(model) for n in ("ucs", "ucs_jit"))
    parse_config("ucs_jit").spec.prepare(G3, GOAL, None)
    for board in _one_board_per_depth(step=3, deepest=21):
        counted = [Counters(), Counters()]
        answers = [solve(board, GOAL, G3, counters=c, heuristic=None)
                   for solve, c in zip((python, compiled), counted)]  # fmt: skip
        assert answers[0] == answers[1], board
        assert counted[0] == counted[1], board


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("label", ["wastar_jit[w=2]", "wastar_jit[w=1.5]",
                                   "wida_star[w=2]", "greedy_jit"])  # fmt: skip
def test_bounded_solvers_stay_within_w_times_the_cheapest(label, model):
    config = parse_config(label)
    h = make_heuristic(config.heuristic, GOAL, G3, model)
    solve = config.solve_for(model)
    for board in BOARDS:
        moves = solve(board, GOAL, G3, counters=Counters(), heuristic=h)
        assert apply_moves(board, moves, G3) == GOAL
        if config.bound is not None:
            best = cost_oracle.optimal_cost(board, GOAL, G3, model)
            cost = path_cost(board, moves, G3, model)
            assert cost_at_most(cost, float(config.bound) * best), (board, moves)


def test_a_weighted_heuristic_is_admissible_against_the_oracle():
    for model in MODELS:
        best = cost_oracle.optimal_costs(GOAL, G3, model)
        for name in ("manhattan", "misplaced"):
            h = make_heuristic(name, GOAL, G3, model)
            for board in BOARDS:
                assert cost_at_most(h(board), best[oracle.rank(board)])


def test_solvers_without_tile_costs_decline_with_a_reason():
    takes = sorted(name for name, spec in all_solvers().items() if spec.costs)
    assert {"astar_dict", "ida_star_jit", "wastar_jit", "greedy_jit", "ucs", "ucs_jit",
            "astar_cantor_jit", "wida_star"} <= set(takes)  # fmt: skip
    for label in ("bfs", "bidir_bfs", "table", "ida_star"):
        reason = parse_config(label).refuses(G3, 20, GOAL, "heavy")
        assert reason and "tile costs" in reason, label
        assert parse_config(label).refuses(G3, 20, GOAL, "unit") is None
    reason = parse_config("astar_dict[linear_conflict]").refuses(G3, 20, GOAL, "sqrt")
    assert "linear_conflict has no form for tile costs" in reason
    with pytest.raises(ValueError, match="no form for heavy"):
        make_heuristic("walking_distance", GOAL, G3, "heavy")


def test_unit_costs_are_the_unit_search_itself():
    config = parse_config("ida_star_jit")
    assert config.solve_for("unit") is config.solve
    assert Fraction(1) == parse_config("astar_dict").bound
