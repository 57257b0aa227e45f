"""``harness compare`` on crafted runs: every verdict and every exit code.

Runs are written from code into tmp_path following the results contract
(results/README.md): meta.json plus rows.csv in the contract's column order.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.compare import (
    EXIT_OK,
    EXIT_REGRESSION,
    Incomparable,
    Thresholds,
    compare_runs,
    render,
)
from harness.results import SCHEMA_VERSION, column_names

INSTANCES = [f"d20-{i:04d}" for i in range(8)]
CONFIGS = [("astar_dict", "manhattan"), ("bfs", "none")]
SHA = "a" * 64


def base_cells() -> dict:
    """(solver, heuristic, instance) -> cell facts; times grow with the instance."""
    cells = {}
    for s, (solver, h) in enumerate(CONFIGS):
        for i, inst in enumerate(INSTANCES):
            cells[(solver, h, inst)] = {
                "status": "solved",
                "path_length": 20,
                "expanded": 1000 * (s + 1) + 37 * i,
                "generated": 2500 * (s + 1) + 91 * i,
                "max_frontier": 400 + i,
                "iterations": 0,
                "seconds": 0.004 * (1 + i) * (s + 1),
            }
    return cells


def write_run(
    root: Path,
    run_id: str,
    cells: dict,
    *,
    repeats: int = 5,
    jitter: float = 0.02,
    seed: int = 0,
    meta: dict | None = None,
    dataset: str = "3x3-d20",
    cpu: bool = True,
    ref: bool = True,
    drift: float = 1.0,
    loops: int | None = None,
    nap: float = 0.0,
) -> Path:
    """Write a run: ``repeats`` time rows per cell (lognormal jitter) + a memory row.
    ``ref``: each repeat has its reference solve (5 ms); ``drift`` slows the
    machine: cell and reference alike, as a busy core does. ``nap``: seconds each
    solve sleeps (wall time only; the CPU time stays)."""
    rng = np.random.default_rng(seed)
    run = root / run_id
    run.mkdir(parents=True)
    with (run / "rows.csv").open("w", newline="") as f:
        out = csv.DictWriter(f, column_names())
        out.writeheader()
        for (solver, h, inst), c in cells.items():
            good = c["status"] in ("solved", "unsolvable")
            base = {
                "run_id": run_id,
                "dataset": dataset,
                "instance": inst,
                "size": "3x3",
                "goal": "standard",
                "solvable": True,
                "optimal_length": 20,
                "solver": solver,
                "heuristic": h,
                "config": solver if h == "none" else f"{solver}[{h}]",
                "status": c["status"],
                "message": "",
                "moves": "u" * c["path_length"] if good else "",
                "path_length": c["path_length"] if good else "",
                "is_optimal": c["path_length"] == 20 if good else "",
                **{
                    k: c[k] if good else ""
                    for k in ("expanded", "generated", "max_frontier", "iterations")
                },
                "h_start": c.get("h_start", 10) if h != "none" else "",
                "extra": c.get("extra", ""),
                "bound": c.get("bound", 1.0),
            }
            for r in range(repeats):
                t = c["seconds"] * drift * float(np.exp(rng.normal(0, jitter)))
                ref_t = 0.005 * drift
                out.writerow(
                    {
                        **base,
                        "measure": "time",
                        "repeat": r,
                        "seconds": t + nap if good else "",
                        "cpu_seconds": t * 0.98 if good and cpu else "",
                        "ref_seconds": ref_t if good and ref else "",
                        "ref_cpu_seconds": ref_t if good and ref else "",
                        "loops": loops if good and loops else "",
                        "instructions": c.get("instructions", "") if good else "",
                    }
                )
            out.writerow(
                {
                    **base,
                    "measure": "memory",
                    "repeat": 0,
                    "peak_bytes": 123456,
                    "peak_rss_bytes": 9999999,
                }
            )
    solvers = {
        (s if h == "none" else f"{s}[{h}]"): {
            "solver": s,
            "heuristic": h,
            "source_sha256": "f" * 64,
            "optimal": True,
        }
        for s, h, _ in cells
    }
    info = {
        "schema_version": 3,
        "run_id": run_id,
        "started_utc": "2026-12-02T17:00:00Z",
        "finished_utc": "2026-12-02T17:01:00Z",
        "git": {"commit": "3f9c2a1b" * 5, "dirty": False},
        "python": "3.11.9",
        "packages": {},
        "platform": "Linux-x86_64",
        "cpu_model": "Test CPU @ 2.0GHz",
        "cpu_count": 2,
        "argv": ["harness", "run"],
        "options": {
            "repeats": repeats,
            "timeout": 60,
            "memory_limit_mb": 2048,
            "jobs": 1,
        },
        "datasets": {
            dataset: {
                "sha256": SHA,
                "path": f"datasets/{dataset}.jsonl",
                "size": "3x3",
                "goal": "standard",
                "instances": len(INSTANCES),
            }
        },
        "solvers": solvers,
        "timer": {"perf_counter_resolution_s": 1e-9},
        "setup": [],
        "complete": True,
    }
    info.update(meta or {})
    (run / "meta.json").write_text(json.dumps(info))
    return run


def slowed(cells: dict, factor: float, config: str | None = "astar_dict") -> dict:
    return {
        k: {**c, "seconds": c["seconds"] * factor} if config in (None, k[0]) else c
        for k, c in cells.items()
    }


@pytest.fixture
def base_run(tmp_path: Path) -> Path:
    return write_run(tmp_path, "base", base_cells(), seed=1)


def test_unchanged_rerun_is_within_noise(tmp_path, base_run):
    new = write_run(tmp_path, "new", base_cells(), seed=2)
    comp = compare_runs(base_run, new)
    assert comp.exit_code == EXIT_OK
    assert comp.matched_cells == len(CONFIGS) * len(INSTANCES)
    assert comp.metric == "cpu_seconds"
    assert list(comp.configs) == ["astar_dict[manhattan]", "bfs"]  # sorted
    assert not comp.counter_changes and not comp.status_changes
    for summary in comp.configs.values():
        assert summary.time.verdict.startswith("within noise")
        assert summary.time.low < 1 < summary.time.high
    assert "result: no regression (exit 0)" in render(comp)


def test_twofold_slowdown_is_a_significant_regression(tmp_path, base_run):
    new = write_run(tmp_path, "new", slowed(base_cells(), 2.0), seed=2)
    comp = compare_runs(base_run, new)
    assert comp.exit_code == EXIT_REGRESSION
    t = comp.configs["astar_dict[manhattan]"].time
    assert t.regression and t.significant
    assert t.ratio == pytest.approx(2.0, rel=0.05)
    assert t.low > 1.8
    assert t.verdict == f"{t.ratio:.2f}x slower in CPU time, significant"
    assert comp.configs["bfs"].time.verdict.startswith("within noise")
    assert comp.regressions == [f"astar_dict[manhattan]: {t.verdict}"]


def test_wall_time_is_judged_when_asked(tmp_path, base_run):
    """A solver that sleeps 10 ms per solve: CPU time unchanged, wall time ~1.4x
    (``harness compare --time wall``); each verdict names its clock."""
    new = write_run(tmp_path, "new", base_cells(), seed=2, nap=0.010)
    cpu = compare_runs(base_run, new)
    assert cpu.exit_code == EXIT_OK and cpu.metric == "cpu_seconds"
    assert cpu.configs["bfs"].time.verdict.startswith("within noise")
    wall = compare_runs(base_run, new, Thresholds(time="wall"))
    assert wall.metric == "seconds" and wall.normalized
    t = wall.configs["bfs"].time
    assert t.regression and t.ratio > 1.3
    assert t.verdict == f"{t.ratio:.2f}x slower in wall time, significant"
    assert wall.exit_code == EXIT_REGRESSION
    assert "time judged on wall time" in render(wall)
    assert "time judged on CPU time" in render(cpu)


def test_small_significant_slowdown_stays_under_the_threshold(tmp_path, base_run):
    new = write_run(tmp_path, "new", slowed(base_cells(), 1.06), seed=2, jitter=0.005)
    comp = compare_runs(base_run, new)
    t = comp.configs["astar_dict[manhattan]"].time
    assert t.significant and not t.regression and t.normalized
    assert "under the 1.10x threshold" in t.verdict
    assert comp.exit_code == EXIT_OK
    # the same change fails a stricter gate
    strict = compare_runs(base_run, new, Thresholds(min_ratio=1.03))
    assert strict.exit_code == EXIT_REGRESSION


def test_machine_drift_divides_out_with_the_reference_solve(tmp_path, base_run):
    # the whole machine 1.6x slower during the new run, the code unchanged
    new = write_run(tmp_path, "new", base_cells(), seed=2, drift=1.6)
    comp = compare_runs(base_run, new)
    assert comp.normalized and comp.exit_code == EXIT_OK
    t = comp.configs["astar_dict[manhattan]"].time
    assert t.ratio == pytest.approx(1, abs=0.05)
    assert t.raw_ratio == pytest.approx(1.6, rel=0.05)  # shown beside
    assert "normalized" in render(comp)
    # on raw CPU time, the same pair is judged against the raw threshold (1.8x)
    raw = compare_runs(base_run, new, Thresholds(normalize=False))
    assert not raw.normalized and raw.exit_code == EXIT_OK
    assert "under the 1.80x threshold" in raw.configs["bfs"].time.verdict


def test_cold_single_solves_and_loops_are_not_compared(tmp_path, base_run):
    """A run of schema 4 or older timed one cold solve per repeat: against a run
    of calibrated loops its fast configs would look faster for nothing."""
    looped = write_run(tmp_path, "looped", slowed(base_cells(), 2.0), seed=2, loops=8)
    comp = compare_runs(base_run, looped)
    assert all(c.time is None for c in comp.configs.values())
    assert any(n.startswith("times not compared: the base run") for n in comp.notes)
    assert comp.exit_code == EXIT_OK  # counters and statuses still judged
    again = write_run(tmp_path, "again", base_cells(), seed=3, loops=8)
    assert compare_runs(again, looped).exit_code == EXIT_REGRESSION


def test_runs_without_the_reference_are_compared_raw_with_a_note(tmp_path):
    base = write_run(tmp_path, "base", base_cells(), seed=1, ref=False)
    new = write_run(tmp_path, "new", slowed(base_cells(), 1.5), seed=2, ref=False)
    comp = compare_runs(base, new)
    assert not comp.normalized and comp.exit_code == EXIT_OK
    assert any("times are raw" in n and "1.80x" in n for n in comp.notes)
    assert (
        compare_runs(
            base,
            write_run(tmp_path, "new2", slowed(base_cells(), 2.2), seed=2, ref=False),
        ).exit_code
        == EXIT_REGRESSION
    )


def test_fewer_than_five_instances_are_too_few(tmp_path):
    cells = {k: c for k, c in base_cells().items() if k[2] in INSTANCES[:4]}
    base = write_run(tmp_path, "base", cells, seed=1, jitter=0.001)
    new = write_run(tmp_path, "new", slowed(cells, 3.0), seed=2, jitter=0.001)
    comp = compare_runs(base, new)
    t = comp.configs["astar_dict[manhattan]"].time
    assert not t.significant and not t.regression
    assert t.verdict.startswith("too few instances (4 timed, need 5; 3.00x slower")
    assert comp.exit_code == EXIT_OK


def test_several_runs_per_side_bootstrap_over_runs(tmp_path):
    # A B A B: base runs at drift 1.0 and 1.3 (unnormalised shift between runs)
    b = [write_run(tmp_path, f"b{i}", base_cells(), seed=10 + i) for i in range(2)]
    n = [
        write_run(tmp_path, f"n{i}", slowed(base_cells(), 1.5), seed=20 + i)
        for i in range(2)
    ]
    comp = compare_runs(b, n)
    t = comp.configs["astar_dict[manhattan]"].time
    assert t.runs == (2, 2) and t.regression
    assert t.ratio == pytest.approx(1.5, rel=0.05)
    assert comp.base_id == "b0,b1" and "2 vs 2 runs" in render(comp)
    assert comp.configs["bfs"].time.verdict.startswith("within noise")
    # through the CLI: comma-separated runs
    result = CliRunner().invoke(
        app,
        ["compare", f"{b[0]},{b[1]}", f"{n[0]},{n[1]}", "--results-dir", str(tmp_path)],
    )
    assert result.exit_code == EXIT_REGRESSION, result.output


def test_calibrated_noise_floor_raises_the_threshold_and_is_shown(tmp_path, base_run):
    from harness.compare.noise import Calibration, read_calibration, write_calibration

    new = write_run(tmp_path, "new", slowed(base_cells(), 1.2), seed=2)
    assert compare_runs(base_run, new).exit_code == EXIT_REGRESSION
    cal = Calibration(1.25, 1.7, 10, 30, "host", "cpu", "2026-12-03T06:00:00Z", "aa")
    write_calibration(tmp_path / "noise_floor.json", cal)
    cal = read_calibration(tmp_path / "noise_floor.json")
    comp = compare_runs(base_run, new, Thresholds(calibration=cal))
    assert comp.exit_code == EXIT_OK
    t = comp.configs["astar_dict[manhattan]"].time
    assert t.threshold == 1.25 and not t.regression
    # identical runs differ by up to 1.25x here: 1.2x is within that noise
    assert t.verdict.startswith("within noise (")
    assert any("noise floor 1.250x from 10 identical run" in n for n in comp.notes)
    # the CLI picks it up from the results folder
    result = CliRunner().invoke(
        app, ["compare", str(base_run), str(new), "--results-dir", str(tmp_path)]
    )
    assert result.exit_code == EXIT_OK and "noise floor 1.250x" in result.output


def test_a_whole_run_shifted_within_the_run_to_run_noise_is_not_significant(
    tmp_path, base_run
):
    """Repeats in one run share its drift: a run 3% slower throughout, with
    tight repeats, is what identical runs do (up to 1.05x by default), so one run
    per side cannot call it significant; a calibration from a quieter machine
    (identical runs within 1.01x) can."""
    from harness.compare.noise import Calibration

    new = write_run(tmp_path, "new", slowed(base_cells(), 1.03, None), seed=2,
                    jitter=0.002)  # fmt: skip
    comp = compare_runs(base_run, new)
    for config in ("astar_dict[manhattan]", "bfs"):
        t = comp.configs[config].time
        assert not t.significant and t.verdict.startswith("within noise (1.03x")
        assert t.low < 1 < t.high
    assert any("include the shift of a whole run (up to 1.05x" in n for n in comp.notes)
    quiet = Calibration(1.01, 1.1, 10, 30, "host", "cpu", "2026-12-04T05:00:00Z", "aa")
    t = compare_runs(base_run, new, Thresholds(calibration=quiet)).configs["bfs"].time
    assert t.significant and not t.regression and "under the 1.10x" in t.verdict


def test_the_run_shift_widens_only_a_side_with_one_run(tmp_path):
    """Two runs per side: the bootstrap over runs measures the shift itself."""
    from harness.compare.noise import estimate

    rng = np.random.default_rng(0)
    keys = [(i,) for i in range(8)]
    one = [{k: np.array([1.0, 1.01, 0.99]) * (1 + k[0]) for k in keys}]
    slow = [{k: v * 1.03 for k, v in one[0].items()}]
    tight = estimate(one, slow, keys, rng=rng)
    wide = estimate(one, slow, keys, rng=rng, run_shift=1.05)
    assert wide.ratio == tight.ratio
    assert wide.low < tight.low and wide.high > tight.high and wide.low < 1
    two, slow2 = one * 2, slow * 2
    assert estimate(two, slow2, keys, rng=np.random.default_rng(0), run_shift=1.5) == (
        estimate(two, slow2, keys, rng=np.random.default_rng(0))
    )


def test_large_but_noisy_change_is_not_significant(tmp_path):
    # jitter of +-60%: a 1.3x shift cannot be told from noise
    cells = base_cells()
    base = write_run(tmp_path, "base", cells, seed=3, jitter=0.6, repeats=3)
    new = write_run(tmp_path, "new", slowed(cells, 1.3), seed=4, jitter=0.6, repeats=3)
    t = compare_runs(base, new).configs["astar_dict[manhattan]"].time
    assert not t.significant and not t.regression
    assert t.verdict.startswith("within noise (")


def test_speedup_is_reported_and_passes(tmp_path, base_run):
    new = write_run(tmp_path, "new", slowed(base_cells(), 0.5), seed=2)
    comp = compare_runs(base_run, new)
    t = comp.configs["astar_dict[manhattan]"].time
    assert t.improvement and not t.regression
    assert t.verdict == f"{1 / t.ratio:.2f}x faster in CPU time, significant"
    assert comp.exit_code == EXIT_OK


def _counted(cells: dict, factor: float = 1.0, config: str = "") -> dict:
    """The cells with instructions per solve (1,000 per node), times ``factor``
    for ``config``."""
    return {
        k: {**c, "instructions": round(1000 * c["expanded"] * (
            factor if k[0] == config else 1.0))}
        for k, c in cells.items()
    }  # fmt: skip


def test_an_instruction_regression_is_reported_beside_flat_time(tmp_path):
    """1.3x the instructions with the same time: a regression of its own, and
    the disagreement with the time verdict is said."""
    base = write_run(tmp_path, "base", _counted(base_cells()), seed=1)
    new = write_run(
        tmp_path, "new", _counted(base_cells(), 1.3, "astar_dict"), seed=2
    )
    comp = compare_runs(base, new)
    assert comp.exit_code == EXIT_REGRESSION
    v = comp.configs["astar_dict[manhattan]"].instructions
    assert v.regression and v.ratio == pytest.approx(1.3, rel=1e-3)
    assert v.verdict == "1.300x the instructions"
    assert not comp.configs["bfs"].instructions.regression
    assert any("instructions moved" in n and "time did not" in n for n in comp.notes)
    text = render(comp)
    assert "REGRESSION: 1.300x the instructions" in text
    assert "astar_dict[manhattan]: 1.300x the instructions" in text


def test_more_expansions_is_a_regression_reported_exactly(tmp_path, base_run):
    cells = base_cells()
    key = ("astar_dict", "manhattan", INSTANCES[3])
    before = cells[key]["expanded"]
    cells[key] = {**cells[key], "expanded": before + 5}
    comp = compare_runs(base_run, write_run(tmp_path, "new", cells, seed=2))
    assert comp.exit_code == EXIT_REGRESSION
    [change] = comp.counter_changes
    assert (change.config, change.instance, change.counter) == (
        "astar_dict[manhattan]",
        INSTANCES[3],
        "expanded",
    )
    assert (change.base, change.new, change.regression) == (before, before + 5, True)
    assert f"expanded {before:,} -> {before + 5:,} (+5" in render(comp)
    assert comp.regressions == ["astar_dict[manhattan]: 1 counter increase(s)"]


def test_fewer_expansions_is_a_change_but_not_a_regression(tmp_path, base_run):
    cells = base_cells()
    key = ("bfs", "none", INSTANCES[0])
    cells[key] = {
        **cells[key],
        "expanded": cells[key]["expanded"] - 100,
        "generated": cells[key]["generated"] - 250,
    }
    comp = compare_runs(base_run, write_run(tmp_path, "new", cells, seed=2))
    assert comp.exit_code == EXIT_OK
    assert {c.counter for c in comp.counter_changes} == {"expanded", "generated"}
    assert not any(c.regression for c in comp.counter_changes)
    assert comp.configs["bfs"].counter_changes == 2


def test_frontier_change_is_reported_without_failing(tmp_path, base_run):
    cells = base_cells()
    key = ("bfs", "none", INSTANCES[1])
    cells[key] = {**cells[key], "max_frontier": cells[key]["max_frontier"] + 1}
    comp = compare_runs(base_run, write_run(tmp_path, "new", cells, seed=2))
    assert [c.counter for c in comp.counter_changes] == ["max_frontier"]
    assert comp.exit_code == EXIT_OK


def test_heuristic_value_change_is_reported_without_failing(tmp_path, base_run):
    cells = base_cells()
    key = ("astar_dict", "manhattan", INSTANCES[2])
    cells[key] = {**cells[key], "h_start": 12}
    comp = compare_runs(base_run, write_run(tmp_path, "new", cells, seed=2))
    assert [(c.counter, c.base, c.new) for c in comp.counter_changes] == [
        ("h_start", 10, 12)
    ]
    assert comp.exit_code == EXIT_OK


def test_longer_path_is_a_regression_of_its_own_kind(tmp_path, base_run):
    cells = base_cells()
    key = ("astar_dict", "manhattan", INSTANCES[5])
    cells[key] = {**cells[key], "path_length": 22}
    comp = compare_runs(base_run, write_run(tmp_path, "new", cells, seed=2))
    assert comp.exit_code == EXIT_REGRESSION
    assert comp.counter_changes == []  # not a counter: solution quality
    assert [(c.base, c.new, c.regression) for c in comp.quality_changes] == [
        (20, 22, True)
    ]
    assert comp.regressions == [
        "astar_dict[manhattan]: 1 longer path(s) at the same bound"
    ]
    text = render(comp)
    assert "path length changes (solution quality):" in text
    assert (f"astar_dict[manhattan]  3x3-d20/{INSTANCES[5]}  path length 20 -> 22 "
            "(+2 moves)  [regression: longer at the same bound]") in text  # fmt: skip
    listed = json.loads(render(comp, "json"))["quality_changes"]
    assert [(c["base"], c["new"], c["regression"]) for c in listed] == [(20, 22, True)]


def _weighted(cells: dict, bounds: dict[str, float]) -> dict:
    """The astar_dict cells again under weighted labels, one per weight: the key's
    solver/heuristic spell the label (wastar[manhattan,w=2])."""
    out = {}
    for (solver, _h, inst), c in cells.items():
        if solver == "astar_dict":
            for w, bound in bounds.items():
                out[("wastar", f"manhattan,w={w}", inst)] = {**c, "bound": bound}
    return out


def test_each_weight_is_its_own_cell_and_a_changed_bound_is_no_regression(tmp_path):
    before = _weighted(base_cells(), {"1.5": 1.5, "2": 2.0})
    base = write_run(tmp_path, "base", before, seed=1)
    after = dict(before)
    longer = ("wastar", "manhattan,w=2", INSTANCES[3])
    after[longer] = {**after[longer], "path_length": 23}
    shorter = ("wastar", "manhattan,w=1.5", INSTANCES[4])
    after[shorter] = {**after[shorter], "path_length": 18, "bound": 2.0}
    comp = compare_runs(base, write_run(tmp_path, "new", after, seed=2))
    changes = {(c.config, c.instance): c for c in comp.quality_changes}
    assert set(changes) == {("wastar[manhattan,w=2]", INSTANCES[3]),
                            ("wastar[manhattan,w=1.5]", INSTANCES[4])}  # fmt: skip
    assert changes[("wastar[manhattan,w=2]", INSTANCES[3])].regression
    better = changes[("wastar[manhattan,w=1.5]", INSTANCES[4])]
    assert not better.regression
    assert better.text == "path length 20 -> 18 (-2 moves; claimed bound 1.5x -> 2x)"
    assert comp.regressions == [
        "wastar[manhattan,w=2]: 1 longer path(s) at the same bound"
    ]


@pytest.mark.parametrize(
    ("before", "after", "code"),
    [
        ("solved", "timeout", EXIT_REGRESSION),
        ("solved", "invalid", EXIT_REGRESSION),
        ("timeout", "error", EXIT_REGRESSION),
        ("timeout", "solved", EXIT_OK),
        ("error", "timeout", EXIT_OK),
    ],
)
def test_status_changes(tmp_path, before, after, code):
    key = ("bfs", "none", INSTANCES[2])
    cells_b, cells_n = base_cells(), base_cells()
    cells_b[key] = {**cells_b[key], "status": before}
    cells_n[key] = {**cells_n[key], "status": after}
    comp = compare_runs(
        write_run(tmp_path, "b", cells_b, seed=1),
        write_run(tmp_path, "n", cells_n, seed=2),
    )
    [change] = comp.status_changes
    assert (change.base, change.new) == (before, after)
    assert change.regression == (code == EXIT_REGRESSION)
    assert comp.exit_code == code
    assert f"{before} -> {after}" in render(comp)


def test_one_timed_out_repeat_makes_the_cell_worse(tmp_path, base_run):
    new = write_run(tmp_path, "new", base_cells(), seed=2)
    rows = (new / "rows.csv").read_text().splitlines()
    hit = next(i for i, r in enumerate(rows) if ",d20-0004," in r and ",bfs," in r)
    rows[hit] = rows[hit].replace(",solved,", ",timeout,")
    (new / "rows.csv").write_text("\n".join(rows) + "\n")
    comp = compare_runs(base_run, new)
    assert [(c.instance, c.new) for c in comp.status_changes] == [
        ("d20-0004", "timeout")
    ]
    assert comp.exit_code == EXIT_REGRESSION


def test_wall_time_is_used_when_cpu_time_is_missing(tmp_path, base_run):
    new = write_run(tmp_path, "new", base_cells(), seed=2, cpu=False)
    comp = compare_runs(base_run, new)
    assert comp.metric == "seconds"
    assert any("wall time" in n for n in comp.notes)


def test_instances_under_the_time_threshold_are_left_out(tmp_path):
    cells = base_cells()
    for k in cells:
        if k[2] in INSTANCES[:3]:
            cells[k] = {**cells[k], "seconds": 2e-6}
    base = write_run(tmp_path, "base", cells, seed=1)
    # the microsecond instances triple, the rest is unchanged: no regression
    tiny = {
        k: {**c, "seconds": c["seconds"] * 3} if c["seconds"] < 1e-4 else c
        for k, c in cells.items()
    }
    comp = compare_runs(base, write_run(tmp_path, "new", tiny, seed=2))
    t = comp.configs["bfs"].time
    assert (t.instances, t.dropped_fast) == (5, 3)
    assert comp.exit_code == EXIT_OK
    # with no floor, they are counted and the geomean moves
    counted = compare_runs(base, tmp_path / "new", Thresholds(time_threshold=0))
    assert counted.configs["bfs"].time.instances == 8
    assert counted.configs["bfs"].time.ratio > 1.4


def test_single_instance_single_repeat_says_it_has_no_noise_estimate(tmp_path):
    cells = {k: c for k, c in base_cells().items() if k[2] == INSTANCES[0]}
    base = write_run(tmp_path, "base", cells, repeats=1)
    new = write_run(tmp_path, "new", slowed(cells, 1.5), repeats=1)
    t = compare_runs(base, new).configs["astar_dict[manhattan]"].time
    assert not t.has_noise_estimate and not t.regression
    assert t.verdict.startswith("too few instances (1 timed")
    t = (
        compare_runs(base, new, Thresholds(min_instances=1))
        .configs["astar_dict[manhattan]"]
        .time
    )
    assert not t.has_noise_estimate and t.regression
    assert t.verdict.endswith("no noise estimate (1 instance, 1 repeat)")


def test_reference_config_absorbs_a_machine_wide_drift(tmp_path, base_run):
    base_run = write_run(tmp_path, "raw_base", base_cells(), seed=1, ref=False)
    new = write_run(
        tmp_path, "new", slowed(base_cells(), 2.0, config=None), seed=2, ref=False
    )
    assert compare_runs(base_run, new).exit_code == EXIT_REGRESSION
    comp = compare_runs(base_run, new, Thresholds(reference="bfs"))
    assert comp.exit_code == EXIT_OK
    assert comp.configs["astar_dict[manhattan]"].time.ratio == pytest.approx(
        1, abs=0.05
    )


def test_no_time_compares_counters_only(tmp_path, base_run):
    new = write_run(tmp_path, "new", slowed(base_cells(), 3.0), seed=2)
    comp = compare_runs(base_run, new, Thresholds(check_time=False))
    assert comp.exit_code == EXIT_OK and comp.metric is None


def test_environment_differences_are_warned(tmp_path, base_run):
    new = write_run(
        tmp_path,
        "new",
        base_cells(),
        seed=2,
        meta={"python": "3.12.1", "cpu_model": "Other CPU"},
    )
    warnings = " ".join(compare_runs(base_run, new).warnings)
    assert "Python version differs: '3.11.9' vs '3.12.1'" in warnings
    assert "CPU model differs" in warnings


def test_package_versions_and_high_load_are_warned(tmp_path):
    base = write_run(
        tmp_path,
        "base",
        base_cells(),
        meta={
            "packages": {"numba": "0.68", "llvmlite": "0.45.0", "npuzzle-harness": "1"},
            "load_average_start": [0.4, 0.3, 0.2],
            "load_average_end": [0.6, 0.4, 0.2],
        },
    )
    new = write_run(
        tmp_path,
        "new",
        base_cells(),
        seed=2,
        meta={
            "packages": {"numba": "0.68", "llvmlite": "0.46.0", "npuzzle-harness": "2"},
            "load_average_start": [0.5, 0.3, 0.2],
            "load_average_end": [3.2, 1.0, 0.5],
        },
    )
    warnings = compare_runs(base, new).warnings
    text = " ".join(warnings)
    assert "package llvmlite differs: 0.45.0 vs 0.46.0" in text
    assert "numba" not in text and "npuzzle-harness" not in text
    [load] = [w for w in warnings if "load average" in w]
    assert load.startswith("new run new: load average 3.2 at the end on 2 cores")


def test_configs_and_cells_in_one_run_only_are_noted(tmp_path, base_run):
    cells = {
        k: c
        for k, c in base_cells().items()
        if not (k[0] == "bfs" and k[2] == INSTANCES[7])
    }
    cells[("ida_star", "manhattan", INSTANCES[0])] = base_cells()[
        ("astar_dict", "manhattan", INSTANCES[0])
    ]
    comp = compare_runs(base_run, write_run(tmp_path, "new", cells, seed=2))
    assert "only in new (not compared): ida_star[manhattan]" in comp.notes
    assert any("1 cell(s) missing from the new run" in w for w in comp.warnings)
    assert comp.exit_code == EXIT_OK


def test_nondeterministic_counters_are_warned(tmp_path, base_run):
    new = write_run(tmp_path, "new", base_cells(), seed=2)
    rows = (new / "rows.csv").read_text().splitlines()
    hit = next(i for i, r in enumerate(rows) if ",d20-0001," in r and ",time,2," in r)
    fields = next(csv.reader([rows[hit]]))
    fields[column_names().index("expanded")] = "1"
    rows[hit] = ",".join(fields)
    (new / "rows.csv").write_text("\n".join(rows) + "\n")
    comp = compare_runs(base_run, new)
    assert any("counters differ between repeats" in w for w in comp.warnings)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"schema_version": 99}, "schema_version 99"),
        (
            {"datasets": {"3x3-d20": {"sha256": "b" * 64}}},
            "dataset '3x3-d20' has different boards",
        ),
    ],
)
def test_incomparable_meta(tmp_path, base_run, change, reason):
    new = write_run(tmp_path, "new", base_cells(), meta=change)
    with pytest.raises(Incomparable, match=reason):
        compare_runs(base_run, new)


def test_no_dataset_in_common_is_incomparable(tmp_path, base_run):
    new = write_run(tmp_path, "new", base_cells(), dataset="4x4-quick")
    with pytest.raises(Incomparable, match="no dataset in common"):
        compare_runs(base_run, new)


def test_no_config_in_common_is_incomparable(tmp_path, base_run):
    cells = {("ida_star", "misplaced", k[2]): c for k, c in base_cells().items()}
    with pytest.raises(Incomparable, match="no solver config in common"):
        compare_runs(base_run, write_run(tmp_path, "new", cells))


def test_no_cell_in_common_is_incomparable(tmp_path, base_run):
    cells = {(k[0], k[1], "other-" + k[2]): c for k, c in base_cells().items()}
    with pytest.raises(Incomparable, match="no .* cell in common"):
        compare_runs(base_run, write_run(tmp_path, "new", cells))


# ------------------------------------------------------------------ command line


def invoke(*args: str):
    return CliRunner().invoke(app, ["compare", *args])


def test_cli_exit_codes_and_formats(tmp_path, base_run):
    same = write_run(tmp_path, "same", base_cells(), seed=2)
    slow = write_run(tmp_path, "slow", slowed(base_cells(), 2.0), seed=2)

    ok = invoke(str(base_run), str(same))
    assert ok.exit_code == 0, ok.output
    assert "within noise" in ok.output and "result: no regression" in ok.output

    bad = invoke(str(base_run), str(slow), "--format", "json")
    assert bad.exit_code == 1
    doc = json.loads(bad.stdout)
    assert doc["exit_code"] == 1 and doc["metric"] == "cpu_seconds"
    assert doc["configs"]["astar_dict[manhattan]"]["time"]["regression"] is True

    md = invoke(str(base_run), str(slow), "--format", "markdown")
    assert md.exit_code == 1
    assert "| astar_dict[manhattan] |" in md.output and "REGRESSION" in md.output

    relaxed = invoke(str(base_run), str(slow), "--min-ratio", "2.5")
    assert relaxed.exit_code == 0


def test_cli_run_ids_resolve_under_results_dir(tmp_path, base_run):
    write_run(tmp_path, "again", base_cells(), seed=5)
    result = invoke("base", "again", "--results-dir", str(tmp_path))
    assert result.exit_code == 0, result.output


def test_cli_incomparable_says_why_in_one_line(tmp_path, base_run):
    future = SCHEMA_VERSION + 1  # a run of a newer harness
    new = write_run(tmp_path, "new", base_cells(), meta={"schema_version": future})
    result = invoke(str(base_run), str(new))
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith("error: cannot compare: ")
    assert f"schema_version {future}" in result.stderr

    missing = invoke(str(base_run), str(tmp_path / "nope"))
    assert missing.exit_code == 2
    assert "no meta.json" in missing.stderr and "Traceback" not in missing.output

    as_json = invoke(str(base_run), str(new), "--format", "json")
    assert json.loads(as_json.stdout)["comparable"] is False


def test_cli_unreadable_rows_are_incomparable_not_a_traceback(tmp_path, base_run):
    new = write_run(tmp_path, "new", base_cells())
    (new / "rows.csv").write_text("run_id,dataset\nx,y\n")
    result = invoke(str(base_run), str(new))
    assert result.exit_code == 2
    assert "rows.csv: line 1: columns do not match" in result.stderr


def test_the_winner_per_block_is_the_verdicts_in_both_runs() -> None:
    """compare names each block's winner as the runs' reports do: on the fixtures'
    8-depths, astar_dict[manhattan] in run A (greedy is faster but not optimal),
    bidir_bfs in run B."""
    from where import DATA

    from harness.compare import compare_runs, render

    comp = compare_runs(DATA / "run_fixture", DATA / "run_fixture_b")
    assert comp.winners == ["8-depths: astar_dict[manhattan] in base, bidir_bfs in new"]
    assert "winner per block (fastest optimal search):" in render(comp)
    assert json.loads(render(comp, "json"))["winners"] == comp.winners
