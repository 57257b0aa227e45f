"""The judge: the one check of a solver's answer, used by ``harness run``, the
counters gate, ``harness solve`` and the dataset labeller.

An answer is a move string or ``None`` (unsolvable). Every move string is replayed
from the start board (:func:`harness.core.batch.replay`: ``apply_moves`` by lookup table,
same errors); its length is compared with the known optimum. Under tile costs
(``cost_model`` other than unit, :mod:`harness.core.costs`) its cost is, with
the optimal cost, within :data:`harness.core.costs.COST_TOLERANCE`: optimality
and a bound are claims about cost, and the fewest moves prove nothing. :func:`judge_many`
judges a batch at once (numpy, imported when called) with the same verdicts.
Standard library, :mod:`harness.puzzle` and :mod:`harness.core` only (workers and
the labeller import it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from harness.core.batch import replay, replay_many, solvable_many
from harness.core.costs import UNIT, cost_at_most, costs_equal, format_cost, path_cost
from harness.core.values import format_value
from harness.puzzle import Board, Grid, IllegalMoveError, format_board


@dataclass(frozen=True, slots=True)
class Verdict:
    """What an answer is worth: ``solved``, ``unsolvable`` or ``invalid``."""

    status: str
    message: str = ""  # why, for anything but a clean answer; "" otherwise
    path_length: int | None = None
    is_optimal: bool | None = None  # None unless the path and the optimum are known
    path_cost: float | None = None  # under tile costs: the path's cost

    @property
    def ok(self) -> bool:
        """True for a correct answer (a valid path, or "unsolvable" when it is)."""
        return self.status != "invalid"


_UNSOLVABLE = Verdict("unsolvable")
_CLEAN: dict[tuple[int, bool | None], Verdict] = {}


def _clean(length: int, is_optimal: bool | None) -> Verdict:
    """A clean "solved" verdict, one object per (length, is_optimal): verdicts are
    frozen, and making one costs about a microsecond, a 3x3 solve's order."""
    verdict = _CLEAN.get((length, is_optimal))
    if verdict is None:
        verdict = _CLEAN[(length, is_optimal)] = Verdict(
            "solved", "", length, is_optimal
        )
    return verdict


def judge(
    moves: str | None,
    start: Board,
    goal: Board,
    g: Grid,
    *,
    solvable: bool | Callable[[], bool],
    optimum: int | None = None,
    bound: Fraction | float | None = None,
    cost_model: str = UNIT,
    optimal_cost: float | None = None,
) -> Verdict:
    """Replay ``moves`` from ``start``: it must reach ``goal`` (or be ``None`` for an
    unsolvable board); a solver that declares a ``bound`` (1: optimal; w: bounded,
    every path at most w times the optimum; None: no claim) must not return a
    path longer than ``bound * optimum``. A path shorter than ``optimum`` is
    solved, and the message says the optimum is wrong. ``solvable`` may be a
    function, then asked only when the answer needs it (a path that reaches the
    goal proves it). Under a ``cost_model`` other than unit the path's cost is
    judged against ``optimal_cost`` instead (``optimum`` is then ignored)."""
    if moves is None:
        if solvable() if callable(solvable) else solvable:
            known = f" (optimum: {optimum} moves)" if optimum is not None else ""
            return Verdict(
                "invalid", f"said unsolvable, but the board is solvable{known}"
            )
        return _UNSOLVABLE
    if not isinstance(moves, str):
        return Verdict("invalid", f"returned {type(moves).__name__}, not a move string")
    length = len(moves)
    try:
        end = replay(start, moves, g)
    except IllegalMoveError as err:
        return Verdict("invalid", f"illegal path: {err}", length)
    if end != goal and not (solvable() if callable(solvable) else solvable):
        # Unreachable if replay is right (parity); kept so the message exists.
        return Verdict("invalid", "returned a path for an unsolvable board", length)
    if end != goal:
        return Verdict(
            "invalid",
            f"path of {length} moves ends at {format_board(end)}, not at the goal",
            length,
        )
    if cost_model != UNIT:
        return _judge_cost(moves, start, g, cost_model, optimal_cost, bound)
    if optimum is None:
        return _clean(length, None)
    if bound is not None and length > optimum and length > bound * optimum:
        if bound == 1:
            claim = "the solver declares itself optimal"
        else:
            w = Fraction(str(bound)) if isinstance(bound, float) else Fraction(bound)
            claim = (f"the solver's bound allows at most {format_value(w)} x "
                     f"{optimum} = {format_value(w * optimum)} moves")  # fmt: skip
        return Verdict(
            "invalid",
            f"path of {length} moves, but the optimum is {optimum} and {claim}",
            length,
            False,
        )
    if length < optimum:
        return Verdict(
            "solved",
            f"path of {length} moves is shorter than the dataset's optimum "
            f"{optimum}: the dataset's label is wrong",
            length,
            None,  # the label is proved wrong: optimality unknown, not True
        )
    return _clean(length, length == optimum)


