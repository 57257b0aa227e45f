"""The reporter, from the committed hand-made fixtures only (tests/data/run_fixture*).

Expected numbers are literals worked out by hand from the fixture rows (see the
comments and tests/data/run_fixture/README.md), never recomputed by the code
under test.
"""

from __future__ import annotations

import base64
import json
import math
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from where import DATA

from harness import report
from harness.report import ReportError
from harness.report.findings import _skip_sentences
from harness.report.plots import PLOT_NAMES
from harness.report.styles import style_map

DATA = DATA
RUN_A = DATA / "run_fixture"
RUN_B = DATA / "run_fixture_b"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run_a() -> report.Run:
    return report.load_run(RUN_A)


@pytest.fixture(scope="module")
def table(run_a):
    """summary() of run A, indexed by (dataset, config) for lookups."""
    return report.summary(run_a.rows).set_index(["dataset", "config"])


@pytest.fixture(scope="module")
def said() -> list[str]:
    """What write_report said while writing the ``single`` report."""
    return []


@pytest.fixture(scope="module")
def single(tmp_path_factory, said) -> Path:
    out = tmp_path_factory.mktemp("single")
    return report.write_report([RUN_A], out, progress=said.append)


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pair")
    return report.write_report([RUN_A, RUN_B], out)


# ------------------------------------------------------------- the numbers


def test_astar_manhattan_on_depths_matches_hand_computation(table):
    row = table.loc[("8-depths", "astar_dict[manhattan]")]
    assert (row.instances, row.solved, row.answered) == (4, 4, 4)
    # Per-instance median of 3 repeats (ms): d02 {0.04,0.05,0.03} -> 0.04,
    # d04 {0.16,0.15,0.18} -> 0.16, d08-0000 {2.6,2.5,3.0} -> 2.6,
    # d08-0001 {50,48,55} -> 50. Median of [0.04, 0.16, 2.6, 50] = (0.16+2.6)/2.
    assert row.median_ms == pytest.approx(1.38)
    # p90, linear: position 0.9 * 3 = 2.7 -> 2.6 + 0.7 * (50 - 2.6) = 35.78.
    assert row.p90_ms == pytest.approx(35.78)
    # expanded [3, 12, 200, 4000] -> (12+200)/2; generated [6, 30, 510, 9840].
    assert row.median_expanded == 106
    assert row.median_generated == 270
    # b*: 6 at d=2, 30 at d=4, 510 at d=8 give b*=2 (N = 2^(d+1) - 2);
    # 9840 at d=8 gives b*=3 (N = (3^9 - 1)/2 - 1). Median of [2, 2, 2, 3] = 2.
    assert row.median_ebf == pytest.approx(2.0, abs=1e-9)
    assert row.optimal_share == 1.0
    # memory rows: tracemalloc peaks 2048, 8192, 65536, 1 MiB; RSS 30, 30, 31, 32 MiB.
    assert row.peak_traced_mib == 1.0
    assert row.peak_rss_mib == 32.0


