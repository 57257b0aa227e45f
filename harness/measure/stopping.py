"""Adaptive stop for repeats: a cell stops repeating once the repeats it has not
taken yet could not move its median by more than a tolerance.

``--repeats N`` is the most a cell takes. Whatever values the remaining
``N - n`` repeats would return, the median of all ``N`` lies between two order
statistics of the ``n`` taken so far (put every missing value below the lowest,
then above the highest): :func:`median_range`. Once ``n`` is a majority of ``N``
that range is finite; when it is narrower than ``1 + tolerance``, the median the
cell stores (that of its ``n`` values, inside the range too) is within the
tolerance of the one all ``N`` repeats would have given, so the cell stops.
Stable cells stop at the first majority (2 of 3 repeats), noisy ones take all N.
With the default tolerance, 4% (``harness.core.defaults.ADAPTIVE``), the median stored
differs from the full one by at most 2% (half the range): a fifth of the
smallest ratio ``harness compare`` calls significant, 1.10x.

This bounds the effect of stopping for certain, with no model of the noise. It
is stricter than hyperfine (``--min-runs``/``--max-runs``: at least 10 runs and
3 s, then stop, whatever the spread) and pyperf (a fixed number of values per
worker process, a warning when they are unstable); like both, it never runs more
than the maximum.

The rule looks at every figure a verdict is taken from: the wall time (the
report's), the CPU time (compare's raw ratio) and the CPU time divided by the
reference solve (compare's normalised ratio).

A second rule is about effort, not stability (:func:`long_enough`): a long solve
stops after two samples of at least 0.1 s of CPU each (``long``). Its median is
then the mean of the two; a solve this long is where the repeats cost the most.
Standard library only at run time (workers import it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only their attributes are read: workers import this module
    from harness.measure.tasks import Attempt, Task

#: Why a cell's timed repeats ended (the ``stop_reason`` column of its time rows).
STABLE = "stable"  # the repeats left could not move the median past the tolerance
LONG = "long"  # LONG_REPEATS samples of LONG_SAMPLE_SECONDS or more each: enough
MAXIMUM = "max"  # adaptive, but it took all --repeats
FIXED = "fixed"  # adaptive stop off: all --repeats by request
FAILED = "failed"  # a repeat failed (timeout, error, ...): no more were tried
STOP_REASONS = (STABLE, LONG, MAXIMUM, FIXED, FAILED)
#: A long solve's repeats: with the adaptive stop on, a cell stops after this many
#: timed samples once each lasted LONG_SAMPLE_SECONDS of CPU or more. Such a sample
#: is 100 minimum sample times: its own noise is small, and the per-core drift is
#: what the reference beside it cancels. On the main job the third repeat of the
#: ~35 such cells (pure-Python BFS on unsolvable boards, IDA* and A* with the
#: misplaced-tiles heuristic on deep ones) was ~12 s of the workers' ~150 CPU s.
#: Like hyperfine's minimum time, a figure of effort spent, not of stability.
LONG_REPEATS = 2
LONG_SAMPLE_SECONDS = 0.1


def _median(values: list[float]) -> float:
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def median_range(known: Sequence[float], total: int) -> tuple[float, float]:
    """The lowest and highest median ``total`` non-negative values can have when
    ``known`` are some of them and the rest could be anything (0 to infinity)."""
    if not known or total < len(known):
        raise ValueError("need 1 to total known values")
    k = sorted(float(v) for v in known)
    missing = total - len(k)
    return _median([0.0] * missing + k), _median(k + [math.inf] * missing)


def long_enough(samples_cpu: Sequence[float], total: int) -> bool:
    """Whether timed samples that each took these CPU seconds (every solve of the
    sample together) are enough of ``total`` repeats: LONG_REPEATS of them, each
    at least LONG_SAMPLE_SECONDS, with repeats still left to skip."""
    return (
        LONG_REPEATS <= len(samples_cpu) < total
        and min(samples_cpu) >= LONG_SAMPLE_SECONDS
    )


def settled(series: Sequence[Sequence[float]], total: int, tolerance: float) -> bool:
    """Whether every series (one value per repeat taken so far, e.g. wall, CPU and
    normalised times) has its final median pinned within ``1 + tolerance``,
    whatever the ``total - n`` repeats not taken would give."""
    if tolerance <= 0 or not series:
        return False
    for values in series:
        if len(values) >= total:
            continue  # nothing left to take
        low, high = median_range(values, total)
        if not (low > 0 and high <= low * (1 + tolerance)):
            return False
    return True


def stop_reason(attempts: list[Attempt], total: int, task: Task) -> str:
    """Why the cell takes no more timed repeats after these attempts (STABLE or
    LONG, below), or "" to go on."""
    if _settled(attempts, total, task.adaptive):
        return STABLE
    timed = [a for a in attempts if a.measure == "time"]
    if all(a.outcome == "returned" and a.cpu_seconds is not None for a in timed):
        if long_enough([a.cpu_seconds * (a.loops or 1) for a in timed], total):
            return LONG
    return ""


def _settled(attempts: list[Attempt], total: int, tolerance: float) -> bool:
    """Adaptive stop: the timed attempts so far pin the median of ``total`` repeats
    of every figure a verdict uses (wall, CPU, CPU / reference) within the
    tolerance (:func:`settled`)."""
    timed = [a for a in attempts if a.measure == "time"]
    if len(timed) >= total or any(a.outcome != "returned" for a in timed):
        return False
    series = [
        [a.seconds for a in timed],
        [a.cpu_seconds for a in timed],
    ]
    if all(a.ref_cpu_seconds for a in timed):
        series.append([a.cpu_seconds / a.ref_cpu_seconds for a in timed])
    if any(v is None for values in series for v in values):
        return False
    return settled(series, total, tolerance)
