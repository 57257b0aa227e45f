"""The reporter: tables, plain-word findings and a self-contained report of stored runs.

Reads ``results/<run_id>/`` (``meta.json`` + ``rows.csv``, see
``results/README.md``) and nothing else: it never imports a solver or the
runner. :func:`write_report` writes ``report.md``, ``report.html`` (plots embedded
as data URIs, inline CSS, one inline script that sorts and filters the tables,
nothing fetched) and ``plots/*.png``.

How the numbers are made is :data:`HOW_TO_READ`, printed at the end of every report.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from harness.analysis import (
    ReportError,
    Run,
    aggregate,
    load_runs,
)
from harness.analysis.verdict import run_verdicts
from harness.core.files import real_dir, write_atomic
from harness.report.about import (
    hosts_table,
    method_text,
    options_frame,
    runs_table,
    setup_table,
)
from harness.report.comparison import comparison_table
from harness.report.findings import compare_findings, findings
from harness.report.first_screen import (
    plot_top,
    podium_section,
    skipped_frame,
    verdict_section,
)
from harness.report.render import Section, html_page, markdown_page
from harness.report.summary_table import legends, summary_columns
from harness.report.summary_table import summary_blocks as summary_blocks_of
from harness.report.tables import (
    PARTS,
    display_compare,
    display_table,
    markdown_table,
    text_table,
)
from harness.results import META_FILE, ResultsError
from harness.results.lock import lock_run

HOW_TO_READ = (
    "An instance is one (config, dataset, board). Its status is the worst over its "
    "timed repeats (invalid > error > memout > timeout > skipped > answered): an "
    "instance that timed out in one repeat of three counts as a timeout.",
    "Answered = solved, or correctly reported unsolvable; coverage = instances "
    "answered. Times and node counts are compared over the common instances: those "
    "answered by every config that answered anything in the dataset (their number "
    "is in the column header); a config that answered none, e.g. a 4x4 pattern "
    "database on 3x3 boards, is left out of the common set, so its columns show –. "
    "Medians over a config's own answered set would flatter a config that fails the "
    "hard instances; where shown they are labelled 'own answered set'. Tables rank "
    "configs by instances answered, then by the common geometric mean time.",
    "An instance's time is the median of its repeats (wall time of the solve call "
    "alone). Geometric means count times below 0.1 us as 0.1 us and 0 nodes as 1.",
    f"Scores (Downward Lab's): per instance 1 at or below a floor, 0 at or beyond "
    f"the limit or when not answered (failures and skips alike), log-scaled between: "
    f"log(limit / v) / log(limit / floor); summed per config. Time: floor "
    f"{aggregate.TIME_FLOOR_S * 1e6:g} us (below every real solve, so a fast "
    f"lookup and a fast search never tie), limit the run's time limit; nodes "
    f"expanded: floor {aggregate.EXPANDED_FLOOR:g}, limit "
    f"{aggregate.EXPANDED_LIMIT:g}. A score counts both speed and coverage.",
    "Effective branching factor b* solves N + 1 = 1 + b* + b*^2 + ... + b*^d, with "
    "N = nodes generated and d = the returned path's length (Russell & Norvig, "
    "AIMA 3rd ed., section 3.6.1); undefined at d = 0 and on unsolvable boards. "
    "The table shows the median over instances.",
    "Optimal paths (%) = share of solved instances whose path length equals the "
    "dataset's optimum (where the optimum is known).",
    "A dataset holding both solvable and unsolvable boards is reported as two parts, "
    "'name (solvable)' and 'name (unsolvable)': proving a board unsolvable takes a "
    "full search and would swamp the times of the solvable boards.",
    "Memory comes from a separate, untimed pass. 'RSS added' is the largest, over "
    "the cell's instances, of what one solve added to its worker's resident set: the "
    "peak during the solve minus the resident set just before it. It leaves out the "
    "interpreter, imports, compiled kernels and tables (pattern databases) loaded in "
    "set-up, and whatever earlier cells left in the worker; it includes compiled "
    "code's and numpy's buffers. 'peak traced' is tracemalloc's peak of Python "
    "allocations, measured only for solves that added under 16 MiB (above that the "
    "RSS figure says more) and took under 50 ms (a traced solve runs 5-20x "
    "slower); blank elsewhere. MiB = 2^20 bytes.",
)


# ---------------------------------------------------------------- report


def write_report(
    run_dirs: Sequence[Path | str | Run],
    out_dir: Path | str | None = None,
    plot_formats: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
) -> Path:
    """Write report.md, report.html and plots/*.png into ``out_dir`` (default: the
    run's own directory; required for several runs; a run may be given loaded).
    ``plot_formats``: "pdf" or "pgf" files written beside each PNG. ``progress``
    hears what is being written ("writing report: plots 5/12"). Returns the HTML
    path."""
    say = progress or (lambda text: None)
    from harness.report import plots  # matplotlib is only needed for writing files

    for fmt in plot_formats:
        if fmt not in plots.FORMATS:
            raise ReportError(
                f"--plots {fmt}: not one of {', '.join(plots.FORMATS)}"
            )
        if fmt == "pgf" and not plots.tex_available():
            raise ReportError(
                "--plots pgf needs a LaTeX installation (xelatex, pdflatex or "
                "lualatex on PATH); use --plots pdf"
            )
    extras = tuple(f for f in plot_formats if f != "png")

    say("writing report: reading the rows")
    runs = load_runs(run_dirs)
    if out_dir is None:
        if len(runs) > 1:
            raise ReportError("several runs: name an output directory (--out DIR)")
        out_dir = runs[0].path
    out = Path(out_dir)
    # Another process writing this run (its own report comes at its end) keeps it.
    try:
        lock = lock_run(out) if (out / META_FILE).is_file() else None
    except ResultsError as err:
        raise ReportError(str(err)) from None
    try:
        return _write(runs, out, plots, say, extras)
    finally:
        if lock is not None:
            lock.release()


#: Registered plots drawn beside the profiles and scatter plots: on the main job's
#: rows the ten plots took ~7.4 CPU s (quality_vs_time 1.75 s) and the profiles
#: and scatter plots ~5.8 s; the rows, findings and pages are this process's too.
BESIDE_PLOTS = ("quality_vs_time",)


def _figures_beside(inst, colors, plot_dir: Path, limit, paper_limit, extras):
    """(the BESIDE_PLOTS, the profiles and scatter plots), drawn into plot_dir."""
    from harness.report import figures as paper
    from harness.report import plots

    moved = plots.make_plots(
        inst, colors, plot_dir, time_limit_s=limit, formats=extras, names=BESIDE_PLOTS
    )
    return moved, paper.report_figures(inst, colors, plot_dir, paper_limit, extras)


def _write(
    runs: list[Run],
    out: Path,
    plots,
    say: Callable[[str], None],
    extras: Sequence[str],
) -> Path:
    """The report of ``runs`` into ``out`` (see write_report)."""
    # The index pages go first and come back last: an interrupted report leaves
    # none (not an old one over half-new plots), and no half-written file.
    for name in ("report.md", "report.html"):
        if (out / name).is_symlink() or (out / name).exists():
            (out / name).unlink()
    try:
        real_dir(out / "plots")
    except OSError as err:
        raise ReportError(f"{err.filename or out}: {err.strerror}") from None
    from harness.report.styles import style_map  # matplotlib, as plots

    colors = style_map(sorted({c for r in runs for c in r.rows["config"].unique()}))
    shown = runs[-1]  # the newest run is drawn; older runs appear in the comparison
    inst = shown.instances()
    limit = (shown.meta.get("options") or {}).get("timeout")
    limit = limit if isinstance(limit, int | float) else None
    from harness.report.beside import Beside

    # Half the figures are drawn in a forked child meanwhile, on two cores
    # (harness.report.beside); the report lists them in the usual order.
    with Beside(
        _figures_beside, inst, colors, out / "plots", limit,
        aggregate.time_limit(shown.meta, inst), extras,
    ) as beside:  # fmt: skip
        here = plots.make_plots(
            inst,
            colors,
            out / "plots",
            time_limit_s=limit,
            progress=lambda done, total: say(f"writing report: plots {done}/{total}"),
            formats=extras,
            names=[n for n in plots.all_plots() if n not in BESIDE_PLOTS],
            top=plot_top(shown),
        )
        say("writing report: profiles and scatter plots")
        moved, papers = beside.result()
    drawn = {p.name: p for p in here + moved}
    figures = [drawn[n] for n in plots.all_plots() if n in drawn] + papers
    table = comparison_table(runs) if len(runs) > 1 else pd.DataFrame()
    if len(runs) > 1:
        from harness.report import figures as paper

        figures.append(
            paper.compare_plot(
                [r.instances().assign(run=r.label) for r in runs],
                colors,
                out / "plots",
                extras,
            )
        )
    say("writing report: report.md and report.html")
    report = (
        ComparisonReport(runs, figures, table)
        if len(runs) > 1
        else SummaryReport(runs[0], figures)
    )
    return report.write(out)


class Report:
    """One report of stored runs, as Downward Lab's reports are: a title and its
    sections, written as report.md and report.html. A subclass says which sections;
    everything it uses (the runs, the plots drawn, the comparison table) is given
    to it, nothing through a module variable."""

    #: several runs: their labels prefix the findings and name the sections
    several = False

    def __init__(self, runs: list[Run], figures: list) -> None:
        self.runs = runs
        self.figures = figures

    @property
    def title(self) -> str:
        raise NotImplementedError

    def sections(self) -> list[Section]:
        raise NotImplementedError

    def write(self, out: Path) -> Path:
        """report.md and report.html into ``out``; returns the HTML path."""
        sections = self.sections()
        write_atomic(out / "report.md", markdown_page(self.title, sections))
        html_path = out / "report.html"
        write_atomic(html_path, html_page(self.title, sections))
        return html_path

    # ---- sections every report has

    def stands_out(self, first: Sequence[str] = ()) -> Section:
        """The findings of the newest run (``first``: bullets before them), the
        verdict left out (it opens the page); past :data:`FINDINGS_SHOWN`
        bullets, the rest behind a disclosure."""
        bullets = list(first)
        for run in self.runs[-1:]:
            prefix = f"{run.label}: " if self.several else ""
            bullets.extend(
                prefix + (s[:1].lower() + s[1:] if prefix else s)
                for s in findings(run, verdicts=False)
            )
        skipped = [f.title for f in self.figures if f.skipped]
        if skipped:
            bullets.append(
                "Not drawn for lack of data (reasons under Plots): "
                f"{'; '.join(skipped)}."
            )
        return Section("What stands out", bullets=bullets[:FINDINGS_SHOWN],
                       more=bullets[FINDINGS_SHOWN:])  # fmt: skip

    def results(self) -> list[Section]:
        """Per dataset answers and cost, then coverage and scores: one section per
        run, the newest first."""
        sections = []
        for run in reversed(self.runs):
            sec = Section(
                f"Results per dataset: {run.label}"
                if self.several
                else "Results per dataset",
                closed=True,  # long: the summary above has the same numbers
            )
            table_run = aggregate.run_summary(run)
            for dataset, cells in table_run.groupby("dataset", sort=True):
                caption = _dataset_caption(run, dataset, cells)
                sec.tables.append(
                    (f"{caption}: answers", display_table(cells, "answers"))
                )
                sec.tables.append((f"{caption}: cost", display_table(cells, "cost")))
            if table_run.empty:
                sec.paragraphs.append("No result rows.")
            else:
                sec.tables.append(
                    ("All datasets: coverage and scores (sum over instances)",
                     _scores_table(aggregate.score_totals(aggregate.run_fair(run))))
                )  # fmt: skip
            sections.append(sec)
        return sections

    def plots(self) -> Section:
        pics = Section("Plots")
        if self.several:
            pics.paragraphs.append(
                f"Plots show {self.runs[-1].label} ({self.runs[-1].run_id}), "
                "except the comparison plot, which shows every run."
            )
        pics.figures = [f for f in self.figures if not f.skipped]
        pics.bullets = [
            f"{f.title}: skipped ({f.skipped})." for f in self.figures if f.skipped
        ]
        return pics

    def about(self) -> Section:
        """Last: readers come for the results; the facts that make them
        reproducible (commit, machine, options, set-up) follow."""
        about = Section("Runs", closed=True)
        about.tables.append(("", runs_table(self.runs)))
        for run in self.runs:
            label = f" of {run.label}" if self.several else ""
            about.tables.append(
                (f"Options{label}", options_frame(run.meta.get("options") or {}))
            )
            hosts = hosts_table(run)
            if hosts is not None:
                about.tables.append((f"Where the cells{label} were measured", hosts))
            setup = setup_table(run)
            if setup is not None:
                about.tables.append(
                    (f"One-time set-up{label} (not part of any solve time)", setup)
                )
        return about

    def how_to_read(self) -> Section:
        return Section(
            "How to read the numbers",
            closed=True,
            bullets=[*(method_text(run) for run in self.runs), *HOW_TO_READ],
        )


#: Findings shown before the fold.
FINDINGS_SHOWN = 8


class SummaryReport(Report):
    """One run: what stands out, the summary `harness run` printed (every
    column), the results per dataset, plots and provenance."""

    def __init__(self, run: Run, figures: list) -> None:
        super().__init__([run], figures)

    @property
    def title(self) -> str:
        return f"Benchmark report: {self.runs[0].run_id}"

    def sections(self) -> list[Section]:
        run = self.runs[0]
        podium = podium_section(run)
        return [
            verdict_section(run),
            *([podium] if podium else []),
            self.stands_out(),
            _summary_section(run),
            *self.results(),
            self.plots(),
            self.about(),
            self.how_to_read(),
        ]


class ComparisonReport(Report):
    """Several runs: each later one side by side with the first, judged as
    `harness compare` judges; the newest run's findings and plots."""

    several = True

    def __init__(self, runs: list[Run], figures: list, table: pd.DataFrame) -> None:
        super().__init__(runs, figures)
        self.table = table  # comparison_table(runs)

    @property
    def title(self) -> str:
        return f"Benchmark comparison of {len(self.runs)} runs"

    def sections(self) -> list[Section]:
        newest = verdict_section(self.runs[-1])
        newest.title = f"Verdict: {self.runs[-1].label}"
        return [
            newest,
            self.stands_out(compare_findings(self.runs, self.table)),
            self.side_by_side(),
            *self.results(),
            self.plots(),
            self.about(),
            self.how_to_read(),
        ]

    def side_by_side(self) -> Section:
        comp = Section(
            "Side by side",
            paragraphs=[
                f"Each later run against {self.runs[0].label}, judged as `harness "
                "compare` judges it: time ratio = new / old (below 1 = faster) "
                "of the metric named in the column (CPU time where both runs "
                "have it), the geometric mean of per-instance median ratios over "
                "the n instances answered alike in both (instances under 0.1 ms "
                "in both are left out: timer noise); counters exact."
            ],
        )
        comp.tables.extend(summary_blocks(self.runs, self.table))
        return comp


def _summary_section(run: Run) -> Section:
    """The run's one summary (:mod:`harness.report.summary_table`), as the terminal
    showed it at the end of the run, with every column."""
    blocks = summary_blocks_of(run)
    keys = summary_columns(blocks)
    sec = Section("Summary", paragraphs=legends(blocks, keys))
    sec.tables.extend((b.title, b.frame(keys)) for b in blocks if b.rows)
    skipped = skipped_frame(run)
    if skipped is not None:
        sec.tables.append(("Skipped: declined by the solver, not failures", skipped))
    return sec


def _scores_table(totals: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "config": totals["config"],
            "answered": [f"{int(a)}/{int(n)}" for a, n in
                         zip(totals["answered"], totals["instances"], strict=True)],
            "score: time": [f"{v:.2f}" for v in totals["score_time"]],
            "score: expanded": [f"{v:.2f}" for v in totals["score_expanded"]],
        }
    )  # fmt: skip


def _dataset_caption(run: Run, dataset: str, cells: pd.DataFrame) -> str:
    info = (run.meta.get("datasets") or {}).get(cells["dataset_name"].iat[0], {})
    size = info.get("size") or cells["size"].iat[0]
    goal = info.get("goal", "")
    n = int(cells.instances.max())
    return f"{dataset} ({size}{', goal ' + str(goal) if goal else ''}, {n} instances)"


def summary_blocks(
    runs: Sequence[Run], table: pd.DataFrame | None = None
) -> list[tuple[str, pd.DataFrame]]:
    """(caption, display table) pairs: per dataset answers and cost for one run,
    the side-by-side comparison per dataset for several (``table``:
    ``comparison_table(runs)``), leaving out datasets that only one run of the pair
    has."""
    if len(runs) > 1:
        table = comparison_table(runs) if table is None else table
        return [
            (f"{d}: {p.old_run.iat[0]} vs {n}", display_compare(p))
            for (d, n), p in table.groupby(["dataset", "new_run"], sort=True)
            if p.old_instances.notna().any() and p.new_instances.notna().any()
        ]
    table = aggregate.run_summary(runs[0])
    return [
        (f"{d} ({int(c.instances.max())} instances): {part}", display_table(c, part))
        for d, c in table.groupby("dataset", sort=True)
        for part in PARTS
    ]


def format_summary(runs: Sequence[Run], fmt: str) -> str:
    """The summary (one run) or side-by-side comparison (several) as "table"
    (aligned text), "markdown", "csv" or "json"; csv and json are unrounded."""
    if fmt in ("csv", "json"):
        table = (
            comparison_table(runs).drop(
                columns=["changed_instances", "same_source", "incomparable"]
            )
            if len(runs) > 1
            else aggregate.run_summary(runs[0])
        )
        if fmt == "csv":
            return table.to_csv(index=False)
        return table.to_json(orient="records", indent=2)
    if fmt == "latex":
        from harness.report.latex import latex_tables

        fair = aggregate.run_fair(runs[-1])
        return latex_tables(fair, aggregate.score_totals(fair))
    if fmt not in ("table", "markdown"):
        raise ValueError(f"unknown format {fmt!r}")
    blocks = summary_blocks(runs)
    if not blocks:
        return "no result rows"
    if fmt == "markdown":  # the verdict first, as report.md opens
        said = [f"- {v.sentence()}" for v in run_verdicts(runs[-1])]
        label = f": {runs[-1].label}" if len(runs) > 1 else ""
        head = [f"**Verdict{label}**\n\n" + "\n".join(said)] if said else []
        return "\n\n".join(
            head + [f"**{cap}**\n\n{markdown_table(t)}" for cap, t in blocks]
        )
    return "\n\n".join(f"{cap}\n{text_table(t)}" for cap, t in blocks)
