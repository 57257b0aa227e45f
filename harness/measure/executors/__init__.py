"""The executors: where a run's cells are measured. :mod:`.local` (a pool of
measuring processes on this machine, and in-process for tests) and :mod:`.dask`
(a Dask cluster)."""
