"""External programs as solvers: registered in the solver registry, their start-up
measured on the goal board, their timed and memory passes run for the worker, their
process groups killed with it, and the sentence the report says about them.

Standard library only (workers import this module).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.measure.external.process import (
    BatchProcess,
    kill_group,
    parse_answer,
    run_once,
)
from harness.measure.external.programs import (
    EXEC_PREFIX,
    ExternalError,
    Program,
    load_toml,
    parse_exec,
)
from harness.measure.probes import group_leaders_of
from harness.measure.sampling import (
    WARM_SOLVE_BELOW,
    CellClock,
    calibrate,
    steady_loops,
)
from harness.measure.tasks import Attempt, Pass, Task
from harness.puzzle import Board, Grid

#: Start-up is the median of this many solves of the goal board (batch: of this
#: many samples of goal-board lines, each of at least STARTUP_SAMPLE_SECONDS).
STARTUP_RUNS = 5
STARTUP_SAMPLE_SECONDS = 0.001
#: A start-up-subtracted time below this (noise: the solve cost less than the
#: start-up's own jitter) is recorded as this.
FLOOR_SECONDS = 1e-6


# ------------------------------------------------------------- start-up


@dataclass(slots=True)
class Startup:
    """Cost of answering the goal board (the empty path): what every solve pays
    before searching. Batch: ``launch_seconds`` is spawn to first answer."""

    seconds: float | None = None
    cpu_seconds: float | None = None
    launch_seconds: float | None = None
    runs: int = 0
    error: str = ""
    loops: int = 1  # batch: goal-board lines per sample (the times are per line)

    def note(self) -> str:
        if self.error:
            return f"start-up not measured ({self.error}); no time subtracted"
        cpu = "n/a" if self.cpu_seconds is None else f"{1e3 * self.cpu_seconds:.3f} ms"
        text = (
            f"start-up on the goal board {1e3 * self.seconds:.3f} ms wall, {cpu} CPU "
            f"(median of {self.runs}"
            + (f" samples of {self.loops} lines" if self.loops > 1 else "")
            + "), subtracted from seconds/cpu_seconds"
        )
        if self.launch_seconds is not None:
            text += f"; launch to first answer {1e3 * self.launch_seconds:.1f} ms"
        return text


#: Worker-local state: start-up per (program, size, goal), live batch processes.
_STARTUPS: dict[tuple, Startup] = {}
_BATCH: dict[tuple, BatchProcess] = {}


def _key(program: Program, g: Grid, goal: Board) -> tuple:
    return (program.name, program.command, g.rows, g.cols, goal)


def measure_startup(
    program: Program, g: Grid, goal: Board, memory_limit_mb: int | None = None
) -> Startup:
    """Median cost of the goal board over :data:`STARTUP_RUNS` solves; a program
    that fails on it gets a Startup with ``error`` (its passes then fail on their
    own, with their own status)."""
    timeout = program.budget_seconds
    walls, cpus = [], []
    launch = None
    try:
        if program.batch:
            t0 = time.perf_counter_ns()
            process = _batch(program, g, goal, memory_limit_mb, fresh=True)
            answer, *_ = process.ask(goal, timeout)
            launch = (time.perf_counter_ns() - t0) / 1e9
            _expect_empty(answer)
            # per line of a loop of goal boards, as the passes' samples are taken
            loops, _ = calibrate(
                lambda k: _per_line(*_goal_lines(process, goal, k, timeout)) * k,
                STARTUP_SAMPLE_SECONDS,
                STARTUP_SAMPLE_SECONDS,
            )
            for _ in range(STARTUP_RUNS):
                wall, cpu = _goal_lines(process, goal, loops, timeout)
                walls.append(wall)
                cpus.append(cpu)
        else:
            for _ in range(STARTUP_RUNS):
                m = run_once(program, goal, timeout, memory_limit_mb)
                if m.moves != "":
                    raise ExternalError(f"answered {m.moves!r}, expected an empty line")
                walls.append(m.seconds)
                cpus.append(m.cpu_seconds)
    except ExternalError as err:
        return Startup(error=f"on the goal board: {err}")
    return Startup(
        seconds=statistics.median(walls),
        cpu_seconds=None if None in cpus else statistics.median(cpus),
        launch_seconds=launch,
        runs=len(walls),
        loops=loops if program.batch else 1,
    )


def _per_line(wall: float, cpu: float | None) -> float:
    """What a sample is calibrated on: CPU seconds, or wall where /proc has none."""
    return wall if cpu is None else cpu


def _goal_lines(
    process: BatchProcess, goal: Board, loops: int, timeout: float
) -> tuple[float, float | None]:
    """(wall, CPU) seconds per line of ``loops`` goal-board lines; each answer must
    be the empty path."""
    answers, wall, cpu = process.ask_many(goal, loops, timeout)
    for answer in answers:
        _expect_empty(answer)
    return wall, cpu


def _expect_empty(answer: str) -> None:
    if parse_answer(answer) != "":
        raise ExternalError(f"answered {answer.strip()!r}, expected an empty line")


def _batch(
    program: Program,
    g: Grid,
    goal: Board,
    memory_limit_mb: int | None,
    *,
    fresh: bool = False,
) -> BatchProcess:
    """The live batch process for this size and goal, started if needed."""
    key = _key(program, g, goal)
    process = _BATCH.get(key)
    if process is not None and (
        fresh or not process.alive() or process.memory_limit_mb != memory_limit_mb
    ):  # (the start-up was measured in a process started without the pass's limit)
        process.close(kill=True)
        process = None
    if process is None:
        process = BatchProcess(program, memory_limit_mb)
        _BATCH[key] = process
        if not fresh:  # a restart after a failure: warm it like the first start
            answer, *_ = process.ask(goal, program.budget_seconds)
            _expect_empty(answer)
    return process


def _make_prepare(program: Program):
    def prepare(g: Grid, goal: Board, heuristic: Any) -> str:
        startup = measure_startup(program, g, goal)
        _STARTUPS[_key(program, g, goal)] = startup
        return startup.note()

    return prepare


def _make_solve(program: Program):
    """An in-process solve for ``harness solve``: one process per board (a batch
    program answers a one-line input too). Raises ExternalError on failure."""

    def solve(start, goal, g, *, counters, heuristic):
        reason = program.refuses_goal(goal, g)
        if reason:
            raise ExternalError(reason)
        return run_once(program, start, program.budget_seconds).moves

    solve.__module__ = __package__  # harness.measure.external, as meta.json says
    solve.__qualname__ = f"external:{program.name}"
    return solve


def register_program(program: Program) -> str:
    """Add ``program`` to the solver registry; returns its name."""
    from harness.solver import register_spec

    register_spec(
        program.name,
        solve=_make_solve(program),
        optimal=program.optimal,
        description=program.description,
        refuses=program.refuses,
        prepare=_make_prepare(program),
        budget_seconds=program.budget_seconds,
        sizes=", ".join(program.sizes) if program.sizes else "any",
        external=program,
    )
    return program.name


def load_plugin(target: str) -> list[str]:
    """Any ``--plugin`` target: the external programs of an ``exec:NAME=COMMAND``
    target or a ``.toml`` file, else a Python module or ``.py`` file
    (:func:`harness.solver.load_plugin`). The names registered; ImportError with a
    one-line reason otherwise."""
    if target.startswith(EXEC_PREFIX) or target.endswith(".toml"):
        return load_target(target)
    from harness.solver import load_plugin as load_python_plugin

    return load_python_plugin(target)


def load_target(target: str) -> list[str]:
    """Register the programs of a plugin target (``exec:...`` or a ``.toml`` path);
    ImportError with a one-line reason otherwise."""
    try:
        if target.startswith(EXEC_PREFIX):
            programs = [parse_exec(target[len(EXEC_PREFIX) :])]
        else:
            programs = load_toml(target)
        return [register_program(p) for p in programs]
    except ValueError as err:  # NameClash too: a program named like a solver
        raise ImportError(str(err)) from None


# ------------------------------------------------------------- worker passes


@dataclass(slots=True)
class PassResult:
    """What a pass hands back to the worker (turned into its Attempt there)."""

    outcome: str  # returned | timeout | error
    moves: str | None = None
    seconds: float | None = None
    cpu_seconds: float | None = None
    raw_seconds: float | None = None
    raw_cpu_seconds: float | None = None
    peak_rss_bytes: int | None = None
    message: str = ""
    extra: dict = field(default_factory=dict)
    #: a loop's first answer that differs from its first line's: which line
    #: ("" : all the same) and what it answered
    varied: str = ""
    varied_moves: str | None = None


def run_pass(
    program: Program,
    g: Grid,
    start: Board,
    goal: Board,
    *,
    measure: str,
    timeout: float,
    memory_limit_mb: int | None,
    loops: int = 1,
) -> PassResult:
    """One timed or memory pass of ``program`` on ``start``: batch programs answer
    ``loops`` lines of the board (times per line; ``varied`` names an answer that
    differs from the first), others run once (``loops`` must be 1)."""
    reason = program.refuses_goal(goal, g)
    if reason:
        return PassResult("error", message=reason)
    key = _key(program, g, goal)
    startup = _STARTUPS.get(key)
    if startup is None:  # no prepare ran (a caller outside the worker)
        startup = _STARTUPS[key] = measure_startup(program, g, goal)
    varied, other = "", None
    try:
        if program.batch and loops > 1:
            process = _batch(program, g, goal, memory_limit_mb)
            answers, wall, cpu = process.ask_many(start, loops, timeout)
            rss = None
            moves = parse_answer(answers[0])
            differ = next((i for i, a in enumerate(answers) if a != answers[0]), None)
            if differ is not None:
                varied = f"line {differ + 1} of {loops}"
                try:
                    other = parse_answer(answers[differ])
                except ExternalError:
                    other = answers[differ][:200]
        elif program.batch:
            process = _batch(program, g, goal, memory_limit_mb)
            answer, wall, cpu, rss = process.ask(
                start, timeout, reset_peak=measure == "memory"
            )
            moves = parse_answer(answer)
        else:
            m = run_once(
                program, start, timeout, memory_limit_mb, peak=measure == "memory"
            )
            moves, wall, cpu, rss = m.moves, m.seconds, m.cpu_seconds, m.peak_rss_bytes
    except ExternalError as err:
        return PassResult(err.outcome, message=str(err))
    out = PassResult(
        "returned", moves=moves, raw_seconds=wall, raw_cpu_seconds=cpu,
        varied=varied, varied_moves=other,
    )  # fmt: skip
    if measure == "memory":
        out.peak_rss_bytes = rss
    if startup.seconds is not None:
        # Noise can make a tiny solve cheaper than the goal board: floor it, so
        # ratios and log axes still work (the raw time is kept beside it).
        out.seconds = _subtracted(wall, startup.seconds)
    if startup.cpu_seconds is not None and cpu is not None:
        out.cpu_seconds = _subtracted(cpu, startup.cpu_seconds)
    return out


def _subtracted(raw: float, startup: float) -> float:
    """``raw - startup``, floored at FLOOR_SECONDS (or at ``raw`` itself when the
    whole line cost less than that: a loop of goal-like lines)."""
    return max(min(FLOOR_SECONDS, raw), raw - startup)


def worker_pass(
    task: Task,
    p: Pass,
    program: Program,
    g: Grid,
    cell: CellClock,
    reference: Callable[[], tuple[float, float] | None] | None,
) -> Attempt:
    """A worker's pass of an external program, on the footing of an in-process
    solver's: a batch program's cell is calibrated like a solver's (k lines of the
    board per sample, after one warm line and as many untimed lines as the sample
    less one; ``cell`` keeps what the passes learn),
    a program run once per board is cold by construction, one process per solve.
    ``reference`` times the worker's reference sample after a timed pass."""

    def ask(loops: int = 1, measure: str = "time", slack: float = 0.0) -> Attempt:
        done = run_pass(
            program, g, task.start, task.goal, measure=measure,
            timeout=task.timeout + slack, memory_limit_mb=task.memory_limit_mb,
            loops=loops,
        )  # fmt: skip
        return _attempt(p, done)

    if p.measure == "memory":
        memory = ask(measure="memory")
        memory.single_cpu_seconds = memory.cpu_seconds
        return memory
    first = None
    if cell.loops is None:  # the cell's first solve, then (batch) the calibration
        first = ask()
        if first.outcome != "returned":
            return first
        first.first_seconds, first.first_cpu_seconds = first.seconds, first.cpu_seconds
        cell.loops, cell.warm = 1, False
        if program.batch:
            failed: list[Attempt] = []

            def sample(loops: int) -> float:
                done = ask(loops)
                if done.outcome != "returned":
                    failed.append(done)
                    return math.inf  # stops the calibration
                return _line_seconds(done) * loops

            cell.loops, cell.per_solve = calibrate(
                sample, _line_seconds(first), task.min_sample_seconds
            )
            if failed:
                return failed[0]
            cell.warm = cell.per_solve < WARM_SOLVE_BELOW
        first.loops = cell.loops
        if p.measure == "warmup":
            return first
    elif p.measure == "warmup":
        return ask()
    warm = ask() if cell.warm else None
    if warm is not None and warm.outcome != "returned":
        return warm
    slack = 4 * cell.loops * cell.per_solve if cell.loops > 1 else 0.0
    if warm is not None and cell.loops > 1:  # untimed lines to the steady state,
        steady = ask(steady_loops(cell.loops), slack=slack)  # as in-process
        if steady.outcome != "returned":
            return steady
    attempt = ask(cell.loops, slack=slack)
    if attempt.outcome != "returned":
        return attempt
    attempt.loops = cell.loops
    single = warm or (attempt if cell.loops == 1 else None)
    attempt.single_cpu_seconds = single.cpu_seconds if single else None
    if first is not None:
        attempt.first_seconds = first.first_seconds
        attempt.first_cpu_seconds = first.first_cpu_seconds
    if warm is not None and warm.moves != attempt.moves and not attempt.check_label:
        attempt.check_counters, attempt.check_moves = {}, warm.moves
        attempt.check_label = "the warm line"
    ref = reference() if reference is not None else None
    if ref is not None:
        attempt.ref_seconds, attempt.ref_cpu_seconds = ref
    return attempt


