"""meta.json as the code sees it: :class:`RunMeta`, one typed field per key,
written by the runner, the session, the experiment file and ``merge``, and read
back by :func:`load_meta`, the one loader of every readable schema version.

A meta.json of an older version is brought to the current one by one explicit
step per version (:data:`MIGRATIONS`), then typed; :attr:`RunMeta.stored_version`
keeps the version it was stored under (what it lacks: ``schema_gaps``). Keys
this version does not know are kept as they were.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from harness.results.environment import ENVIRONMENT_KEYS
from harness.results.schema import READABLE_VERSIONS, SCHEMA_VERSION, ResultsError

#: Written only once set (None or empty: the key is absent, as readers expect).
_OPTIONAL = (
    "experiment", "reused", "not_reused", "executors", "hosts", "workers",
    "placement", "lost_batches", "phases", "load_average_end", "merged_from",
    "prefer", "stopped_by", "report_error",
)  # fmt: skip


@dataclass(slots=True)
class RunMeta:
    """One run's meta.json (``results/README.md`` describes each key)."""

    run_id: str
    started_utc: str
    git: dict[str, Any] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)
    #: the run's options (harness.measure.plan.Plan.options)
    options: dict[str, Any] = field(default_factory=dict)
    #: dataset name -> sha256, path, size, goal, instances
    datasets: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: config label -> solver, heuristic, source_sha256, optimal, module, ...
    solvers: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: how each figure was measured, in words
    timer: dict[str, Any] = field(default_factory=dict)
    #: the machine: python, packages, platform, cpu_model, ... (top-level keys)
    environment: dict[str, Any] = field(default_factory=dict)
    finished_utc: str | None = None
    setup: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    resumes: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    complete: bool = False
    #: the experiment file the run came from (copied into the run directory)
    experiment: dict[str, Any] | None = None
    #: cells copied from earlier runs (--reuse) and why others were not
    reused: list[dict[str, Any]] | None = None
    not_reused: dict[str, int] | None = None
    #: one entry per session: the executor's kind, slots and what else it said
    executors: list[dict[str, Any]] = field(default_factory=list)
    #: where cells were measured: host -> CPU, worker -> host, worker -> cells
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)
    placement: dict[str, list[list[str]]] = field(default_factory=dict)
    #: Dask batches lost with their worker
    lost_batches: list[dict[str, Any]] = field(default_factory=list)
    #: where the run's time went (harness.measure.meta.PhaseClock)
    phases: dict[str, Any] | None = None
    load_average_end: list[float] | None = None
    #: ``harness merge``: the runs merged and which won an overlap
    merged_from: list[dict[str, Any]] | None = None
    prefer: str | None = None
    #: why the last session stopped early (a full disk, a lost cluster, a bug)
    stopped_by: str | None = None
    #: why the run's report was not written (``harness report RUN`` writes it)
    report_error: str | None = None
    #: keys this version does not know, kept as read
    extra: dict[str, Any] = field(default_factory=dict)
    #: the schema version the file was stored under (written back as the current)
    stored_version: int = SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored as meta.json (the environment's keys at the top
        level, optional keys only once set)."""
        out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "environment":
                out.update(value)
            elif f.name in ("extra", "stored_version"):
                continue
            elif f.name in _OPTIONAL and value in (None, [], {}):
                continue
            else:
                out[f.name] = value
        return {**out, **self.extra}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunMeta:
        """A meta.json object of the current version, typed (older versions go
        through :func:`load_meta`)."""
        rest = dict(data)
        version = rest.pop("schema_version", SCHEMA_VERSION)
        known = {f.name for f in fields(cls)} - {"environment", "extra"}
        known.discard("stored_version")
        values = {k: rest.pop(k) for k in list(rest) if k in known}
        environment = {k: rest.pop(k) for k in ENVIRONMENT_KEYS if k in rest}
        for name in _OPTIONAL:  # null in the file: not set yet
            if values.get(name) is None:
                values.pop(name, None)
        return cls(
            **values, environment=environment, extra=rest, stored_version=version
        )


# ---------------------------------------------------------------- migration
# One step per version: what the next version added to meta.json, filled in for
# a run stored before it where the older run tells (rows.csv's columns are the
# reader's: harness.results.schema says what each version added there).


def _from_v1(data: dict[str, Any]) -> None:
    """2 added ``raw_seconds`` / ``raw_cpu_seconds`` to the rows, nothing to
    meta.json."""


def _from_v2(data: dict[str, Any]) -> None:
    """3 added options.warmup and options.order_seed, load averages, the CPU
    frequency and the hostname: not recorded before, so left absent (readers say
    "no warm-up count recorded")."""


def _from_v3(data: dict[str, Any]) -> None:
    """4 added the adaptive stop (options.adaptive, the tolerance; 0 = off) and
    ``phases``: a run before it took every repeat, so its tolerance is 0."""
    options = data.get("options")
    if isinstance(options, dict):
        options.setdefault("adaptive", 0)


def _from_v4(data: dict[str, Any]) -> None:
    """5 added calibrated samples (options.min_sample_seconds; 0 = one solve per
    sample): a run before it timed one solve per repeat."""
    options = data.get("options")
    if isinstance(options, dict):
        options.setdefault("min_sample_seconds", 0)


def _from_v5(data: dict[str, Any]) -> None:
    """6 added each config's claim (solvers.<label>.bound and .guarantee): before
    it, a config meta.json calls optimal claimed bound 1, any other none."""
    for info in (data.get("solvers") or {}).values():
        if isinstance(info, dict):
            optimal = info.get("optimal") is True
            info.setdefault("bound", 1 if optimal else None)
            info.setdefault("guarantee", "optimal" if optimal else "none")


def _from_v6(data: dict[str, Any]) -> None:
    """7 stored every run option under its one name (harness.core.options):
    options.gc_disabled_during_timing became options.gc, its negation."""
    options = data.get("options")
    if isinstance(options, dict) and "gc_disabled_during_timing" in options:
        options["gc"] = not options.pop("gc_disabled_during_timing")


def _from_v7(data: dict[str, Any]) -> None:
    """8 added instruction counts (options.instructions): a run before it counted
    none."""
    options = data.get("options")
    if isinstance(options, dict):
        options.setdefault("instructions", False)


def _from_v8(data: dict[str, Any]) -> None:
    """9 added tile costs to the rows (cost_model, path_cost, optimal_cost; a run
    before it was a unit-cost run, its rows read as unit): nothing in meta.json,
    where a run under tile costs is told by its datasets' names (NAME@MODEL)."""


