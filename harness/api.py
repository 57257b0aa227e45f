"""The Python API above measurement and reporting: :func:`run` measures through
the one run path (:class:`harness.measure.session.Session`, as ``harness run``
does) and :func:`finish` reads the stored run once for what follows it (the
summary, the report, the rows returned).

The runner imports neither the reporter nor the analysis; this module is where they
meet (as ``harness run`` does in :mod:`harness.cli.run`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from harness.analysis import Run


def run(
    solvers: Any = None,
    datasets: Any = None,
    *,
    report: bool = False,
    config: str | Path | None = None,
    progress: Any = None,
    **options: Any,
) -> pd.DataFrame:
    """Run the grid, store it under ``out/<run_id>/`` and return its rows as a
    pandas DataFrame (the rows of rows.csv, typed by
    :func:`harness.analysis.read_run`; ``.attrs["run_dir"]`` is the path).

    ``solvers`` ("all", "a,b[h]" or a list), ``datasets`` ("default", names,
    paths or :class:`~harness.datasets.Dataset` objects) and every keyword of
    :class:`harness.measure.session.RunOptions` (``repeats``, ``timeout``,
    ``memory_limit_mb`` (None or 0: no limit), ``jobs`` (0: in this process),
    ``executor="dask"`` with ``scheduler``, ``resume=RUN_ID``, ``reuse``, ...).
    ``config``: an experiment file (as ``harness run --config``); the options
    given here win over the file's. ``report=True`` also writes the run's
    report.md/html (a failure to report does not fail the run). RunError (one
    line) when the options cannot make a run."""
    from harness.measure.session import RunOptions, Session

    if options.get("memory_limit_mb", 1) is None:
        options["memory_limit_mb"] = 0  # None given here: no limit
    session = Session(
        RunOptions(solvers=solvers, datasets=datasets, config=config, **options)
    )
    session.open()
    try:
        session.run(progress)
        finished = finish(session.run_dir, report=report)
    finally:
        session.release()
    if finished.report_problem:
        warnings.warn(
            f"no report written for {session.run_dir}: {finished.report_problem}",
            stacklevel=2,
        )
    frame = finished.run.stored
    frame.attrs["run_dir"] = str(session.run_dir)
    return frame


@dataclass(slots=True)
class Finished:
    """A finished run as read once after it ran: the loaded run, the dataset labels
    its rows contradict, and why no report was written (None: written or not asked)."""

    run: Run
    contradicted: list[dict[str, Any]] = field(default_factory=list)
    report_problem: str | None = None


def finish(run_dir: Path | str, *, report: bool) -> Finished:
    """Read the stored run once (``rows.csv`` and meta.json) and, with ``report``,
    write its report from what was read. ReportError when the run cannot be read."""
    from harness import results as res
    from harness.analysis import load_run

    loaded = load_run(run_dir)
    done = Finished(loaded, res.contradicted_labels(loaded.stored))
    if report:
        done.report_problem = write_report_if_available(loaded)
    return done


def write_report_if_available(
    run: Run | Path, progress: Callable[[str], None] | None = None
) -> str | None:
    """Call the reporter on this run (loaded, or its directory; ``progress`` hears
    what it is writing); a one-line reason when it could not."""
    try:
        from harness.report import write_report
    except ImportError:
        return "the reporter (harness.report) is not available"
    try:
        write_report([run], progress=progress)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return None
