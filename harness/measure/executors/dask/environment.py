"""The conditions of a Dask cell: the nanny-set variables the measuring process
gets from the client (``NANNY_ENV``), and the cores each Dask worker's measuring
processes are pinned to (``core_plan``)."""

from __future__ import annotations

import os
from typing import Any

#: Optional worker resource: how many measurements a Dask worker may run at once
#: (``dask worker --resources measure=2``). Without it, each worker thread is one.
RESOURCE = "measure"
#: Set by a Dask nanny for its worker (so for every process the worker starts), and
#: able to change a solver's speed or behaviour: glibc's malloc trimming
#: (``MALLOC_TRIM_THRESHOLD_``), BLAS threads, the str hash seed. Besides these, the
#: keys of the worker's ``distributed.nanny.pre-spawn-environ``. The measuring
#: process gets the client's values instead (unset where the client has none), so a
#: cell runs in the environment it would run in locally.
NANNY_ENV = (
    "MALLOC_TRIM_THRESHOLD_",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "PYTHONHASHSEED",
)


def measuring_env(environ: dict[str, str | None]) -> dict[str, str]:
    """This process's environment with the nanny-set variables (NANNY_ENV and the
    worker's ``pre-spawn-environ`` keys) as ``environ`` (the client's) has them."""
    keys = set(NANNY_ENV) | set(environ)
    try:
        import dask

        keys |= set(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    except ImportError:
        pass
    env = dict(os.environ)
    for key in keys:
        value = environ.get(key)
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def client_environ() -> dict[str, str | None]:
    """This process's values of the variables a Dask nanny sets (see NANNY_ENV)."""
    keys = set(NANNY_ENV)
    try:
        import dask

        keys |= set(dask.config.get("distributed.nanny.pre-spawn-environ", {}) or {})
    except ImportError:
        pass
    return {key: os.environ.get(key) for key in sorted(keys)}


def restore_environ(environ: dict[str, str | None]) -> None:
    """Put these variables back as they were (a LocalCluster's nannies run in this
    process and set them here too, where later local runs would inherit them)."""
    for key, value in environ.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def core_plan(
    workers: dict[str, dict[str, Any]], by_resource: bool = False
) -> dict[str, tuple[int, ...]]:
    """Cores for each Dask worker's measuring processes, one per slot: host by host,
    worker by worker (in name order), consecutive cores of the worker's own
    affinity, round robin; so two measurements on one host share a core only when
    the host has fewer cores than slots (which the run warns about)."""

    def order(item: tuple[str, dict[str, Any]]) -> tuple:
        address, w = item
        name = str(w.get("name", ""))
        return (str(w.get("host", "")), not name.isdigit(), int(name) if name.isdigit()
                else 0, name, address)  # fmt: skip

    out: dict[str, tuple[int, ...]] = {}
    taken: dict[tuple[str, tuple[int, ...]], int] = {}
    for address, w in sorted(workers.items(), key=order):
        cores = tuple(w.get("cores") or ())
        if not cores:
            continue
        slots = (w.get("resources") or {}).get(RESOURCE, 0) if by_resource else 0
        slots = int(slots or w.get("nthreads") or 1)
        first = taken.get((w.get("host", ""), cores), 0)
        out[address] = tuple(cores[(first + j) % len(cores)] for j in range(slots))
        taken[(w.get("host", ""), cores)] = first + slots
    return out


def by_name_too(
    plan: dict[str, tuple[int, ...]], workers: dict[str, dict[str, Any]]
) -> dict[Any, tuple[int, ...]]:
    """The core plan by worker address and by (host, worker name): a worker its
    nanny restarted comes back at a new address under its old name, and measured
    unpinned (216 of 552 rows) with a plan made before it left."""
    out: dict[Any, tuple[int, ...]] = dict(plan)
    for address, cores in plan.items():
        w = workers.get(address, {})
        out[("name", w.get("host"), str(w.get("name")))] = cores
    return out


def cores_for(plan: dict[Any, tuple[int, ...]], info: dict[str, Any]) -> tuple:
    """The cores of the Dask worker ``info`` (worker_info) in ``plan`` (by
    address, else by host and name); () when it has none."""
    return plan.get(info.get("address", "")) or plan.get(
        ("name", info.get("host"), str(info.get("name"))), ()
    )