def test_other_depth_cells_match_hand_computation(table):
    mis = table.loc[("8-depths", "astar_dict[misplaced]")]
    # medians 0.05, 0.6, 48, 2.7 ms -> sorted [0.05, 0.6, 2.7, 48]: (0.6+2.7)/2
    assert mis.median_ms == pytest.approx(1.65)
    assert mis.p90_ms == pytest.approx(2.7 + 0.7 * (48 - 2.7))  # 34.41
    assert (mis.median_expanded, mis.median_generated) == (125, 315)
    assert mis.median_ebf == pytest.approx(3.0, abs=1e-9)  # b* = [3, 3, 3, 2]
    bfs = table.loc[("8-depths", "bfs")]
    # medians 0.08, 0.5, 41, 44 ms; expanded [7, 45, 3500, 3600]
    assert bfs.median_ms == pytest.approx(20.75)
    assert bfs.p90_ms == pytest.approx(43.1)
    assert bfs.median_expanded == 1772.5
    assert bfs.median_ebf == pytest.approx(3.0, abs=1e-9)  # b* = [4, 3, 3, 3]
    assert bfs.peak_traced_mib == 2.0
    ida = table.loc[("8-depths", "ida_star[manhattan]")]
    # d08-0001 errored: 3 answered, medians 0.04, 0.10, 8.8 ms; one 10-move path
    # where 8 is optimal -> 2 of 3 optimal.
    assert (ida.solved, ida.error, ida.answered) == (3, 1, 3)
    assert ida.median_ms == pytest.approx(0.10)
    assert ida.p90_ms == pytest.approx(0.10 + 0.8 * (8.8 - 0.10))  # 7.06
    assert ida.optimal_share == pytest.approx(2 / 3)
    # tracemalloc peak 8192 bytes (the error's memory row has none)
    assert ida.peak_traced_mib == pytest.approx(8192 / 2**20)
    greedy = table.loc[("8-depths", "greedy[manhattan]")]
    # d04 invalid is left out: medians 0.03, 0.12, 155 ms; 1 of 3 paths optimal
    assert (greedy.solved, greedy.invalid) == (3, 1)
    assert greedy.median_ms == pytest.approx(0.12)
    assert greedy.optimal_share == pytest.approx(1 / 3)
    assert (greedy.median_expanded, greedy.median_generated) == (12, 30)


def test_unsolvable_cells_match_hand_computation(table):
    man = table.loc[("8-unsolvable", "astar_dict[manhattan]")]
    # medians 1.22 s and 1.30 s -> 1260 ms; p90 = 1220 + 0.9 * 80 = 1292 ms
    assert (man.unsolvable, man.answered, man.solved) == (2, 2, 0)
    assert man.median_ms == pytest.approx(1260)
    assert man.p90_ms == pytest.approx(1292)
    assert math.isnan(man.optimal_share) and math.isnan(man.median_ebf)
    assert man.peak_traced_mib == 50 and man.peak_rss_mib == 105
    mis = table.loc[("8-unsolvable", "astar_dict[misplaced]")]
    # u-0001: unsolvable in repeats 0 and 1, timeout in repeat 2 -> a timeout
    assert (mis.unsolvable, mis.timeout) == (1, 1)
    assert mis.median_ms == pytest.approx(1520)  # u-0000 only: {1.50,1.55,1.52}
    bfs = table.loc[("8-unsolvable", "bfs")]
    assert (bfs.unsolvable, bfs.memout, bfs.median_ms) == (1, 1, pytest.approx(810))
    for config in ("greedy[manhattan]", "ida_star[manhattan]"):
        cell = table.loc[("8-unsolvable", config)]
        assert (cell.skipped, cell.answered) == (2, 0)
        assert math.isnan(cell.median_ms)


def test_mixed_dataset_is_reported_as_solvable_and_unsolvable_parts(tmp_path):
    # One dataset holding both kinds of boards: the fixture's two datasets merged.
    run = tmp_path / "run"
    shutil.copytree(RUN_A, run)
    text = (run / "rows.csv").read_text().replace(",8-unsolvable,", ",8-depths,")
    (run / "rows.csv").write_text(text)
    mixed = report.summary(report.load_run(run).rows).set_index(["dataset", "config"])
    assert set(mixed.index.get_level_values("dataset")) == {
        "8-depths (solvable)", "8-depths (unsolvable)"}  # fmt: skip
    # the same hand-computed numbers as when the boards were two datasets
    man = mixed.loc[("8-depths (unsolvable)", "astar_dict[manhattan]")]
    assert (man.instances, man.median_ms) == (2, pytest.approx(1260))
    assert mixed.loc[("8-depths (solvable)", "bfs")].median_ms == pytest.approx(20.75)
    assert set(mixed.dataset_name) == {"8-depths"}


