"""Heuristics: lower bounds on the number of moves from a board to a goal.

A :class:`Heuristic` is bound to one goal and grid when it is made, so solvers just
call ``h(board)``. Importing this package registers every family:

- :mod:`.registry`: ``Heuristic``, ``register_heuristic``, ``make_heuristic``;
- :mod:`.tiles`: ``misplaced`` and ``manhattan`` (tile-additive);
- :mod:`.linear_conflict`: ``linear_conflict``;
- :mod:`.walking_distance`: Takahashi's walking distance;
- :mod:`.pdb`: additive pattern databases (pdb44, pdb555, pdb663).

Module import is standard library only; tables are made when a heuristic is.
"""

from __future__ import annotations

# Registration order (tiles first) is the order solvers list the heuristics in.
# isort: off
from harness.heuristics import tiles, linear_conflict as _lc  # noqa: F401 (register)
from harness.heuristics import walking_distance, pdb  # noqa: F401 (register)
# isort: on
from harness.heuristics.linear_conflict import LineConflicts, linear_conflict
from harness.heuristics.registry import (
    COSTS,
    EVALUATE,
    KERNEL_INTERFACES,
    NO_TABLES,
    TILE_COST,
    Capability,
    Heuristic,
    HeuristicInfo,
    Kernel,
    all_heuristics,
    build_tables,
    kernel,
    make_heuristic,
    register_heuristic,
)
from harness.heuristics.tiles import manhattan, misplaced

__all__ = [
    "COSTS",
    "EVALUATE",
    "KERNEL_INTERFACES",
    "NO_TABLES",
    "TILE_COST",
    "Capability",
    "Heuristic",
    "HeuristicInfo",
    "Kernel",
    "kernel",
    "LineConflicts",
    "all_heuristics",
    "build_tables",
    "linear_conflict",
    "make_heuristic",
    "manhattan",
    "misplaced",
    "register_heuristic",
]
