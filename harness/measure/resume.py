"""Resuming a stored run: find its directory, take its lock, check that its
datasets and solver sources are unchanged, rebuild its plan from meta.json, and
note the new session of work in ``meta.resumes``. The runner then measures the
cells the run lacks (:func:`harness.measure.runner.execute`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness import results as res
from harness.core.machine import core_count
from harness.core.options import INHERITED, stored_problem
from harness.datasets import Dataset
from harness.measure.plan import (
    DEFAULT_OUT,
    Plan,
    RunError,
    check_instructions,
    oracle_optima,
    resolve_datasets,
    resolve_plugins,
    stored_configs,
)
from harness.results import RunMeta
from harness.results.lock import lock_run, stale_text


def find_run(run_id: str, out: Path | str = DEFAULT_OUT) -> Path:
    """The directory of ``run_id`` under ``out`` (or a path to a run directory)."""
    candidates = [Path(out) / run_id, Path(run_id)]
    for path in candidates:
        if (path / res.META_FILE).is_file():
            return path
    raise RunError(f"--resume {run_id}: no run directory {candidates[0]} (see --out)")


def plan_from_meta(
    meta: dict[str, Any],
    datasets: Sequence[Dataset] | None = None,
    where: str = res.META_FILE,
) -> Plan:
    """Rebuild the plan of a stored run for resuming; RunError if its datasets or
    solver sources changed since (mixing them would make the run dishonest), or
    an option stored in it (``where``: its meta.json) is one the command line
    would refuse: each is checked again, as it was when the run began."""
    opts = meta.get("options") or {}
    problem = stored_problem(opts, where)
    if problem:
        raise RunError(problem)
    try:
        plugins = resolve_plugins(opts.get("plugins", []))
        configs = stored_configs(opts)
        if datasets is None:
            recorded = meta.get("datasets", {})
            datasets = resolve_datasets(
                [recorded.get(n, {}).get("path") or n for n in opts["datasets"]]
            )
    except KeyError as err:
        raise RunError(f"meta.json lacks {err}; cannot resume this run") from None
    for d in datasets:
        want = meta.get("datasets", {}).get(d.name, {}).get("sha256")
        if want is not None and want != d.checksum:
            raise RunError(
                f"dataset {d.name} changed since the run started (checksum "
                f"{d.checksum[:12]} != {want[:12]}); start a new run"
            )
    for c in configs:
        want = meta.get("solvers", {}).get(c.label, {}).get("source_sha256")
        have = c.spec.source_sha256()
        if want and have and want != have:
            raise RunError(
                f"solver {c.label}'s source changed since the run started; "
                "start a new run instead of mixing results of two versions"
            )
    # every option under its one name (harness.core.options); a hand-made file
    # may lack some: they take their defaults
    values = {o.name: opts.get(o.name, o.default) for o in INHERITED}
    values.pop("plugins")
    if values["order_seed"] is None:
        values["order_seed"] = 0
    if values["pairs"] is not None:
        values["pairs"] = {(c, d) for c, d in values["pairs"]} or None
    plan = Plan(configs=configs, datasets=list(datasets), plugins=plugins, **values)
    if plan.instructions:
        check_instructions()
    plan.oracle_optima = oracle_optima(plan.datasets)
    return plan


def prepare_resume(
    run_id: str,
    out: Path | str = DEFAULT_OUT,
    *,
    jobs: int | None = None,
    argv: list[str] | None = None,
    datasets: Sequence[Dataset] | None = None,
    repair: bool = False,
) -> tuple[Plan, Path, RunMeta]:
    """Open a stored run for completion: plan, directory, meta (with the resume noted).
    A torn last line of rows.csv (killed mid-write) is cut off here. Any other
    unreadable line is a RunError, unless ``repair`` moves such lines into
    rows.rejected.csv (their cells are then measured again)."""
    run_dir = find_run(run_id, out)
    try:
        lock = lock_run(run_dir)  # one writer at a time (held until the run ends)
    except res.ResultsError as err:
        raise RunError(str(err)) from None
    try:
        return _open_for_resume(run_id, run_dir, lock, jobs, argv, datasets, repair)
    except BaseException:
        lock.release()
        raise


def _open_for_resume(run_id, run_dir, lock, jobs, argv, datasets, repair):
    try:
        stored = res.read_meta(run_dir)
    except res.ResultsError as err:
        raise RunError(str(err)) from None
    meta = res.load_meta(stored)
    if meta.stored_version != res.SCHEMA_VERSION:
        raise RunError(
            f"run {run_id} was stored with schema_version "
            f"{meta.stored_version} and cannot be resumed by this harness "
            f"(version {res.SCHEMA_VERSION})"
        )
    plan = plan_from_meta(stored, datasets, str(run_dir / res.META_FILE))
    try:
        dropped = res.repair_rows(run_dir)
        rejected = res.quarantine_rows(run_dir) if repair else 0
        res.read_row_dicts(run_dir)
    except res.ResultsError as err:
        raise RunError(str(err)) from None
    problem = res.append_problem(run_dir)
    if problem:
        raise RunError(problem)
    jobs = core_count() if jobs is None else jobs
    session = {
        "at_utc": res.utc_now(),
        "argv": argv if argv is not None else res.python_argv(),
        "jobs": jobs,
        "torn_bytes_dropped": dropped,
        "rows_rejected": rejected,
        "git": res.git_info(),
    }
    if lock.stale:
        session["stale_lock"] = stale_text(lock.stale)
    meta.resumes.append(session)
    set_session_jobs(meta, jobs)
    meta.complete = False
    meta.finished_utc = None
    return plan, run_dir, meta


def set_session_jobs(meta: RunMeta, jobs: int) -> None:
    """The resumed session's worker count (known late for a Dask cluster)."""
    meta.resumes[-1]["jobs"] = jobs
    meta.options["jobs_by_session"] = [meta.options.get("jobs")] + [
        r["jobs"] for r in meta.resumes
    ]
