"""The one loader of meta.json: every readable schema version into the typed
RunMeta, one migration step per version, and a clear line for any other."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner
from where import DATA

from harness import results as res
from harness.cli import app


def test_every_older_version_has_its_migration_step():
    older = set(res.READABLE_VERSIONS) - {res.SCHEMA_VERSION}
    assert set(res.MIGRATIONS) == older


def test_a_version_1_run_reads_migrated_into_the_typed_meta():
    """tests/data/run_v1 (schema 1): typed, every step applied, its version kept."""
    stored = json.loads((DATA / "run_v1" / res.META_FILE).read_text())
    meta = res.read_run_meta(DATA / "run_v1")
    assert meta.stored_version == 1 and meta.run_id == stored["run_id"]
    assert meta.complete is True and meta.environment["cpu_count"] == 2
    assert meta.options["adaptive"] == 0  # step 3 -> 4: every repeat was taken
    assert meta.options["min_sample_seconds"] == 0  # 4 -> 5: one solve per sample
    claims = {label: (info["bound"], info["guarantee"])
              for label, info in meta.solvers.items()}  # fmt: skip
    optimal = {label: info["optimal"] for label, info in stored["solvers"].items()}
    assert claims == {
        label: (1, "optimal") if is_optimal else (None, "none")
        for label, is_optimal in optimal.items()
    }
    assert "adaptive" not in stored["options"]  # the file read is left as it was
    assert meta.extra == {}
    written = meta.to_json()  # written back, it is the current version
    assert written["schema_version"] == res.SCHEMA_VERSION
    assert "stored_version" not in written


def test_a_version_5_meta_gains_only_the_claims():
    data = {"schema_version": 5, "run_id": "r", "started_utc": "t",
            "options": {"adaptive": 0.04, "min_sample_seconds": 0.001},
            "solvers": {"astar[manhattan]": {"optimal": True},
                        "greedy[manhattan]": {"optimal": False}}}  # fmt: skip
    migrated = res.migrate(data)
    assert migrated["schema_version"] == res.SCHEMA_VERSION
    assert migrated["options"] == {**data["options"], "instructions": False}
    assert migrated["solvers"]["astar[manhattan]"] == {
        "optimal": True, "bound": 1, "guarantee": "optimal"
    }
    assert migrated["solvers"]["greedy[manhattan]"]["bound"] is None
    assert "bound" not in data["solvers"]["astar[manhattan]"]  # input untouched
    assert res.load_meta(data).stored_version == 5


def test_a_version_8_meta_gains_nothing_with_tile_costs():
    """9 added the rows' cost columns; meta.json stays as it was."""
    data = {"schema_version": 8, "run_id": "r", "started_utc": "t",
            "options": {"repeats": 3, "gc": False, "instructions": False}}  # fmt: skip
    migrated = res.migrate(data)
    assert migrated["options"] == data["options"]
    assert migrated["schema_version"] == res.SCHEMA_VERSION


def test_a_version_9_meta_gains_nothing_with_the_necessary_expansions():
    """10 added the rows' necessary-expansion columns; meta.json stays as it was."""
    data = {"schema_version": 9, "run_id": "r", "started_utc": "t",
            "options": {"repeats": 3, "gc": False, "instructions": False}}  # fmt: skip
    migrated = res.migrate(data)
    assert migrated["options"] == data["options"]
    assert migrated["schema_version"] == res.SCHEMA_VERSION == 10
    assert res.load_meta(data).stored_version == 9


def test_a_current_meta_loads_unchanged():
    meta = res.RunMeta("r1", "2026-01-01T00:00:00Z", options={"repeats": 3})
    data = meta.to_json()
    loaded = res.load_meta(data)
    assert loaded == meta and loaded.to_json() == data


@pytest.mark.parametrize("version", [res.SCHEMA_VERSION + 1, 0, "6", None])
def test_an_unreadable_version_is_one_clear_line(tmp_path, version):
    shutil.copytree(DATA / "run_v1", tmp_path / "run")
    path = tmp_path / "run" / res.META_FILE
    data = json.loads(path.read_text())
    data["schema_version"] = version
    path.write_text(json.dumps(data))
    with pytest.raises(res.ResultsError) as err:
        res.read_run_meta(tmp_path / "run")
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{path}: schema_version")
    assert "not supported" in message
    newer = version == res.SCHEMA_VERSION + 1
    assert (f"newer than this harness's {res.SCHEMA_VERSION}" in message) == newer


def test_the_report_of_a_future_run_fails_with_that_line(tmp_path):
    shutil.copytree(DATA / "run_v1", tmp_path / "run")
    path = tmp_path / "run" / res.META_FILE
    data = json.loads(path.read_text())
    data["schema_version"] = res.SCHEMA_VERSION + 1
    path.write_text(json.dumps(data))
    result = CliRunner().invoke(
        app, ["report", str(tmp_path / "run"), "--format", "table"]
    )
    assert result.exit_code != 0 and "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "newer than this harness" in lines[0], result.output
