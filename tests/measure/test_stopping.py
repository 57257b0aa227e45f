"""The adaptive stop for repeats (harness.measure.stopping) on synthetic timings,
and its plumbing: the worker skips the repeats left, rows say how many were taken
and why, and a resume counts a stopped cell complete."""

from __future__ import annotations

import math
import random
import statistics
from pathlib import Path

import pytest
from plugins.tiny import make_dataset, walk

import harness
from harness import results as res
from harness.configs import ConfigKey
from harness.measure import stopping
from harness.measure.executors import fill_not_run
from harness.measure.stopping import median_range, settled
from harness.measure.tasks import Attempt, Pass, Task
from harness.puzzle import goal_board, grid

G23 = grid(2, 3)
GOAL23 = goal_board("standard", G23)


def test_median_range_brackets_every_completion():
    """Whatever the missing values are, the full median lies in the range, and
    the range's ends are reached."""
    rng = random.Random(7)
    for _ in range(300):
        total = rng.randint(1, 7)
        known = [rng.uniform(0.5, 2.0) for _ in range(rng.randint(1, total))]
        low, high = median_range(known, total)
        for _ in range(20):
            rest = [
                rng.choice([0.0, rng.uniform(0, 5), 1e9])
                for _ in range(total - len(known))
            ]
            full = statistics.median(known + rest)
            assert low - 1e-12 <= full <= high + 1e-12
        if total == len(known):
            assert low == high == statistics.median(known)


def test_median_range_needs_a_majority():
    assert median_range([1.0], 3) == (0.0, math.inf)
    assert median_range([1.0, 1.1], 3) == (1.0, 1.1)
    assert median_range([3.0, 1.0, 2.0], 5) == (1.0, 3.0)
    assert median_range([1.0, 2.0, 4.0], 4) == (1.5, 3.0)
    with pytest.raises(ValueError):
        median_range([], 3)


def take(timings, total: int, tolerance: float = 0.04) -> int:
    """How many of ``timings`` a cell takes before the rule stops it (at most
    ``total``): the loop the worker runs, on synthetic values."""
    taken: list[float] = []
    for value in timings[:total]:
        taken.append(value)
        if len(taken) < total and settled([taken], total, tolerance):
            break
    return len(taken)


def test_stable_timings_stop_at_the_first_majority():
    assert take([1.000, 1.010, 1.0], 3) == 2
    assert take([0.0105, 0.0104, 0.0106, 0.0105, 0.0104], 5) == 3
    # stable, but only once a repeat that settles it comes
    assert take([1.0, 1.3, 1.01], 3) == 3
    assert take([1.0, 1.3, 1.01, 1.02, 1.0], 5) == 4


def test_noisy_timings_run_to_the_maximum():
    assert take([1.0, 1.2, 0.8], 3) == 3
    assert take([1.0, 1.5, 0.7, 1.3, 0.9], 5) == 5
    rng = random.Random(3)
    noisy = [take([math.exp(rng.gauss(0, 0.3)) for _ in range(3)], 3)
             for _ in range(200)]  # fmt: skip
    steady = [take([math.exp(rng.gauss(0, 0.003)) for _ in range(3)], 3)
              for _ in range(200)]  # fmt: skip
    assert noisy.count(3) >= 180  # 30% noise: nearly always all 3
    assert steady.count(2) == 200  # 0.3% noise: always 2 of 3
    assert take([1.0, 1.0], 2) == 2  # nothing is left to skip at the maximum
    assert take([1.0, 1.0, 1.0], 3, tolerance=0.0) == 3  # off


def test_every_series_must_settle():
    """Wall, CPU and normalised times: one unsettled series keeps the cell going."""
    assert settled([[1.0, 1.01], [2.0, 2.02]], 3, 0.04)
    assert not settled([[1.0, 1.01], [2.0, 2.5]], 3, 0.04)
    assert not settled([[0.0, 0.0]], 3, 0.04)  # a zero bound says nothing


def _attempt(repeat, seconds, cpu, ref=None):
    return Attempt(
        "time", repeat, "returned", seconds=seconds, cpu_seconds=cpu,
        ref_cpu_seconds=ref,
    )  # fmt: skip


def test_worker_rule_uses_wall_cpu_and_normalised_times():
    same = [_attempt(0, 1.0, 1.0, 0.005), _attempt(1, 1.01, 1.01, 0.005)]
    assert stopping._settled(same, 3, 0.04)
    # CPU steady, but the reference beside it moved: the normalised time did not
    moved_ref = [_attempt(0, 1.0, 1.0, 0.005), _attempt(1, 1.0, 1.0, 0.006)]
    assert not stopping._settled(moved_ref, 3, 0.04)
    wall_jump = [_attempt(0, 1.0, 1.0), _attempt(1, 1.3, 1.0)]
    assert not stopping._settled(wall_jump, 3, 0.04)
    failed = [_attempt(0, 1.0, 1.0), Attempt("time", 1, "timeout")]
    assert not stopping._settled(failed, 3, 0.04)


def test_skipped_repeats_are_not_reported_lost():
    task = Task(
        0, ConfigKey("bfs", None), (), 2, 3, GOAL23, GOAL23,
        (Pass("warmup", 0), Pass("time", 0), Pass("time", 1), Pass("time", 2),
         Pass("memory", 0)),
        timeout=5.0, memory_limit_mb=None,
    )  # fmt: skip
    first, second = _attempt(0, 1.0, 1.0), _attempt(1, 1.0, 1.0)
    second.stop = stopping.STABLE
    done = [Attempt("warmup", 0, "returned"), first, second,
            Attempt("memory", 0, "returned")]  # fmt: skip
    assert [(a.measure, a.repeat) for a in fill_not_run(task, done)] == [
        ("warmup", 0), ("time", 0), ("time", 1), ("memory", 0)
    ]


