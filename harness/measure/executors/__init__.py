"""The executors: where a run's cells are measured. :mod:`.base` is what every
executor is (the :class:`Executor` protocol the runner drives); :mod:`.local` a
pool of measuring processes on this machine, :mod:`.inline` this process (for a
debugger), :mod:`.dask` a Dask cluster (imported only when chosen)."""

from harness.measure.executors.base import Executor, ExecutorError, fill_not_run

__all__ = ["Executor", "ExecutorError", "fill_not_run"]
