"""The bottom layer, beside :mod:`harness.puzzle`: batch replay, the exact 3x3
oracle, the cache folder, defaults, the registries, the table style and the one
solve-and-replay judge. Nothing here imports a higher layer."""
