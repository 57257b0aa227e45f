"""A real (small) run, read the way its readers read it: the terminal summary,
report.md and report.html name the same winner per block, the one that
harness.analysis.verdict chose; and (test_report_in_a_browser) the page works in
Debian's Chromium. One run serves both: four pure-Python configs on 8-seeds,
~4 s of CPU."""

from __future__ import annotations

import os
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


# ------------------------------------------------------------ in a real browser

#: As /work's machine notes found them to work as root with no network: no
#: sandbox (root), no GPU, no calls home.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
CHROMIUM = Path("/usr/bin/chromium")


def _browser_or_skip():
    """Playwright's sync API, or a skip saying what is missing; in CI (CI set) a
    missing browser is a failure: .ci/run installs Debian's chromium."""
    why = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "playwright is not installed (pip install -e '.[test]')"
    if why is None and not CHROMIUM.is_file():
        why = f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does)"
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return sync_playwright


def test_the_yardstick_is_drawn_with_its_line_of_one(real_run) -> None:
    """Expansions over the necessary set (schema 10) get their plot; A* and IDA*
    with a consistent heuristic are never below 1x on any board (a theorem: each
    expands every board with g* + h < C*, IDA* in its last iteration), and the
    table lookup has no yardstick."""
    run_dir, _ = real_run
    rows = load_run(run_dir).rows
    over = rows.groupby("config")["over_necessary"].min()
    assert over["astar_dict[manhattan]"] >= 1.0
    assert over["ida_star[manhattan]"] >= 1.0
    assert over.isna()["table"]  # a lookup: nothing to measure against
    png = run_dir / "plots" / "over_necessary_vs_depth.png"
    assert png.stat().st_size > 5000
    page = (run_dir / "report.md").read_text()
    assert "Nodes expanded over the necessary set vs optimal depth" in page
    assert "Dotted: 1x, the necessary set" in page


def test_report_in_a_browser(real_run, tmp_path) -> None:
    """Debian's Chromium opens report.html at 1,400x900: no console error, the
    verdict in the first viewport, every contents link lands on its heading, a
    click on a header sorts the table, every plot loads. The first viewport is
    saved as report_first_screen.png ($NPUZZLE_ARTIFACTS, else the test's tmp)."""
    sync_playwright = _browser_or_skip()
    html = real_run[0] / "report.html"
    shots = Path(os.environ.get("NPUZZLE_ARTIFACTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM),
            args=CHROMIUM_FLAGS, headless=True,
            viewport={"width": 1400, "height": 900},
        )  # fmt: skip
        try:
            page = browser.new_page()
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(html.as_uri())
            page.screenshot(path=str(shots / "report_first_screen.png"))
            _check_page(page)
        finally:
            browser.close()
    assert errors == []


def _check_page(page) -> None:
    # the verdict: its first sentence names a winner and ends above the fold
    first = page.locator("ul.verdict li").first
    assert " wins, " in first.inner_text()
    box = first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900
    # every contents link scrolls its heading to the top of the window (or, near
    # the end of the page, as far as the page scrolls: into sight)
    links = page.locator("nav.toc a")
    assert links.count() >= 6
    where = """h => [h.tagName, h.getBoundingClientRect().top,
        window.scrollY + window.innerHeight >= document.body.scrollHeight - 2]"""
    for i in range(links.count()):
        target = links.nth(i).get_attribute("href")
        links.nth(i).click()
        tag, top, at_end = page.eval_on_selector(target, where)
        assert tag in ("H2", "H3"), (target, tag)
        assert abs(top) < 5 or (at_end and 0 <= top < 900), (target, top)
    page.evaluate("window.scrollTo(0, 0)")
    # a click on a header sorts by it (again: the other way)
    table = page.locator("#summary ~ * table, details:has(#summary) table").first
    header = table.locator("thead th", has_text="config").first
    column = "els => els.map(e => e.cells[0].textContent)"
    rows = table.locator("tbody tr")
    before = rows.evaluate_all(column)
    header.click()
    up = rows.evaluate_all(column)
    header.click()
    down = rows.evaluate_all(column)
    assert up == sorted(before) and down == up[::-1] and up != before
    # every plot is a decoded image
    sizes = page.locator("figure img").evaluate_all(
        "imgs => imgs.map(i => i.complete ? i.naturalWidth : 0)"
    )
    assert sizes and all(w > 0 for w in sizes)
