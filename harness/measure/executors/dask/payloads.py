"""What travels between the client and a Dask worker: a :class:`Batch` of the
runner's tasks out, a :class:`BatchResult` back; and what both sides compute the
same way (the code fingerprint, the host description)."""

from __future__ import annotations

import hashlib
import importlib.util
import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.machine import usable_cores
from harness.measure.tasks import Attempt, Setup, Task

# ------------------------------------------------------------------ payloads


@dataclass(frozen=True, slots=True)
class Batch:
    """One Dask task: cells of one config, run in order on one measuring process."""

    id: int
    tasks: tuple[Task, ...]
    #: plugin target (absolute .py path on the client) -> its source text
    plugin_sources: dict[str, str]
    fingerprint: str
    slice_seconds: float
    #: measuring-process log; None: the Dask worker's local directory
    log_path: str | None = None
    #: external programs the cells run: (solver, file, sha256 on the client)
    programs: tuple[tuple[str, str, str], ...] = ()
    #: the client's values of the nanny-set variables (None: unset), see NANNY_ENV
    environ: dict[str, str | None] = field(default_factory=dict)
    #: Dask worker address (or ("name", host, worker name)) -> the cores its
    #: measuring processes are pinned to
    #: (None: no pinning; a worker not named here runs unpinned)
    cores: dict[Any, tuple[int, ...]] | None = None
    #: Dask event topic the batch's start is logged under ("": none)
    topic: str = ""


@dataclass(slots=True)
class CellResult:
    task_id: int
    attempts: list[Attempt]
    setups: list[Setup]
    h_start: int | None
    cpu: int | None = None  # the core its measuring process was pinned to
    #: (wall, CPU) seconds per phase in the measuring process (TaskResult.phases)
    phases: dict[str, tuple[float, float]] = field(default_factory=dict)


@dataclass(slots=True)
class BatchResult:
    batch_id: int
    cells: list[CellResult] = field(default_factory=list)
    remaining: tuple[int, ...] = ()  # task ids not started (slice over)
    worker: dict[str, Any] = field(default_factory=dict)
    refused: str = ""  # why the worker ran nothing (other harness code)


# ------------------------------------------------------------ both sides


_FINGERPRINT: str | None = None


def code_files() -> dict[str, Path]:
    """The harness's and the built-in solvers' Python sources, by their path from
    the folder holding both packages (``harness/measure/worker.py``), sorted."""
    files = {}
    for package in ("harness", "solvers"):  # found, not imported (no import cycle)
        spec = importlib.util.find_spec(package)
        folder = Path(spec.submodule_search_locations[0]).resolve()
        for path in sorted(folder.rglob("*.py")):
            files[path.relative_to(folder.parent).as_posix()] = path
    return files


def code_fingerprint() -> str:
    """sha256 over :func:`code_files`: a worker whose installed code differs would
    measure something else."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        digest = hashlib.sha256()
        for name, path in code_files().items():
            digest.update(name.encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
        _FINGERPRINT = digest.hexdigest()
    return _FINGERPRINT


def host_info() -> dict[str, Any]:
    """This machine as meta.json ``hosts`` records it."""
    from harness.results import cpu_model

    cores = usable_cores()
    return {
        "cpu_model": cpu_model(),
        "cpu_count": len(cores),
        "cores": cores,
        "platform": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }
