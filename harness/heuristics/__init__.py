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

from harness.heuristics import pdb, walking_distance  # noqa: E402, F401 (register)
from harness.heuristics.linear_conflict import LineConflicts, linear_conflict  # noqa: I001
from harness.heuristics.registry import (
    Heuristic,
    HeuristicInfo,
    all_heuristics,
    make_heuristic,
    register_heuristic,
)
from harness.heuristics.tiles import manhattan, misplaced

__all__ = [
    "Heuristic",
    "HeuristicInfo",
    "LineConflicts",
    "all_heuristics",
    "linear_conflict",
    "make_heuristic",
    "manhattan",
    "misplaced",
    "register_heuristic",
]
