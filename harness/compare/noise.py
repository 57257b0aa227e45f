"""Run-to-run noise: the statistics behind a time verdict (used by :mod:`compare`).

On a shared machine the CPU time one unit of work costs drifts by up to ~2x, in
spells of seconds, each core on its own; a run that times one config after
another puts each config in its own drift window, so two identical runs can
differ by 1.5x per config. Two things cancel most of it, and both are recorded in
the rows by the runner: the cells run interleaved (instance by instance, configs
in rotating order), and every timed repeat is followed by a fixed reference solve
in the same worker on the same (pinned) core (``ref_cpu_seconds``). A cell's
*normalized* time is ``cpu_seconds / ref_cpu_seconds``: the drift divides out.

What is replicated is the run, not the repeat: repeats inside one run share its
drift. So:

- with one run per side, the ratio's interval comes from the instances (and the
  repeats within them), and what the run as a whole may still shift is covered
  by a *noise floor* calibrated from identical runs on the same machine
  (``tests/benchmarks/aa_noise.py --calibrate``); a slowdown must exceed it;
- with several runs per side (best alternated in time, A B A B), the bootstrap
  resamples runs as well as instances, so the interval itself covers the shift
  between runs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from harness.core import defaults
from harness.core.files import write_atomic
from harness.core.jsontext import loads

#: A verdict needs at least this many timed instances; fewer say so instead.
MIN_INSTANCES = 5
#: Default regression thresholds on normalized and raw ratios: defined once, with
#: the figures behind them, in harness.core.defaults (the CLI's help reads them).
DEFAULT_MIN_RATIO = defaults.MIN_RATIO
DEFAULT_MIN_RATIO_RAW = defaults.MIN_RATIO_RAW
#: File a calibration is stored in, in the results folder.
CALIBRATION_FILE = "noise_floor.json"
#: How far a whole run may shift against an identical one when no calibration
#: says (normalized ratios; raw CPU time): the largest deviations in the A/A
#: rounds of docs/benchmarks.md were 0.950-1.052 normalized, 0.796-1.300 raw.
DEFAULT_RUN_SHIFT = 1.05
DEFAULT_RUN_SHIFT_RAW = 1.30


@dataclass(frozen=True, slots=True)
class Estimate:
    """Geometric-mean ratio new/base of one config, with its bootstrap interval."""

    ratio: float | None
    low: float | None
    high: float | None
    instances: int
    runs: tuple[int, int]  # runs per side (base, new)
    has_noise_estimate: bool


def cell_values(
    rows: Any, metric: str, normalized: bool, key_cols: list[str],
    reference: str = "ref_cpu_seconds",
) -> dict[tuple, np.ndarray]:
    """Per cell (key): the repeats' times, each divided by the reference solve
    timed next to it (the ``reference`` column: the same clock) when
    ``normalized``."""
    out: dict[tuple, np.ndarray] = {}
    for key, g in rows.groupby(key_cols, sort=False):
        v = g[metric].to_numpy(float)
        if normalized:
            v = v / g[reference].to_numpy(float)
        v = v[np.isfinite(v)]
        if len(v):
            out[tuple(key) if isinstance(key, tuple) else (key,)] = np.maximum(v, 1e-12)
    return out


def estimate(
    base_runs: list[dict[tuple, np.ndarray]],
    new_runs: list[dict[tuple, np.ndarray]],
    keys: list[tuple],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    rng: np.random.Generator | None = None,
    run_shift: float = 1.0,
) -> Estimate:
    """The geomean over ``keys`` of median(new) / median(base), each side's
    per-instance log median averaged over its runs.

    Bootstrap: resample the instances; on a side with two or more runs, resample
    its runs too (the replicated unit); on a side with one run, resample the
    repeats within each cell. Repeats in one run share its drift, so that
    interval is too narrow by what a whole run shifts: ``run_shift`` (a ratio,
    the 95% bound of identical pairs of runs: the calibrated noise floor) widens
    it, in quadrature, by its share for each side with a single run.
    """
    rng = rng or np.random.default_rng(0)
    runs = (len(base_runs), len(new_runs))
    if not keys:
        return Estimate(None, None, None, 0, runs, False)

    def logs(side: list[dict[tuple, np.ndarray]]) -> np.ndarray:
        return np.array([[math.log(np.median(r[k])) for k in keys] for r in side])

    lb, ln = logs(base_runs), logs(new_runs)  # (runs, instances)
    point = float((ln.mean(axis=0) - lb.mean(axis=0)).mean())
    n = len(keys)
    spread = (
        n > 1
        or max(runs) > 1
        or any(
            len(r[k]) > 1 for side in (base_runs, new_runs) for r in side for k in keys
        )
    )
    if not spread:
        r = math.exp(point)
        return Estimate(r, r, r, n, runs, False)

    def side_boot(side: list[dict[tuple, np.ndarray]], m: np.ndarray) -> np.ndarray:
        """(resamples, instances): the side's mean log median per instance."""
        if len(side) > 1:
            pick = rng.integers(0, len(side), (resamples, len(side)))
            return m[pick].mean(axis=1)
        out = np.empty((resamples, n))
        for i, k in enumerate(keys):
            v = side[0][k]
            idx = rng.integers(0, len(v), (resamples, len(v)))
            out[:, i] = np.log(np.median(v[idx], axis=1))
        return out

    diff = side_boot(new_runs, ln) - side_boot(base_runs, lb)
    pick = rng.integers(0, n, (resamples, n))
    means = np.take_along_axis(diff, pick, axis=1).mean(axis=1)
    alpha = (1 - confidence) / 2
    lo, hi = (float(q) for q in np.quantile(means, [alpha, 1 - alpha]))
    lo, hi = _with_run_shift(point, lo, hi, run_shift, runs, confidence)
    return Estimate(math.exp(point), math.exp(lo), math.exp(hi), n, runs, True)


