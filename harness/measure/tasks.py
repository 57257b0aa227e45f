"""What the runner sends a worker and what comes back: a :class:`Task` (one solver
config on one instance, with the passes still to do), the :class:`Attempt` of each
pass, the :class:`Setup` of a config, the :class:`TaskResult`; and the constants
both sides share (the reference solve, the tracemalloc pass's limits).

Standard library and the harness core only (workers import this module).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.core.defaults import MIN_SAMPLE_SECONDS, SETUP_TIMEOUT
from harness.puzzle import Board

if TYPE_CHECKING:
    from harness.configs import ConfigKey

#: The tracemalloc pass runs this many times slower, so its limit is this multiple.
TRACEMALLOC_TIMEOUT_FACTOR = 5.0
#: The tracemalloc solve runs only when the solve added less than this to the
#: resident set: below it, page and arena granularity and reuse of memory freed
#: by earlier cells blur the RSS delta, and tracemalloc's exact count of Python
#: allocations says more; above it the RSS delta is the honest figure (it sees
#: numba's and numpy's buffers too) and a 5x slower traced solve adds nothing.
TRACEMALLOC_BELOW_BYTES = 16 * 2**20
#: ... and only when the plain solve of the memory pass took under this much CPU
#: time: traced, a pure-Python search runs 5-20x slower (every small allocation
#: and free is recorded), so on the default main job the traced solves of the few
#: slow low-memory cells (pure-Python IDA*, BFS, A* with weak heuristics on deep
#: boards) cost more than everything else together. Those cells keep their RSS
#: delta and no tracemalloc peak; a 50 ms solve costs at most ~1 s traced.
TRACEMALLOC_BELOW_SECONDS = 0.05
#: The reference solve timed beside every timed repeat: a fixed A* on Cantor-ranked
#: arrays (solver-like: heap, arrays, branches), ~3-6 ms on a 2 GHz core. Dividing
#: a repeat's CPU time by it cancels the drift of the core both ran on. It is a
#: calibrated sample too (loops found once per worker), timed right after the
#: cell's sample, with no warm solve of its own: over 40 cells of three compiled
#: configs it read the same cold (after the cell) as warm (after itself), 11.2 ms
#: against 11.3 ms median (load 4); the 0.1-0.25 ms a cold start costs is lost in
#: a solve this long (harness.measure.sampling.WARM_SOLVE_BELOW).
REFERENCE_KEY = ("astar_cantor", "manhattan")  # a ConfigKey's solver and heuristic
REFERENCE_CONFIG = "{}[{}]".format(*REFERENCE_KEY)  # its label, for messages
REFERENCE_BOARD: Board = (5, 7, 8, 3, 6, 4, 2, 0, 1)  # 27 moves from the goal
REFERENCE_GOAL: Board = (1, 2, 3, 4, 5, 6, 7, 8, 0)
#: Every timed repeat gets its own reference solve, timed right after it. Sharing
#: one between repeats of a cell ended within 0.5 s of each other (a third of the
#: references' cost, ~6 s of the main job's worker CPU) widened the quiet A/A
#: spread: 20 pairs of `aa_noise.py --combined` gave normalized ratios 0.909-1.086
#: and one unchanged config called "1.10x faster"; a reference per repeat gave
#: 0.936-1.048 and 0 of 48 verdicts significant over 16 pairs (2026-12-03, load
#: 0.4-2). Sharing across cells spread wider still.
#: A sample of several solves may run this many times the minimum sample time
#: over the time limit before its alarm fires (a loop is calibrated to last about
#: the minimum; one solve in it that hangs is still stopped near the limit).
SAMPLE_SLACK = 10.0
#: The calibration's samples take at most about this many minimum sample times.
CALIBRATION_BUDGET = 50.0
#: Move strings longer than this are not sent back (a runaway solver); flagged invalid.
MAX_MOVES_CHARS = 1_000_000


# --------------------------------------------------------------------- tasks


@dataclass(frozen=True, slots=True)
class Pass:
    """One row to produce: ``("time", r)`` is timed repeat r; ``("memory", 0)`` the
    untimed memory pass (a peak-RSS solve, then maybe a tracemalloc solve);
    ``("warmup", w)`` an untimed solve before the timed repeats (no row)."""

    measure: str
    repeat: int


@dataclass(frozen=True, slots=True)
class Task:
    """One config on one instance, with the passes still to run, in order."""

    id: int
    config: ConfigKey  # resolved in the worker after its plugins are loaded
    plugins: tuple[str, ...]  # plugin targets to load first (absolute paths / modules)
    rows: int
    cols: int
    start: Board
    goal: Board
    passes: tuple[Pass, ...]
    timeout: float  # seconds per solve call
    memory_limit_mb: int | None  # address space one solve may add (RLIMIT_AS)
    setup_timeout: float = SETUP_TIMEOUT
    gc: bool = False  # True: no gc.disable() around the timed call
    dataset: str = ""
    instance: str = ""
    #: time the reference solve after every timed repeat (same worker, same core)
    reference: bool = False
    #: tasks with the same block run in one worker, in submission order (the
    #: runner's interleaved order: one instance, every config); None: any worker
    block: int | None = None
    #: adaptive stop (harness.measure.stopping): skip the timed repeats left once
    #: they could not move the cell's median by more than this factor; 0: take all
    adaptive: float = 0.0
    #: a timed sample lasts at least this many CPU seconds: fast solves are timed
    #: as a loop of back-to-back solves (harness.measure.sampling); 0: one solve
    min_sample_seconds: float = MIN_SAMPLE_SECONDS
    #: the tile cost model of the task (harness.core.costs): the heuristic is made
    #: for it and the solver is called with it (unit: called as it is)
    cost_model: str = "unit"

    @property
    def setup_key(self) -> tuple:
        """Tasks with equal keys share one prepared set-up in a worker."""
        return (self.plugins, self.config, self.rows, self.cols, self.goal,
                self.cost_model)  # fmt: skip

    def pass_budget(
        self, p: Pass, loops: int | None = None, warm: bool = True
    ) -> float:
        """Seconds the pass may take before it is a timeout: a bound on each of its
        solves and samples (see Worker._sample). ``loops`` None: the cell is not
        calibrated yet, so the pass may also make its first solve and calibrate;
        ``warm``: a warm solve comes before the sample."""
        if p.measure == "memory":
            return self.timeout * (1.0 + TRACEMALLOC_TIMEOUT_FACTOR)
        first = 0.0
        if loops is None:  # the first solve, then calibration samples (a fast solve)
            first = self.timeout + CALIBRATION_BUDGET * self.min_sample_seconds
        if p.measure != "time":
            return first or self.timeout
        sample = self.timeout + SAMPLE_SLACK * self.min_sample_seconds
        total = first + (self.timeout if warm else 0.0) + sample
        return total + 5.0 if self.reference else total  # the reference sample


@dataclass(slots=True)
class Attempt:
    """What one pass produced. ``outcome``: returned | timeout | memout | error.
    Passes after a failed one are not tried; they carry its outcome and say so."""

    measure: str
    repeat: int
    outcome: str
    moves: str | None = None  # the returned string (None: returned None, or failed)
    moves_type: str = ""  # type name of what solve returned ("str", "NoneType", ...)
    moves_chars: int = 0  # length of the returned string, even when not sent back
    counters: dict[str, Any] | None = None
    #: memory pass: counters and moves of the tracemalloc solve (determinism check)
    check_counters: dict[str, Any] | None = None
    check_moves: str | None = None
    seconds: float | None = None
    cpu_seconds: float | None = None
    #: external programs: times before the start-up was subtracted
    raw_seconds: float | None = None
    raw_cpu_seconds: float | None = None
    peak_bytes: int | None = None
    peak_rss_bytes: int | None = None
    #: memory pass: peak RSS during the solve minus the RSS just before it
    peak_rss_delta_bytes: int | None = None
    #: timed pass: the reference solve timed right after it
    ref_seconds: float | None = None
    ref_cpu_seconds: float | None = None
    message: str = ""
    #: timed pass: "stable" when the repeats after it were skipped (adaptive stop)
    stop: str = ""
    #: timed pass: solves in its sample (seconds and cpu_seconds are per solve)
    loops: int | None = None
    #: the cell's first solve, timed alone with cold caches (single-shot latency;
    #: carried by the pass that made it: the first warm-up, else the first repeat)
    first_seconds: float | None = None
    first_cpu_seconds: float | None = None
    #: CPU seconds of one solve timed alone: in a timed pass the warm solve (or the
    #: sample when it is one solve), in the memory pass its plain solve (after
    #: gc.collect() and the heap trim, cold like the cell's first solve); a solver
    #: that keeps answers between calls has a first solve far slower than these
    single_cpu_seconds: float | None = None
    #: which solve check_counters / check_moves came from ("" : none compared)
    check_label: str = ""
    #: values the worker measured for registered columns (harness.results.columns),
    #: by column name; a column's ``compute`` reads them from here
    measured: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Setup:
    """One set-up of a config in a worker (imports, heuristic, prepare), untimed
    for the rows; stored in meta.json ``setup``."""

    config: str
    size: str
    goal: Board
    seconds: float
    note: str
    worker: int
    ok: bool = True
    import_seconds: float = 0.0
    heuristic_seconds: float = 0.0
    prepare_seconds: float = 0.0
    rss_baseline_bytes: int | None = None
    error: str = ""


@dataclass(slots=True)
class TaskResult:
    """Every pass of a task, in order (failed ones included), and its set-ups."""

    task: Task
    attempts: list[Attempt]
    setups: list[Setup] = field(default_factory=list)
    h_start: int | None = None
    worker: int = -1
    #: who measured it, for meta.json placement ("" : this machine's local pool)
    worker_id: str = ""
    host: str = ""
    cpu: int | None = None  # the core the worker was pinned to
    #: (wall, CPU) seconds the worker spent per phase of this task (set-up,
    #: warm-up, the timed solves, the reference solves, the memory and tracemalloc
    #: solves): where a run's time goes (meta.json ``phases``); empty: not measured
    phases: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TaskStarted:
    task: Task
    worker: int


Event = TaskStarted | TaskResult


def clocks_now() -> tuple[float, float]:
    """(wall, CPU) clocks of this process, for the phase accounting
    (:attr:`TaskResult.phases`)."""
    return time.perf_counter(), time.process_time()