def _from_v9(data: dict[str, Any]) -> None:
    """10 added the necessary expansions to the rows (necessary, necessary_ties,
    over_necessary; older rows read as empty): nothing in meta.json."""


#: version -> the step that brings a meta.json of that version to the next one.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], None]] = {
    1: _from_v1, 2: _from_v2, 3: _from_v3, 4: _from_v4, 5: _from_v5, 6: _from_v6,
    7: _from_v7, 8: _from_v8, 9: _from_v9,
}  # fmt: skip


def check_version(data: dict[str, Any], where: str = "meta.json") -> int:
    """The stored object's schema version; ResultsError (one line naming
    ``where``) for one this harness cannot read, a newer one included."""
    version = data.get("schema_version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        newer = (
            f"newer than this harness's {SCHEMA_VERSION}; "
            if type(version) is int and version > SCHEMA_VERSION
            else ""
        )
        raise ResultsError(
            f"{where}: schema_version {version!r} is not supported by this harness "
            f"({newer}it reads versions {', '.join(map(str, READABLE_VERSIONS))}); "
            "use the harness version that wrote it"
        )
    return version


def migrate(data: dict[str, Any], where: str = "meta.json") -> dict[str, Any]:
    """A copy of a stored meta.json object brought to :data:`SCHEMA_VERSION`, one
    step per version; ResultsError (one line naming ``where``) for a version this
    harness cannot read, a newer one included."""
    version = check_version(data, where)
    # The steps change only options and solvers' entries: those are copied, the
    # rest (a large run's placement) is shared with ``data``.
    out = dict(data)
    if isinstance(out.get("options"), dict):
        out["options"] = dict(out["options"])
    if isinstance(out.get("solvers"), dict):
        out["solvers"] = {
            label: dict(info) if isinstance(info, dict) else info
            for label, info in out["solvers"].items()
        }
    for step in range(version, SCHEMA_VERSION):
        MIGRATIONS[step](out)
    out["schema_version"] = SCHEMA_VERSION
    return out


def load_meta(data: dict[str, Any], where: str = "meta.json") -> RunMeta:
    """The one loader: a stored meta.json object of any readable version, migrated
    (:func:`migrate`) and typed; :attr:`RunMeta.stored_version` is its version."""
    current = migrate(data, where)
    for key in ("run_id", "started_utc"):  # always written; a hand-made file
        current.setdefault(key, "")  # may lack them: read as unknown
    meta = RunMeta.from_json(current)
    meta.stored_version = data["schema_version"]
    return meta


def incomplete_sentence(meta: dict[str, Any]) -> str | None:
    """The sentence a report says first about a run that did not finish (stopped,
    still running, or merged from such a run); None for a complete run."""
    if meta.get("complete", True) and meta.get("finished_utc", "") is not None:
        return None
    return (
        f"Run {meta.get('run_id', '')} is incomplete (it did not finish): the "
        "tables cover only the cells stored so far."
    )
