"""The whole 3x3 space, for the exhaustive heuristic checks: exact distances from
the oracle and each heuristic's value on every reachable board, computed once per
session (several test files check the same values)."""

from __future__ import annotations

import numpy as np

from harness.core import oracle
from harness.heuristics import make_heuristic
from harness.puzzle import goal_board, grid

G3 = grid(3)
_values: dict[tuple[str, str], np.ndarray] = {}


def space(goal_name: str):
    """(goal, exact distance by rank (-1: unreachable), ranks of reachable boards)."""
    goal = goal_board(goal_name, G3)
    dist = oracle.distances(goal, G3)
    reachable = np.flatnonzero(dist >= 0)
    return goal, dist, reachable


def h_values(name: str, goal_name: str) -> np.ndarray:
    """h of every reachable board, indexed by rank (-1 elsewhere); memoised."""
    if (name, goal_name) not in _values:
        goal, _, reachable = space(goal_name)
        h = make_heuristic(name, goal, G3)
        boards = oracle.all_permutations(9)[reachable].tolist()
        values = np.full(len(oracle.all_permutations(9)), -1, dtype=np.int16)
        values[reachable] = [h(tuple(b)) for b in boards]
        _values[(name, goal_name)] = values
    return _values[(name, goal_name)]
