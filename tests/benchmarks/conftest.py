"""Fixtures of the timing suite: fixed boards and a fresh-counters set-up.

Ordinary test runs pass ``--benchmark-disable`` (pyproject), so every benchmark
runs its solver exactly once, as a correctness test, and times nothing. See
tests/benchmarks/README.md for timing runs, baselines and comparisons.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from harness.compare.gate import GateBoard
from harness.solver import Counters


class FreshCounters:
    """``pedantic(setup=...)`` callable: new Counters for every round, outside the
    timed region; ``last`` is the one the latest round filled."""

    def __init__(self, board: GateBoard, heuristic: Any) -> None:
        self.args = (board.start_board, board.goal_board, board.grid)
        self.heuristic = heuristic
        self.last = Counters()

    def __call__(self) -> tuple[tuple, dict[str, Any]]:
        self.last = Counters()
        return self.args, {"counters": self.last, "heuristic": self.heuristic}


@pytest.fixture
def rounds() -> int:
    """Timed rounds per benchmark (pedantic mode: fixed, no calibration);
    ``NPUZZLE_BENCH_ROUNDS`` overrides the default 7."""
    return int(os.environ.get("NPUZZLE_BENCH_ROUNDS", "7"))


@pytest.fixture
def fresh_counters() -> Callable[[GateBoard, Any], FreshCounters]:
    return FreshCounters
