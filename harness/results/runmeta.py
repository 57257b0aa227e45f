"""meta.json as the code that writes it sees it: :class:`RunMeta`, one typed field
per key, written by the runner, the session, the experiment file and ``merge``.

Readers (the analysis, compare, the report) take the stored JSON object as it is
(:func:`harness.results.read_meta`, which accepts every readable version);
:meth:`RunMeta.from_json` is for continuing a run of the current version (a
resume, a merge). Keys this version does not know are kept as they were.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from harness.results.environment import ENVIRONMENT_KEYS
from harness.results.schema import SCHEMA_VERSION

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

    def to_json(self) -> dict[str, Any]:
        """The JSON object stored as meta.json (the environment's keys at the top
        level, optional keys only once set)."""
        out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "environment":
                out.update(value)
            elif f.name == "extra":
                continue
            elif f.name in _OPTIONAL and value in (None, [], {}):
                continue
            else:
                out[f.name] = value
        return {**out, **self.extra}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunMeta:
        """A stored meta.json, to write on (a resume, a merge); it is written back
        under the current version."""
        rest = dict(data)
        rest.pop("schema_version", None)
        known = {f.name for f in fields(cls)} - {"environment", "extra"}
        values = {k: rest.pop(k) for k in list(rest) if k in known}
        environment = {k: rest.pop(k) for k in ENVIRONMENT_KEYS if k in rest}
        for name in _OPTIONAL:  # null in the file: not set yet
            if values.get(name) is None:
                values.pop(name, None)
        return cls(**values, environment=environment, extra=rest)
