"""Plain board files: `harness datasets import`, `harness run --datasets FILE`."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import in_process
import pytest

from harness.datasets import DatasetError, load_dataset, save_dataset
from harness.datasets.board_files import import_boards, is_board_file, read_boards
from harness.puzzle import grid

ENV = {"CI": "1", "COLUMNS": "200"}

BOARDS = """\
# my boards, judge format
2 3 4 1 5 x 7 6 8
1 2 3 4 5 6 8 7 0   # unsolvable: two tiles swapped

123x46758
1 2 3 4 5 6 7 8 x
8 6 7 2 5 4 3 x 1
"""


def harness(*args: str) -> subprocess.CompletedProcess:
    return in_process.harness(*args, env=ENV)


def test_judge_format_with_comments_and_blank_lines(tmp_path):
    path = tmp_path / "boards.txt"
    path.write_text(BOARDS)
    g, boards = read_boards(path)
    assert g == grid(3) and [n for n, _, _ in boards] == [2, 3, 5, 6, 7]
    ds = import_boards(path, name="mine")
    assert [i.optimal_length for i in ds.instances] == [19, None, 3, 0, 31]
    assert [i.solvable for i in ds.instances] == [True, False, True, True, True]
    assert ds.instances[0].optimal_source == "oracle"
    # A normal dataset file: saved, loaded back (with every check) unchanged.
    loaded = load_dataset(save_dataset(ds, tmp_path / "out"))
    assert loaded.checksum == ds.checksum and loaded.generator == "import"


def test_json_lines_and_ids(tmp_path):
    path = tmp_path / "boards.jsonl"
    path.write_text(
        json.dumps({"board": [1, 2, 3, 4, 5, 6, 7, 8, 0], "id": "solved"})
        + "\n"
        + json.dumps({"board": "2 3 4 1 5 x 7 6 8"})
        + "\n"
    )
    assert is_board_file(str(path))
    ds = import_boards(path, name="j")
    assert [i.id for i in ds.instances] == ["solved", "d19-0001"]


def test_solver_label_on_4x4(tmp_path):
    path = tmp_path / "four.txt"
    path.write_text("1 2 3 4 5 6 7 8 9 10 11 12 13 x 14 15\n")
    ds = import_boards(path, name="four", label="solver:ida_star[manhattan]")
    assert ds.instances[0].optimal_length == 2
    assert ds.instances[0].optimal_source == "solver:ida_star[manhattan]"
    assert import_boards(path, name="four").instances[0].optimal_length is None


def test_bad_line_7_is_named(tmp_path):
    path = tmp_path / "bad.txt"
    lines = BOARDS.splitlines()  # 7 lines; make the 7th bad
    lines[6] = "8 6 7 2 5 4 3 x 9"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"bad.txt: line 7: token 9 '9'"):
        read_boards(path)
    proc = harness("datasets", "import", str(path), "--name", "bad", "--out",
                   str(tmp_path))  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines_err = proc.stderr.strip().splitlines()
    assert len(lines_err) == 1 and "line 7" in lines_err[0], proc.stderr
    assert not (tmp_path / "bad.jsonl").exists()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "no board"),
        ("1 2 3\n", "line 1: 3 tokens do not make an n x n"),
        ("2 3 4 1 5 x 7 6 8\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 x\n",
         "line 2: expected 9 tokens"),
        ('{"bord": "1 2 3 4 5 6 7 8 x"}\n', 'line 1: a JSON line needs a "board"'),
        ('{"board": "1 2 3 4 5 6 7 8 x"\n', "line 1: not JSON"),
    ],
)  # fmt: skip
def test_bad_files(tmp_path, text, fragment):
    path = tmp_path / "b.txt"
    path.write_text(text)
    with pytest.raises(DatasetError, match=fragment):
        read_boards(path)


def test_duplicate_ids_are_rejected(tmp_path):
    path = tmp_path / "d.jsonl"
    line = json.dumps({"board": "1 2 3 4 5 6 7 8 x", "id": "a"})
    path.write_text(line + "\n" + line + "\n")
    with pytest.raises(DatasetError, match="line 2: id 'a' already used on line 1"):
        import_boards(path, name="d")


def test_a_given_id_clashing_with_the_numbering_is_rejected_either_way(tmp_path):
    """The import is streamed (issue 35 item 10): numbered ids are not kept, yet a
    given id that repeats one is still caught, before or after it."""
    from harness.datasets.board_files import import_to_file

    solved = "1 2 3 4 5 6 7 8 x"
    for lines, said in (
        ([solved, {"board": solved, "id": "d00-0001"}], "line 2: id 'd00-0001' "
         "already used by an earlier board's numbering"),
        ([{"board": solved, "id": "d00-0002"}, solved, solved], "line 2: id "
         "'d00-0002' already used on line 1"),
        ([{"board": solved, "id": "d00-0001"}, solved], None),  # took its own number
    ):  # fmt: skip
        path = tmp_path / "ids.txt"
        path.write_text("".join(
            (json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines
        ))  # fmt: skip
        if said is None:
            ds = import_boards(path, name="ids")
            assert [i.id for i in ds.instances] == ["d00-0001", "d00-0002"]
            continue
        with pytest.raises(DatasetError, match=said):
            import_boards(path, name="ids")
        with pytest.raises(DatasetError, match=said):
            import_to_file(path, tmp_path / "out", name="ids")
        assert not (tmp_path / "out" / "ids.jsonl").exists()


def test_the_streamed_import_writes_what_the_whole_one_does(tmp_path):
    from harness.datasets.board_files import import_to_file

    path = tmp_path / "boards.txt"
    path.write_text(BOARDS)
    whole = save_dataset(import_boards(path, name="b"), tmp_path / "whole")
    streamed, summary = import_to_file(path, tmp_path / "streamed", name="b")
    assert streamed.read_bytes() == whole.read_bytes()
    assert summary["sha256"] == load_dataset(whole).checksum


def test_cli_import_then_run_a_plain_board_file(tmp_path):
    path = tmp_path / "boards.txt"
    path.write_text(BOARDS)
    proc = harness("datasets", "import", str(path), "--name", "mine", "--out",
                   str(tmp_path / "ds"))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "5 instances (1 unsolvable)" in proc.stdout
    assert (tmp_path / "ds" / "mine.jsonl").is_file()
    proc = harness(
        "run", "--solvers", "ida_star", "--datasets", str(path), "--repeats", "1",
        "--no-memory", "--no-report", "--quiet", "--out", str(tmp_path / "runs"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    run_dir = Path(proc.stdout.strip().splitlines()[-1])

    with open(run_dir / "rows.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {r["dataset"] for r in rows} == {"boards"}
    assert sorted(r["status"] for r in rows) == ["solved"] * 4 + ["unsolvable"]
    assert all(r["is_optimal"] == "True" for r in rows if r["status"] == "solved")
