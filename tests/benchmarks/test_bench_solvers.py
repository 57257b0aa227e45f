"""Timing suite: every built-in solver x heuristic on fixed boards (pytest-benchmark).

Set-up (heuristic tables, pattern databases, compiled kernels) happens before the
timed rounds, plus one untimed warm-up solve that also sizes the number of rounds:
at least ``NPUZZLE_BENCH_ROUNDS``, more for fast solves (about 0.25 s each).
Counters go into ``extra_info`` so a saved benchmark file says what was timed.
``test_bench_reference`` is a fixed pure-Python workload that does not depend on
the harness: its time measures the machine, not the code.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

import pytest

from harness.compare.gate import BOARDS, GateBoard, gate_configs
from harness.configs import SolverConfig
from harness.heuristics import all_heuristics, make_heuristic
from harness.puzzle import apply_moves

#: Boards timed per solver: mid and deep 3x3, and the quick 4x4 of the gate.
BENCH_BOARDS = [b for b in BOARDS if b.name in ("3x3-d19-judge", "3x3-d24", "4x4-d16")]


#: Fast benchmarks get more rounds, so each is timed for about this long in total:
#: a median of 7 rounds of 20 us is at the mercy of one scheduler tick.
TARGET_SECONDS = 0.25
MAX_ROUNDS = 300


def _rounds_for(minimum: int, run_once: Callable[[], object]) -> int:
    """Rounds for a benchmark, from one untimed warm-up call (which also fills
    caches and compiles): at least ``minimum``, enough for ~TARGET_SECONDS."""
    t0 = time.perf_counter()  # sizing the benchmark, not a reported figure
    run_once()
    once = max(time.perf_counter() - t0, 1e-6)
    return max(minimum, min(MAX_ROUNDS, math.ceil(TARGET_SECONDS / once)))


def _applicable(config: SolverConfig, board: GateBoard) -> bool:
    """The solver takes the board and the heuristic is defined on its grid."""
    if config.refuses(board.grid, board.depth):
        return False
    info = all_heuristics().get(config.heuristic) if config.heuristic else None
    if info is not None and info.setup_estimate is not None:
        return False  # minutes of table building (pdb78): not for a timing suite
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
    if benchmark.enabled:
        rounds = _rounds_for(
            rounds, lambda: config.solve(*setup()[0], **setup()[1])
        )
    moves = benchmark.pedantic(config.solve, setup=setup, rounds=rounds)
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
    elif config.bound is not None:
        assert len(moves) <= config.bound * board.depth


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
    if benchmark.enabled:
        rounds = _rounds_for(rounds, _reference_workload)
    distinct = benchmark.pedantic(_reference_workload, rounds=rounds)
    assert distinct == _reference_workload()  # deterministic workload
