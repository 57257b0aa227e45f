"""The stored results format: rows.csv + meta.json, schema version, torn lines."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from where import DATA

from harness import analysis
from harness import results as res

DATA = DATA


def row(**changes) -> res.ResultRow:
    base = res.ResultRow(
        run_id="r",
        dataset="8-mini",
        instance="d05-0001",
        size="3x3",
        goal="standard",
        solvable=True,
        optimal_length=5,
        solver="astar_dict",
        heuristic="manhattan",
        config="astar_dict[manhattan]",
        measure="time",
        repeat=0,
        status="solved",
        message="",
        moves="uurdl",
        path_length=5,
        is_optimal=True,
        expanded=6,
        generated=14,
        max_frontier=9,
        iterations=0,
        seconds=0.000123456789,
        cpu_seconds=0.0001,
        peak_bytes=None,
        peak_rss_bytes=None,
        h_start=5,
        extra="",
    )
    return replace(base, **changes)


def test_columns_follow_the_contract_in_order():
    assert res.column_names()[:26] == (
        "run_id",
        "dataset",
        "instance",
        "size",
        "goal",
        "solvable",
        "optimal_length",
        "solver",
        "heuristic",
        "config",
        "measure",
        "repeat",
        "status",
        "message",
        "moves",
        "path_length",
        "is_optimal",
        "expanded",
        "generated",
        "max_frontier",
        "iterations",
        "seconds",
        "cpu_seconds",
        "peak_bytes",
        "peak_rss_bytes",
        "h_start",
    )
    assert res.column_names()[26:] == (
        "extra",
        "raw_seconds",
        "raw_cpu_seconds",
        "peak_rss_delta_bytes",
        "ref_seconds",
        "ref_cpu_seconds",
        "worker",
        "cpu",
        "repeats_taken",
        "stop_reason",
        "loops",
        "first_seconds",
        "first_cpu_seconds",
        "bound",
        "suboptimality",
        "instructions",  # (registered: harness/results/columns/instructions.py)
        "cost_model",
        "path_cost",
        "optimal_cost",
        "necessary",  # (registered: harness/results/columns/necessary.py)
        "necessary_ties",
        "over_necessary",
    )
    assert res.schema_columns(1) == res.column_names()[:27]
    assert res.schema_columns(2) == res.column_names()[:29]
    assert res.schema_columns(3) == res.column_names()[:34]
    assert res.schema_columns(4) == res.column_names()[:36]
    assert res.schema_columns(5) == res.column_names()[:39]
    assert res.schema_columns(6) == res.column_names()[:41]
    assert res.schema_columns(7) == res.column_names()[:41]  # meta.json only
    assert res.schema_columns(8) == res.column_names()[:42]
    assert res.schema_columns(9) == res.column_names()[:45]  # tile costs: 3 more
    assert res.schema_columns(10) == res.column_names()  # necessary: 3 more


def test_a_schema_7_run_reads_with_instructions_empty(tmp_path):
    """Schema 7 counted no instructions: its rows read with the column empty and
    its meta.json with options.instructions false."""
    res.write_meta(tmp_path, {"run_id": "r", "options": {"repeats": 1}})
    meta = json.loads((tmp_path / res.META_FILE).read_text())
    meta["schema_version"] = 7
    (tmp_path / res.META_FILE).write_text(json.dumps(meta))
    line = res.format_rows([row()]).strip().split(",")[: len(res.schema_columns(7))]
    (tmp_path / res.ROWS_FILE).write_text(
        ",".join(res.schema_columns(7)) + "\n" + ",".join(line) + "\n"
    )
    meta, frame = analysis.read_run(tmp_path)
    assert len(frame) == 1 and frame.instructions.isna().all()
    assert res.migrate(res.read_meta(tmp_path))["options"]["instructions"] is False


def test_a_schema_4_run_reads_with_the_sampling_columns_empty(tmp_path):
    """Schema 4 timed one cold solve per repeat: read with loops and the first
    solve empty, and what it lacks is said."""
    res.write_meta(tmp_path, {"run_id": "r"})
    meta = json.loads((tmp_path / res.META_FILE).read_text())
    meta["schema_version"] = 4
    (tmp_path / res.META_FILE).write_text(json.dumps(meta))
    line = res.format_rows([row()]).strip().split(",")[: len(res.schema_columns(4))]
    (tmp_path / res.ROWS_FILE).write_text(
        ",".join(res.schema_columns(4)) + "\n" + ",".join(line) + "\n"
    )
    meta, frame = analysis.read_run(tmp_path)
    assert len(frame) == 1 and frame.loops.isna().all()
    assert frame.first_cpu_seconds.isna().all() and frame.first_seconds.isna().all()
    assert "one solve per timed repeat" in " ".join(res.schema_gaps(meta))


def test_a_schema_5_run_reads_with_bound_1_for_the_configs_it_called_optimal(tmp_path):
    """Schema 5 had no bound column: a config meta.json calls optimal claimed 1,
    any other none; a schema 6 row's empty bound (greedy) stays empty."""
    greedy = {"config": "greedy[manhattan]", "solver": "greedy", "path_length": 7}
    rows = [row(), row(instance="d05-0002", **greedy)]
    solvers = {"astar_dict[manhattan]": {"optimal": True},
               "greedy[manhattan]": {"optimal": False}}  # fmt: skip
    res.write_meta(tmp_path, {"run_id": "r", "solvers": solvers})
    meta = json.loads((tmp_path / res.META_FILE).read_text())
    res.append_rows(tmp_path, rows)
    _, frame = analysis.read_run(tmp_path)
    assert frame.bound.isna().all()  # schema 6: what the rows say, nothing added
    meta["schema_version"] = 5
    (tmp_path / res.META_FILE).write_text(json.dumps(meta))
    lines = [",".join(line.split(",")[: len(res.schema_columns(5))])
             for line in res.format_rows(rows).splitlines()]  # fmt: skip
    (tmp_path / res.ROWS_FILE).write_text(
        "\n".join([",".join(res.schema_columns(5)), *lines]) + "\n"
    )
    _, frame = analysis.read_run(tmp_path)
    bounds = dict(zip(frame.config, frame.bound, strict=True))
    assert bounds["astar_dict[manhattan]"] == 1.0
    assert bounds["greedy[manhattan]"] != bounds["greedy[manhattan]"]  # NaN: none


