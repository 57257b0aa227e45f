"""Built-in solvers: one self-contained module per algorithm.

Each module registers itself with :func:`harness.solver.register`; the module stem
is the registry key, the CLI token and the ``solver`` column of results.
"""
