"""Getting a Dask cluster: importing ``distributed`` (one line when it is missing),
and the LocalCluster the harness starts when no ``--scheduler`` is given, with
Dask's own periodic work kept low (:data:`SCHEDULER_CONFIG`)."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from typing import Any

from harness.measure.executors.base import ExecutorError
from harness.measure.executors.dask.environment import restore_environ

#: Dask settings for the LocalCluster we start. ``allowed-failures`` 0: a task whose
#: worker died fails at once (KilledWorker) instead of being re-run by Dask; we
#: decide. ``worker-saturation`` 1.0: a worker gets its next batch when it finishes
#: one (Dask's default 1.1 sends one ahead, which then waits behind a long batch
#: while another worker idles: seconds at the end of a run, against ~15 ms per
#: batch of waiting for the scheduler). The rest quiets the Dask processes' own
#: periodic work, which shares the cores with the measuring processes: the
#: worker's statistical profiler (a stack sample every 10 ms while a task runs),
#: the event-loop health tick (every 20 ms), the system and memory monitors.
#: Measured with two workers each running a task: ~13% of one core with Dask's
#: defaults, ~2% with these. (docs/dask.md: for your own cluster.)
SCHEDULER_CONFIG = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    "distributed.admin.system-monitor.gil.enabled": False,
    "distributed.worker.memory.monitor-interval": "1s",
}


class DaskUnavailable(ImportError):
    """``distributed`` is not installed: one line saying how to get it."""


class DaskSetupError(ExecutorError):
    """The cluster cannot run the harness (unreachable, no workers, other code)."""


def import_distributed():
    try:
        import distributed
    except ImportError as err:
        raise DaskUnavailable(
            "--executor dask needs Dask distributed: "
            "pip install 'npuzzle-harness[dask]'"
            + (f" ({err})" if "distributed" not in str(err) else "")
        ) from None
    return distributed


#: Loggers of the Dask client side that print to stderr (levels from Dask's
#: ``distributed.logging`` configuration).
CLIENT_LOGGERS = ("distributed", "distributed.client")


def quiet_client_logs() -> dict[str, int]:
    """Keep Dask's client-side log records off the terminal (the previous levels,
    for :func:`restore_logs`). A lost scheduler made ``distributed.client`` log
    ~40 lines of traceback before our one ``stopped:`` line; every fault the
    run can stop on is said by the harness, in one line, with a resume line."""
    previous = {}
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        previous[name] = logger.level
        logger.setLevel(logging.CRITICAL + 1)
    return previous


def restore_logs(previous: dict[str, int]) -> None:
    for name, level in previous.items():
        logging.getLogger(name).setLevel(level)


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def start_local_cluster(workers: int, environ: dict[str, str | None]) -> Any:
    """A LocalCluster of ``workers`` single-threaded worker processes on this
    machine, started with :data:`SCHEDULER_CONFIG`; ``environ``: the client's values
    of the variables its nannies set here too, put back afterwards."""
    distributed = import_distributed()
    import dask

    # Its worker processes share the terminal's process group: started
    # with SIGINT ignored (inherited), a Ctrl-C reaches the harness
    # alone, which closes the cluster (no tracebacks from workers).
    try:
        with dask.config.set(SCHEDULER_CONFIG), sigint_ignored():
            return distributed.LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # its HTTP server (metrics only) on a free loopback
                # port: not 8787, which may be taken (a warning)
                scheduler_kwargs={
                    "dashboard": False,
                    "dashboard_address": "127.0.0.1:0",
                },
                silence_logs=logging.ERROR,
            )
    finally:  # its nannies set their variables in this process too
        restore_environ(environ)
