"""``harness datasets list|show|generate|rebuild`` through typer's CliRunner, plus one
real subprocess to prove no traceback reaches the terminal."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner
from where import ROOT

from harness import datasets as D
from harness.cli import app
from harness.datasets import catalogue

ROOT = ROOT
runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, ["datasets", *args])


def test_list_shows_every_committed_dataset() -> None:
    result = invoke("list")
    assert result.exit_code == 0, result.output
    for name in catalogue.RECIPES:
        assert name in result.output
    line = next(ln for ln in result.output.splitlines() if "8-strata " in ln)
    assert "3x3" in line and "0..31" in line and "92" in line


def test_list_json_and_csv() -> None:
    rows = json.loads(invoke("list", "--format", "json").output)
    by_name = {r["name"]: r for r in rows}
    assert by_name["15-korf100"]["goal"] == "blank-first"
    assert by_name["15-korf100"]["depths"] == "41..66"
    assert by_name["8-unsolvable"]["unsolvable"] == 50
    table = list(csv.DictReader(io.StringIO(invoke("list", "--format", "csv").output)))
    assert {r["name"] for r in table} == set(by_name)


def test_list_reports_a_broken_file_and_keeps_the_rest(tmp_path, monkeypatch) -> None:
    (tmp_path / "broken.jsonl").write_text("{not json\n")
    monkeypatch.setenv("NPUZZLE_DATASETS", str(tmp_path))
    result = invoke("list")
    assert result.exit_code == 1
    assert "8-seeds" in result.stdout
    assert "error:" in result.stderr
    assert "broken.jsonl: line 1 bad JSON" in result.stderr


def test_list_marks_built_in_datasets(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(catalogue, "repo_datasets_dir", lambda: None)
    monkeypatch.chdir(tmp_path)
    rows = json.loads(invoke("list", "--format", "json").output)
    assert {r["name"] for r in rows} == set(catalogue.RECIPES)
    assert {r["path"] for r in rows} == {"built-in"}
    result = invoke("rebuild", "8-seeds")
    assert result.exit_code == 2 and "--out" in result.stderr


def test_show_table_json_csv() -> None:
    result = invoke("show", "8-seeds")
    assert result.exit_code == 0
    assert "standard" in result.output and "depth" in result.output
    assert "harness datasets rebuild 8-seeds" in result.output
    data = json.loads(invoke("show", "8-strata", "--format", "json").output)
    assert data["instances"] == 92 and data["histogram"]["31"] == 2
    assert data["histogram"]["0"] == 1
    rows = list(csv.DictReader(io.StringIO(
        invoke("show", "8-mini", "--format", "csv").output)))
    assert rows[-1] == {"dataset": "8-mini", "depth": "unsolvable", "count": "4"}
    assert sum(int(r["count"]) for r in rows) == 36
    listing = json.loads(
        invoke("show", "8-seeds", "--format", "json", "--instances").output
    )["instance_list"]
    assert listing[0]["board"] == "2 3 4 1 5 x 7 6 8"
    assert listing[0]["optimal_length"] == 19
    assert "seed001-judge" in invoke("show", "8-seeds", "--instances").output


def test_show_unknown_and_malformed(tmp_path) -> None:
    result = invoke("show", "no-such-set")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: unknown dataset 'no-such-set'")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "npuzzle-dataset", "version": 9}\n')
    result = invoke("show", str(bad))
    assert result.exit_code == 2
    assert "bad.jsonl: line 1 unknown format version 9" in result.stderr
    assert "Traceback" not in result.output


def test_generate_writes_a_file_identical_to_the_library(tmp_path) -> None:
    args = ["generate", "uniform", "--size", "3x3", "--count", "25", "--seed", "8",
            "--name", "u25", "--out", str(tmp_path)]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "25 instances" in result.output
    written = (tmp_path / "u25.jsonl").read_bytes()
    ds = D.load_dataset(tmp_path / "u25.jsonl")
    assert written == D.dumps_dataset(D.regenerate(ds)).encode()
    assert ds.command.startswith("harness datasets generate uniform --size 3x3")

    again = invoke(*args)
    assert again.exit_code == 2 and "already exists" in again.stderr
    assert (tmp_path / "u25.jsonl").read_bytes() == written
    assert invoke(*args, "--force").exit_code == 0
    assert (tmp_path / "u25.jsonl").read_bytes() == written


def test_generate_each_generator_and_options(tmp_path) -> None:
    out = str(tmp_path)
    cases = [
        (["random_walk", "--size", "4x4", "--length", "20", "--count", "5"], "4x4"),
        (["unsolvable", "--goal", "spiral", "--count", "5"], "spiral"),
        (["depth_strata", "--count", "2", "--depth", "28..31", "--unsolvable", "1"],
         "28..31"),
        (["uniform", "--size", "2x3", "--goal", "x 1 2 3 4 5", "--count", "4"], "2x3"),
    ]
    for i, (args, expect) in enumerate(cases):
        result = invoke("generate", *args, "--name", f"g{i}", "--out", out)
        assert result.exit_code == 0, result.output
        shown = invoke("show", str(tmp_path / f"g{i}.jsonl"))
        assert shown.exit_code == 0 and expect in shown.output
    strata = D.load_dataset(tmp_path / "g2.jsonl")
    assert sorted(i.optimal_length or -1 for i in strata.instances) == [
        -1, 28, 28, 29, 29, 30, 30, 31, 31]
    spiral = D.load_dataset(tmp_path / "g1.jsonl")
    assert "--goal spiral" in spiral.command


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["uniform", "--size", "3by3"], "--size: board size '3by3'"),
        (["uniform", "--goal", "1 2 3"], "--goal: goal '1 2 3'"),
        (["random_walk"], "random_walk: --length is required"),
        (["depth_strata", "--depth", "40"], "no 3x3 board is at depth 40"),
        (["depth_strata", "--depth", "3..x"], "depths '3..x'"),
        (["depth_strata", "--size", "4x4"], "at most 9 squares"),
        (["uniform", "--size", "2x2", "--count", "50"], "found only 12 distinct"),
        (["uniform", "--label", "solver:nope"], "unknown solver 'nope'"),
        (["uniform", "--label", "maybe"], "label 'maybe'"),
    ],
)
def test_generate_errors_are_one_line(tmp_path, args, message) -> None:
    result = invoke("generate", *args, "--name", "e", "--out", str(tmp_path))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "e.jsonl").exists()


def test_generate_rejects_reserved_and_bad_names(tmp_path) -> None:
    for name in ("default", "all", "../x"):
        result = invoke("generate", "uniform", "--name", name, "--out", str(tmp_path))
        assert result.exit_code == 2 and "dataset name" in result.stderr


def test_rebuild_check_and_write(tmp_path) -> None:
    result = invoke("rebuild", "--check", "8-seeds", "8-mini", "15-korf100")
    assert result.exit_code == 0, result.output
    assert result.output.count(": ok") == 3
    result = invoke("rebuild", "8-seeds", "--out", str(tmp_path))
    assert result.exit_code == 0 and "written" in result.output
    assert (tmp_path / "8-seeds.jsonl").read_bytes() == (
        ROOT / "datasets" / "8-seeds.jsonl").read_bytes()
    (tmp_path / "8-seeds.jsonl").write_text("changed\n")
    result = invoke("rebuild", "--check", "8-seeds", "--out", str(tmp_path))
    assert result.exit_code == 1 and "DIFFERS" in result.output
    assert "differ from their recipes: 8-seeds" in result.stderr
    result = invoke("rebuild", "nope")
    assert result.exit_code == 2 and "no recipe for 'nope'" in result.stderr


def test_console_script_prints_one_line_and_no_traceback(tmp_path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\xff\xfe")
    proc = subprocess.run(
        [sys.executable, "-c", "from harness.cli import main; main()", "datasets",
         "show", str(bad)],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and "not UTF-8" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


GENERATOR_PLUGIN = '''
from harness.datasets.generators import Drawn, register_generator, uniform_boards

@register_generator("corner_cases", "uniform boards, as a plugin")
def corner_cases(grid, goal, *, stream, count, **_):
    boards = uniform_boards(grid, goal, count=count, stream=stream)
    return Drawn(boards, {"count": count})
'''


def test_a_plugin_generator_is_gone_after_the_scope_that_loaded_it(tmp_path) -> None:
    from harness.solver import scoped_registry

    plugin = tmp_path / "gen_plugin.py"
    plugin.write_text(GENERATOR_PLUGIN)
    with scoped_registry():
        made = invoke("generate", "--plugin", str(plugin), "corner_cases", "--size",
                      "2x3", "--count", "2", "--name", "cc", "--out", str(tmp_path))
        assert made.exit_code == 0, made.output
        assert "corner_cases" in D.all_generators()
    assert "corner_cases" not in D.all_generators()
    assert list(D.all_generators())[: len(D.GENERATORS)] == list(D.GENERATORS)
    gone = invoke("generate", "corner_cases", "--size", "2x3", "--count", "2",
                  "--name", "cc2", "--out", str(tmp_path))
    assert gone.exit_code == 2 and "corner_cases" in gone.output
