"""JSON from files anyone may have edited: nesting past the limit is bad JSON (a
ValueError), never a RecursionError (issue 35 item 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from in_process import harness

from harness.core.jsontext import MAX_DEPTH, loads

DEEP = "[" * 100_000


def test_the_limit_is_exact_and_every_depth_past_it_is_bad_json() -> None:
    nested: list = []
    for _ in range(MAX_DEPTH - 1):
        nested = [nested]
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) == nested
    assert loads('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    for text in ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), DEEP, DEEP.encode()):
        with pytest.raises(json.JSONDecodeError, match="nested deeper than"):
            loads(text)


def test_deep_meta_json_and_dataset_lines_are_one_line_errors(tmp_path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "meta.json").write_text(DEEP)
    (run / "rows.csv").write_text("")
    got = harness("report", str(run), "--format", "table")
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert "meta.json: cannot read: nested deeper than" in got.stderr
    header = Path("datasets/8-seeds.jsonl").read_text().splitlines()[0]
    data = tmp_path / "d.jsonl"
    data.write_text(header.replace('"8-seeds"', '"d"') + "\n" + DEEP + "\n")
    got = harness("datasets", "show", str(data))
    assert got.returncode == 2 and "Traceback" not in got.stderr
    assert "d.jsonl: line 2 bad JSON: nested deeper than" in got.stderr
    boards = tmp_path / "boards.txt"
    boards.write_text('{"board": ' + DEEP + "\n")
    got = harness("datasets", "import", str(boards), "--name", "b")
    assert got.returncode == 2 and "line 1: not JSON (nested deeper" in got.stderr


def test_a_cache_header_nested_too_deeply_is_a_table_to_rebuild(tmp_path) -> None:
    """It raised RecursionError, past the reader's `except ValueError`, on every
    later solve, until someone deleted the file; None makes load_table rebuild."""
    from array import array

    from harness.heuristics import pdb_files
    from harness.puzzle import grid

    path = tmp_path / "table.bin"
    path.write_bytes(DEEP.encode() + b"\n" + bytes(16))
    assert pdb_files.read_table(path, grid(3), (1, 2), 0, array("B", bytes(16))) is None
    path.write_bytes(b"[" * (1 << 20))  # no newline: the header is read bounded
    assert pdb_files.read_table(path, grid(3), (1, 2), 0, array("B", bytes(16))) is None