def _with_run_shift(
    point: float, lo: float, hi: float, run_shift: float, runs: tuple[int, int],
    confidence: float,
) -> tuple[float, float]:
    """``(lo, hi)`` (logs) widened by the shift of the sides with one run: half
    of the pair's variance each, scaled from 95% to ``confidence``."""
    single = sum(r == 1 for r in runs)
    if single == 0 or run_shift <= 1:
        return lo, hi
    z = NormalDist().inv_cdf((1 + confidence) / 2) / NormalDist().inv_cdf(0.975)
    extra = math.log(run_shift) * z * math.sqrt(single / 2)
    return point - math.hypot(point - lo, extra), point + math.hypot(hi - point, extra)


def run_spread(side: list[dict[tuple, np.ndarray]], keys: list[tuple]) -> float | None:
    """With two or more runs on one side: the largest ratio between two of its
    runs' geomeans (identical code, so this is the noise seen in place)."""
    if len(side) < 2 or not keys:
        return None
    g = [float(np.mean([math.log(np.median(r[k])) for k in keys])) for r in side]
    return math.exp(max(g) - min(g))


# ------------------------------------------------------------- calibration


@dataclass(frozen=True, slots=True)
class Calibration:
    """The noise floor measured from identical (A/A) runs on one machine."""

    floor: float  # a ratio >= 1: identical runs stayed within [1/floor, floor]
    raw_floor: float | None  # the same on raw CPU time, for comparison
    pairs: int
    verdicts: int
    hostname: str
    cpu_model: str
    measured_utc: str
    command: str
    load_average: list[float] | None = None
    path: str = ""

    def describe(self) -> str:
        load = f", load {self.load_average[0]:.1f}" if self.load_average else ""
        raw = f"; raw CPU time {self.raw_floor:.2f}x" if self.raw_floor else ""
        return (
            f"noise floor {self.floor:.3f}x from {self.pairs} identical run pairs "
            f"({self.verdicts} config ratios) on {self.hostname}, "
            f"{self.measured_utc}{load}{raw}"
        )


def floor_from_ratios(ratios: list[float], quantile: float = 1.0) -> float:
    """The floor: the ``quantile`` of max(r, 1/r) over identical-pair ratios (the
    largest, by default: with 30 ratios a 95th percentile is the second largest)."""
    if not ratios:
        raise ValueError("no ratios to calibrate from")
    dev = sorted(abs(math.log(r)) for r in ratios if r and r > 0)
    idx = min(len(dev) - 1, max(0, math.ceil(quantile * len(dev)) - 1))
    return math.exp(dev[idx])


def write_calibration(path: Path, cal: Calibration) -> None:
    data = {k: getattr(cal, k) for k in Calibration.__slots__ if k != "path"}
    write_atomic(path, json.dumps(data, indent=2) + "\n")


def read_calibration(path: Path) -> Calibration | None:
    """The stored calibration, or None when there is none (or it is unreadable)."""
    try:
        data = loads(Path(path).read_text())
        return Calibration(**{**data, "path": str(path)})
    except (OSError, ValueError, TypeError):
        return None
