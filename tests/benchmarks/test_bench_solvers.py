"""Timing suite: every built-in solver x heuristic on fixed boards (pytest-benchmark).

Set-up (heuristic tables, pattern databases, compiled kernels) happens before the
timed rounds, plus one untimed warm-up round. Counters go into ``extra_info`` so
a saved benchmark file says what was timed. ``test_bench_reference`` is a fixed
pure-Python workload that does not depend on the harness: its time measures the
machine, so base and head timings can be put on the same scale.
"""

from __future__ import annotations

import random

import pytest

from harness.gate import BOARDS, GateBoard, gate_configs
from harness.heuristics import all_heuristics, make_heuristic
from harness.puzzle import apply_moves
from harness.solver import SolverConfig

#: Boards timed per solver: mid and deep 3x3, and the quick 4x4 of the gate.
BENCH_BOARDS = [b for b in BOARDS if b.name in ("3x3-d19-judge", "3x3-d24", "4x4-d16")]


def _applicable(config: SolverConfig, board: GateBoard) -> bool:
    """The solver takes the board and the heuristic is defined on its grid."""
    if config.spec.refuses(board.grid, board.depth, config.heuristic):
        return False
    info = all_heuristics().get(config.heuristic) if config.heuristic else None
    return info is None or not info.refuses(board.grid)


CASES = [
    pytest.param(c, b, id=f"{c.label}-{b.name}")
    for c in gate_configs()
    for b in BENCH_BOARDS
    if _applicable(c, b)
]


@pytest.mark.parametrize(("config", "board"), CASES)
def test_bench_solver(benchmark, fresh_counters, rounds, config, board):
    spec, g, goal = config.spec, board.grid, board.goal_board
    h = make_heuristic(config.heuristic, goal, g) if config.heuristic else None
    if spec.prepare is not None:
        spec.prepare(g, goal, h)
    setup = fresh_counters(board, h)
    benchmark.group = board.name
    moves = benchmark.pedantic(spec.solve, setup=setup, rounds=rounds, warmup_rounds=1)
    counters = setup.last.as_dict()
    benchmark.extra_info.update(
        {"config": config.label, "board": board.name, "depth": board.depth, **counters}
    )
    if benchmark.enabled:
        median = benchmark.stats.stats.median
        benchmark.extra_info["expanded_per_second"] = round(
            counters["expanded"] / median
        )
    assert moves is not None
    assert apply_moves(board.start_board, moves, g) == goal
    if spec.optimal:
        assert len(moves) == board.depth


def _reference_workload() -> int:
    """About 20 ms of dict, list and integer work, fixed by its seed."""
    rng = random.Random(12345)
    seen: dict[tuple[int, ...], int] = {}
    board = list(range(9))
    for step in range(40_000):
        i, j = rng.randrange(9), rng.randrange(9)
        board[i], board[j] = board[j], board[i]
        seen[tuple(board)] = step
    return len(seen)


def test_bench_reference(benchmark, rounds):
    benchmark.group = "reference"
    distinct = benchmark.pedantic(_reference_workload, rounds=rounds, warmup_rounds=1)
    assert distinct == _reference_workload()  # deterministic workload
