"""``harness history``: three small runs at three synthetic commits; the second
adds one expanded node (a counter change), the third doubles the CPU work (a 2x
time step), both injected through the plugin tests/plugins/history_steps.py."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from in_process import harness as cli
from plugins.tiny import make_dataset, walk
from where import PLUGINS

import harness
from harness.compare.history import HistoryError, build_history, largest_steps
from harness.puzzle import goal_board, grid
from harness.report.history import HistoryReport
from harness.solver import scoped_registry

PLUGIN = str(PLUGINS / "history_steps.py")
COMMITS = ["1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
           "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
           "3333333ccccccccccccccccccccccccccccccccc"]  # fmt: skip
STEPS = [{}, {"NPUZZLE_TEST_EXTRA_EXPANDED": "1"},
         {"NPUZZLE_TEST_EXTRA_EXPANDED": "1", "NPUZZLE_TEST_WORK": "2"}]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    """Three runs of the plugin solver, stamped with synthetic commits and dates."""
    out = tmp_path_factory.mktemp("results")
    g = grid(3)
    goal = goal_board("standard", g)
    ds = make_dataset("hist", [walk(goal, g, 6 + i, seed=i) for i in range(8)], g)
    saved = dict(os.environ)
    try:
        for n, (commit, env) in enumerate(zip(COMMITS, STEPS, strict=True)):
            os.environ.pop("NPUZZLE_TEST_EXTRA_EXPANDED", None)
            os.environ.pop("NPUZZLE_TEST_WORK", None)
            os.environ.update(env)  # workers inherit the environment
            with scoped_registry():
                run_dir = Path(harness.run(
                    "steps", ds, plugins=[PLUGIN], repeats=5, jobs=1, out=out,
                    memory_pass=False,
                ).attrs["run_dir"])  # fmt: skip
            meta = json.loads((run_dir / "meta.json").read_text())
            meta["git"] = {"commit": commit, "dirty": False}
            meta["started_utc"] = f"2026-01-0{n + 1}T12:00:00Z"
            (run_dir / "meta.json").write_text(json.dumps(meta))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return out


def test_page_flags_the_counter_change_and_the_time_step(results, tmp_path):
    hist = build_history([results])
    assert [r.commit for r in hist.runs] == [c[:8] for c in COMMITS]
    flagged = {(s.index, s.config): s for s in hist.regressions}
    counter_step = flagged[(1, "steps")]
    assert counter_step.counter_changes == 8  # one more node on each instance
    assert "counter increase" in counter_step.regressions[0]
    assert counter_step.counter_regression  # (its time drifts under load: not checked)
    time_step = flagged[(2, "steps")]
    assert time_step.counter_changes == 0
    assert 1.25 < time_step.ratio < 3 and time_step.low > 1.0  # 2x the loop work
    assert "slower" in time_step.regressions[0]
    assert time_step.time_regression and not time_step.counter_regression
    assert 1 in hist.breaks and "counters moved" in hist.breaks[1][0]
    assert {(s.index, s.config) for s in largest_steps(hist)} >= set(flagged)
    assert hist.runs[1].expanded["steps"] == hist.runs[0].expanded["steps"] + 8

    page = HistoryReport(hist).write(tmp_path)
    text = page.read_text()
    assert text.count("<li class='regression'>") == 2
    assert "2222222b" in text and "3333333c" in text
    assert (tmp_path / "plots" / "history-steps.png").stat().st_size > 1000
    md = (tmp_path / "history.md").read_text()
    assert "2 regression(s)" in md and "## Largest steps" in md


def test_environment_change_is_a_break(results, tmp_path):
    runs = sorted(p for p in results.iterdir() if (p / "meta.json").is_file())
    moved = tmp_path / "moved"
    import shutil

    shutil.copytree(runs[0], moved / runs[0].name)
    shutil.copytree(runs[1], moved / runs[1].name)
    meta_path = moved / runs[1].name / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta["python"] = "CPython 3.99.0"
    meta_path.write_text(json.dumps(meta))
    hist = build_history([moved])
    assert any("environment changed: python" in why for why in hist.breaks[1])


def test_cli_history(results, tmp_path):
    proc = cli("history", str(results), "--out", str(tmp_path / "page"))
    assert proc.returncode == 0, proc.stderr
    assert "2 regression(s)" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1].endswith("history.html")
    md = cli(
        "history", str(results), "--out", str(tmp_path / "page"), "--format", "markdown"
    )
    assert md.stdout.startswith("# Performance history: 3 runs")
    bad = cli("history", str(tmp_path / "nope"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "no such run directory" in bad.stderr


def test_empty_folder_is_an_error(tmp_path):
    with pytest.raises(HistoryError, match="no run directories"):
        build_history([tmp_path])


def test_history_is_written_beside_the_runs_not_in_the_current_folder(
    results, tmp_path, monkeypatch
):
    from typer.testing import CliRunner

    from harness.cli import app

    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)
    runs = sorted(str(p) for p in results.iterdir() if (p / "meta.json").is_file())
    for args in ([str(results)], runs):
        page = results / "history" / "history.html"
        page.unlink(missing_ok=True)
        done = CliRunner().invoke(app, ["history", *args])
        assert done.exit_code == 0, done.output
        assert done.stdout.strip().splitlines()[-1] == str(page)
        assert page.is_file() and not (here / "history").exists()


def test_an_unreadable_run_is_skipped_and_named(results, tmp_path):
    """One damaged run gave up on the whole folder (exit 2, issue 35 item 14)."""
    import shutil

    copy = Path(shutil.copytree(results, tmp_path / "runs"))
    damaged = sorted(p for p in copy.iterdir() if (p / "meta.json").is_file())[1]
    rows = damaged / "rows.csv"
    lines = rows.read_text().splitlines(True)
    lines[1] = lines[1].replace(",time,", ",tmie,", 1)
    rows.write_text("".join(lines))
    proc = cli("history", str(copy), "--out", str(tmp_path / "page"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("2 runs")
    said = proc.stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith(f"skipped {damaged}: ")
    assert "line 2" in said[0]
    page = (tmp_path / "page" / "history.md").read_text()
    assert f"- {damaged}: " in page
