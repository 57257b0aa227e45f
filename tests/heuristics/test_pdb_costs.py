"""Weighted pattern databases (tile costs): the Dijkstra build agrees with the
breadth-first one under unit costs, the bounds are admissible (on 3x3 against the
cost oracle; on 4x4 against exact search on short random walks), the cache is
keyed by the cost model and rebuilt when corrupt."""

from __future__ import annotations

import random

import pytest

from harness.core import cost_oracle
from harness.core.costs import COST_MODELS, cost_at_most, path_cost
from harness.heuristics import make_heuristic, pdb
from harness.puzzle import apply_moves, goal_board, grid, rank
from harness.configs import parse_config
from harness.solver import Counters

G3, G4 = grid(3), grid(4)
GOAL3 = goal_board("standard", G3)
MODELS = [m for m in COST_MODELS if m != "unit"]


def _walks(goal, g, count: int, longest: int, seed: int) -> list:
    """Boards a random walk of the blank away from ``goal`` (no immediate undo)."""
    rng = random.Random(seed)
    boards = []
    for _ in range(count):
        board, back = goal, None
        for _ in range(rng.randrange(1, longest + 1)):
            moves = [(m, t) for m, t in g.neighbours[board.index(0)] if t != back]
            move, _target = rng.choice(moves)
            back = board.index(0)
            board = apply_moves(board, move, g)
        boards.append(board)
    return boards


def test_unit_weights_give_the_breadth_first_tables():
    weighted = pdb.weighted("pdb44", GOAL3, G3, "unit")
    plain = pdb.pdb_set("pdb44", GOAL3, G3, mirror=False)
    boards = _walks(GOAL3, G3, 400, 40, seed=1)
    assert [weighted.estimate(b) for b in boards] == [plain.estimate(b) for b in boards]


@pytest.mark.parametrize("model", MODELS)
def test_3x3_weighted_bounds_are_admissible(model):
    """Against the cost oracle on boards a walk away, and nowhere below
    cost-weighted Manhattan where a group's table must see further than its
    tiles' distances. Not consistent: the table is the minimum over the blank's
    regions (tests/heuristics/test_pdb_costs.py's docstring, pdb_costs)."""
    h = make_heuristic("pdb44", GOAL3, G3, model)
    manhattan = make_heuristic("manhattan", GOAL3, G3, model)
    best = cost_oracle.optimal_costs(GOAL3, G3, model)
    stronger = 0
    for board in _walks(GOAL3, G3, 600, 40, seed=2):
        value = h(board)
        assert cost_at_most(value, best[rank(board)]), board
        assert value >= manhattan(board) * (1 - 1e-6), board
        stronger += value > manhattan(board) * (1 + 1e-6)
    assert h(GOAL3) == 0.0
    assert stronger > 300  # a better bound than cost-weighted Manhattan


def test_a_4x4_partition_is_admissible_against_exact_search(monkeypatch, tmp_path):
    """Five 3-tile groups (tables of 3,360 placements: built in milliseconds)
    through the registered path, against the cheapest cost A* (the compiled
    best-first kernel at w = 1) with cost-weighted Manhattan finds."""
    monkeypatch.setenv("NPUZZLE_CACHE", str(tmp_path))
    groups = ((1, 2, 3), (4, 5, 6), (7, 8, 9), (10, 11, 12), (13, 14, 15))
    monkeypatch.setitem(pdb.PARTITIONS, "pdb33333", ((4, 4), groups))
    goal = goal_board("blank-first", G4)
    exact = parse_config("wastar_jit[w=1]").solve_for("heavy")  # A*, compiled
    manhattan = make_heuristic("manhattan", goal, G4, "heavy")
    weighted = pdb.weighted("pdb33333", goal, G4, "heavy")
    assert weighted.sources == ("built",) * 5
    stronger = 0
    for board in _walks(goal, G4, 40, 16, seed=3):
        moves = exact(board, goal, G4, counters=Counters(), heuristic=manhattan)
        best = path_cost(board, moves, G4, "heavy")
        assert cost_at_most(weighted.estimate(board), best)
        stronger += weighted.estimate(board) > manhattan(board)
    assert stronger > 0


def test_weighted_tables_are_cached_per_model_and_rebuilt_when_corrupt(
    monkeypatch, tmp_path
):  # fmt: skip
    monkeypatch.setenv("NPUZZLE_CACHE", str(tmp_path))
    pdb.clear_memory()
    heavy = pdb.weighted("pdb44", GOAL3, G3, "heavy")
    inverse = pdb.weighted("pdb44", GOAL3, G3, "inverse")
    files = sorted(p.name for p in (tmp_path / "pdb").glob("*.f32.bin"))
    assert len(files) == 4 and sum("heavy" in f for f in files) == 2, files
    board = _walks(GOAL3, G3, 1, 30, seed=4)[0]
    values = heavy.estimate(board), inverse.estimate(board)
    pdb.clear_memory()
    again = pdb.weighted("pdb44", GOAL3, G3, "heavy")
    assert again.sources == ("cache", "cache")
    victim = next((tmp_path / "pdb").glob("*heavy.f32.bin"))
    victim.write_bytes(victim.read_bytes()[:-5])
    pdb.clear_memory()
    rebuilt = pdb.weighted("pdb44", GOAL3, G3, "heavy")
    assert sorted(rebuilt.sources) == ["built", "cache"]
    assert rebuilt.estimate(board) == values[0]
    pdb.clear_memory()


def test_pattern_databases_without_weighted_tables_are_refused_under_costs():
    reason = parse_config("ida_star_jit[pdb78]").refuses(G4, 40, None, "heavy")
    assert reason and "pdb78 has no form for tile costs" in reason
    assert parse_config("ida_star_jit[pdb555]").refuses(G4, 40, None, "heavy") is None
