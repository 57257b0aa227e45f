"""A run under unit and tile costs (NAME and NAME@MODEL): the report's finding
names a ranking that changes between them, and only then; the summary's legend
says what optimal and len/opt mean under tile costs."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from where import DATA

from harness.analysis import load_run
from harness.report.findings import findings
from harness.report.summary_table import summary_blocks, summary_text

FIXTURE = DATA / "run_fixture"
FINDING = "Tile costs change the ranking by CPU time on 8-depths"


def _with_heavy(tmp: Path, slower: dict[str, float]) -> Path:
    """run_fixture plus its 8-depths rows again as 8-depths@heavy, each config's
    CPU time there multiplied by ``slower[config]`` (default 1)."""
    run = tmp / "run"
    shutil.copytree(FIXTURE, run)
    with (run / "rows.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    heavy = []
    for row in rows:
        if row["dataset"] == "8-depths":
            twin = dict(row, dataset="8-depths@heavy")
            factor = slower.get(row["config"], 1.0)
            for key in ("cpu_seconds", "seconds"):
                if twin[key]:
                    twin[key] = repr(float(twin[key]) * factor)
            heavy.append(twin)
    with (run / "rows.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows + heavy)
    meta = json.loads((run / "meta.json").read_text())
    meta["datasets"]["8-depths@heavy"] = dict(meta["datasets"]["8-depths"])
    (run / "meta.json").write_text(json.dumps(meta))
    return run


def _report(run: Path) -> str:
    """The report's findings and the summary as text (report.md's findings and
    legend; the plots are left out: seconds each)."""
    loaded = load_run(run)
    return "\n".join(findings(loaded)) + "\n" + summary_text(summary_blocks(loaded),
                                                             200)  # fmt: skip


@pytest.mark.parametrize("flips", [True, False])
def test_the_finding_names_a_ranking_that_tile_costs_change(tmp_path, flips):
    # On the boards all five solved, ida_star is third by CPU time under unit
    # costs (greedy first); 20x slower under heavy costs it is last. 3x for
    # every config keeps the order.
    slower = {"ida_star[manhattan]": 20.0} if flips else {
        c: 3.0 for c in ("ida_star[manhattan]", "astar_dict[manhattan]",
                         "astar_dict[misplaced]", "bfs", "greedy[manhattan]")
    }  # fmt: skip
    text = _report(_with_heavy(tmp_path, slower))
    if flips:
        assert FINDING in text
        finding = text[text.index(FINDING):].split("\n")[0]
        assert "fastest under unit costs greedy[manhattan], under heavy costs " \
            "(8-depths@heavy) greedy[manhattan]" in finding
        assert "ida_star[manhattan] 3 -> 5" in finding
    else:
        assert "Tile costs change the ranking" not in text
    assert "Under tile costs (8-depths@heavy): optimal: answers of optimal cost" in text

