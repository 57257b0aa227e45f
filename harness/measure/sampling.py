"""Calibrated samples, as pyperf and timeit take them: a fast solve is timed as a
loop of ``loops`` back-to-back solves of the same board, and the sample's time
divided by ``loops`` is the per-solve figure.

Why: the caches, the branch predictors and the allocator's free lists are the
solver's own only while it runs. A 20 us compiled solve timed once, right after
``gc.collect()`` or a different 5 ms solve (the reference), read 125-170 us: the
figure measured the harness. So the worker (:mod:`harness.measure.worker`) does its
bookkeeping first, then a warm solve (and before a loop of several solves, an
untimed loop as long: :func:`steady_loops`), then the clock around the loop and
nothing else; the warm-up finds ``loops`` once per cell (:func:`calibrate`) so that one
sample lasts at least the minimum sample time (``--min-sample-time``).

Standard library only (workers import it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: At most this many solves in one sample (a no-op solve takes ~0.3 us).
MAX_LOOPS = 1_000_000
#: A solve shorter than this gets a warm solve of the same board right before each
#: timed sample. What cools the caches between samples (the reference solve, the
#: other cells, gc.collect()) cost the next solve 0.1-0.25 ms extra (3x3, measured
#: in one process: ida_star_jit 40 -> 166 us, astar_cantor_jit 76 -> 226 us,
#: astar_dict ~660 -> ~890 us): under 1% of a solve of 25 ms or more, where a
#: warm solve would double the cost of the repeat for nothing.
WARM_SOLVE_BELOW = 0.025
#: The calibration stops after this many samples (each at most 10x the last).
CALIBRATION_STEPS = 12
#: A first solve this many times the minimum sample time or longer needs no
#: calibration: even warm, one solve fills the sample (the cold part is ~0.25 ms).
ONE_SOLVE_FILLS = 2.0


@dataclass(slots=True)
class CellClock:
    """What a cell's passes learn about its solve time, in order (a worker keeps
    one per task)."""

    loops: int | None = None  # solves per sample; None: not calibrated yet
    per_solve: float = 0.0  # CPU seconds per solve, from the calibration
    warm: bool = True  # a warm solve of the board before each sample


@dataclass(slots=True)
class Sample:
    """One timed sample: per-solve wall and CPU seconds, the number of solves,
    and what each solve returned and counted (in order)."""

    seconds: float
    cpu_seconds: float
    loops: int
    results: list[Any]
    counters: list[Any]


def time_loop(
    solve: Callable[..., Any],
    start: Any,
    goal: Any,
    grid: Any,
    heuristic: Any,
    loops: int,
    new_counters: Callable[[], Any],
) -> Sample:
    """``loops`` back-to-back calls of ``solve`` on one board, timed as one
    sample. Each call gets its own counters, made before the clock starts; the
    answers are kept, so the loop's own cost is a list store per call."""
    counters = [new_counters() for _ in range(loops)]
    results: list[Any] = []
    keep = results.append
    c0 = time.process_time_ns()
    t0 = time.perf_counter_ns()
    for c in counters:
        keep(solve(start, goal, grid, counters=c, heuristic=heuristic))
    t1 = time.perf_counter_ns()
    c1 = time.process_time_ns()
    return Sample(
        (t1 - t0) / 1e9 / loops, (c1 - c0) / 1e9 / loops, loops, results, counters
    )


def steady_loops(loops: int) -> int:
    """Untimed solves between a looped sample's warm solve and the sample: with the
    warm solve, as many as the sample holds. After the housekeeping and a reference
    sample a solve gets its speed back over several solves, not one:
    astar_cantor_jit (~150 us, 8 loops a sample) ran its 2nd to 9th solves at 1.50,
    1.26, 1.15, 1.09, 1.07, 1.06, 1.05 and 1.04x its 12th (medians over 87 3x3
    boards x 3, in one process), so a sample right after one warm solve read ~1.13x
    the same solves in a calibrated loop (tests/benchmarks/accuracy.py)."""
    return max(0, loops - 1)


def next_loops(loops: int, sample_cpu: float, min_seconds: float) -> int:
    """The loops to try after a sample of ``loops`` solves took ``sample_cpu``
    seconds in all (short of ``min_seconds``): aim 20% over the minimum, at least
    one more and at most ten times as many solves."""
    aim = math.ceil(loops * 1.2 * min_seconds / max(sample_cpu, 1e-9))
    return min(MAX_LOOPS, max(loops + 1, min(10 * loops, aim)))


def calibrate(
    sample: Callable[[int], float], first_cpu: float, min_seconds: float
) -> tuple[int, float]:
    """``(loops, per-solve CPU seconds)``: the fewest loops found whose sample
    (``sample(loops)`` returns its CPU seconds in all) lasts ``min_seconds`` or
    more. ``first_cpu``: the cell's first solve; long enough, it settles it."""
    if min_seconds <= 0 or first_cpu >= ONE_SOLVE_FILLS * min_seconds:
        return 1, first_cpu
    loops, per_solve = 1, first_cpu
    for _ in range(CALIBRATION_STEPS):
        took = sample(loops)
        per_solve = took / loops
        if took >= min_seconds or loops >= MAX_LOOPS:
            break
        loops = next_loops(loops, took, min_seconds)
    return loops, per_solve
