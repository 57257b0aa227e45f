"""The necessary expansions (harness.core.necessary): a plain-Python brute force
agrees with the vectorised count, and A* with a consistent heuristic expands at
least the necessary set and at most it plus its ties (Dechter and Pearl 1985)."""

from __future__ import annotations

import pytest

from harness.kernels.necessary import necessary
from harness.datasets.catalogue import load_dataset
from harness.heuristics import make_heuristic
from harness.puzzle import apply_moves, grid, parse_board
from harness.solver import Counters, all_solvers


def successors(board, g):
    """Every (move, child): the blank's legal moves, one at a time."""
    for move in "udlr":
        try:
            yield move, apply_moves(board, move, g)
        except ValueError:  # off the board
            continue


def brute_force(start, goal, g, h):
    """(below, ties, C*) by a plain breadth-first search from the start over board
    tuples, one layer past none: boards beyond C* cannot count (h >= 0)."""
    depth_of = {start: 0}
    layer, depth = [start], 0
    while goal not in depth_of:
        depth += 1
        layer = [c for b in layer for _, c in successors(b, g) if c not in depth_of]
        layer = list(dict.fromkeys(layer))
        for child in layer:
            depth_of[child] = depth
    optimum = depth_of[goal]
    f = [d + (h(b) if h else 0) for b, d in depth_of.items()]
    return sum(v < optimum for v in f), sum(v == optimum for v in f), optimum


BOARDS = [
    ("3x3", "1 2 3 4 5 6 7 8 x", "1 2 3 4 5 6 7 8 x"),
    ("3x3", "2 3 4 1 5 x 7 6 8", "1 2 3 4 5 6 7 8 x"),  # the judge's example
    ("3x3", "2 8 3 1 6 4 7 x 5", "1 2 3 8 x 4 7 6 5"),  # the textbook goal
    ("2x3", "4 1 2 5 x 3", "1 2 3 4 5 x"),
]
HEURISTICS = [None, "manhattan", "misplaced", "linear_conflict", "walking_distance"]


DEEP = ("3x3", "8 7 6 5 4 3 2 1 x", "1 2 3 4 5 6 7 8 x")  # 28 moves


@pytest.mark.parametrize(
    "size, start, goal, name",
    [(*b, n) for b in BOARDS for n in HEURISTICS] + [(*DEEP, "manhattan")],
)
def test_the_count_matches_a_brute_force(size, start, goal, name):
    rows, cols = map(int, size.split("x"))
    g = grid(rows, cols)
    s, t = parse_board(start, g), parse_board(goal, g)
    if name not in (None, "manhattan") and g.squares < 9:
        pytest.skip("one heuristic is enough on 2x3")
    h = make_heuristic(name, t, g) if name else None
    found = necessary(s, t, g, h, name or "none")
    assert (found.below, found.ties, found.optimum) == brute_force(s, t, g, h)


def test_an_unreachable_goal_and_a_large_grid_have_no_count():
    g = grid(3)
    goal = parse_board("1 2 3 4 5 6 7 8 x", g)
    assert necessary(parse_board("2 1 3 4 5 6 7 8 x", g), goal, g, None, "none") is None
    big = grid(4)
    with pytest.raises(ValueError, match="too large"):
        necessary(tuple(range(16)), tuple(range(16)), big, None, "none")


@pytest.mark.parametrize("name, deepest", [("manhattan", 31), ("misplaced", 22)])
def test_astar_with_a_consistent_heuristic_expands_the_necessary_set(name, deepest):
    """The boards of 8-strata (misplaced: up to 22 moves, where Python A* is still
    quick; tests/benchmarks/bench_bidirectional.py checks them all): necessary <=
    A*'s expansions <= necessary + ties (A* with a consistent h expands each board
    with f < C* once and none with f > C*); a failure is a bug in one of the two."""
    data = load_dataset("8-strata")
    spec = all_solvers()["astar_dict"]
    h = make_heuristic(name, data.goal, data.grid)
    for inst in data.instances:
        if inst.optimal_length > deepest:
            continue
        counters = Counters()
        spec.solve(inst.start, inst.goal, inst.grid, counters=counters, heuristic=h)
        found = necessary(inst.start, inst.goal, inst.grid, h, name)
        assert found.below <= counters.expanded <= found.below + found.ties, inst.id
