"""Boards with known optima under both 3x3 goals (imported by conftest and tests).

A plain module, not conftest.py: tests/benchmarks has its own conftest, and two
modules named ``conftest`` cannot both be imported by name in one session.

The seed boards (the judge sample, the two 31-move boards) are solvable only for the
standard goal; against the spiral goal (blank in the centre, farthest boards at 30
moves) they are unsolvable, so each goal has its own solvable set. Every optimum
written here is checked against the exhaustive BFS table in ``test_solvers.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.puzzle import Board, Grid, goal_board, grid, parse_board

G3 = grid(3)


@dataclass(frozen=True)
class Known:
    """A board with its optimal length to ``goal`` (None: unsolvable)."""

    name: str
    start: Board
    goal: Board
    optimum: int | None

    @property
    def grid(self) -> Grid:
        return G3


def _known(goal_name: str, rows: list[tuple[str, str, int | None]]) -> list[Known]:
    goal = goal_board(goal_name, G3)
    return [
        Known(f"{goal_name}:{name}", parse_board(text, G3), goal, optimum)
        for name, text, optimum in rows
    ]


STANDARD = _known(
    "standard",
    [
        ("goal", "1 2 3 4 5 6 7 8 x", 0),
        ("one", "1 2 3 4 5 6 7 x 8", 1),
        ("two", "1 2 3 4 x 6 7 5 8", 2),
        ("three", "1 2 3 x 4 6 7 5 8", 3),
        ("judge", "2 3 4 1 5 x 7 6 8", 19),
        ("hard1", "8 6 7 2 5 4 3 x 1", 31),
        ("hard2", "6 4 7 8 5 x 3 2 1", 31),
        ("swap78", "1 2 3 4 5 6 8 7 x", None),
        ("spiral-goal", "1 2 3 8 x 4 7 6 5", None),
    ],
)

SPIRAL = _known(
    "spiral",
    [
        ("goal", "1 2 3 8 x 4 7 6 5", 0),
        ("one", "1 x 3 8 2 4 7 6 5", 1),
        ("two", "x 1 3 8 2 4 7 6 5", 2),
        ("mid", "1 x 2 3 4 6 7 8 5", 19),
        ("hard1", "x 2 1 3 5 8 4 6 7", 30),
        ("hard2", "x 2 1 4 3 8 5 6 7", 30),
        ("judge", "2 3 4 1 5 x 7 6 8", None),
        ("hard31", "8 6 7 2 5 4 3 x 1", None),
        ("standard-goal", "1 2 3 4 5 6 7 8 x", None),
    ],
)

KNOWN = STANDARD + SPIRAL