def test_summary_ranks_by_answered_then_time(run_a):
    ranked = report.summary(run_a.rows)
    depths = ranked[ranked.dataset == "8-depths"].config.tolist()
    # all-4 configs, then the 3-of-4 ones, each by the geometric mean time over the
    # common instances d02-0000 and d08-0000 (ms): astar_dict[manhattan]
    # sqrt(0.04 * 2.6) = 0.322 < astar_dict[misplaced] sqrt(0.05 * 48) = 1.55 < bfs
    # sqrt(0.08 * 41) = 1.81; greedy sqrt(0.03 * 0.12) = 0.06 < ida_star
    # sqrt(0.04 * 8.8) = 0.593. (By own-set medians ida_star, 0.10 ms, came first.)
    assert depths == ["astar_dict[manhattan]", "astar_dict[misplaced]", "bfs",
                      "greedy[manhattan]", "ida_star[manhattan]"]  # fmt: skip


def test_display_table_rounds_and_labels_units(run_a):
    cells = report.summary(run_a.rows)
    cells = cells[cells.dataset == "8-depths"]
    cost = report.display_table(cells, "cost")
    assert list(cost.columns[:4]) == [
        "config", "answered", "median time (ms), 2 common",
        "geo. mean time (ms), 2 common",
    ]  # fmt: skip
    first = cost.iloc[0]
    # astar_dict[manhattan] over d02-0000 and d08-0000: 0.04 and 2.6 ms
    assert first["median time (ms), 2 common"] == "1.32"
    assert first["geo. mean time (ms), 2 common"] == "0.322"
    assert first["median time (ms), own answered set"] == "1.38"
    # bfs, expanded on the common two: 7 and 3500 -> median 1,753.5
    assert cost.iloc[2]["median expanded, 2 common"] == "1,753.5"
    answers = report.display_table(cells, "answers")
    assert (
        answers.set_index("config").loc["ida_star[manhattan]", "optimal paths (%)"]
        == "67"
    )
    # an unsolvable-only cell has no b* or optimal share: those columns are dropped
    unsolv = report.summary(run_a.rows)
    unsolv = unsolv[unsolv.dataset == "8-unsolvable"]
    assert "b* (median)" not in report.display_table(unsolv, "cost").columns


# ---------------------------------------------------- effective branching


@pytest.mark.parametrize(
    ("nodes", "depth", "expected"),
    [
        (5, 1, 5.0),  # N + 1 = 1 + b
        (6, 2, 2.0),  # 7 = 1 + 2 + 4
        (12, 2, 3.0),  # 13 = 1 + 3 + 9
        (8, 8, 1.0),  # a perfect guide: one node per level
        (7, 2, (-1 + math.sqrt(29)) / 2),  # 8 = 1 + b + b^2
        (2**21 - 2, 20, 2.0),
        (10**9, 80, None),  # no overflow for deep, bushy searches
    ],
)
def test_effective_branching_factor_closed_forms(nodes, depth, expected):
    b = report.effective_branching_factor(nodes, depth)
    if expected is None:  # check the defining equation instead
        assert sum(b**i for i in range(depth + 1)) == pytest.approx(nodes + 1, rel=1e-9)
    else:
        assert b == pytest.approx(expected, rel=1e-9)


def test_effective_branching_factor_undefined_cases():
    out = report.effective_branching_factor(
        [10, 10, float("nan")], [0, float("nan"), 3]
    )
    assert all(math.isnan(v) for v in out)


# ------------------------------------------------------------- findings


