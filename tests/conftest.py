"""Shared fixtures: the known-optimum boards of known_boards.py, exact distances,
and the solvers of tests/plugins/measured.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from known_boards import KNOWN, Known

from harness.solver import load_plugin, scoped_registry

#: Solvers with known costs and behaviours, for the tests of what the runner measures.
MEASURED = str(Path(__file__).parent / "plugins" / "measured.py")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Timed benchmarks (``--benchmark-enable``) run in the pytest process, not on
    pyproject's xdist workers: pytest-benchmark turns itself off under xdist."""
    if config.getoption("benchmark_enable", False) and config.pluginmanager.hasplugin(
        "xdist"
    ):
        config.option.numprocesses = 0


@pytest.fixture(scope="module")
def measured_plugin() -> str:
    """The solvers of tests/plugins/measured.py, registered for a whole module."""
    with scoped_registry():
        load_plugin(MEASURED)
        yield MEASURED


@pytest.fixture(autouse=True)
def _no_plugin_leaks():
    """A plugin a test loads (in-process CLI runs) is gone after that test."""
    with scoped_registry():
        yield

@pytest.fixture(params=KNOWN, ids=lambda k: k.name)
def known(request: pytest.FixtureRequest) -> Known:
    """Each known-optimum instance, under both goals."""
    return request.param


@pytest.fixture(params=["standard", "spiral"])
def goal_name(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture(scope="session")
def exact_distance():
    """``exact_distance(board, goal, grid) -> int | None`` from a full BFS table.

    Uses :mod:`harness.core.oracle` (whole-space BFS, cached on disk) for grids of at
    most 9 cells."""
    from harness.core import oracle

    return oracle.distance
