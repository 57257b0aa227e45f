"""The executors by name: where a session's cells are measured.

An executor is one module that calls :func:`register_executor` with an
:class:`ExecutorKind`: its name (``harness run --executor NAME``, the experiment
file's ``executor = "NAME"``, meta.json's ``executors[].kind``), a phrase for the
help text, and ``start``, which builds the executor from a :class:`Launch`.
``local``, ``inline`` and ``dask`` register themselves this way; a plugin does the
same in its own file (``--plugin file.py``) or under the entry point group
``npuzzle_harness.executors``. The names ``--executor`` takes, the experiment
file's check and the help all come from :func:`executor_names`.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.registries import add, load_entry_points, registry, seal, source
from harness.measure.executors.base import Executor

ENTRY_POINT_GROUP = "npuzzle_harness.executors"
#: The executor a run takes when none is named.
DEFAULT_EXECUTOR = "local"


@dataclass(frozen=True, slots=True)
class Launch:
    """What a session knows when it starts an executor."""

    #: workers asked for (``--jobs``; None: the executor's default). A kind with
    #: ``sets_jobs`` gets it as given; the others get the session's resolved count.
    jobs: int | None
    #: the run directory (workers' log); None for a kind with ``sets_jobs``, which
    #: is started before the run directory exists (its ``jobs`` go in meta.json)
    run_dir: Path | None
    pin: bool = True  # pin measuring processes to cores (plan.pin)
    plugins: Sequence[str] = ()  # the plan's plugins (what workers must load)
    scheduler: str | None = None  # a cluster's address (kinds with ``on_cluster``)
    tls: tuple[Any, Any, Any] | None = None  # (CA, certificate, key) files
    security: Any = None  # a distributed.Security instead of ``tls``


@dataclass(frozen=True, slots=True)
class ExecutorKind:
    """One registered executor (see the module doc)."""

    name: str
    help: str  # a phrase for --executor's help: "worker processes here"
    start: Callable[[Launch], Executor]
    #: the executor decides how many workers there are (a cluster): it is started
    #: before the run directory, and its ``jobs`` are recorded
    sets_jobs: bool = False
    #: takes ``--scheduler`` (and the TLS files): its cells may run on other hosts
    on_cluster: bool = False
    #: the one ``--jobs`` it runs with (inline: 0), or None: any
    fixed_jobs: int | None = None


_EXECUTORS: dict[str, ExecutorKind] = registry()
_BUILT_IN: set[int] = set()  # sealed once, after the built-ins registered


def register_executor(kind: ExecutorKind) -> ExecutorKind:
    """Add ``kind`` under its name; a name registered by another module is an
    error naming both (:func:`harness.core.registries.add`)."""
    module = getattr(kind.start, "__module__", None) or __name__
    add(_EXECUTORS, "executor", kind.name, kind, source(module))
    return kind


def _load() -> None:
    """Import every module of this package (as ``all_solvers`` does ``solvers/``):
    each executor registers itself; then the entry points' executors."""
    package = importlib.import_module(__package__)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{__package__}.{module.name}")
    if id(_EXECUTORS) not in _BUILT_IN:
        _BUILT_IN.add(id(_EXECUTORS))
        seal(_EXECUTORS)  # the three above; plugins' are forgotten by a scope
    load_entry_points(ENTRY_POINT_GROUP)


def all_executors() -> dict[str, ExecutorKind]:
    """Every registered executor: the default first, then by name."""
    _load()
    names = sorted(_EXECUTORS, key=lambda n: (n != DEFAULT_EXECUTOR, n))
    return {n: _EXECUTORS[n] for n in names}


def executor_names() -> tuple[str, ...]:
    """The names ``--executor`` and an experiment file's ``executor`` take."""
    return tuple(all_executors())


def executor_kind(name: str) -> ExecutorKind | None:
    """The executor registered as ``name``, or None."""
    return all_executors().get(name)


def executor_help() -> str:
    """``--executor``'s help: every registered executor with its phrase."""
    kinds = all_executors().values()
    return "Where cells run: " + "; ".join(f"'{k.name}': {k.help}" for k in kinds) + "."