def test_findings_name_the_facts(run_a):
    text = "\n".join(report.findings(run_a))
    # The verdict (harness.analysis.verdict) opens the findings. On 8-depths the
    # common boards are d02-0000 and d08-0000 (ida_star errored on d08-0001,
    # greedy was invalid on d04-0000); greedy is faster there (0.06 ms) but not
    # optimal, ida_star returned a longer path: astar_dict[manhattan] wins, 0.04
    # and 2.6 ms -> geometric mean sqrt(0.104) = 0.322 ms.
    assert "8-depths: astar_dict[manhattan] wins, 322 us per solve" in text
    assert "greedy[manhattan] wins" not in text
    # 8-unsolvable: only u-0000 is answered by all that answered any (bfs 0.81 s,
    # astar_dict[manhattan] 1.22 s: 1.51x); one board gives no interval.
    assert (
        "8-unsolvable: bfs wins, 810 ms per solve (geometric mean over 1 common "
        "board), 1.51x faster than astar_dict[manhattan] (too few boards for an "
        "interval)" in text
    )
    assert (
        "ida_star[manhattan] claims to be optimal but returned a longer path on 1 of 3"
        in text
    )
    assert "d08-0000: 10 moves, optimum 8" in text
    assert "greedy[manhattan] on 8-depths: 1 invalid result (d04-0000)" in text
    assert (
        "ida_star[manhattan] on 8-depths: 1 error result (d08-0001): RecursionError"
        in text
    )
    assert "bfs on 8-unsolvable: 1 memout result (u-0001)" in text
    assert "astar_dict[misplaced] on 8-unsolvable: 1 timeout result" in text
    assert "answered in 2 of 3 repeats but timeout" in text
    assert "greedy[manhattan] skipped 2 instances (8-unsolvable)" in text
    # greedy does not claim optimality: described, not accused
    assert "greedy[manhattan] claims" not in text
    assert "greedy[manhattan] (not optimal by design)" in text
    # no problem is invented for a clean config
    assert not any(
        s.startswith("astar_dict[manhattan]") for s in report.findings(run_a)
    )


def test_incomplete_run_is_flagged(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN_A, run)
    meta = json.loads((run / "meta.json").read_text())
    meta.update(finished_utc=None, complete=False)
    (run / "meta.json").write_text(json.dumps(meta))
    assert "incomplete" in report.findings(report.load_run(run))[0]


# ----------------------------------------------------------- comparison


def test_compare_ratio_is_geomean_and_counters_exact():
    """The report's ratio is harness compare's: CPU time, instances under 0.1 ms in
    both runs left out (timer noise), geometric mean of per-instance medians."""
    runs = report.load_runs([RUN_A, RUN_B])
    table = report.comparison_table(runs).set_index(["dataset", "config"])
    man = table.loc[("8-depths", "astar_dict[manhattan]")]
    assert man.metric == "CPU time"
    # every per-instance median halves: (0.02/0.04 under 0.1 ms), 0.08/0.16,
    # 1.3/2.6, 25/50
    assert man.time_ratio == pytest.approx(0.5)
    assert (man.compared, man.counters_changed) == (3, 0)
    # 3 timed instances: too few to call it (harness compare wants 5)
    assert man.time_low <= 0.5 <= man.time_high < 1 and not man.significant
    assert man.verdict.startswith("too few instances (3 timed")
    bfs = table.loc[("8-depths", "bfs")]
    # per-instance ratios (0.08/0.08 under 0.1 ms), 2.0/0.5, 82/41, 88/44 = 4, 2, 2
    assert bfs.time_ratio == pytest.approx(16 ** (1 / 3))
    # d04-0000: expanded 45 -> 46, generated 120 -> 123, the others unchanged;
    # medians shown exactly: [7,45,3500,3600] -> 1772.5, [7,46,3500,3600] -> 1773
    assert bfs.counters_changed == 1
    assert (bfs.old_median_expanded, bfs.new_median_expanded) == (1772.5, 1773)
    assert bfs.changed_instances == [
        "d04-0000: expanded 45 -> 46, generated 120 -> 123"
    ]
    assert math.isnan(table.loc[("8-depths", "bidir_bfs")].old_instances)
    assert math.isnan(table.loc[("8-unsolvable", "bfs")].new_instances)
    words = "\n".join(report.compare_findings(runs, report.comparison_table(runs)))
    assert "astar_dict[manhattan] on 8-depths: 2.00x faster in run 2" in words
    assert "bfs on 8-depths: 2.52x slower in run 2" in words
    assert "median CPU time ratios, 95% interval" in words
    assert "different Python (3.12.1)" in words
    assert "On 8-depths, only run 2 has bidir_bfs." in words
    assert "8-unsolvable is only in run 1." in words
    # run B records new solver sources, so the speed-up is not put down to the machine
    assert "more likely the machine" not in words


