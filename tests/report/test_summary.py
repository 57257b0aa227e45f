"""The one summary of a run (harness.report.summary_table) as text: `harness report
--format table` and the end of `harness run` (the same function) split solvable
from unsolvable boards as the report does, and fit 80 and 120 columns with units
in the headers (tests/test_report.py checks report.md shows the same rows)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner
from where import DATA

from harness.analysis import load_run
from harness.cli import app
from harness.report.summary_table import summary_blocks, summary_text

FIXTURE = DATA / "run_fixture"


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """run_fixture with its unsolvable boards moved into the solvable dataset, as
    8-mini mixes them, and one config given a long name."""
    run = tmp_path_factory.mktemp("mixed") / "run"
    shutil.copytree(FIXTURE, run)
    rows = (run / "rows.csv").read_text().replace(",8-unsolvable,", ",8-depths,")
    long = "astar_dict[a_much_longer_heuristic_name]"
    (run / "rows.csv").write_text(rows.replace("astar_dict[misplaced]", long))
    meta = json.loads((run / "meta.json").read_text())
    meta["datasets"]["8-depths"]["instances"] += meta["datasets"].pop("8-unsolvable")[
        "instances"
    ]
    meta["solvers"][long] = meta["solvers"].pop("astar_dict[misplaced]")
    (run / "meta.json").write_text(json.dumps(meta))
    return run


def _table(run: Path, columns: int) -> str:
    result = CliRunner().invoke(
        app, ["report", str(run), "--format", "table"], env={"COLUMNS": str(columns)}
    )
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("columns", [80, 120])
def test_the_summary_fits_the_width_with_units_and_whole_names(
    mixed_run: Path, columns: int
) -> None:
    text = _table(mixed_run, columns)
    assert max(len(line) for line in text.splitlines()) <= columns
    assert "median ms" in text and "median nodes" in text  # units in the headers
    assert "…" not in text
    lines = text.splitlines()
    long = "astar_dict[a_much_longer_heuristic_name] "
    assert any(ln.startswith(long) for ln in lines)
    # solvable and unsolvable boards of one dataset are two blocks, as in the report
    assert "8-depths (solvable): 4 boards" in text
    assert "8-depths (unsolvable): 2 boards" in text
    if columns == 80:
        assert "Left out to fit 80 columns: median ms" in text.replace("\n", " ")
    else:
        # the verdict's place and the time it ranks by stay; the median goes first
        assert "place" in lines[1] and "gmean ms" in lines[1]


def test_a_narrow_width_keeps_the_config_column(mixed_run: Path) -> None:
    text = summary_text(summary_blocks(load_run(mixed_run)), 50)
    assert "Left out to fit 50 columns" in text.replace("\n", " ")
    assert "astar_dict[a_much_longer_heuristic_name]" in text
