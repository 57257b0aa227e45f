"""This machine as a run sees it: the cores this process may use, computed here
once for the default worker count, the jobs limit, the recorded host, the Dask
executor's local cluster and the report's forked drawing."""

from __future__ import annotations

import os


def usable_cores() -> list[int]:
    """The cores this process may run on (its Linux CPU affinity, which taskset and
    cgroups narrow), else ``0 .. cpu_count - 1``."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def core_count() -> int:
    """How many cores this process may run on (:func:`usable_cores`)."""
    return len(usable_cores())