def test_runs_the_comparer_refuses_say_why(tmp_path):
    run = tmp_path / "b"
    shutil.copytree(RUN_B, run)
    meta = json.loads((run / "meta.json").read_text())
    meta["datasets"]["8-depths"]["sha256"] = "b" * 64  # other boards, same name
    (run / "meta.json").write_text(json.dumps(meta))
    runs = report.load_runs([RUN_A, run])
    table = report.comparison_table(runs)
    assert table.time_ratio.isna().all() and (table.compared == 0).all()
    words = report.compare_findings(runs, table)
    assert any(
        "run 2 cannot be compared with run 1 (dataset '8-depths' has different "
        "boards" in w for w in words
    )


def test_unchanged_source_and_counters_point_at_the_machine(tmp_path):
    run = tmp_path / "b"
    shutil.copytree(RUN_B, run)
    meta = json.loads((run / "meta.json").read_text())
    meta["solvers"]["astar_dict[manhattan]"]["source_sha256"] = "c" * 64  # as in A
    (run / "meta.json").write_text(json.dumps(meta))
    runs = report.load_runs([RUN_A, run])
    words = report.compare_findings(runs, report.comparison_table(runs))
    line = next(w for w in words if w.startswith("astar_dict[manhattan] on 8-depths"))
    assert "2.00x faster" in line and "more likely the machine" in line
    # bfs's counters changed: a real change, never blamed on the machine
    assert not any("bfs" in w and "machine" in w for w in words)


# ------------------------------------------------------------- the files


