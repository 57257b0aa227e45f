"""harness run --config / --dry-run / --reuse, through the command line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import harness
from harness.analysis import read_run
from harness.cli import app
from harness.measure.plan import RunError, plan_cells
from harness.measure.resume import plan_from_meta

QUICK = ["--repeats", "1", "--no-memory", "--jobs", "1", "--no-report", "--quiet"]


def invoke(*args: str):
    return CliRunner().invoke(app, ["run", *map(str, args)])


def _run_dir(result) -> Path:
    assert result.exit_code == 0, result.output
    return Path(result.stdout.strip().splitlines()[-1])


def test_adding_one_heuristic_runs_only_its_cells(tmp_path) -> None:
    out = tmp_path / "results"
    first = _run_dir(invoke("--solvers", "astar_dict[manhattan]", "--datasets",
                            "8-seeds", *QUICK, "--out", out))  # fmt: skip
    loud = [a for a in QUICK if a != "--quiet"]  # -q would print no progress line
    second = invoke("--solvers", "astar_dict[manhattan],astar_dict[misplaced]",
                    "--datasets", "8-seeds", *loud, "--out", out,
                    "--reuse", first)  # fmt: skip
    new = _run_dir(second)
    assert f"reused 3 finished cells from {first} (3)" in second.stderr
    assert "3 of 6 cells need no solving" in second.stderr
    meta1, rows1 = read_run(first)
    meta2, rows2 = read_run(new)
    assert meta2["reused"] == [{"path": str(first.resolve()), "cells": 3}]
    man = rows2[rows2.config == "astar_dict[manhattan]"]
    mis = rows2[rows2.config == "astar_dict[misplaced]"]
    # the copied rows say where they were measured, and are the very same rows
    assert set(man.run_id) == {meta1["run_id"]} and set(mis.run_id) == {meta2["run_id"]}
    assert list(man.seconds) == list(rows1.seconds)
    # a different measurement option: nothing is reused, and the reason is said
    third = invoke("--solvers", "astar_dict[manhattan]", "--datasets", "8-seeds",
                   *QUICK[:1], "2", *QUICK[2:], "--out", out, "--reuse", first)  # fmt: skip
    assert _run_dir(third)
    assert "reused 0 finished cells" in third.stderr
    assert "3 (different options (repeats))" in third.stderr


def test_config_file_runs_its_union_and_is_kept_with_the_run(tmp_path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text(
        'datasets = ["8-seeds"]\nrepeats = 1\nmemory_pass = false\njobs = 1\n\n'
        '[[grid]]\nsolvers = ["astar_dict"]\nheuristics = ["manhattan", "misplaced"]\n\n'
        '[[grid]]\nconfigs = ["bfs"]\ndatasets = ["8-seeds-spiral"]\n'
    )
    dry = invoke("--config", exp, "--dry-run", "--out", tmp_path / "results")
    assert dry.exit_code == 0, dry.output
    lines = dry.stdout.splitlines()
    assert lines[0].endswith("3 configs, 2 datasets, 8 cells")
    assert lines[3].split() == ["astar_dict[manhattan]", "3", "run", "-"]
    assert lines[5].split() == ["bfs", "-", "2", "run"]
    assert "total: 8 cells to run, 0 reused, 0 skipped" in dry.stdout
    assert not (tmp_path / "results").exists()
    run = _run_dir(invoke("--config", exp, "--no-report", "--quiet",
                          "--out", tmp_path / "results"))  # fmt: skip
    meta, rows = read_run(run)
    assert (run / "experiment.toml").read_text() == exp.read_text()
    assert meta["experiment"]["sha256"] == hashlib.sha256(exp.read_bytes()).hexdigest()
    assert sorted(set(zip(rows.config, rows.dataset))) == [
        ("astar_dict[manhattan]", "8-seeds"), ("astar_dict[misplaced]", "8-seeds"),
        ("bfs", "8-seeds-spiral"),
    ]  # fmt: skip
    assert meta["options"]["repeats"] == 1 and meta["options"]["memory_pass"] is False


def test_config_errors_are_one_line(tmp_path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text('solvers = ["bfs"]\ndatasets = ["8-seeds"]\nrepaets = 2\n')
    bad = invoke("--config", exp)
    assert bad.exit_code == 2
    assert bad.output.strip() == (
        f"error: {exp}: line 3: unknown key 'repaets' (did you mean 'repeats'?) "
        "(known: solvers, heuristics, params, "
        "configs, datasets, cost, plugins, repeats, timeout, memory_limit_mb, "
        "memory_pass, instructions, gc, setup_timeout, warmup, min_sample_seconds, jobs, name, "
        "description, executor, scheduler, tls_ca, tls_cert, tls_key, [[grid]])"
    )
    both = invoke("--config", exp, "--solvers", "bfs")
    assert both.exit_code == 2 and "drop --solvers" in both.output
    nope = invoke("--solvers", "bfs", "--reuse", tmp_path)
    assert nope.exit_code == 2 and "not a run directory" in nope.output


def test_resume_keeps_the_pairs(tmp_path) -> None:

    exp = tmp_path / "exp.toml"
    exp.write_text('solvers = ["bfs"]\ndatasets = ["8-seeds"]\n\n[[grid]]\n'
                   'configs = ["table"]\ndatasets = ["8-seeds-spiral"]\n')  # fmt: skip
    run = _run_dir(invoke("--config", exp, *QUICK, "--out", tmp_path / "r"))
    meta = json.loads((run / "meta.json").read_text())
    plan = plan_from_meta(meta)
    assert plan.pairs == {("bfs", "8-seeds"), ("table", "8-seeds-spiral")}
    assert len(plan_cells(plan)) == 5


DASK_FILE = (
    'solvers = ["bfs"]\ndatasets = ["8-seeds"]\nrepeats = 1\nmemory_pass = false\n'
    'executor = "dask"\nscheduler = "tcp://127.0.0.1:9"\n'
)


def test_config_file_chooses_the_dask_scheduler(tmp_path, monkeypatch) -> None:
    """executor = "dask" and scheduler in the file reach the executor (here an
    unreachable one: the CLI's one-line error, and no run directory)."""
    pytest.importorskip("distributed")
    from harness.measure.executors.dask import client

    monkeypatch.setattr(client, "CONNECT_TIMEOUT", 1.0)
    exp = tmp_path / "exp.toml"
    exp.write_text(DASK_FILE)
    out = tmp_path / "results"
    bad = invoke("--config", exp, "--out", out)
    assert bad.exit_code == 2, bad.output
    lines = bad.output.strip().splitlines()
    assert len(lines) == 1
    where = f"{exp}: line 6: scheduler = 'tcp://127.0.0.1:9': cannot connect"
    assert lines[0].startswith(f"error: {where}"), lines
    assert not out.exists()
    with pytest.raises(RunError) as err:
        harness.run(config=exp, out=out)
    assert str(err.value).startswith(where)
    assert not out.exists()
    # --scheduler typed on the command line wins, and its error is its own
    typed = invoke("--config", exp, "--out", out, "--scheduler", "tcp://127.0.0.1:7")
    assert typed.exit_code == 2
    assert "error: --scheduler tcp://127.0.0.1:7: cannot connect" in typed.output


def test_python_api_runs_an_experiment_file(tmp_path) -> None:
    """harness.run(config=...): the file's grid and options, arguments win (here
    executor="local", which drops the file's scheduler), the file kept with the run."""
    exp = tmp_path / "exp.toml"
    exp.write_text(DASK_FILE + '\n[[grid]]\nconfigs = ["table"]\n'
                   'datasets = ["8-seeds-spiral"]\n')  # fmt: skip
    rows = harness.run(config=exp, executor="local", jobs=0, out=tmp_path / "r")
    run = Path(rows.attrs["run_dir"])
    assert sorted(set(zip(rows.config, rows.dataset, strict=True))) == [
        ("bfs", "8-seeds"), ("table", "8-seeds-spiral")
    ]
    assert "memory" not in set(rows.measure)  # memory_pass = false, from the file
    meta, _ = read_run(run)
    assert (run / "experiment.toml").read_text() == exp.read_text()
    assert meta["experiment"]["sha256"] == hashlib.sha256(exp.read_bytes()).hexdigest()
    assert meta["executors"][-1]["kind"] == "inline"
    with pytest.raises(RunError, match="names the solvers and datasets; drop solvers"):
        harness.run(config=exp, solvers="bfs")
    bad = tmp_path / "bad.toml"
    bad.write_text('solvers = ["bfs"]\ndatasets = ["8-seeds"]\njobs = -1\n')
    with pytest.raises(RunError, match=r"bad.toml: line 3: jobs = -1"):
        harness.run(config=bad)
