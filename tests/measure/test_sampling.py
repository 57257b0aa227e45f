"""Calibrated samples: fast solves timed as loops of back-to-back solves, each
sample right after its own warm solves, counters from one solve, every loop
checked, a solver that keeps answers between calls flagged. These tests check the
structure (what runs, in which order, what is recorded), never the clock.

Solvers with known behaviour come from ``tests/plugins/measured.py``.
"""

from __future__ import annotations

import gc
import shlex
import sys

import pytest
from plugins.tiny import make_dataset
from where import PLUGINS

import harness
from harness.analysis import load_run
from harness.configs import ConfigKey
from harness.measure import sampling
from harness.measure.rows import nondeterminism
from harness.measure.tasks import Attempt, Pass, Task
from harness.measure.worker import Worker, check_loops
from harness.puzzle import goal_board, grid
from harness.report import findings
from harness.solver import Counters, all_solvers

PLUGIN = str(PLUGINS / "measured.py")
G3 = grid(3)
GOAL = goal_board("standard", G3)
BOARD = (1, 2, 3, 4, 0, 6, 7, 5, 8)  # 2 moves: a BFS of a few dozen boards
OTHER = (1, 2, 3, 4, 5, 6, 0, 7, 8)  # 2 moves


pytestmark = pytest.mark.usefixtures("measured_plugin")


@pytest.fixture
def run(tmp_path):
    """``harness.run`` in this process (``jobs=0``), two repeats, no adaptive stop,
    no memory pass; keywords override these."""

    def go(configs, boards=(BOARD, OTHER), **options):
        data = make_dataset("s", list(boards), G3, GOAL)
        defaults = dict(plugins=[PLUGIN], repeats=2, memory_pass=False, jobs=0,
                        adaptive=0.0, out=tmp_path)  # fmt: skip
        return harness.run(configs, [data], **{**defaults, **options})

    return go


def _timed(frame, config):
    return frame[(frame.config == config) & (frame.measure == "time")]


def test_fast_solves_are_loops_slow_ones_single_solves(run):
    frame = run("logged,spin80", memory_pass=True)
    fast, slow = _timed(frame, "logged"), _timed(frame, "spin80")
    assert (fast.status == "solved").all() and (slow.status == "solved").all()
    # a BFS of a few dozen boards takes microseconds: many per 1 ms sample
    assert (fast.loops > 1).all()
    assert (slow.loops == 1).all()  # 80 ms of CPU fill a sample alone
    assert frame[frame.measure == "memory"].loops.isna().all()
    meta = harness.results.read_meta(frame.attrs["run_dir"])
    assert meta["options"]["min_sample_seconds"] == 0.001
    assert "loops" in meta["timer"]["timed_region"]


def test_counters_come_from_one_solve(run):
    frame = run("logged")
    fast = _timed(frame, "logged")
    assert (fast.loops > 1).all()
    solve = all_solvers()["logged"].solve
    for board, rows in zip((BOARD, OTHER), (fast[fast.instance == i] for i in
                           sorted(fast.instance.unique())), strict=True):  # fmt: skip
        one = Counters()
        solve(board, GOAL, G3, counters=one, heuristic=None)
        # one solve's count, not the sum over the loop's solves
        assert (rows.expanded == one.expanded).all()
        assert (rows.generated == one.generated).all()


def test_the_cells_first_solve_is_its_own_column(run):
    frame = run("logged", warmup=0)
    fast = _timed(frame, "logged")
    assert fast.first_cpu_seconds.notna().all() and fast.first_seconds.notna().all()
    # one figure per cell, on every time row of it, never the default time
    assert (fast.groupby("instance").first_cpu_seconds.nunique() == 1).all()


def test_a_loop_whose_counters_differ_is_nondeterministic(run):
    frame = run("flaky_counts")
    timed = _timed(frame, "flaky_counts")
    assert (timed.status == "invalid").all()
    assert timed.message.str.contains("nondeterministic counters").all()


