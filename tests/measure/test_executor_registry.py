"""The executor registry (harness.measure.executors.registry): an executor is one
module that registers itself; the names --executor and an experiment file take
come from it, and a run uses a plugin's executor with no edit elsewhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from in_process import harness

from harness.core.registries import NameClash
from harness.measure.executors.registry import (
    ExecutorKind,
    all_executors,
    executor_help,
    executor_names,
    register_executor,
)
from harness.solver import scoped_registry

TOY = str(Path(__file__).resolve().parents[1] / "plugins" / "toy_executor.py")


def test_the_built_in_executors_register_themselves():
    assert executor_names()[:3] == ("local", "dask", "inline")  # the default first
    kinds = all_executors()
    assert kinds["dask"].sets_jobs and kinds["dask"].on_cluster
    assert kinds["inline"].fixed_jobs == 0 and not kinds["local"].on_cluster
    assert all(f"'{n}'" in executor_help() for n in kinds)


def test_a_name_registered_twice_is_refused():
    with scoped_registry(), pytest.raises(NameClash, match="executor 'local'"):
        register_executor(ExecutorKind("local", "again", lambda launch: None))


def test_a_toy_executor_in_one_module_runs_a_run(tmp_path):
    with scoped_registry():  # the plugin's executor is forgotten after the block
        out = tmp_path / "runs"
        proc = harness(
            "run", "--solvers", "astar_dict[manhattan]", "--datasets", "8-seeds",
            "--repeats", "1", "--no-memory", "--no-report", "--plugin", TOY,
            "--executor", "toy", "--out", str(out), env={"CI": "1"},
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["executors"][0]["kind"] == "toy"  # its describe()
    assert meta["executors"][0]["tasks"] == 3  # the three boards of 8-seeds
    rows = (run_dir / "rows.csv").read_text().splitlines()
    assert sum(",solved," in r for r in rows) >= 3
    assert "toy" not in executor_names()  # forgotten with the scope


def test_an_unknown_executor_names_the_registered_ones(tmp_path):
    proc = harness("run", "--executor", "spark", "--out", str(tmp_path))
    assert proc.returncode == 2
    assert "--executor spark: choose one of local, dask, inline" in proc.stderr
