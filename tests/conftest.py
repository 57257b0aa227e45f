"""Shared fixtures: the known-optimum boards of known_boards.py, and exact distances."""

from __future__ import annotations

import pytest
from known_boards import KNOWN, Known

from harness.solver import scoped_registry


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
