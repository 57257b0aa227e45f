"""The Python API above measurement and reporting: :func:`run` measures through
the one run path (:class:`harness.measure.session.Session`), :func:`finish` reads
the stored run once for what follows it (the summary, the report, the rows
returned) and :func:`write_run_report` writes the report once, recording in
meta.json why it could not.

``harness run`` (:mod:`harness.cli.run`) parses its flags and calls these: it
opens its session with :func:`open_session`, reports with :func:`finish` and
:func:`write_run_report`, and names the errors of a run from here. The runner
imports neither the reporter nor the analysis; this module is where they meet.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import results as res
from harness.analysis import load_run
from harness.measure.runner import failure_text
from harness.measure.session import RunOptions, Session

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
    report.md/html (a failure to report does not fail the run: it is a warning
    here and ``report_error`` in meta.json). RunError (one line) when the options
    cannot make a run."""
    if options.get("memory_limit_mb", 1) is None:
        options["memory_limit_mb"] = 0  # None given here: no limit
    session = open_session(
        RunOptions(solvers=solvers, datasets=datasets, config=config, **options)
    )
    try:
        session.run(progress)
        finished = finish(session.run_dir, report=report, meta=session.meta)
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


def open_session(options: RunOptions, spell: Callable[[str], str] | None = None):
    """A :class:`~harness.measure.session.Session` of ``options`` with its run
    directory opened (or reopened to resume) and its executor started; ``spell``
    names an option in its messages (default: as ``harness.run()`` spells it).
    RunError (one line) when the options cannot make a run."""
    session = Session(options) if spell is None else Session(options, spell=spell)
    session.open()
    return session


def dry_run(options: RunOptions, spell: Callable[[str], str] | None = None):
    """What a run of ``options`` would do, as lines (:meth:`Session.dry_run`):
    nothing is opened or started."""
    session = Session(options) if spell is None else Session(options, spell=spell)
    return session.dry_run()


def finish(run_dir: Path | str, *, report: bool, meta: Any = None) -> Finished:
    """Read the stored run once (``rows.csv`` and meta.json) and, with ``report``,
    write its report from what was read (:func:`write_run_report`; ``meta``: the
    run's RunMeta, where a failure is recorded). ReportError when the run cannot
    be read."""
    loaded = load_run(run_dir)
    done = Finished(loaded, res.contradicted_labels(loaded.stored))
    if report:
        done.report_problem = write_run_report(loaded, meta)
    return done


def write_run_report(
    run: Run, meta: Any = None, progress: Callable[[str], None] | None = None
) -> str | None:
    """Write the report of ``run`` (loaded) into its directory, once; None when
    written, else the one-line reason, which is also stored as meta.json's
    ``report_error`` (``meta``: the run's RunMeta, else meta.json is read). On
    Ctrl-C the reason "interrupted" is stored and KeyboardInterrupt raised."""
    run_dir = Path(run.path)
    try:
        # import cost: the reporter (matplotlib) loads only when a report is
        # written, and a run without one never pays for it
        from harness.report import write_report

        write_report([run], run_dir, progress=progress)
        return None
    except KeyboardInterrupt:
        _record_report_error(run_dir, meta, "interrupted")
        raise
    except Exception as err:
        why = failure_text(err)
    _record_report_error(run_dir, meta, why)
    return why


def _record_report_error(run_dir: Path, meta: Any, why: str) -> None:
    """meta.json's ``report_error`` = ``why`` (a full disk: left as it was)."""
    try:
        if meta is None:  # a dict as stored, written back as it was read
            meta = res.read_meta(run_dir)
            meta["report_error"] = why
        else:
            meta.report_error = why
        res.write_meta(run_dir, meta)
    except (OSError, res.ResultsError):
        pass
