"""The Python API above measurement and reporting: :func:`run` measures (see
:func:`harness.measure.runner.run`) and, when asked, writes the report of the run.

The runner imports neither the reporter nor the analysis; this module is where they
meet (as ``harness run`` does in :mod:`harness.cli.run`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def run(
    *args: Any, report: bool = False, config: str | Path | None = None, **kwargs: Any
):
    """Run the grid (:func:`harness.measure.runner.run`: same arguments), store it
    under ``out/<run_id>/`` and return its rows as a pandas DataFrame (the same
    rows as rows.csv, typed by :func:`harness.analysis.read_run`;
    ``.attrs["run_dir"]`` is the path). ``report=True`` also writes the run's
    report.md/html (a failure to report does not fail the run).

    ``config``: an experiment file (as ``harness run --config``): it names the
    solvers and datasets, and its options apply unless given here too.
    RunError (one line) on a bad file or a bad choice of executor."""
    from harness.analysis import read_run
    from harness.measure.runner import RunError
    from harness.measure.runner import run as measure

    if config is not None:
        from harness.measure.experiment import ExperimentError, load, run_arguments

        given = [n for n in ("solvers", "datasets") if n in kwargs]
        if args or given:
            raise RunError(
                f"config={str(config)!r} names the solvers and datasets; drop "
                + ", ".join(given or ["the positional arguments"])
            )
        try:
            exp = load(config)
        except ExperimentError as err:
            raise RunError(str(err)) from None
        from_file = run_arguments(exp)
        if kwargs.get("executor", from_file.get("executor")) != "dask":
            from_file.pop("scheduler", None)  # executor= here wins over the file's
        kwargs = {**from_file, **kwargs, "experiment": exp}
        try:
            run_dir = Path(measure(*args, **kwargs))
        except RunError as err:
            if kwargs.get("scheduler") != exp.options.get("scheduler"):
                raise
            raise RunError(exp.scheduler_error(str(err))) from None
    else:
        run_dir = Path(measure(*args, **kwargs))

    if report:
        write_report_if_available(run_dir)
    _, frame = read_run(run_dir)
    frame.attrs["run_dir"] = str(run_dir)
    return frame


def write_report_if_available(
    run_dir: Path, progress: Callable[[str], None] | None = None
) -> str | None:
    """Call the reporter on this run (``progress`` hears what it is writing); a
    one-line reason when it could not."""
    try:
        from harness.report import write_report
    except ImportError:
        return "the reporter (harness.report) is not available"
    try:
        write_report([run_dir], run_dir, progress=progress)
    except Exception as err:
        return f"{type(err).__name__}: {err}"
    return None
