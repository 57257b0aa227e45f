"""A real (small) run, read the way its readers read it: the terminal summary,
report.md and report.html name the same winner per block, the one that
harness.analysis.verdict chose; and (test_report_in_a_browser) the page works in
Debian's Chromium. One run serves both: four pure-Python configs on 8-seeds,
~4 s of CPU."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import in_process
import pytest

from harness.analysis import load_run
from harness.analysis.verdict import run_verdicts

SOLVERS = "astar_dict[manhattan],ida_star[manhattan],greedy[manhattan],table"


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> tuple[Path, str]:
    """(the run directory, what `harness run` printed)."""
    out = tmp_path_factory.mktemp("results")
    proc = in_process.harness(
        "run", "--solvers", SOLVERS, "--datasets", "8-seeds", "--repeats", "1",
        "--jobs", "1", "-q", "--out", str(out),
        env={"CI": "1", "COLUMNS": "100"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return Path(proc.stdout.strip().splitlines()[-1]), proc.stdout


class _Verdicts(HTMLParser):
    """The blocks and winners of report.html's verdict list (ul.verdict: the
    block name in <b>, the winner in <strong>)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, str] = {}
        self._in, self._tag, self._block = False, "", ""

    def handle_starttag(self, tag, attrs):
        if tag == "ul" and ("class", "verdict") in attrs:
            self._in = True
        self._tag = tag

    def handle_endtag(self, tag):
        if tag == "ul":
            self._in = False
        self._tag = ""

    def handle_data(self, data):
        if self._in and self._tag == "b":
            self._block = data
        elif self._in and self._tag == "strong":
            self.found[self._block] = data


def _winners_in_text(text: str) -> dict[str, str]:
    """'- NAME: CONFIG wins, ...' (terminal) or '- **NAME**: CONFIG wins' (md)."""
    pattern = r"^- (?:\*\*)?(.+?)(?:\*\*)?: (\S+) wins,"
    return dict(re.findall(pattern, text, flags=re.MULTILINE))


def test_every_reader_is_told_the_same_winner(real_run) -> None:
    run_dir, printed = real_run
    said = {v.dataset: v.winner.config for v in run_verdicts(load_run(run_dir))
            if v.winner is not None}  # fmt: skip
    # greedy is fastest of the searches here but not optimal, table a lookup:
    # neither may win
    assert said and not set(said.values()) & {"greedy[manhattan]", "table"}
    terminal = _winners_in_text(printed.replace("\n  ", " "))
    markdown = _winners_in_text((run_dir / "report.md").read_text(encoding="utf-8"))
    page = _Verdicts()
    page.feed((run_dir / "report.html").read_text(encoding="utf-8"))
    assert terminal == markdown == page.found == said