def test_round_trip_keeps_values_and_types(tmp_path):
    res.write_meta(tmp_path, {"run_id": "r"})
    rows = [
        row(),
        row(repeat=1, seconds=2.5e-7),
        row(
            measure="memory",
            seconds=None,
            cpu_seconds=None,
            peak_bytes=12345,
            peak_rss_bytes=99 * 2**20,
        ),
        row(
            instance="u-1",
            solvable=False,
            optimal_length=None,
            status="unsolvable",
            moves=None,
            path_length=None,
            is_optimal=None,
            h_start=None,
            extra='{"pruned": 3}',
        ),
    ]
    assert res.append_rows(tmp_path, rows[:2]) == 2
    res.append_rows(tmp_path, rows[2:])
    meta, frame = analysis.read_run(tmp_path)
    assert meta == {"schema_version": res.SCHEMA_VERSION, "run_id": "r"}
    derived = [res.CONTRADICTED, "best_length", "quality_basis"]
    assert list(frame.columns) == [*res.column_names(), *derived]
    assert len(frame) == 4
    assert frame["seconds"].iloc[0] == 0.000123456789  # repr: no precision lost
    assert frame["seconds"].iloc[1] == 2.5e-7
    assert str(frame["expanded"].dtype) == "Int64"
    assert str(frame["is_optimal"].dtype) == "boolean"
    assert (
        frame["peak_bytes"].iloc[2] == 12345 and frame["peak_bytes"].isna().sum() == 3
    )
    last = frame.iloc[3]
    assert last["solvable"] == False and last["status"] == "unsolvable"  # noqa: E712
    assert frame["is_optimal"].isna().iloc[3] and frame["optimal_length"].isna().iloc[3]
    assert json.loads(last["extra"]) == {"pruned": 3}
    assert frame["message"].iloc[0] == ""


