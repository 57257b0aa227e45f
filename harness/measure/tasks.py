"""What the runner sends a worker and what comes back: a :class:`Task` (one solver
config on one instance, with the passes still to do), the :class:`Attempt` of each
pass, the :class:`Setup` of a config, the :class:`TaskResult`; and the constants
both sides share (the reference solve, the tracemalloc pass's limits).

Standard library and the harness core only (workers import this module).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.core.defaults import SETUP_TIMEOUT
from harness.puzzle import Board

if TYPE_CHECKING:
    from harness.solver import ConfigKey

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
#: a repeat's CPU time by it cancels the drift of the core both ran on.
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
    disable_gc: bool = True  # gc.disable() around the timed call
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

    @property
    def setup_key(self) -> tuple:
        """Tasks with equal keys share one prepared set-up in a worker."""
        return (self.plugins, self.config, self.rows, self.cols, self.goal)

    def pass_budget(self, p: Pass) -> float:
        """Seconds the pass may take before it is a timeout."""
        if p.measure == "memory":
            return self.timeout * (1.0 + TRACEMALLOC_TIMEOUT_FACTOR)
        if p.measure == "time" and self.reference:
            return self.timeout + 5.0  # the reference solve after it
        return self.timeout


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