def _attempt(p: Pass, done: PassResult) -> Attempt:
    """An Attempt from a pass's result. Programs report no counters: empty ones,
    so their answers are still compared across passes. A loop whose answers
    differ keeps the first that differs as its check."""
    moves = done.moves
    return Attempt(
        p.measure, p.repeat, done.outcome, moves=moves,
        moves_type=type(moves).__name__,
        moves_chars=len(moves) if isinstance(moves, str) else 0,
        counters={} if done.outcome == "returned" else None,
        check_counters={} if done.varied else None,
        check_moves=done.varied_moves, check_label=done.varied,
        seconds=done.seconds, cpu_seconds=done.cpu_seconds,
        raw_seconds=done.raw_seconds, raw_cpu_seconds=done.raw_cpu_seconds,
        peak_rss_bytes=done.peak_rss_bytes, message=done.message,
    )  # fmt: skip


def _line_seconds(attempt: Attempt) -> float:
    """A batch line's raw cost (what a sample is calibrated on): CPU seconds, or
    wall seconds where the program's CPU time is not readable."""
    cpu, wall = attempt.raw_cpu_seconds, attempt.raw_seconds
    return float(wall if cpu is None else cpu)  # type: ignore[arg-type]


def kill_program_groups(worker_pid: int) -> int:
    """Kill the process group of every program a worker started (its children
    that lead their own process group), before the worker itself is killed: a
    program runs in its own process group, so it would outlive a killed worker.
    Linux ``/proc``; returns how many groups were killed."""
    killed = 0
    for leader in group_leaders_of(worker_pid):
        kill_group(leader)
        killed += 1
    return killed


def close_all() -> None:
    """Stop every live batch process (worker shutdown, tests)."""
    for process in _BATCH.values():
        process.close()
    _BATCH.clear()
    _STARTUPS.clear()


# ------------------------------------------------------------- reporting


def report_sentence(meta: dict) -> list[str]:
    """What the report says about a run's external programs: which time it plots."""
    names = sorted(
        label
        for label, info in (meta.get("solvers") or {}).items()
        if isinstance(info, dict) and info.get("external")
    )
    if not names:
        return []
    return [
        f"{', '.join(names)} "
        f"{'is an external program' if len(names) == 1 else 'are external programs'}"
        ": the times shown and plotted for "
        f"{'it' if len(names) == 1 else 'them'} are start-up-subtracted (the cost of "
        "answering the goal board, in the set-up notes, taken off each solve and "
        "floored at 1 us); the "
        "raw times are in rows.csv's raw_seconds and raw_cpu_seconds. Programs "
        "report no counters; their peak RSS is the program's own VmHWM (read at its "
        "exit under ptrace, or ru_maxrss where ptrace is refused)."
    ]