class _Page(HTMLParser):
    """Collects what a self-containment check needs."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str]] = []
        self.urls: list[str] = []
        self.tags: set[str] = set()
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        self.scripts += tag == "script"
        if tag == "img":
            self.images.append(attrs)
        for key in ("src", "href", "data", "action", "srcset"):
            if attrs.get(key):
                self.urls.append(attrs[key])


def _parse(html_path: Path) -> _Page:
    page = _Page()
    page.feed(html_path.read_text(encoding="utf-8"))
    page.close()
    return page


def test_report_writes_every_plot_and_embeds_each(single):
    out = single.parent
    assert single.name == "report.html" and (out / "report.md").stat().st_size > 0
    pngs = sorted((out / "plots").glob("*.png"))
    # the fixture has data for every single-run plot (compare_time needs two runs;
    # coverage_vs_bound a solver at two bounds; instructions_vs_depth counted
    # instructions; over_necessary_vs_depth rows of schema 10: the real run of
    # tests/report/test_real_report.py draws it), the two performance profiles and one scatter plot
    # (astar_dict: misplaced against manhattan; no other solver ran with two
    # heuristics)
    drawn = set(PLOT_NAMES) - {
        "compare_time", "coverage_vs_bound", "instructions_vs_depth",
        "over_necessary_vs_depth",
    }
    assert {p.stem for p in pngs} == drawn | {
        "profile_time", "profile_expanded", "scatter_astar_dict"
    }
    for png in pngs:
        data = png.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000, png.name
    page = _parse(single)
    embedded = {img["data-file"]: img["src"] for img in page.images}
    for png in pngs:
        src = embedded[f"plots/{png.name}"]
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix)
        assert base64.b64decode(src[len(prefix) :]) == png.read_bytes()
    md = (out / "report.md").read_text()
    for png in pngs:
        assert f"](plots/{png.name})" in md


def test_report_html_is_self_contained(single, pair):
    for html_path in (single, pair):
        page = _parse(html_path)
        # one inline script (sorting, filters); links only within the page
        assert page.scripts == 1 and "link" not in page.tags
        assert page.images and all(u.startswith(("data:", "#")) for u in page.urls)
        text = html_path.read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text
        assert "@import" not in text and "url(" not in text


def test_report_contains_tables_and_findings(single):
    md = (single.parent / "report.md").read_text()
    assert "## What stands out" in md and "## How to read the numbers" in md
    # cost of astar_dict[manhattan] on 8-depths. Common instances d02-0000 and
    # d08-0000: 0.04 and 2.6 ms -> median 1.32, geometric mean sqrt(0.104) = 0.322;
    # expanded 3 and 200 -> median 101.5, geometric mean sqrt(600) = 24.5.
    # Score, time (floor 1e-7 s, limit 2 s, log(2 / 1e-7) = 16.811): d02 0.04 ms
    # -> log(50000)/16.811 = 0.6436; d04 0.16 ms -> log(12500)/16.811 = 0.5611;
    # d08-0000 2.6 ms -> log(769.2)/16.811 = 0.3953; d08-0001 50 ms -> log(40)/16.811
    # = 0.2194; sum 1.82 (a 0.1 ms floor gave 3.00, and tied every fast solve).
    # Score, expanded (floor 100, limit 1e8): 3 and 12 -> 1 each; 200 ->
    # (8 - log10 200)/6 = 0.9498; 4000 -> (8 - log10 4000)/6 = 0.7330; sum 3.68.
    # Own-set median 1.38 ms (all 4 answered), b* 2, traced 1 MiB (RSS 32 MiB absolute:
    # a schema-1 run has no 'RSS added', so that column is left out).
    assert "| config | answered | median time (ms), 2 common |" in md
    assert (
        "| astar_dict[manhattan] | 4 | 1.32 | 0.322 | 101.5 | 24.5 | 1.82 | 3.68 | "
        "1.38 | 2.00 | 1.00 |\n" in md
    )
    assert "RSS added" not in md.split("## Plots")[0]
    assert "schema 1 run: no peak_rss_delta_bytes" in md
    html_text = single.read_text(encoding="utf-8")
    assert "<td>1.32</td><td>0.322</td>" in html_text
    assert "claims to be optimal" in html_text


def test_two_runs_side_by_side_and_comparison_plot(pair):
    out = pair.parent
    assert (out / "plots" / "compare_time.png").read_bytes().startswith(PNG_MAGIC)
    md = (out / "report.md").read_text()
    assert "## Side by side" in md
    # 8-unsolvable is only in run 1: said in words, no table of dashes
    assert "8-unsolvable is only in run 1." in md
    assert "**8-unsolvable: run 1 vs run 2**" not in md
    # medians of each run over the instances answered in both (all 4 here)
    assert "median time run 1 (ms), 4 answered in both" in md
    assert "| astar_dict[manhattan] | 4/4 | 4/4 | 1.38 | 0.690 | 0.50 (n=3) |" in md
    assert "CPU time ratio run 2/run 1" in md
    # the plots show run 2, which has no memory pass and no unsolvable boards
    assert not (out / "plots" / "peak_memory.png").exists()
    assert "Peak memory per config: skipped (the run has no memory-pass rows" in md
    assert "Time to answer unsolvable boards: skipped" in md


def test_default_output_is_the_run_directory_and_rerun_drops_stale_plots(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(RUN_A, run)
    assert report.write_report([run]) == run / "report.html"
    assert (run / "plots" / "peak_memory.png").exists()
    # run B has no memory pass: a new report into the same folder must not leave
    # run A's memory plot lying next to it
    report.write_report([RUN_B], run)
    assert not (run / "plots" / "peak_memory.png").exists()
    assert (run / "plots" / "cactus.png").exists()


def test_several_runs_need_an_output_directory():
    with pytest.raises(ReportError, match="--out"):
        report.write_report([RUN_A, RUN_B])


def test_empty_run_still_reports(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(RUN_A / "meta.json", run)
    (run / "rows.csv").write_text(
        (RUN_A / "rows.csv").read_text().splitlines()[0] + "\n"
    )
    md = (report.write_report([run]).parent / "report.md").read_text()
    assert "The run holds no result rows." in md
    assert list((run / "plots").glob("*.png")) == []


# ---------------------------------------------------------------- input


def _broken(tmp_path: Path, rows_edit=None, meta_edit=None) -> Path:
    run = tmp_path / "run"
    shutil.copytree(RUN_A, run)
    if rows_edit:
        lines = (run / "rows.csv").read_text().splitlines()
        (run / "rows.csv").write_text("\n".join(rows_edit(lines)) + "\n")
    if meta_edit:
        meta = json.loads((run / "meta.json").read_text())
        meta_edit(meta)
        (run / "meta.json").write_text(json.dumps(meta))
    return run


def test_bad_input_is_one_line_error_naming_the_place(tmp_path):
    with pytest.raises(ReportError, match="no such directory"):
        report.load_run(tmp_path / "nope")
    run = _broken(tmp_path, meta_edit=lambda m: m.update(schema_version=99))
    with pytest.raises(ReportError, match=r"meta\.json.*schema_version 99"):
        report.load_run(run)
    shutil.rmtree(run)
    run = _broken(tmp_path, rows_edit=lambda ls: ls[:4] + ["a,b,c"] + ls[4:])
    with pytest.raises(ReportError, match=r"rows\.csv.*line 5"):
        report.load_run(run)
    shutil.rmtree(run)
    run = _broken(
        tmp_path, rows_edit=lambda ls: [ls[0], ls[1].replace(",solved,", ",won,")]
    )
    with pytest.raises(ReportError, match=r"line 2: status 'won'"):
        report.load_run(run)
    shutil.rmtree(run)
    run = _broken(
        tmp_path, rows_edit=lambda ls: ls[:2] + [ls[2].replace(",5e-05,", ",fast,")]
    )
    with pytest.raises(ReportError, match=r"line 3: seconds 'fast' is not a number"):
        report.load_run(run)
    (run / "rows.csv").unlink()
    with pytest.raises(ReportError, match=r"rows\.csv: missing"):
        report.load_run(run)


def test_reporter_never_imports_a_solver_or_the_runner():
    code = (
        "import sys; from harness import report; from harness.report import plots;"
        f"run = report.load_run({str(RUN_A)!r}); report.findings(run);"
        "bad = [m for m in sys.modules if m.startswith('solvers') or m in "
        "('harness.measure.runner', 'harness.solver')]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_style_map_is_stable_and_distinct():
    labels = [f"solver{i}[h]" for i in range(20)]
    assert style_map(labels) == style_map(list(reversed(labels)))
    styles = list(style_map(labels).values())
    # two configs never share both colour and marker, even past ten configs
    assert len({(s.color, s.marker) for s in styles}) == 20
    # adding a config does not recolour the ones before it in sorted order
    assert style_map(["a", "b"])["a"] == style_map(["a", "b", "c"])["a"]
    # a solver keeps one colour across its heuristics; a heuristic one marker
    fam = style_map(["ida_star[manhattan]", "ida_star[misplaced]", "bfs",
                     "astar_dict[manhattan]"])  # fmt: skip
    assert fam["ida_star[manhattan]"].color == fam["ida_star[misplaced]"].color
    assert fam["ida_star[manhattan]"].color != fam["astar_dict[manhattan]"].color
    assert fam["ida_star[manhattan]"].marker == fam["astar_dict[manhattan]"].marker
    assert fam["ida_star[manhattan]"].marker != fam["ida_star[misplaced]"].marker


def test_refusals_read_as_one_sentence_per_reason():
    """Expected refusals (4x4 databases on 3x3 boards) must not crowd out findings."""
    why = "heuristic {} does not apply to 3x3"
    skips = [
        (f"ida_star_jit[{h}]", d, n, why.format(h))
        for h in ("pdb555", "pdb663")
        for d, n in (("8-mini", 36), ("8-seeds", 3))
    ] + [("bfs", "15-korf100", 100, "bfs: too deep")]
    sentences = _skip_sentences(skips)
    assert len(sentences) == 2
    assert sentences[0].startswith(
        "ida_star_jit[pdb555] and ida_star_jit[pdb663] skipped 39 instances each "
        "(8-mini, 8-seeds): e.g. ida_star_jit[pdb555]: heuristic pdb555"
    )
    assert sentences[1] == "bfs skipped 100 instances (15-korf100): bfs: too deep."


def test_a_registered_plot_is_drawn_into_the_report(tmp_path):
    from harness.report import plots

    # conftest's scoped_registry forgets the plot after this test
    @plots.register_plot("answered_count", "Instances answered per config")
    def draw(d: plots.PlotData) -> plots.Plot:
        fig, ax = plots.plt.subplots()
        ax.bar(range(len(d.answered)), 1)
        path = plots.save_figure(fig, d.plot_dir / "answered_count.png")
        return plots.Plot("answered_count", "Instances answered", "one bar each", path)

    html = report.write_report([RUN_A], tmp_path)
    assert (tmp_path / "plots" / "answered_count.png").stat().st_size > 1000
    assert "plots/answered_count.png" in html.read_text()


def test_the_report_shows_the_summary_the_terminal_prints(single: Path) -> None:
    """One summary: report.md's Summary section holds exactly the rows `harness
    report --format table` (and so the end of `harness run`) prints."""
    from typer.testing import CliRunner

    from harness.cli import app
    from harness.report.summary_table import summary_blocks, summary_columns

    printed = CliRunner().invoke(
        app, ["report", str(RUN_A), "--format", "table"], env={"COLUMNS": "200"}
    )
    assert printed.exit_code == 0, printed.output
    md = (single.parent / "report.md").read_text()
    section = md.split("## Summary")[1].split("\n## ")[0]
    blocks = summary_blocks(report.load_run(RUN_A))
    keys = summary_columns(blocks)
    assert len(blocks) == 2  # 8-depths and 8-unsolvable
    for block in blocks:
        assert f"**{block.title}**" in section
        lines = printed.stdout.split(block.title)[1].split("\n\n")[0].splitlines()
        frame = block.frame(keys)
        for i, row in enumerate(block.rows):
            (line,) = [ln for ln in lines if ln.startswith(row["config"] + " ")]
            assert line.split() == " ".join(c for c in frame.loc[i] if c).split()
            assert "| " + " | ".join(frame.loc[i]) + " |" in section


def test_writing_the_report_says_what_it_writes(single: Path, said: list[str]) -> None:
    """The phase after the cells is not silent: each plot as it is drawn, then the
    figures and the documents (harness run prints these lines). The plots drawn
    beside (harness.report.beside) come with the profiles and scatter plots."""
    from harness.report.document import BESIDE_PLOTS
    from harness.report.plots import all_plots

    n = len(all_plots()) - len(BESIDE_PLOTS)
    assert said[0] == "writing report: reading the rows"
    assert said[1 : n + 1] == [f"writing report: plots {i}/{n}" for i in range(1, n + 1)]
    assert said[n + 1 :] == [
        "writing report: profiles and scatter plots",
        "writing report: report.md and report.html",
    ]


def test_beside_runs_its_job_in_a_forked_child_or_here(monkeypatch):
    """harness.report.beside: forked when it may fork, else run here when asked;
    a failure is raised where the result is asked for."""
    import os

    from harness.report import beside

    monkeypatch.setattr(beside, "can_fork", lambda: True)
    with beside.Beside(os.getpid) as job:
        assert job.forked and job.result() != os.getpid()
    with beside.Beside(int, "not a number") as job, pytest.raises(ValueError):
        job.result()
    monkeypatch.setattr(beside, "can_fork", lambda: False)
    with beside.Beside(os.getpid) as job:
        assert not job.forked and job.result() == os.getpid()


@pytest.mark.parametrize("fork", [True, False])
def test_report_figures_are_the_same_drawn_beside_or_here(tmp_path, monkeypatch, fork):
    """The profiles and scatter plots drawn in a forked child (two cores) or in
    this process: the same files and the same figures in the report, in order."""
    from harness.report import beside

    monkeypatch.setattr(beside, "can_fork", lambda: fork)
    html = report.write_report([RUN_A], tmp_path / "out")
    names = [img["data-file"] for img in _parse(html).images]
    assert names[-3:] == ["plots/profile_time.png", "plots/profile_expanded.png",
                          "plots/scatter_astar_dict.png"]  # fmt: skip
    assert {f"plots/{p.name}" for p in (tmp_path / "out" / "plots").glob("*.png")} == (
        set(names)
    )
