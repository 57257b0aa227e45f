"""History across commits: many stored runs read as one :class:`History` (asv's
graphs, no server; the page is :class:`harness.report.history.HistoryReport`).

Runs are ordered by their start time and labelled with their git commit. Per solver
config the page plots the median CPU time (median over instances of each instance's
median over repeats) and the exact counters (expanded and generated nodes summed over
the instances) against the runs. Each pair of consecutive runs is compared by
:func:`harness.compare.compare_frames`, the comparer of ``harness compare``, so a
step is flagged as a regression by the same statistics (significant and at least
``min_ratio`` for time; any rise of nodes or worse status). A break (dashed line) is
drawn where the environment changed (CPU model, Python, package versions) or a
config's counters moved; a table lists the largest steps with their commits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.compare import Incomparable, Thresholds, compare_frames
from harness.results import RunMeta, load_meta

ENVIRONMENT_KEYS = ("cpu_model", "python", "packages")
DEFAULT_TOP = 10


class HistoryError(Exception):
    """Runs that cannot be read or are too few; the message is one line."""


@dataclass(slots=True)
class RunPoint:
    """One stored run: who made it and what it measured, per config."""

    run_dir: Path
    run_id: str
    commit: str  # short hash, "nogit" when unknown (+ "-dirty")
    date: str  # the run's start, UTC
    environment: dict[str, Any]
    cpu_ms: dict[str, float] = field(default_factory=dict)  # config -> median ms
    metric: dict[str, str] = field(default_factory=dict)  # config -> column used
    expanded: dict[str, int] = field(default_factory=dict)  # config -> sum
    generated: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Step:
    """From run ``index - 1`` to run ``index``, one config."""

    index: int
    config: str
    ratio: float | None  # new / old time (the comparer's geometric mean)
    low: float | None
    high: float | None
    verdict: str
    counter_changes: int
    regression: bool
    regressions: list[str]  # the comparer's words
    time_regression: bool = False  # which part regressed: time ...
    counter_regression: bool = False  # ... or nodes / statuses

    @property
    def size(self) -> float:
        """How big the step is: |log ratio|, plus one when counters moved."""
        t = abs(math.log(self.ratio)) if self.ratio else 0.0
        return t + (1.0 if self.counter_changes else 0.0)


@dataclass(slots=True)
class History:
    runs: list[RunPoint]
    configs: list[str]
    steps: list[Step]
    #: index -> why run ``index`` starts a new segment (environment or counters)
    breaks: dict[int, list[str]]
    incomparable: dict[int, str]  # index -> why it could not be compared
    thresholds: Thresholds
    #: runs left out because they cannot be read: (run directory, why), in the
    #: order found; one damaged run does not hide the others' history
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    @property
    def regressions(self) -> list[Step]:
        return [s for s in self.steps if s.regression]


# -------------------------------------------------------------------- reading


def find_runs(paths: list[Path]) -> list[Path]:
    """Run directories among ``paths``: each is a run (has meta.json) or a folder
    of runs. HistoryError naming a path that is neither."""
    out: list[Path] = []
    for path in paths:
        if (path / "meta.json").is_file():
            out.append(path)
        elif path.is_dir():
            found = sorted(p for p in path.iterdir() if (p / "meta.json").is_file())
            if not found:
                raise HistoryError(f"{path}: no run directories (no */meta.json)")
            out.extend(found)
        else:
            raise HistoryError(f"{path}: no such run directory or results folder")
    return list(dict.fromkeys(out))


def _point(run_dir: Path, meta: RunMeta, rows) -> RunPoint:
    git = meta.git
    commit = (git.get("commit") or "nogit")[:8] + ("-dirty" if git.get("dirty") else "")
    point = RunPoint(
        run_dir=run_dir,
        run_id=meta.run_id or run_dir.name,
        commit=commit,
        date=meta.started_utc or "",
        environment={k: meta.environment.get(k) for k in ENVIRONMENT_KEYS},
    )
    timed = rows[
        (rows["measure"] == "time") & rows["status"].isin(["solved", "unsolvable"])
    ]
    for config, group in timed.groupby("config", sort=True):
        metric = "cpu_seconds" if group["cpu_seconds"].notna().all() else "seconds"
        per_instance = group.groupby(["dataset", "instance"])[metric].median()
        if per_instance.notna().any():
            point.cpu_ms[config] = 1e3 * float(per_instance.median())
            point.metric[config] = metric
        first = group[group["repeat"] == 0]
        for counter, into in (("expanded", point.expanded),
                              ("generated", point.generated)):  # fmt: skip
            if first[counter].notna().any():
                into[config] = int(first[counter].sum())
    return point


def build_history(paths: list[Path], thresholds: Thresholds | None = None) -> History:
    """Read the runs, order them by start time, compare each with the one before
    (``thresholds``: the comparer's, default as in ``harness compare``). A run that
    cannot be read is left out and listed in ``History.skipped``; HistoryError
    when none can be read."""
    thresholds = thresholds or Thresholds()
    from harness.analysis import ReportError, read_run
    from harness.results import ResultsError

    loaded, skipped = [], []
    for run_dir in find_runs(paths):
        try:
            meta, rows = read_run(run_dir)
        except (ResultsError, ReportError) as err:
            skipped.append((run_dir, str(err)))
            continue
        loaded.append((str(meta.get("started_utc") or ""), run_dir.name, meta, rows))
    if not loaded:
        if skipped:
            raise HistoryError(f"no readable run; {skipped[0][1]}")
        raise HistoryError("no runs given")
    loaded.sort(key=lambda item: (item[0], item[1]))
    runs = [_point(Path(d), load_meta(m), r) for _, d, m, r in loaded]
    for point, (_, name, _, _) in zip(runs, loaded, strict=True):
        point.run_dir = Path(name)
    configs = sorted(
        {c for r in runs for c in r.cpu_ms} | {c for r in runs for c in r.expanded}
    )
    history = History(runs, configs, [], {}, {}, thresholds, skipped)
    for i in range(1, len(loaded)):
        old, new = loaded[i - 1], loaded[i]
        changed = [
            k
            for k in ENVIRONMENT_KEYS
            if runs[i - 1].environment[k] != runs[i].environment[k]
        ]
        if changed:
            history.breaks.setdefault(i, []).append(
                "environment changed: "
                + ", ".join(
                    _env_change(k, runs[i - 1].environment[k], runs[i].environment[k])
                    for k in changed
                )
            )
        try:
            comp = compare_frames(old[2], old[3], new[2], new[3], thresholds)
        except Incomparable as err:
            history.incomparable[i] = str(err)
            history.breaks.setdefault(i, []).append(f"not comparable: {err}")
            continue
        regressed = comp.regressions
        for config, summary in comp.configs.items():
            t = summary.time
            step = Step(
                index=i,
                config=config,
                ratio=t.ratio if t else None,
                low=t.low if t else None,
                high=t.high if t else None,
                verdict=t.verdict if t else "time not compared",
                counter_changes=summary.counter_changes,
                regression=any(line.startswith(f"{config}: ") for line in regressed),
                regressions=[
                    line for line in regressed if line.startswith(f"{config}: ")
                ],
                time_regression=bool(t and t.regression),
                counter_regression=bool(
                    summary.counter_regressions or summary.status_regressions
                    or summary.quality_regressions
                ),
            )
            history.steps.append(step)
            if summary.counter_changes:
                history.breaks.setdefault(i, []).append(
                    f"{config}: counters moved in {summary.counter_changes} cell(s)"
                )
    return history


def _env_change(key: str, old: Any, new: Any) -> str:
    if isinstance(old, dict) and isinstance(new, dict):
        diffs = [
            f"{name} {old.get(name)} -> {new.get(name)}"
            for name in sorted(set(old) | set(new))
            if old.get(name) != new.get(name)
        ]
        return f"{key} ({'; '.join(diffs)})"
    return f"{key} {old} -> {new}"


# -------------------------------------------------------------------- output


def largest_steps(history: History, top: int = DEFAULT_TOP) -> list[Step]:
    """The biggest steps (time ratio away from 1, counters moved), largest first."""
    moved = [s for s in history.steps if s.size > 0]
    return sorted(moved, key=lambda s: (-s.size, s.index, s.config))[:top]