def test_text_fields_stay_on_one_line(tmp_path):
    nasty = 'line one\nline "two", with comma\r\nthree'
    res.append_rows(tmp_path, [row(status="error", message=nasty), row(repeat=1)])
    lines = (tmp_path / res.ROWS_FILE).read_text().splitlines()
    assert len(lines) == 3  # header + one physical line per row
    got = res.read_row_dicts(tmp_path)[0]["message"]
    assert got == 'line one line "two", with comma three'
    long = res.read_row_dicts(tmp_path)
    assert len(long) == 2
    res.append_rows(tmp_path, [row(repeat=2, moves="u" * (res.MAX_TEXT + 50))])
    assert len(res.read_row_dicts(tmp_path)[-1]["moves"]) == res.MAX_TEXT


def test_torn_last_line_is_dropped_and_repaired(tmp_path):
    res.append_rows(tmp_path, [row(), row(repeat=1)])
    path = tmp_path / res.ROWS_FILE
    whole = path.read_bytes()
    torn = res.format_rows([row(repeat=2)]).encode()[:40]  # killed mid-write
    path.write_bytes(whole + torn)
    assert [r["repeat"] for r in res.read_row_dicts(tmp_path)] == ["0", "1"]
    assert res.stored_keys(tmp_path) == {
        ("astar_dict[manhattan]", "8-mini", "d05-0001", "time", 0),
        ("astar_dict[manhattan]", "8-mini", "d05-0001", "time", 1),
    }
    assert res.repair_rows(tmp_path) == 40
    assert path.read_bytes() == whole
    assert res.repair_rows(tmp_path) == 0  # idempotent
    res.append_rows(tmp_path, [row(repeat=2)])
    assert [r["repeat"] for r in res.read_row_dicts(tmp_path)] == ["0", "1", "2"]


def test_torn_header_is_repaired_too(tmp_path):
    (tmp_path / res.ROWS_FILE).write_bytes(b"run_id,data")
    assert res.read_row_dicts(tmp_path) == []
    res.repair_rows(tmp_path)
    res.append_rows(tmp_path, [row()])
    assert len(res.read_row_dicts(tmp_path)) == 1


def test_malformed_rows_are_named(tmp_path):
    res.append_rows(tmp_path, [row()])
    with open(tmp_path / res.ROWS_FILE, "a") as fh:
        fh.write("only,three,fields\n")
    with pytest.raises(
        res.ResultsError,
        match=rf"rows.csv: line 3: 3 fields, expected {len(res.column_names())}",
    ):
        res.read_row_dicts(tmp_path)


def test_unknown_schema_version_is_rejected(tmp_path):
    res.write_meta(tmp_path, {"run_id": "x"})
    meta = json.loads((tmp_path / res.META_FILE).read_text())
    meta["schema_version"] = res.SCHEMA_VERSION + 1
    (tmp_path / res.META_FILE).write_text(json.dumps(meta))
    with pytest.raises(res.ResultsError, match=f"schema_version {res.SCHEMA_VERSION + 1} is not supported"):
        analysis.read_run(tmp_path)


def test_old_schema_fixture_is_rejected_clearly():
    with pytest.raises(res.ResultsError) as err:
        analysis.read_run(DATA / "old_schema_run")
    assert "meta.json: schema_version 0 is not supported" in str(err.value)
    assert "\n" not in str(err.value)
    schema = f"columns do not match schema {res.SCHEMA_VERSION}"
    with pytest.raises(res.ResultsError, match=schema):
        res.read_row_dicts(DATA / "old_schema_run")