def _judge_cost(
    moves: str, start: Board, g: Grid, cost_model: str, optimal: float | None,
    bound: Fraction | float | None,
) -> Verdict:  # fmt: skip
    """The verdict on a path that reaches the goal, by its cost (see :func:`judge`)."""
    length = len(moves)
    cost = path_cost(start, moves, g, cost_model)
    if optimal is None:
        return Verdict("solved", "", length, None, cost)
    said = f"{cost_model} cost {format_cost(cost)}"
    if bound is not None and not cost_at_most(cost, float(bound) * optimal):
        if bound == 1:
            claim = "the solver declares itself optimal"
        else:
            w = Fraction(str(bound)) if isinstance(bound, float) else Fraction(bound)
            claim = (f"the solver's bound allows at most {format_value(w)} x "
                     f"{format_cost(optimal)} = {format_cost(float(w) * optimal)}")
        return Verdict("invalid", f"path of {said}, but the optimum is "
                       f"{format_cost(optimal)} and {claim}", length, False, cost)
    if not cost_at_most(optimal, cost):
        return Verdict("solved", f"path of {said} is cheaper than the dataset's "
                       f"optimum {format_cost(optimal)}: the label is wrong",
                       length, None, cost)  # fmt: skip
    return Verdict("solved", "", length, costs_equal(cost, optimal), cost)


def judge_many(
    answers: list,
    starts: list[Board],
    goal: Board,
    g: Grid,
    *,
    boards=None,
) -> list[Verdict]:
    """``[judge(a, s, goal, g, solvable=is_solvable(s, goal, g)) for a, s in ...]``
    for a whole batch (no optimum), with every move string replayed at once
    (:func:`harness.core.batch.replay_many`) and solvability decided at once for the
    boards said unsolvable. Answers that are not clean paths to the goal, and
    unsolvable claims on solvable boards, go through :func:`judge` itself, so every
    verdict and message is the one it gives. ``boards``: ``starts`` as an int8
    array (:func:`harness.core.batch.board_array`), when the caller has it."""
    import numpy as np

    from harness.core.batch import board_array

    if boards is None:
        boards = board_array(starts, g)
    ends, clean, lengths = replay_many(boards, answers, g)
    reached = clean & (ends == np.array(goal, dtype=np.int8)).all(axis=1)
    longest = int(lengths.max()) if len(answers) else 0
    cleans = [_clean(length, None) for length in range(longest + 1)]
    verdicts = list(map(cleans.__getitem__, lengths.tolist()))  # if reached
    others = np.flatnonzero(~reached)
    if not len(others):
        return verdicts
    claims = others[[answers[i] is None for i in others.tolist()]]
    can = solvable_many(boards[claims], goal, g).tolist() if len(claims) else []
    for i, solvable in zip(claims.tolist(), can):
        verdicts[i] = (
            judge(None, starts[i], goal, g, solvable=True) if solvable else _UNSOLVABLE
        )
    for i in np.setdiff1d(others, claims, assume_unique=True).tolist():
        verdicts[i] = judge(
            answers[i], starts[i], goal, g,
            solvable=lambda i=i: bool(solvable_many(boards[i : i + 1], goal, g)[0]),
        )  # fmt: skip
    return verdicts