def test_a_loop_is_checked_solve_by_solve():
    """The first solve of a sample that counts or answers otherwise than the one
    the row records is kept as the pass's check, and named in the message."""
    one = sampling.Sample(1e-6, 1e-6, 1, ["ul"], [Counters(expanded=3)])
    same = sampling.Sample(1e-6, 1e-6, 3, ["ul"] * 3, [Counters(expanded=3)] * 3)
    moved = sampling.Sample(1e-6, 1e-6, 3, ["ul", "ul", "lu"], same.counters)
    counted = sampling.Sample(
        1e-6, 1e-6, 3, ["ul"] * 3, [Counters(expanded=3), Counters(expanded=4)] * 2
    )
    for sample, label, message in (
        (same, "", None),
        (moved, "loop 3 of 3", "time 0, loop 3 of 3 returned different paths"),
        (counted, "loop 2 of 3", "expanded 3 (time 0) vs 4 (time 0, loop 2 of 3)"),
    ):
        counted_once = Counters(expanded=3).as_dict()
        attempt = Attempt("time", 0, "returned", moves="ul", counters=counted_once)
        check_loops(attempt, one, sample)
        assert attempt.check_label == label
        found = nondeterminism([attempt])
        assert found is None if message is None else message in found


@pytest.mark.parametrize("memory", [False, True])
def test_a_solver_that_keeps_answers_is_flagged(run, memory):
    """Its first solve against a later cold one (the memory pass's plain solve),
    or without a memory pass against the warm solves, by a wider margin."""
    frame = run("cache_answers,logged", memory_pass=memory)
    cached, honest = _timed(frame, "cache_answers"), _timed(frame, "logged")
    # its counters are cached too, so they agree: solved, but said
    assert (cached.status == "solved").all()
    assert cached.message.str.startswith("possible answer cache: first solve").all()
    assert (cached.first_cpu_seconds > 4 * cached.cpu_seconds).all()
    assert (honest.message.fillna("") == "").all()
    said = " ".join(findings(load_run(frame.attrs["run_dir"])))
    assert "cache_answers on s: on 2 instances" in said
    assert "may keep answers or set-up between calls" in said
    assert "logged on s: on" not in said


def test_min_sample_time_zero_is_one_solve_per_sample(run):
    frame = run("logged", min_sample_seconds=0)
    assert (_timed(frame, "logged").loops == 1).all()


PROGRAM = """
import sys
n = 0
for line in sys.stdin:
    if line.split() == "1 2 3 4 5 6 7 8 x".split():
        print("", flush=True)  # the goal board: the start-up's line
        continue
    n += 1
    print("drlr" if FLIP and n % 7 == 0 else "dr", flush=True)
"""


@pytest.mark.parametrize("flip", [False, True])
def test_a_batch_program_answers_loops_of_lines_each_checked(run, tmp_path, flip):
    """A batch program gets k lines of the board per sample; a line answered
    otherwise than the others makes the cell nondeterministic."""
    script = tmp_path / "answer.py"
    script.write_text(f"FLIP = {flip}\n" + PROGRAM)
    frame = run("prog", boards=(BOARD,), plugins=[
        "exec:prog:batch=" + shlex.join([sys.executable, str(script)])])  # fmt: skip
    timed = _timed(frame, "prog")
    assert (timed.loops > 1).all() and timed.first_cpu_seconds.notna().all()
    if flip:
        assert (timed.status == "invalid").all()
        assert timed.message.str.contains("nondeterministic moves").all()
    else:
        assert (timed.status == "solved").all() and (timed.moves == "dr").all()


# ------------------------------------------------- the order of the calls


def _logged_task(passes, **kw) -> Task:
    return Task(
        id=0, config=ConfigKey("logged", None), plugins=(PLUGIN,), rows=3, cols=3,
        start=BOARD, goal=GOAL, passes=passes, timeout=60.0, memory_limit_mb=4096,
        reference=True, **kw,
    )  # fmt: skip


