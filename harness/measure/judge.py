"""The judge: the one check of a solver's answer, used by ``harness run``, the
counters gate, ``harness solve`` and the dataset labeller.

An answer is a move string or ``None`` (unsolvable). Every move string is replayed
from the start board (:func:`harness.batch.replay`: ``apply_moves`` by lookup table,
same errors); its length is compared with the known optimum. Standard library,
:mod:`harness.puzzle` and :mod:`harness.batch` only (workers and the labeller
import it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from harness.batch import replay
from harness.puzzle import Board, Grid, IllegalMoveError, format_board


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an answer is worth: ``solved``, ``unsolvable`` or ``invalid``."""

    status: str
    message: str = ""  # why, for anything but a clean answer; "" otherwise
    path_length: int | None = None
    is_optimal: bool | None = None  # None unless the path and the optimum are known

    @property
    def ok(self) -> bool:
        """True for a correct answer (a valid path, or "unsolvable" when it is)."""
        return self.status != "invalid"


def judge(
    moves: str | None,
    start: Board,
    goal: Board,
    g: Grid,
    *,
    solvable: bool | Callable[[], bool],
    optimum: int | None = None,
    declares_optimal: bool = False,
) -> Verdict:
    """Replay ``moves`` from ``start``: it must reach ``goal`` (or be ``None`` for an
    unsolvable board); a solver that declares itself optimal must not return a path
    longer than ``optimum``. A path shorter than ``optimum`` is solved, and the
    message says the optimum is wrong. ``solvable`` may be a function, then asked
    only when the answer needs it (a path that reaches the goal proves it)."""

    def is_solvable() -> bool:
        return solvable() if callable(solvable) else solvable

    if moves is None:
        if is_solvable():
            known = f" (optimum: {optimum} moves)" if optimum is not None else ""
            return Verdict(
                "invalid", f"said unsolvable, but the board is solvable{known}"
            )
        return Verdict("unsolvable")
    if not isinstance(moves, str):
        return Verdict("invalid", f"returned {type(moves).__name__}, not a move string")
    length = len(moves)
    try:
        end = replay(start, moves, g)
    except IllegalMoveError as err:
        return Verdict("invalid", f"illegal path: {err}", length)
    if end != goal and not is_solvable():
        # Unreachable if replay is right (parity); kept so the message exists.
        return Verdict("invalid", "returned a path for an unsolvable board", length)
    if end != goal:
        return Verdict(
            "invalid",
            f"path of {length} moves ends at {format_board(end)}, not at the goal",
            length,
        )
    if optimum is None:
        return Verdict("solved", "", length)
    if length > optimum and declares_optimal:
        return Verdict(
            "invalid",
            f"path of {length} moves, but the optimum is {optimum} and the solver "
            "declares itself optimal",
            length,
            False,
        )
    if length < optimum:
        return Verdict(
            "solved",
            f"path of {length} moves is shorter than the dataset's optimum "
            f"{optimum}: the dataset's label is wrong",
            length,
            True,
        )
    return Verdict("solved", "", length, length == optimum)
