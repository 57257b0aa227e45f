"""One-time set-ups (tables, compilation) in ``harness run``: priced apart from
the cells' pace, said while they last (issue 32: the ETA said 40 -> 53 -> 30 min
in the first minute of a 4-min run, its 52 s and 24 s set-ups priced as the pace
of every cell left)."""

from __future__ import annotations

import pytest
from plugins.tiny import make_dataset, walk
from where import PLUGINS

import harness
from harness.cli import progress as bar
from harness.measure import runner
from harness.measure.eta import Backlog
from harness.measure.schedule import CostModel, Workload
from harness.puzzle import goal_board, grid


def test_plain_status_lines_never_extrapolate_a_set_up(capsys, monkeypatch):
    """Before the runner has an estimate, the status line says why, never the
    elapsed time over the cells done; a set-up that lasts says so, and how long."""
    monkeypatch.setattr(bar, "SETUP_NOTICE_SECONDS", 0.05)
    plain = bar.PlainProgress(every_seconds=0.0)
    plain.start(100, 0, 0)
    plain.setup_began("ida_star_jit[pdb44]", 1)
    plain.no_estimate("setting up ida_star_jit[pdb44]")
    import time

    time.sleep(0.3)
    plain.setup_ended("ida_star_jit[pdb44]", 1, 52.0)
    plain.finished(1, 0, None)
    plain.estimate(90.0)
    plain.finished(2, 0, None)
    plain.stop()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == ("setting up ida_star_jit[pdb44] (worker 1): tables, "
                        "compilation ...")  # fmt: skip
    assert lines[1] == "set up ida_star_jit[pdb44] (worker 1) in 52 s"
    assert "elapsed, setting up ida_star_jit[pdb44]; 0 failed" in lines[2]
    assert "left" not in lines[2]
    assert "elapsed, ~1 min 30 s left; 0 failed" in lines[3]


def test_a_cell_in_set_up_is_priced_as_its_set_up_then_its_whole_cost():
    """Without the set-up, a cell that has run past its estimate (all of it in
    set-up) looks nearly done (a tenth of its cost left)."""
    model = CostModel()
    workload = Workload(("c", "3x3", True), 10, 3, 1e9)
    model.observe(workload, 1.0)
    backlog = Backlog([(0, workload, None), (1, workload, None)])
    backlog.start(0, 0.0)
    cost = model.cost(workload)
    plain = backlog.eta(model, 30.0, 1)
    assert plain == pytest.approx(0.1 * cost + cost)
    priced = backlog.eta(model, 30.0, 1, setups={0: 20.0})
    assert priced == pytest.approx(20.0 + 2 * cost)


def test_the_run_says_setting_up_until_a_set_up_is_priced(tmp_path, monkeypatch):
    """A real run of a solver whose set-up takes 0.5 s: the bar hears the set-up
    begin and end (with its seconds), and shows 'setting up X' instead of a
    number until that config's set-up has been measured."""
    monkeypatch.setattr(runner, "ETA_EVERY", 0.0)
    g = grid(2, 3)
    goal = goal_board("standard", g)
    data = make_dataset("setup23", [walk(goal, g, 4 + i, seed=i) for i in range(4)],
                        g, goal)  # fmt: skip
    heard: list[tuple] = []

    class Recorder(runner.NoProgress):
        shows_estimate = True

        def estimate(self, seconds_left: float) -> None:
            heard.append(("estimate", seconds_left))

        def no_estimate(self, why: str) -> None:
            heard.append(("none", why))

        def setup_began(self, config: str, worker: int) -> None:
            heard.append(("began", config, worker))

        def setup_ended(self, config: str, worker: int, seconds) -> None:
            heard.append(("ended", config, worker, seconds))

    harness.run(["slow_setup_bfs"], [data], repeats=1, memory_pass=False, jobs=1,
                out=tmp_path, plugins=[str(PLUGINS / "napping.py")],
                progress=Recorder())  # fmt: skip
    kinds = [h[0] for h in heard]
    assert kinds.count("began") == kinds.count("ended") == 1  # one worker, once
    began, ended = kinds.index("began"), kinds.index("ended")
    assert heard[began][1] == "slow_setup_bfs"
    assert ("none", "setting up slow_setup_bfs") in heard[began:ended]
    assert "estimate" not in kinds[:ended]  # nothing priced the set-up before it
    assert heard[ended][3] >= 0.5  # the worker's own clock of its set-up
    assert "estimate" in kinds[ended:]
