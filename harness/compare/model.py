"""What a comparison is made of: the thresholds, each change found (counters,
status, time) and the :class:`Comparison` that holds them; exit codes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from harness.results import ANSWERED, READABLE_VERSIONS, SEVERITY

EXIT_OK, EXIT_REGRESSION, EXIT_INCOMPARABLE = 0, 1, 2
SUPPORTED_SCHEMAS = READABLE_VERSIONS  # the reader migrates older ones
#: A cell: the config label names the solver, heuristic and parameter values
#: (wastar[manhattan,w=1.5] and w=2 are different cells).
CELL_KEY = ["config", "dataset", "instance"]
COUNTERS = [
    "expanded",
    "generated",
    "max_frontier",
    "iterations",
    "h_start",  # the heuristic at the start board: moves when the heuristic changes
]
#: A rise in these is a regression; a change in the others is only reported.
WORSE_WHEN_HIGHER = {"expanded", "generated"}
#: Solution quality, compared apart from the counters: a longer path at the same
#: claimed bound is a regression of its own kind.
QUALITY = "path_length"
#: Higher is worse (harness.results.SEVERITY); a cell missing from one run ranks as
#: a refusal.
STATUS_SEVERITY = {**SEVERITY, "missing": SEVERITY["skipped"]}
GOOD_STATUSES = set(ANSWERED)
#: The clocks a comparison can judge (``harness compare --time``): the column of
#: each, the reference solve's time on the same clock (it normalizes them), and
#: the words a verdict names it with.
CLOCKS = {"cpu": "cpu_seconds", "wall": "seconds"}
REFERENCE_OF = {"cpu_seconds": "ref_cpu_seconds", "seconds": "ref_seconds"}
CLOCK_WORDS = {"cpu_seconds": "CPU time", "seconds": "wall time"}


class Incomparable(Exception):
    """The two runs cannot be compared; the message is the one-line reason."""


@dataclass(frozen=True, slots=True)
class Thresholds:
    """What counts as a regression; every field is a ``harness compare`` option."""

    #: A config's time ratio must reach this (and be significant) to be a
    #: regression. None: 1.10 on normalized times, 1.80 on raw CPU time
    #: (harness.core.defaults.MIN_RATIO / MIN_RATIO_RAW).
    min_ratio: float | None = None
    #: Instances whose median time is below this (seconds) in both runs are left
    #: out of the time ratio: at microseconds, timer and cache noise dominate.
    time_threshold: float = 1e-4
    #: Two-sided confidence level of the bootstrap interval of the geomean ratio.
    confidence: float = 0.95
    resamples: int = 2000
    seed: int = 0
    #: False: report counters and statuses only (e.g. runs from two machines).
    check_time: bool = True
    #: A config whose ratio every other config's ratio is divided by: a reference
    #: workload that absorbs a machine-wide drift between the two runs (for runs
    #: without the per-cell reference solve, i.e. schema 1).
    reference: str | None = None
    #: Fewer timed instances than this: "too few instances", never significant.
    min_instances: int = 5
    #: The noise floor calibrated on this machine (None: not calibrated).
    calibration: Any = None
    #: False: compare raw CPU time even when both runs have the reference solve.
    normalize: bool = True
    #: Which clock is compared: "cpu" (the worker's CPU time, ``cpu_seconds``) or
    #: "wall" (``seconds``: a solver that sleeps or waits on I/O shows there).
    time: str = "cpu"
    #: Instructions per solve (both runs counted them): a config whose geometric
    #: mean ratio reaches this is a regression, 1 / this an improvement. Two runs
    #: of the same configs agree within 0.5% (tests/benchmarks/instructions_aa.py).
    instructions_ratio: float = 1.01

    def threshold(self, normalized: bool) -> float:
        """The ratio a slowdown must reach: the larger of min_ratio (or its
        default) and the calibrated floor."""
        from harness.compare.noise import DEFAULT_MIN_RATIO, DEFAULT_MIN_RATIO_RAW

        base = self.min_ratio
        if base is None:
            base = DEFAULT_MIN_RATIO if normalized else DEFAULT_MIN_RATIO_RAW
        cal = self.calibration
        if cal is not None:
            floor = cal.floor if normalized else cal.raw_floor
            if floor:
                base = max(base, floor)
        return base

    def run_shift(self, normalized: bool) -> float:
        """How far a whole run may shift against an identical one (a ratio):
        the calibrated noise floor, else the default of harness.compare.noise.
        Intervals from one run per side are widened by it."""
        from harness.compare.noise import DEFAULT_RUN_SHIFT, DEFAULT_RUN_SHIFT_RAW

        cal = self.calibration
        floor = None
        if cal is not None:
            floor = cal.floor if normalized else cal.raw_floor
        if floor:
            return floor
        return DEFAULT_RUN_SHIFT if normalized else DEFAULT_RUN_SHIFT_RAW


@dataclass(frozen=True, slots=True)
class CounterChange:
    config: str
    dataset: str
    instance: str
    counter: str
    base: float | None
    new: float | None
    regression: bool

    @property
    def text(self) -> str:
        b, n = _fmt_int(self.base), _fmt_int(self.new)
        delta = ""
        if self.base is not None and self.new is not None:
            diff = self.new - self.base
            pct = f", {100 * diff / self.base:+.1f}%" if self.base else ""
            delta = f" ({diff:+,.0f}{pct})"
        return f"{self.counter} {b} -> {n}{delta}"


@dataclass(frozen=True, slots=True)
class QualityChange:
    """A path of another length on the same board, by the same config. Longer at
    the same claimed bound is a regression (the solver got worse answers);
    shorter is an improvement; a changed bound is reported, not judged."""

    config: str
    dataset: str
    instance: str
    base: int
    new: int
    base_bound: float | None  # the claimed bound (1 optimal; None: none or unknown)
    new_bound: float | None
    regression: bool

    @property
    def text(self) -> str:
        diff = self.new - self.base
        bounds = ""
        if not same_bound(self.base_bound, self.new_bound):
            bounds = (f"; claimed bound {_bound_words(self.base_bound)} -> "
                      f"{_bound_words(self.new_bound)}")  # fmt: skip
        return f"path length {self.base} -> {self.new} ({diff:+d} moves{bounds})"


def same_bound(a: float | None, b: float | None) -> bool:
    """Whether two claimed bounds are the same claim (unknown in a run stored
    before schema 6 matches anything: the config label is the same)."""
    return a is None or b is None or a == b


def _bound_words(bound: float | None) -> str:
    return "none" if bound is None else ("optimal" if bound == 1 else f"{bound:g}x")


@dataclass(frozen=True, slots=True)
class StatusChange:
    config: str
    dataset: str
    instance: str
    base: str
    new: str
    regression: bool


@dataclass(frozen=True, slots=True)
class TimeVerdict:
    """Time of one config, new relative to base, over the instances both timed."""

    config: str
    metric: str  # "cpu_seconds" or "seconds" (normalized: divided by the reference)
    instances: int  # instances in the ratio
    dropped_fast: int  # instances left out: below time_threshold in both runs
    ratio: float | None  # geometric mean of per-instance median ratios (new/base)
    low: float | None  # bootstrap confidence interval of ratio
    high: float | None
    has_noise_estimate: bool  # False with one instance and one repeat per run
    significant: bool
    regression: bool
    improvement: bool
    verdict: str
    normalized: bool = False  # divided by the per-cell reference solve
    raw_ratio: float | None = None  # the same geomean on raw CPU (or wall) time
    threshold: float | None = None  # what a slowdown had to reach
    runs: tuple[int, int] = (1, 1)  # runs per side in the estimate
    run_spread: float | None = None  # largest ratio between same-side runs


@dataclass(frozen=True, slots=True)
class InstructionVerdict:
    """Instructions per solve of one config, new relative to base, over the
    cells both runs answered alike and counted (harness.compare.instructions)."""

    config: str
    instances: int
    ratio: float  # geometric mean of per-instance new / base
    low: float  # the smallest and largest per-instance ratio
    high: float
    per_node_ratio: float | None  # (instructions / nodes) new over base
    threshold: float
    regression: bool
    improvement: bool
    verdict: str


@dataclass(slots=True)
class ConfigSummary:
    config: str
    cells: int = 0
    counter_changes: int = 0
    counter_regressions: int = 0
    status_changes: int = 0
    status_regressions: int = 0
    quality_changes: int = 0
    quality_regressions: int = 0
    source_changed: bool | None = None
    time: TimeVerdict | None = None
    instructions: InstructionVerdict | None = None


@dataclass(slots=True)
class Comparison:
    """Everything ``harness compare`` reports; :attr:`exit_code` is its verdict."""

    base_id: str
    new_id: str
    thresholds: Thresholds
    metric: str | None = None
    normalized: bool = False
    matched_cells: int = 0
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    configs: dict[str, ConfigSummary] = field(default_factory=dict)
    counter_changes: list[CounterChange] = field(default_factory=list)
    status_changes: list[StatusChange] = field(default_factory=list)
    quality_changes: list[QualityChange] = field(default_factory=list)
    #: The same time verdict per (config, dataset, "solvable" | "unsolvable"), for
    #: tables that show datasets separately (``harness report A B``).
    parts: dict[tuple[str, str, str], TimeVerdict] = field(default_factory=dict)
    #: Each block's winner in both runs, as :mod:`harness.analysis.verdict`
    #: chooses it: "8-mini (solvable): X in both" or "...: X in base, Y in new".
    winners: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> list[str]:
        """One line per regressed config, naming what regressed."""
        out = []
        for s in self.configs.values():
            what = []
            if s.counter_regressions:
                what.append(f"{s.counter_regressions} counter increase(s)")
            if s.status_regressions:
                what.append(f"{s.status_regressions} status(es) worse")
            if s.quality_regressions:
                what.append(
                    f"{s.quality_regressions} longer path(s) at the same bound"
                )
            if s.time is not None and s.time.regression:
                what.append(s.time.verdict)
            if s.instructions is not None and s.instructions.regression:
                what.append(s.instructions.verdict)
            if what:
                out.append(f"{s.config}: {', '.join(what)}")
        return out

    @property
    def exit_code(self) -> int:
        return EXIT_REGRESSION if self.regressions else EXIT_OK

    def to_dict(self) -> dict[str, Any]:
        return {
            "comparable": True,
            "base": self.base_id,
            "new": self.new_id,
            "exit_code": self.exit_code,
            "regressions": self.regressions,
            "thresholds": asdict(self.thresholds),
            "metric": self.metric,
            "normalized": self.normalized,
            "matched_cells": self.matched_cells,
            "warnings": self.warnings,
            "notes": self.notes,
            "winners": self.winners,
            "configs": {
                k: {
                    **asdict(v),
                    "time": asdict(v.time) if v.time else None,
                    "instructions": asdict(v.instructions) if v.instructions else None,
                }
                for k, v in self.configs.items()
            },
            "counter_changes": [asdict(c) for c in self.counter_changes],
            "status_changes": [asdict(c) for c in self.status_changes],
            "quality_changes": [asdict(c) for c in self.quality_changes],
        }


def _fmt_int(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:g}"
