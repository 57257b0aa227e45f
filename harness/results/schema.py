"""The rows a run stores: their core columns (:class:`ResultRow`; every column,
registered ones too, is declared in :mod:`harness.results.columns`), the schema
version and its history, the statuses and how bad each is, a row's key."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = 10  # bump on any change of columns or their meaning
# History:
#   1 - first version (results/README.md), plus the trailing ``extra`` column:
#       per-algorithm counters beyond the four fixed ones, as a JSON object.
#   2 - trailing ``raw_seconds``, ``raw_cpu_seconds``: an external program's times
#       before its start-up was subtracted (empty for in-process solvers).
#       Version 1 runs are read as version 2 with those columns empty.
#   3 - memory rows: ``peak_rss_delta_bytes`` (what the solve added to the worker's
#       resident set); time rows: ``ref_seconds`` / ``ref_cpu_seconds`` (a fixed
#       reference solve timed next to the repeat, same worker, same core);
#       ``worker`` and ``cpu`` (core the worker was pinned to) on measured rows.
#       meta.json: options.warmup, options.order_seed, load averages, CPU
#       frequency and governor, hostname. Older runs are read with these columns
#       empty, and :func:`schema_gaps` says what they lack.
#   4 - time rows: ``repeats_taken`` (how many timed repeats the cell took) and
#       ``stop_reason`` (why no more: stable | long | max | fixed | failed, see
#       harness.measure.stopping): the adaptive stop may take fewer than
#       options.repeats. A ``ref_cpu_seconds`` may be shared by the repeats of
#       one worker within 0.5 s (timer.reference says so). meta.json: ``phases``
#       (where the session's time went), options.adaptive. Version 1-3 runs are
#       read with the two columns empty: they took all their repeats.
#   5 - time rows: ``loops`` (solves in the timed sample: a fast solve is timed as
#       a calibrated loop of back-to-back solves of the board, and ``seconds`` /
#       ``cpu_seconds`` are the sample divided by it; the reference likewise), and
#       ``first_seconds`` / ``first_cpu_seconds`` (the cell's first solve, timed
#       alone with cold caches: single-shot latency, never the default time).
#       Before, every repeat was one solve right after gc.collect() and the
#       previous repeat's reference solve: a 20 us solve read 125-170 us.
#       options.min_sample_seconds. Version 1-4 runs are read with the three
#       columns empty (one solve per repeat, timed cold).
#   6 - every row: ``bound`` (the bound its config claims on path_length /
#       optimum: 1 for an optimal solver, w for a bounded one, empty for none;
#       the judge marks a longer path invalid) and ``suboptimality`` (path_length
#       / optimal_length of a solved row whose optimum is known, else empty).
#       meta.json: options.configs entries may carry the parameters
#       ([solver, heuristic, {"w": "1.5"}]); solvers.<label>.params, .bound and
#       .guarantee. Version 1-5 runs are read with both columns empty (and bound
#       1 for the configs their meta.json calls optimal).
#   7 - meta.json only (rows.csv as in 6): every run option under its one name
#       (harness.core.options): options.gc (true: the collector stayed on during
#       timed solves) replaces options.gc_disabled_during_timing (its negation).
#   8 - time rows: ``instructions`` (harness/results/columns/instructions.py):
#       instructions per solve counted under callgrind, a loop of solves divided
#       (``harness run --instructions``), empty when not counted. meta.json:
#       options.instructions. Version 1-7 runs are read with the column empty
#       and options.instructions false.
#   9 - every row: ``cost_model`` (the task's tile cost model, harness.core.costs:
#       unit | heavy | inverse | sqrt | reverse), ``path_cost`` (the path's cost:
#       the moved tiles' costs summed; unit: its length) and ``optimal_cost`` (the
#       cheapest path's cost where known). Under a non-unit model ``is_optimal``,
#       ``suboptimality`` and the bound are judged by cost (within
#       harness.core.costs.COST_TOLERANCE), not length. Registered columns
#       (harness/results/columns/costs.py). Version 1-8 runs are read as unit
#       with both costs empty.
#   10 - solved rows of optimal searches on 3x3 boards: ``necessary`` (boards every
#        optimal search with the row's heuristic must expand: g* + h < C*, exact),
#        ``necessary_ties`` (g* + h = C*) and ``over_necessary`` (expanded over
#        necessary). Registered columns (harness/results/columns/necessary.py).
#        Version 1-9 runs are read with the three empty.
#: The first column each version added (its columns run to the next version's
#: first): where harness.results.columns reads a core column's version. A
#: registered column declares its own (``Column.since``).
FIRST_OF_VERSION = {2: "raw_seconds", 3: "peak_rss_delta_bytes", 4: "repeats_taken",
                    5: "loops", 6: "bound"}  # fmt: skip
#: Versions this harness reads (older ones are migrated on reading).
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
SUPPORTED_SCHEMAS = READABLE_VERSIONS

ROWS_FILE = "rows.csv"
META_FILE = "meta.json"
REJECTED_FILE = "rows.rejected.csv"
STATUSES = ("solved", "unsolvable", "timeout", "memout", "error", "invalid", "skipped")

# The status vocabulary, defined once (runner, analysis, report, plots, compare).
#: Best first; statuses in one group are equally good or bad. An answer (a path, or
#: "unsolvable" for an unsolvable board) is best, a refusal loses coverage, a wrong
#: answer is worst.
SEVERITY_GROUPS = (
    ("solved", "unsolvable"),
    ("skipped",),
    ("timeout", "memout"),
    ("error",),
    ("invalid",),
)
#: status -> its group's rank: a higher rank is a worse outcome (a regression).
SEVERITY = {s: rank for rank, group in enumerate(SEVERITY_GROUPS) for s in group}
#: Every status, best to worst: which of an instance's repeats stands for it.
WORST_LAST = tuple(s for group in SEVERITY_GROUPS for s in group)
#: Correct answers.
ANSWERED = SEVERITY_GROUPS[0]
#: Failures of a pass, worst first (a refusal, "skipped", is not one).
PROBLEMS = ("invalid", "error", "memout", "timeout")
MEASURES = ("time", "memory")
#: How the time rows' message begins when the cell's first solve took far longer
#: than a later one of the same board (harness.measure.rows.keeps_state): solved,
#: but its times may be flattered. The report looks for it.
STATE_KEPT = "possible answer cache"
#: Longest text kept in ``moves`` / ``message``; a runaway solver's output is cut.
MAX_TEXT = 4000


class ResultsError(Exception):
    """A run directory that cannot be read or written; the message names the file."""


@dataclass(frozen=True, slots=True)
class ResultRow:
    """One pass (a timed repeat or the memory pass) of one config on one instance."""

    run_id: str
    dataset: str
    instance: str
    size: str  # "3x3"
    goal: str  # goal name or its tokens
    solvable: bool
    optimal_length: int | None  # from the dataset (or the 3x3 oracle); None if unknown
    solver: str  # registry name
    heuristic: str  # "none" for blind solvers
    config: str  # display label, "astar_dict[manhattan]"
    measure: str  # "time" | "memory"
    repeat: int  # 0..R-1 for time rows, 0 for the memory row
    status: str  # one of STATUSES
    message: str  # why, for anything but a clean solve; "" otherwise
    moves: str | None  # the returned move string (None: none returned)
    path_length: int | None
    is_optimal: bool | None  # None unless path_length and optimal_length are known
    expanded: int | None
    generated: int | None
    max_frontier: int | None
    iterations: int | None
    seconds: float | None  # wall time of the solve call (time rows only)
    cpu_seconds: float | None  # CPU time of the worker process during the call
    peak_bytes: int | None  # tracemalloc peak (memory rows only)
    peak_rss_bytes: int | None  # worker's peak resident set (memory rows only)
    h_start: int | None  # heuristic at the start board (None for blind solvers)
    extra: str  # JSON object of per-algorithm counters, "" when none
    raw_seconds: float | None = None  # external programs: wall before start-up
    raw_cpu_seconds: float | None = None  # subtraction, and CPU likewise
    # ---- schema 3
    #: memory rows: worker's peak RSS during the solve minus its RSS just before
    peak_rss_delta_bytes: int | None = None
    #: time rows: the reference solve timed right after this repeat (same worker)
    ref_seconds: float | None = None
    ref_cpu_seconds: float | None = None
    worker: int | None = None  # worker slot that measured the row
    cpu: int | None = None  # the core that worker was pinned to (None: not pinned)
    # ---- schema 4
    #: time rows: how many timed repeats the cell took (the adaptive stop may
    #: take fewer than options.repeats)
    repeats_taken: int | None = None
    #: time rows: why the cell took no more (harness.measure.stopping.STOP_REASONS)
    stop_reason: str = ""
    # ---- schema 5
    #: time rows: solves in the timed sample; seconds / cpu_seconds are per solve
    loops: int | None = None
    #: time rows: the cell's first solve, timed alone with cold caches (single-shot
    #: latency); the same on every time row of the cell
    first_seconds: float | None = None
    first_cpu_seconds: float | None = None
    # ---- schema 6
    #: the bound the config claims on path_length / optimum: 1.0 optimal, w
    #: bounded (checked by the judge), None: no bound (greedy)
    bound: float | None = None
    #: path_length / optimal_length, for a solved row whose optimum is known
    suboptimality: float | None = None
    #: the values of the registered columns (harness.results.columns) by name;
    #: not a column itself (a registered column absent here is its empty value)
    more: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def key(self) -> tuple[str, str, str, str, int]:
        return row_key(
            self.config, self.dataset, self.instance, self.measure, self.repeat
        )


#: stop_reason of a cell whose remaining repeats were skipped as unable to move
#: its median (a resume or reuse must not take them)
STOPPED_STABLE = "stable"
#: ... or skipped after enough samples of a long solve (harness.measure.stopping)
STOPPED_LONG = "long"


def stopped_early(rows: Iterable[dict[str, str]]) -> bool:
    """Whether a cell's stored rows say its timed repeats stopped early on
    purpose (the adaptive stop): the repeats it lacks are not missing."""
    return any(
        r.get("measure") == "time"
        and r.get("stop_reason") in (STOPPED_STABLE, STOPPED_LONG)
        for r in rows
    )


def row_key(config: str, dataset: str, instance: str, measure: str, repeat: int):
    """The identity of a stored row: a resumed run never writes a key twice."""
    return (config, dataset, instance, measure, int(repeat))


#: How a boolean field may be spelled (lower case), and what it means.
BOOL_TOKENS = {"true": True, "1": True, "false": False, "0": False, "": None,
               "<na>": None, "nan": None, "none": None}  # fmt: skip