def test_committed_v1_run_still_loads():
    """A run stored by schema version 1 (tests/data/run_v1) is read as version 2,
    the raw_* columns of version 2 empty."""
    meta, frame = analysis.read_run(DATA / "run_v1")
    assert meta["schema_version"] == 1 and meta["complete"] is True
    assert len(frame) == 12
    assert frame["raw_seconds"].isna().all() and frame["raw_cpu_seconds"].isna().all()
    # ...and what schema 1 lacks is said
    assert set(res.column_names()) <= set(frame.columns)
    assert frame["peak_rss_delta_bytes"].isna().all()
    assert frame["ref_cpu_seconds"].isna().all()
    assert (frame["cost_model"] == "unit").all()  # schema 9: old rows are unit
    assert frame["path_cost"].isna().all() and frame["optimal_cost"].isna().all()
    assert frame["necessary"].isna().all() and frame["over_necessary"].isna().all()
    gaps = " ".join(res.schema_gaps(meta))
    assert "peak_rss_delta_bytes" in gaps and "reference" in gaps
    assert res.schema_gaps({"schema_version": res.SCHEMA_VERSION}) == []
    bfs = frame[(frame["config"] == "good_bfs") & frame["solvable"]]
    assert (bfs["path_length"] == bfs["optimal_length"]).all()
    assert set(frame["status"]) == {"solved", "unsolvable", "invalid"}


def test_missing_run_is_a_clear_error(tmp_path):
    with pytest.raises(res.ResultsError, match="no such run directory"):
        analysis.read_run(tmp_path / "nope")
    with pytest.raises(res.ResultsError, match="meta.json: no such file"):
        analysis.read_run(tmp_path)
    (tmp_path / res.META_FILE).write_text("{not json")
    with pytest.raises(res.ResultsError, match="cannot read"):
        res.read_meta(tmp_path)


def test_run_ids_and_directories_are_never_reused(tmp_path):
    when = datetime(2026, 12, 2, 17, 0, 0, tzinfo=UTC)
    run_id = res.make_run_id({"commit": "3f9c2a1b" + "0" * 32, "dirty": False}, when)
    assert run_id == "20261202T170000Z-3f9c2a1b"
    assert res.make_run_id({"commit": "abcdef12", "dirty": True}, when).endswith(
        "-dirty"
    )
    assert res.make_run_id({"commit": None, "dirty": None}, when).endswith("-nogit")
    first = res.new_run_dir(tmp_path, run_id)
    (first / "rows.csv").write_text("keep me")
    second = res.new_run_dir(tmp_path, run_id)
    third = res.new_run_dir(tmp_path, run_id)
    assert [first.name, second.name, third.name] == [
        run_id,
        f"{run_id}-2",
        f"{run_id}-3",
    ]
    assert (first / "rows.csv").read_text() == "keep me"


def test_git_info_of_this_checkout():
    info = res.git_info()
    if info["commit"] is None:
        pytest.skip("not a git checkout")
    assert re.fullmatch(r"[0-9a-f]{40}", info["commit"])
    assert isinstance(info["dirty"], bool)


def test_meta_is_replaced_atomically(tmp_path):
    res.write_meta(tmp_path, {"run_id": "a", "complete": False})
    res.write_meta(tmp_path, {"run_id": "a", "complete": True})
    assert res.read_meta(tmp_path)["complete"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json"]


def test_run_meta_round_trips_and_keeps_what_it_does_not_know():
    meta = res.RunMeta("r1", "2026-01-01T00:00:00Z", environment={"python": "3.11"})
    data = meta.to_json()
    assert data["schema_version"] == res.SCHEMA_VERSION and data["python"] == "3.11"
    # optional keys appear once set: readers test for their presence
    assert "executors" not in data and "experiment" not in data
    assert data["finished_utc"] is None and data["complete"] is False
    data["a_later_key"] = {"x": 1}
    again = res.RunMeta.from_json(data)
    assert again.environment == {"python": "3.11"}
    assert again.extra == {"a_later_key": {"x": 1}}
    assert again.to_json() == data
    again.executors.append({"kind": "local", "slots": 1})
    assert again.to_json()["executors"] == [{"kind": "local", "slots": 1}]
