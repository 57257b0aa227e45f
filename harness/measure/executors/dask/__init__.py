"""The runner's cells on a Dask distributed cluster (``harness run --executor dask``).

Dask only places the work; the measurement is the local one. Each Dask task is a
*batch* of cells of one solver config. On the Dask worker the batch goes through a
:class:`~harness.measure.executors.local.LocalPool` of one measuring process, the same
fresh interpreter, deadlines, memory limit and memory pass as a local run; the Dask
worker thread never calls a solver. A hang, a crash, ``os._exit`` or a memory hog
costs the measuring process and one cell, recorded as locally, and the Dask task still
returns normally: Dask never sees a failure, so it never retries one. The
measuring process (and the set-ups it has prepared) outlives the batch, so each
Dask worker warms a config once, as a local worker does.

What travels, client to worker: :class:`Batch` -- the runner's :class:`Task` objects
(every run option lives in them, so options added to ``Task`` reach the workers
unchanged), the source text of every ``--plugin`` file (workers need no copy of the
client's files; module-name plugins must be installed on the workers), and a
fingerprint of the harness code. Numba dispatchers never travel: workers import the
solvers themselves and use their own on-disk caches. Back: :class:`BatchResult` --
each finished cell's attempts and set-ups, the cells the batch left for later, and
the worker's host, address and CPU model.

Batching (overhead): in the runner's interleaved order (the default) a batch is one
instance block -- every config on one instance, in the block's order -- as one
local worker runs a block; tiny blocks are packed (at most
``BLOCK_BATCHES_PER_SLOT`` batches per slot). Costliest blocks go first (the
runner's cost model, as the local pool). Otherwise a batch holds up to
``max_batch`` cells of one config, at least ``BATCHES_PER_SLOT`` batches per
slot. A batch stops taking new cells (or blocks) after ``slice_seconds`` and hands
the rest back to be queued again, so a slow batch never pins one worker while
others idle. Dask's cost is then one scheduler round trip (~15 ms here) per batch,
not per cell.

Same conditions as a local cell: the measuring process runs in the client's values
of the variables a Dask nanny sets (``NANNY_ENV``: malloc trimming, BLAS threads,
hash seed), pinned to its own core of its host when the plan pins (``core_plan``),
and the LocalCluster we start keeps Dask's own periodic work low
(``SCHEDULER_CONFIG``).

The package: :mod:`~harness.measure.executors.dask.payloads` (what travels),
:mod:`~harness.measure.executors.dask.worker_side` (the Dask task),
:mod:`~harness.measure.executors.dask.client` (the executor),
:mod:`~harness.measure.executors.dask.losses` (a batch lost with its worker),
:mod:`~harness.measure.executors.dask.cluster` (Dask imported, a LocalCluster started),
:mod:`~harness.measure.executors.dask.batching` (cells into batches),
:mod:`~harness.measure.executors.dask.environment` (environment and pinning),
:mod:`~harness.measure.executors.dask.address` (scheduler addresses and TLS); their
public names are re-exported here.

Importing this package is cheap: it registers the ``dask`` executor (every
command's ``--executor`` help lists it) and loads the module behind a re-exported
name when the name is first used (:pep:`562`). The client modules, asyncio and
``distributed`` are imported only when ``--executor dask`` starts, and on Dask
workers (``run_batch``); ``distributed`` itself inside functions.
"""

from __future__ import annotations

import importlib
from typing import Any

from harness.measure.executors.registry import ExecutorKind, Launch, register_executor

#: Each re-exported name and the module of this package it lives in.
_HOME = {
    "BATCHES_PER_SLOT": "batching",
    "BLOCK_BATCHES_PER_SLOT": "batching",
    "DEFAULT_MAX_BATCH": "batching",
    "DEFAULT_SLICE_SECONDS": "batching",
    "batch_cells": "batching",
    "plan_batches": "batching",
    "CONNECT_TIMEOUT": "client",
    "DaskExecutor": "client",
    "start_dask_executor": "client",
    "SCHEDULER_CONFIG": "cluster",
    "DaskSetupError": "cluster",
    "DaskUnavailable": "cluster",
    "import_distributed": "cluster",
    "NANNY_ENV": "environment",
    "RESOURCE": "environment",
    "by_name_too": "environment",
    "client_environ": "environment",
    "core_plan": "environment",
    "cores_for": "environment",
    "measuring_env": "environment",
    "restore_environ": "environment",
    "LOST_BATCH_RETRIES": "losses",
    "UNSTARTED_REQUEUES": "losses",
    "lost_entry": "losses",
    "Batch": "payloads",
    "BatchResult": "payloads",
    "CellResult": "payloads",
    "code_files": "payloads",
    "code_fingerprint": "payloads",
    "host_info": "payloads",
    "START_ACK_SECONDS": "worker_side",
    "check_programs": "worker_side",
    "program_needs": "worker_side",
    "run_batch": "worker_side",
    "worker_info": "worker_side",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # once
    return value


def _start(launch: Launch) -> Any:
    # the client (asyncio, the batching, the cluster start) only now
    from harness.measure.executors.dask.client import start_dask_executor

    return start_dask_executor(
        launch.scheduler, launch.jobs, launch.plugins, tls=launch.tls,
        security=launch.security,
    )  # fmt: skip


register_executor(ExecutorKind(
    "dask", "a Dask cluster; needs `pip install 'npuzzle-harness[dask]'`", _start,
    sets_jobs=True, on_cluster=True,
))  # fmt: skip

__all__ = [
    "BATCHES_PER_SLOT",
    "BLOCK_BATCHES_PER_SLOT",
    "Batch",
    "BatchResult",
    "CONNECT_TIMEOUT",
    "CellResult",
    "DEFAULT_MAX_BATCH",
    "DEFAULT_SLICE_SECONDS",
    "DaskExecutor",
    "DaskSetupError",
    "DaskUnavailable",
    "LOST_BATCH_RETRIES",
    "NANNY_ENV",
    "RESOURCE",
    "SCHEDULER_CONFIG",
    "START_ACK_SECONDS",
    "UNSTARTED_REQUEUES",
    "batch_cells",
    "by_name_too",
    "check_programs",
    "client_environ",
    "code_files",
    "code_fingerprint",
    "core_plan",
    "cores_for",
    "host_info",
    "import_distributed",
    "lost_entry",
    "measuring_env",
    "plan_batches",
    "program_needs",
    "restore_environ",
    "start_dask_executor",
    "run_batch",
    "worker_info",
]
