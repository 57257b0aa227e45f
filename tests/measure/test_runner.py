"""The runner: statuses of misbehaving solvers, validation, set-up, skips, resume.

Solvers come from ``tests/plugins/misbehaving.py`` through the plugin mechanism;
datasets are tiny in-memory ones (``tests/plugins/tiny.py``), mostly on the 2x3
board so even exhaustive searches finish in milliseconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plugins.tiny import make_dataset, tiny, walk
from where import PLUGINS

import harness
from harness import analysis
from harness import results as res
from harness.configs import ConfigKey
from harness.heuristics import make_heuristic
from harness.measure import rows
from harness.measure.plan import RunError, make_plan, resolve_solvers
from harness.measure.resume import plan_from_meta
from harness.measure.tasks import Attempt, Pass, Task
from harness.measure.worker import Worker
from harness.puzzle import goal_board, grid
from harness.solver import load_plugin, scoped_registry

PLUGIN = str(PLUGINS / "misbehaving.py")


@pytest.fixture(scope="module", autouse=True)
def _misbehaving_plugin():
    """The plugin's solvers exist for this module only: the registry is global, and
    other modules iterate every registered solver (one of these calls os._exit)."""
    with scoped_registry():
        load_plugin(PLUGIN)
        yield

G23 = grid(2, 3)
GOAL23 = goal_board("standard", G23)


def mix23(name: str = "mix23"):
    """Two solvable 2x3 boards (depths > 0) and one unsolvable one."""
    swapped = list(GOAL23)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    boards = [
        walk(GOAL23, G23, 7, seed=1),
        walk(GOAL23, G23, 5, seed=2),
        tuple(swapped),
    ]
    return make_dataset(name, boards, G23, GOAL23)


@pytest.fixture
def run(tmp_path):
    """``harness.run`` as most tests here call it: the misbehaving plugin, one
    worker, one repeat, no memory pass, results under ``tmp_path``; keyword
    arguments override these."""

    def go(configs, datasets, **options):
        defaults = dict(repeats=1, memory_pass=False, jobs=1, out=tmp_path,
                        plugins=[PLUGIN])  # fmt: skip
        return harness.run(configs, datasets, **{**defaults, **options})

    return go


def meta_of(frame) -> dict:
    """The stored meta.json of the run that produced ``frame``."""
    meta, _ = analysis.read_run(frame.attrs["run_dir"])
    return meta


MISBEHAVING = (
    "hang",
    "hang_wrapped",
    "hang_hard",
    "raises",
    "exits",
    "segfault",
    "hog",
    "illegal",
    "says_unsolvable",
    "long_optimal",
    "flaky_counters",
    "wrong_type",
    "wrong_end",
)
GOOD = ("good_bfs", "good_greedy", "good_astar[manhattan]", "extra_counters")


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory):
    """One run: every misbehaving solver interleaved with good ones, 2 workers."""
    out = tmp_path_factory.mktemp("results")
    order = []
    for bad, good in zip(MISBEHAVING, GOOD * 4, strict=False):
        order += [bad, good]
    frame = harness.run(
        order,
        [mix23()],
        repeats=2,
        memory_limit_mb=300,
        jobs=2,
        out=out,
        plugins=[PLUGIN],
    )
    meta, stored = analysis.read_run(frame.attrs["run_dir"])
    return frame, stored, meta


def cells(frame, config: str):
    return frame[frame["config"] == config]


def first_row(frame, config: str, solvable: bool = True):
    rows = cells(frame, config)
    rows = rows[(rows["solvable"] == solvable) & (rows["measure"] == "time")]
    return rows.sort_values(["instance", "repeat"]).iloc[0]


@pytest.mark.slow
def test_every_cell_has_exactly_one_row_per_pass(bad_run):
    frame, stored, meta = bad_run
    configs = set(meta["options"]["solvers"])
    assert len(configs) == len(MISBEHAVING) + len(GOOD)
    keys = list(
        zip(frame.config, frame.instance, frame.measure, frame.repeat, strict=True)
    )
    assert len(keys) == len(set(keys)) == len(configs) * 3 * (2 + 1)
    assert meta["complete"] is True and meta["finished_utc"]
    # harness.run returns exactly what rows.csv holds
    assert frame.equals(stored)


@pytest.mark.slow
@pytest.mark.parametrize(
    "config, status, fragment",
    [
        ("hang", "timeout", "exceeded the 0.5 s time limit"),
        ("hang_wrapped", "timeout", "exceeded the 0.5 s time limit"),
        ("hang_hard", "timeout", "ignored the in-process alarm"),
        ("raises", "error", "ValueError: deliberate failure in the solver"),
        ("exits", "error", "exited with code 3"),
        ("segfault", "error", "killed by SIGSEGV"),
        ("hog", "memout", "MemoryError at the 300 MB memory limit"),
        ("illegal", "invalid", "illegal path: move"),
        ("says_unsolvable", "invalid", "said unsolvable, but the board is solvable"),
        ("long_optimal", "invalid", "declares itself optimal"),
        ("flaky_counters", "invalid", "nondeterministic counters: expanded"),
        ("wrong_type", "invalid", "returned a list"),
        ("wrong_end", "invalid", "not at the goal"),
    ],
)
def test_misbehaviour_gets_its_status_and_message(bad_run, config, status, fragment):
    frame, _, _ = bad_run
    row = first_row(frame, config)
    assert row["status"] == status
    assert fragment in row["message"]
    # the other passes of that cell say why they were not run (or fail the same way)
    rest = cells(frame, config)
    rest = rest[(rest["instance"] == row["instance"])]
    assert set(rest["status"]) == {status}


@pytest.mark.slow
def test_failed_passes_are_not_retried_after_a_timeout(bad_run):
    frame, _, _ = bad_run
    rows = cells(frame, "hang")
    later = rows[(rows["measure"] == "memory") | (rows["repeat"] == 1)]
    assert later["message"].str.startswith("not run after timeout").all()


@pytest.mark.slow
def test_good_solvers_are_correct_between_misbehaving_ones(bad_run):
    frame, _, meta = bad_run
    for config in ("good_bfs", "good_astar[manhattan]", "extra_counters"):
        rows = cells(frame, config)
        solvable = rows[rows["solvable"]]
        assert (solvable["status"] == "solved").all(), solvable["message"].tolist()
        assert solvable["is_optimal"].all()
        assert (solvable["path_length"] == solvable["optimal_length"]).all()
        assert (rows[~rows["solvable"]]["status"] == "unsolvable").all()
        timed = rows[rows["measure"] == "time"]
        assert (timed["seconds"] > 0).all() and (timed["cpu_seconds"] >= 0).all()
        assert timed["peak_bytes"].isna().all() and timed["peak_rss_bytes"].isna().all()
        memory = rows[rows["measure"] == "memory"]
        assert memory["seconds"].isna().all()
        assert (memory["peak_bytes"] > 0).all()
        assert (memory["peak_rss_bytes"] > 10 * 2**20).all()  # includes the interpreter
        # counters agree across every pass of a cell
        for _, per_cell in rows.groupby("instance"):
            assert per_cell["expanded"].nunique() == 1
            assert per_cell["generated"].nunique() == 1
    greedy = cells(frame, "good_greedy")
    solved = greedy[greedy["solvable"]]
    assert (solved["status"] == "solved").all()
    assert (~solved["is_optimal"]).all()  # longer is fine from a non-optimal solver
    assert (solved["path_length"] == solved["optimal_length"] + 2).all()


@pytest.mark.slow
def test_unsolvable_board_is_judged_per_solver(bad_run):
    frame, _, _ = bad_run
    # says_unsolvable is right on the unsolvable board, even after crashes elsewhere
    assert first_row(frame, "says_unsolvable", solvable=False)["status"] == "unsolvable"
    row = first_row(frame, "good_bfs", solvable=False)
    assert row["status"] == "unsolvable" and pd_isna(row["optimal_length"])


def pd_isna(value) -> bool:
    import pandas as pd

    return bool(pd.isna(value))


@pytest.mark.slow
def test_heuristic_start_value_and_extra_counters(bad_run):
    frame, _, _ = bad_run
    rows = cells(frame, "good_astar[manhattan]")
    assert set(rows["solver"]) == {"good_astar"}
    assert set(rows["heuristic"]) == {"manhattan"}
    h = make_heuristic("manhattan", GOAL23, G23)
    ds = mix23()
    for inst in ds.instances:
        values = rows[rows["instance"] == inst.id]["h_start"]
        assert set(values) == {h(inst.start)}
    assert cells(frame, "good_bfs")["h_start"].isna().all()
    extra = cells(frame, "extra_counters")
    solved = extra[extra["status"] == "solved"]
    for text, exp, gen in zip(
        solved["extra"], solved["expanded"], solved["generated"], strict=True
    ):
        assert json.loads(text) == {"duplicates": gen - exp}
    assert (solved["iterations"] == 1).all()


@pytest.mark.slow
def test_setup_is_recorded_and_redone_after_a_replacement(bad_run):
    _, _, meta = bad_run
    setups = [s for s in meta["setup"] if s["config"] == "good_astar[manhattan]"]
    assert setups and all(s["ok"] for s in setups)
    assert all(s["prepare_seconds"] >= 0.05 for s in setups)  # the plugin's prepare
    assert len(setups) <= 2 * 3  # at most once per worker process that ran it
    exits = [s for s in meta["setup"] if s["config"] == "exits"]
    assert len(exits) == 3  # each crash replaces the worker: set up again
    assert any("replacement" in s["note"] for s in exits)


def test_prepare_runs_once_per_worker(run):
    ds = make_dataset("walks", [walk(GOAL23, G23, d, seed=d) for d in range(1, 6)], G23)
    frame = run(["good_astar[misplaced]"], [ds])
    assert [s["config"] for s in meta_of(frame)["setup"]] == ["good_astar[misplaced]"]
    assert (frame["status"] == "solved").all()
    assert set(frame["measure"]) == {"time"}


def test_refused_pairs_are_skipped_not_failed(run):
    g4 = grid(4)
    goal4 = goal_board("standard", g4)
    four = make_dataset("four", [walk(goal4, g4, 3, seed=1)], g4, goal4)
    frame = run(["good_bfs", "good_greedy"], [four, mix23()], repeats=2)
    skipped = frame[frame["status"] == "skipped"]
    assert set(skipped["config"]) == {"good_bfs"} and set(skipped["dataset"]) == {
        "four"
    }
    assert len(skipped) == 2  # one row per pass, like any other cell
    assert (skipped["message"] == "plain BFS would exhaust memory on 4x4").all()
    assert analysis.skipped_reasons(frame) == [
        ("good_bfs", "four", 1, "plain BFS would exhaust memory on 4x4")
    ]
    view = analysis.analysis_view(frame)
    summary = analysis.summary(view).set_index(["config", "dataset"])
    assert summary.loc[("good_bfs", "four"), "skipped"] == 1
    assert not summary.loc[("good_bfs", "four"), list(analysis.PROBLEMS)].any()
    assert summary.loc[("good_greedy", "four"), "answered"] == 1


def test_oracle_supplies_unknown_3x3_optima(run):
    pytest.importorskip("harness.core.oracle")
    g, goal = grid(3), goal_board("standard", grid(3))
    unlabelled = make_dataset(
        "unlabelled", [walk(goal, g, 9, seed=5)], g, goal, label=False
    )
    assert unlabelled.instances[0].optimal_length is None
    frame = run(["good_bfs", "long_optimal"], [unlabelled])
    bfs = frame[frame["config"] == "good_bfs"].iloc[0]
    assert bfs["optimal_length"] == bfs["path_length"] and bfs["is_optimal"]
    longer = frame[frame["config"] == "long_optimal"].iloc[0]
    assert (
        longer["status"] == "invalid" and "declares itself optimal" in longer["message"]
    )
    assert meta_of(frame)["datasets"]["unlabelled"]["optimal_from_oracle"] == 1


def test_meta_describes_the_run(run):
    frame = run(["good_bfs"], [mix23()], memory_pass=True, timeout=7.5)
    meta = meta_of(frame)
    assert meta["schema_version"] == res.SCHEMA_VERSION
    assert meta["run_id"] == Path(frame.attrs["run_dir"]).name
    assert meta["options"]["timeout_by_config"] == {"good_bfs": 7.5}
    assert meta["options"]["plugins"] == [str(Path(PLUGIN).resolve())]
    assert meta["datasets"]["mix23"]["sha256"] == mix23().checksum
    assert meta["datasets"]["mix23"]["size"] == "2x3"
    spec = meta["solvers"]["good_bfs"]
    assert spec["optimal"] is True and len(spec["source_sha256"]) == 64
    assert meta["timer"]["perf_counter_resolution_s"] > 0
    assert meta["packages"]["pandas"] and meta["python"].startswith("CPython")
    assert set(frame["run_id"]) == {meta["run_id"]}


def test_rejects_bad_options():
    with pytest.raises(RunError, match="unknown solver 'nosuch'"):
        make_plan("nosuch", [mix23()])
    with pytest.raises(RunError, match="--repeats 0"):
        make_plan("good_bfs", [mix23()], repeats=0)
    with pytest.raises(RunError, match="--timeout"):
        make_plan("good_bfs", [mix23()], timeout=0)
    with pytest.raises(RunError, match="--plugin"):
        make_plan("good_bfs", [mix23()], plugins=["/no/such/plugin.py"])
    with pytest.raises(RunError, match="two different datasets"):
        make_plan("good_bfs", [mix23(), tiny("mix23")])


# ------------------------------------------------------------ judge and checks


def _inst(solvable: bool = True):
    ds = mix23()
    return next(i for i in ds.instances if i.solvable == solvable)


def _returned(moves, kind: str | None = None) -> Attempt:
    chars = len(moves) if isinstance(moves, str) else 0
    return Attempt(
        "time",
        0,
        "returned",
        moves=moves,
        moves_type=kind or type(moves).__name__,
        moves_chars=chars,
        counters={"expanded": 1},
    )


def test_judge_replays_every_answer():
    inst = _inst()
    path = _shortest(inst)
    assert rows.pass_status(_returned(path), inst, len(path), 1) == (
        "solved",
        "",
        len(path),
        True,
    )
    status, message, _, _ = rows.pass_status(
        _returned("u" * 3 + path), inst, len(path), 1
    )
    assert status == "invalid" and message.startswith("illegal path: move")
    status, message, _, _ = rows.pass_status(_returned("x"), inst, len(path), 1)
    assert status == "invalid" and "not one of u, d, l, r" in message
    status, message, _, _ = rows.pass_status(
        _returned(path[:-1]), inst, len(path), None
    )
    assert status == "invalid" and "not at the goal" in message
    detour = path + _undo_pair(inst)
    assert rows.pass_status(_returned(detour), inst, len(path), None)[::3] == (
        "solved",
        False,
    )
    status, message, _, ok = rows.pass_status(_returned(detour), inst, len(path), 1)
    assert status == "invalid" and ok is False and "declares itself optimal" in message
    # unknown optimum: valid path, optimality unknown
    assert rows.pass_status(_returned(path), inst, None, 1) == (
        "solved",
        "",
        len(path),
        None,
    )
    status, message, _, _ = rows.pass_status(_returned(None), inst, len(path), 1)
    assert status == "invalid" and "solvable" in message
    status, message, _, _ = rows.pass_status(_returned(["u"], "list"), inst, 3, True)
    assert status == "invalid" and "returned a list" in message
    # a shorter path than the label: the dataset is wrong, not the solver
    status, message, _, ok = rows.pass_status(_returned(path), inst, len(path) + 2, True)
    assert status == "solved" and "label is wrong" in message


def test_judge_unsolvable_board():
    inst = _inst(solvable=False)
    assert rows.pass_status(_returned(None), inst, None, True)[:2] == ("unsolvable", "")
    status, message, _, _ = rows.pass_status(_returned(""), inst, None, True)
    assert status == "invalid" and "unsolvable" in message
    failed = Attempt("time", 0, "timeout", message="exceeded the 1 s time limit")
    assert rows.pass_status(failed, inst, None, True) == (
        "timeout",
        "exceeded the 1 s time limit",
        None,
        None,
    )


def _shortest(inst) -> str:
    from collections import deque

    parent = {inst.start: None}
    queue = deque([inst.start])
    while queue:
        board = queue.popleft()
        if board == inst.goal:
            break
        for move, child in inst.grid.successors(board):
            if child not in parent:
                parent[child] = (board, move)
                queue.append(child)
    path, board = [], inst.goal
    while parent[board] is not None:
        board, move = parent[board]
        path.append(move)
    return "".join(reversed(path))


def _undo_pair(inst) -> str:
    move, _ = next(iter(inst.grid.successors(inst.goal)))
    return move + {"u": "d", "d": "u", "l": "r", "r": "l"}[move]


def test_nondeterminism_compares_all_passes_and_stored_rows():
    a = Attempt(
        "time",
        0,
        "returned",
        moves="ud",
        moves_type="str",
        moves_chars=2,
        counters={"expanded": 5, "generated": 9},
    )
    b = Attempt(
        "time",
        1,
        "returned",
        moves="ud",
        moves_type="str",
        moves_chars=2,
        counters={"expanded": 5, "generated": 9},
    )
    assert rows.nondeterminism([a, b]) is None
    c = Attempt(
        "memory",
        0,
        "returned",
        moves="ud",
        moves_type="str",
        moves_chars=2,
        counters={"expanded": 5, "generated": 9},
        check_counters={"expanded": 6, "generated": 9},
        check_moves="ud",
    )
    message = rows.nondeterminism([a, c])
    assert message == (
        "nondeterministic counters: expanded 5 (time 0) "
        "vs 6 (memory 0, tracemalloc solve)"
    )
    d = Attempt(
        "time",
        1,
        "returned",
        moves="du",
        moves_type="str",
        moves_chars=2,
        counters={"expanded": 5, "generated": 9},
    )
    assert "nondeterministic moves" in rows.nondeterminism([a, d])
    stored = {
        "measure": "time",
        "repeat": "0",
        "status": "solved",
        "moves": "ud",
        "expanded": "4",
        "generated": "9",
        "max_frontier": "",
        "iterations": "",
        "extra": "",
    }
    assert "expanded 4 (time 0 (stored)) vs 5 (time 1)" in rows.nondeterminism(
        [b], [stored]
    )
    timeout = Attempt("time", 1, "timeout", message="late")
    assert rows.nondeterminism([a, timeout]) is None


def test_worker_in_process_times_only_the_solve():
    """The Worker class directly: set-up recorded once, passes in order, clocks set."""
    inst = _inst()
    task = Task(
        0,
        ConfigKey("good_astar", "manhattan"),
        (PLUGIN,),
        2,
        3,
        inst.start,
        inst.goal,
        (Pass("time", 0), Pass("time", 1), Pass("memory", 0)),
        5.0,
        200,
    )
    worker = Worker(0)
    first = worker.run(task)
    second = worker.run(task)
    assert len(first.setups) == 1 and first.setups[0].prepare_seconds >= 0.05
    assert second.setups == []  # prepared state kept between tasks of the config
    assert [(a.measure, a.repeat) for a in first.attempts] == [
        ("time", 0),
        ("time", 1),
        ("memory", 0),
    ]
    timed = first.attempts[0]
    # the timed region excludes the 50 ms prepare
    assert timed.outcome == "returned" and 0 < timed.seconds < 0.05
    assert first.attempts[2].peak_bytes > 0 and first.attempts[2].seconds is None


def test_inline_executor_gives_the_same_rows(run):
    """``--jobs 0`` (debugging, no isolation) judges exactly like the worker pool."""
    configs = ["good_bfs", "raises", "long_optimal"]
    kwargs = dict(repeats=2, memory_pass=True, memory_limit_mb=300)
    inline = run(configs, [mix23()], jobs=0, **kwargs)
    pooled = run(configs, [mix23()], jobs=1, **kwargs)
    columns = [
        "config",
        "instance",
        "measure",
        "repeat",
        "status",
        "message",
        "moves",
        "expanded",
        "generated",
    ]
    key = ["config", "instance", "measure", "repeat"]
    a = inline[columns].sort_values(key).reset_index(drop=True)
    b = pooled[columns].sort_values(key).reset_index(drop=True)
    assert a.equals(b)
    assert set(a["status"]) == {"solved", "unsolvable", "error", "invalid"}


def test_resume_rebuilds_the_configs_from_their_values_not_the_labels(run):
    frame = run(["good_bfs", "good_astar[manhattan]"], [mix23()])
    meta = meta_of(frame)
    keys = [ConfigKey("good_bfs", None), ConfigKey("good_astar", "manhattan")]
    assert meta["options"]["configs"] == [
        ["good_bfs", None], ["good_astar", "manhattan"]]  # fmt: skip
    meta["options"]["solvers"] = ["not a label[", "]"]  # only read without configs
    plan = plan_from_meta(meta, [mix23()])
    assert [c.key for c in plan.configs] == keys
    # a run stored before configs were recorded still resumes from its labels
    meta["options"]["solvers"] = ["good_bfs", "good_astar[manhattan]"]
    del meta["options"]["configs"]
    assert [c.key for c in plan_from_meta(meta, [mix23()]).configs] == keys
    meta["options"]["configs"] = [["good_astar", "misplaced"], ["gone", None]]
    with pytest.raises(RunError, match="^stored config: unknown solver 'gone'"):
        plan_from_meta(meta, [mix23()])


def test_resolve_solvers_keeps_configs_and_keys_as_values():
    astar = ConfigKey("good_astar", "manhattan").resolve()
    configs = resolve_solvers([astar, ConfigKey("good_bfs", None), "good_bfs"])
    assert configs[0] is astar and [c.label for c in configs] == [
        "good_astar[manhattan]", "good_bfs"]  # fmt: skip
    with pytest.raises(RunError, match=r"^--solvers: '' names no solver"):
        resolve_solvers([])


def test_no_eta_until_every_config_has_a_measured_cell(run, monkeypatch):
    """The bar's ETA waits until each config has a cell measured (before that its
    cost is borrowed from the others), then comes at every finished cell at most
    ETA_EVERY apart, never negative; the run's own progress calls arrive as
    before."""
    from harness.measure import runner as runner_module

    monkeypatch.setattr(runner_module, "ETA_EVERY", 0.0)  # every finished cell
    configs = ["good_bfs", "good_astar[manhattan]", "good_greedy"]
    seen: set[str] = set()
    estimates: list[tuple[float, frozenset]] = []
    finished: list[int] = []

    class Recorder(runner_module.NoProgress):
        shows_estimate = True

        def observed(self, job, said, took) -> None:
            seen.add(job.key[0])

        def estimate(self, seconds_left: float) -> None:
            estimates.append((seconds_left, frozenset(seen)))

        def finished(self, done, failures, failure_line) -> None:
            finished.append(done)

    run(configs, [mix23(), mix23("mix23b")], progress=Recorder(), interleave=False)
    assert finished and estimates
    assert all(left >= 0 for left, _ in estimates)
    assert all(measured == set(configs) for _, measured in estimates)
    # ... and it did come: from the first finished cell that completed the set on
    assert len(estimates) >= len(finished) - 2 * len(configs) - 1


def test_cells_reported_only_when_done_are_costed_by_the_workers_clock(
    run, monkeypatch
):
    """An executor that hands a cell back only when its batch returns (Dask) says
    'started' and 'done' in one instant: the cost model then takes the measuring
    process's own clock of the passes, not ~0 s, and the ETA is not ~0 s."""
    from harness.measure import runner as runner_module
    from harness.measure.executors.local import LocalPool
    from harness.measure.tasks import TaskStarted as Started

    class ReportedWhenDone(LocalPool):
        def events(self):
            held = {}
            for event in super().events():
                if isinstance(event, Started):
                    held[event.task.id] = event
                    continue
                yield held.pop(event.task.id)  # started and done, back to back
                yield event
                took_by_worker.append(runner_module._worker_seconds(event))

    monkeypatch.setattr(runner_module, "ETA_EVERY", 0.0)
    took_by_worker: list[float] = []
    seen: list[float] = []
    estimates: list[float] = []

    class Recorder(runner_module.NoProgress):
        shows_estimate = True

        def observed(self, job, said, took) -> None:
            seen.append(took)

        def estimate(self, seconds_left: float) -> None:
            estimates.append(seconds_left)

    frame = run(
        ["good_bfs", "good_astar[manhattan]"],
        [mix23(), mix23("mix23b")],
        repeats=3,
        progress=Recorder(),
        executor_factory=lambda jobs, run_dir: ReportedWhenDone(1, pin=False),
    )
    assert len(seen) == len(took_by_worker) == 12
    assert all(t > 0 for t in took_by_worker)
    # what the model was told: the worker's clock (the parent saw ~0 s)
    assert seen[: len(took_by_worker)] == pytest.approx(took_by_worker, rel=1e-9)
    # ten cells left when both configs have one: not the ~0 s the parent saw
    assert estimates and estimates[0] >= 0.5 * min(took_by_worker)
    # meta.json: the workers were busy for their passes, not for ~0 s
    phases = meta_of(frame)["phases"]
    assert phases["worker_busy_seconds"] >= sum(took_by_worker)


def test_the_eta_learns_and_prices_at_the_reference_solves_pace(run, monkeypatch):
    """Each finished cell hands the pace the reference times beside its timed
    passes, and the ETA is priced at the pace they show (issue 23 item 7)."""
    from harness.measure import runner as runner_module
    from harness.measure.eta import Pace

    monkeypatch.setattr(runner_module, "ETA_EVERY", 0.0)
    fed: list[list] = []
    priced: list[float | None] = []

    class Spy(Pace):
        def reference(self, core, refs, now):
            fed.append(list(refs))
            return super().reference(core, fed[-1], now)

        def seconds(self, now, left=None):
            priced.append(super().seconds(now, left))
            return priced[-1]

    class Estimates(runner_module.NoProgress):
        shows_estimate = True

    monkeypatch.setattr(runner_module, "Pace", Spy)
    run(["good_bfs"], [mix23()], repeats=2, progress=Estimates())
    assert len(fed) == 3  # one per cell
    assert all(sum(1 for r in refs if r and r > 0) == 2 for refs in fed), fed
    assert priced and all(p is not None and p > 0 for p in priced[-3:])