@pytest.fixture
def always_settled(monkeypatch):
    """Every cell settles at its first majority (the plumbing, not the timings)."""
    def majority(attempts, total, tolerance):
        return 2 * sum(a.measure == "time" for a in attempts) > total

    monkeypatch.setattr(stopping, "_settled", majority)


def _boards():
    return make_dataset(
        "steps", [walk(GOAL23, G23, 6, seed=s) for s in (1, 2)], G23, GOAL23
    )


def test_rows_record_repeats_taken_and_why(tmp_path, always_settled):
    frame = harness.run(
        "bfs", [_boards()], repeats=3, jobs=0, out=tmp_path / "a", memory_pass=True,
    )  # fmt: skip
    timed = frame[frame.measure == "time"]
    assert sorted(timed.repeat.unique()) == [0, 1]  # stopped after 2 of 3
    assert (timed.repeats_taken == 2).all()
    assert (timed.stop_reason == stopping.STABLE).all()
    assert (frame[frame.measure == "memory"].stop_reason == "").all()
    off = harness.run(
        "bfs", [_boards()], repeats=3, jobs=0, out=tmp_path / "b", adaptive=0.0,
        memory_pass=False,
    )  # fmt: skip
    assert sorted(off.repeat.unique()) == [0, 1, 2]
    assert (off.repeats_taken == 3).all() and (off.stop_reason == "fixed").all()


def test_a_resume_counts_a_stopped_cell_complete(tmp_path, always_settled):
    frame = harness.run("bfs", [_boards()], repeats=3, jobs=0, out=tmp_path)
    run_dir = Path(frame.attrs["run_dir"])
    _assert_resume_measures_nothing_again(run_dir, tmp_path)
    assert res.stopped_early(res.read_row_dicts(run_dir))


def _assert_resume_measures_nothing_again(run_dir: Path, out: Path) -> None:
    """Mark the stored run incomplete, resume it: no row is added."""
    before = len(res.read_row_dicts(run_dir))
    meta = res.read_meta(run_dir)
    meta["complete"] = False
    res.write_meta(run_dir, meta)
    harness.run(datasets=[_boards()], resume=run_dir.name, out=out, jobs=0)
    assert len(res.read_row_dicts(run_dir)) == before


def test_a_long_solve_stops_after_two_long_samples():
    """The effort rule: two samples of 0.1 s of CPU or more each, repeats left."""
    long = stopping.LONG_SAMPLE_SECONDS
    assert stopping.long_enough([long, 3 * long], 3)
    assert not stopping.long_enough([0.9 * long, 3 * long], 3)  # one was short
    assert not stopping.long_enough([3 * long], 3)  # one sample is not enough
    assert not stopping.long_enough([long, long, long], 3)  # nothing left to skip
    assert not stopping.long_enough([long, long], 2)


def test_worker_stops_a_long_cell_that_did_not_settle():
    """Noisy (no STABLE), but long: LONG; a sample's CPU is per solve x loops."""
    task = Task(0, ConfigKey("bfs", None), (), 2, 3, GOAL23, GOAL23, (),
                timeout=5.0, memory_limit_mb=None, adaptive=0.04)  # fmt: skip
    noisy = [_attempt(0, 0.2, 0.2, 0.005), _attempt(1, 0.3, 0.3, 0.005)]
    assert stopping.stop_reason(noisy, 3, task) == stopping.LONG
    assert stopping.stop_reason(noisy[:1], 3, task) == ""
    short = [_attempt(0, 0.02, 0.02), _attempt(1, 0.03, 0.03)]
    assert stopping.stop_reason(short, 3, task) == ""
    looped = [_attempt(0, 0.002, 0.002), _attempt(1, 0.003, 0.003)]
    for a in looped:
        a.loops = 100  # 0.2 s and 0.3 s samples
    assert stopping.stop_reason(looped, 3, task) == stopping.LONG
    failed = [noisy[0], Attempt("time", 1, "timeout")]
    assert stopping.stop_reason(failed, 3, task) == ""
    steady = [_attempt(0, 0.2, 0.2, 0.005), _attempt(1, 0.2, 0.2, 0.005)]
    assert stopping.stop_reason(steady, 3, task) == stopping.STABLE  # stability first


def test_rows_and_resume_know_the_long_stop(tmp_path, monkeypatch):
    """Every sample counts as long here: rows say "long" with 2 repeats taken,
    the method says so, and a resume measures nothing again."""
    monkeypatch.setattr(stopping, "_settled", lambda *a: False)
    monkeypatch.setattr(stopping, "LONG_SAMPLE_SECONDS", 0.0)
    frame = harness.run("bfs", [_boards()], repeats=3, jobs=0, out=tmp_path)
    timed = frame[frame.measure == "time"]
    assert sorted(timed.repeat.unique()) == [0, 1]
    assert (timed.repeats_taken == 2).all()
    assert (timed.stop_reason == stopping.LONG).all()
    run_dir = Path(frame.attrs["run_dir"])
    from harness.analysis import load_run
    from harness.report.about import method_text

    assert "or a long solve after 2 samples" in method_text(load_run(run_dir))
    _assert_resume_measures_nothing_again(run_dir, tmp_path)