@pytest.mark.parametrize("warmup", [0, 1])
def test_nothing_runs_between_a_warm_solve_and_its_sample(monkeypatch, warmup):
    """The log of one cell: housekeeping (gc.collect, the memory limit), then the
    warm solve, then the sample's clock, its solves, its clock; the reference
    after. No collection, memory limit or reference between a warm solve and the
    sample it warms."""
    worker = Worker(0)
    passes = (*[Pass("warmup", w) for w in range(warmup)],
              Pass("time", 0), Pass("time", 1), Pass("time", 2))  # fmt: skip
    task = _logged_task(passes)
    worker.run(task)  # set-up (the plugin loaded) and the reference prepared
    log = sys.modules[all_solvers()["logged"].solve.__module__].CALLS
    real_clock = sampling.time.process_time_ns

    class Clock:
        perf_counter_ns = staticmethod(sampling.time.perf_counter_ns)

        @staticmethod
        def process_time_ns():
            log.append(("clock", None))
            return real_clock()

    collect, limit, reference = gc.collect, Worker._limit_memory, Worker._time_reference
    monkeypatch.setattr(sampling, "time", Clock)
    monkeypatch.setattr(gc, "collect", lambda *a: log.append(("gc", None)) or collect())
    def limited(self, mb):  # the pass's limit (None: lifted after the pass)
        if mb is not None:
            log.append(("limit", mb))
        limit(self, mb)

    monkeypatch.setattr(Worker, "_limit_memory", limited)
    monkeypatch.setattr(
        Worker,
        "_time_reference",
        lambda self, s: log.append(("reference", None)) or reference(self, s),
    )
    log.clear()
    result = worker.run(task)  # the same cell again, measured from scratch
    assert [a.outcome for a in result.attempts] == ["returned"] * len(passes)
    kinds = [kind for kind, _ in log]
    # the reference's own solves are astar_cantor's, never logged: three samples
    assert kinds.count("reference") == 3
    timed = [a for a in result.attempts if a.measure == "time"]
    loops = timed[0].loops
    assert loops > 1 and all(a.loops == loops for a in timed)
    sample = ["clock"] + ["solve"] * loops + ["clock"]
    # the warm solve, then untimed solves up to the sample's loops
    warm = ["clock", "solve", "clock", "clock"] + ["solve"] * (loops - 1) + ["clock"]
    # one per timed repeat, each ending where its reference begins; the last
    # reference's own sample (its two clocks) is all that follows
    segments = " ".join(kinds).split(" reference")
    assert segments[-1] == " clock clock"
    for segment in segments[:-1]:
        events = segment.split()
        cut = len(events) - len(warm) - len(sample)
        # the repeat ends: warm solves, then the sample; nothing else in between
        assert events[cut:] == warm + sample, (loops, ' '.join(events))
        head = events[:cut]
        # the housekeeping came before: collection, then the memory limit
        assert "gc" in head and "limit" in head
        assert head[-1] in ("limit", "clock")  # the limit, or the calibration
        assert head.index("gc") < head.index("limit")
    # every solve of the log is of the cell's board (no other board between)
    assert {board for kind, board in log if kind == "solve"} == {BOARD}


def test_calibration_aims_at_the_minimum_sample():
    """The calibration's arithmetic, with a fake sample that costs 1 us a solve."""
    tried = []

    def sample(loops):
        tried.append(loops)
        return loops * 1e-6

    loops, per_solve = sampling.calibrate(sample, 3e-6, 1e-3)
    assert loops * 1e-6 >= 1e-3 and loops <= 1.3e3
    assert tried[0] == 1 and tried == sorted(tried)
    assert per_solve == pytest.approx(1e-6)
    # a first solve of twice the minimum or more settles it: no sample taken
    tried.clear()
    assert sampling.calibrate(sample, 2e-3, 1e-3) == (1, 2e-3)
    assert sampling.calibrate(sample, 5e-6, 0.0) == (1, 5e-6) and tried == []


def test_a_batch_program_gets_warm_lines_as_many_as_its_sample(monkeypatch):
    """A timed pass of a calibrated batch cell: one warm line, the lines that bring
    it to as many as the sample, then the sample's lines; nothing after the sample
    but the reference. A cell timed one line a sample gets its warm line only."""
    from harness.measure.external import passes
    from harness.measure.external.programs import Program

    asked: list = []

    def run_pass(program, g, start, goal, *, measure, timeout, memory_limit_mb,
                 loops=1):  # fmt: skip
        asked.append(loops)
        return passes.PassResult("returned", moves="dr", seconds=1e-5,
                                 cpu_seconds=1e-5, raw_seconds=1e-5,
                                 raw_cpu_seconds=1e-5)  # fmt: skip

    monkeypatch.setattr(passes, "run_pass", run_pass)
    program = Program("prog", ("prog",), batch=True)
    task = _logged_task((Pass("time", 0),))
    for loops, expected in ((5, [1, 4, 5]), (1, [1, 1])):
        asked.clear()
        cell = sampling.CellClock(loops=loops, per_solve=1e-5, warm=True)
        attempt = passes.worker_pass(
            task, Pass("time", 0), program, grid(3), cell,
            lambda: asked.append("reference") or (1e-3, 1e-3),
        )  # fmt: skip
        assert attempt.outcome == "returned" and attempt.loops == loops
        assert asked == [*expected, "reference"]
