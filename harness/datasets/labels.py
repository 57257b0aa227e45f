"""Labelling: where a dataset's optimal lengths come from (the oracle, or a
registered optimal solver whose path is replayed before its length is trusted)."""

from __future__ import annotations

from collections.abc import Callable

from harness.datasets.model import ORACLE_MAX_SQUARES, DatasetError
from harness.puzzle import (
    Board,
    Grid,
    format_board,
    rank,
)

#: label(board) -> optimal length, or None when unknown
Labeller = Callable[[Board], "int | None"]


def oracle_labeller(goal: Board, g: Grid) -> Labeller:
    """Exact depths from :mod:`harness.core.oracle` (grids of at most 9 squares)."""
    from harness.core import oracle

    dist = oracle.distances(goal, g)

    def label(board: Board) -> int | None:
        value = int(dist[rank(board)])
        return None if value < 0 else value

    return label


def solver_labeller(config: str, goal: Board, g: Grid) -> Labeller:
    """Optimal lengths from a registered optimal solver ``NAME[HEURISTIC]``; the
    returned path is replayed before its length is trusted."""
    from harness.configs import parse_config
    from harness.core.judge import judge
    from harness.heuristics import make_heuristic
    from harness.solver import Counters

    try:
        cfg = parse_config(config)
    except KeyError as err:
        raise DatasetError(f"label solver: {err.args[0]}") from None
    if not cfg.spec.optimal:
        raise DatasetError(f"label solver {cfg.label!r} is not optimal")
    try:
        h = make_heuristic(cfg.heuristic, goal, g) if cfg.heuristic else None
    except (KeyError, ValueError) as err:
        raise DatasetError(f"label solver {cfg.label!r}: {err}") from None

    def label(board: Board) -> int | None:
        moves = cfg.solve(board, goal, g, counters=Counters(), heuristic=h)
        verdict = judge(moves, board, goal, g, solvable=True)
        if not verdict.ok:
            raise DatasetError(
                f"label solver {cfg.label!r} on {format_board(board)}: "
                f"{verdict.message}"
            )
        return verdict.path_length

    return label


def resolve_label(label: str, g: Grid) -> str:
    """``auto`` means the oracle where it exists, else no labels."""
    if label == "auto":
        return "oracle" if g.squares <= ORACLE_MAX_SQUARES else "none"
    return label


def make_labeller(
    label: str, goal: Board, g: Grid
) -> tuple[Labeller | None, str | None]:
    """``auto`` | ``oracle`` | ``none`` | ``solver:NAME[HEURISTIC]`` -> (labeller,
    the ``optimal_source`` it writes); ``auto`` is the oracle where it exists."""
    label = resolve_label(label, g)
    if label == "none":
        return None, None
    if label == "oracle":
        if g.squares > ORACLE_MAX_SQUARES:
            raise DatasetError(
                f"label oracle: only boards of at most {ORACLE_MAX_SQUARES} squares, "
                f"not {g.label}; use solver:NAME[HEURISTIC]"
            )
        return oracle_labeller(goal, g), "oracle"
    if label.startswith("solver:"):
        config = label.removeprefix("solver:")
        return solver_labeller(config, goal, g), label
    raise DatasetError(
        f"label {label!r}: expected auto, oracle, none or solver:NAME[HEURISTIC]"
    )
