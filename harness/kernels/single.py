"""One board per call, with the call's cost cut to what one solve must pay.

A 3x3 solve with a pattern database is ~10 us of search; called the plain way
(``ida_pdb(board, goal, nbr, 14 tables..., stats, path)`` through numba's
dispatcher) it also paid ~3 us to type the 19 arguments, ~4 us to unbox them
and ~4 us of Python around it (the solvability test, the board's array).
Here everything but the start board is made once per kernel, goal and grid
into a :class:`Frame` (a numba structref: one pointer to unbox), and
:func:`bind` hands back the compiled overload's entry point, called without
the dispatcher's typing. The start board goes in as the tuple it is; the
entry copies it into the frame's board, tests its solvability, zeroes the
counters and runs the kernel. Returns of an entry (``*_one``):

- a path length >= 0 (the moves in ``frame.path``, counters in ``frame.stats``);
- ``NO_PATH`` (-1): none within MAX_PATH moves, as the kernels return;
- ``UNSOLVABLE`` (-2): the goal is unreachable (nothing counted);
- ``NOT_A_BOARD`` (-3): ``start`` is not a permutation of the goal's tiles;
  the caller answers it the general way (its errors are the general path's).

An entry's frame is shared by every call through it: one solve at a time per
process, as the solvers' path buffers already are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.experimental import structref

from harness.kernels.base import MAX_PATH, jit
from harness.kernels.ida import (
    ida_additive,
    ida_linear_conflict,
    ida_pdb,
    ida_walking_distance,
)

NO_PATH = -1
UNSOLVABLE = -2
NOT_A_BOARD = -3


@structref.register
class FrameType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(t)) for name, t in fields)


class Frame(structref.StructRefProxy):
    """What a one-board entry needs besides the start: ``board`` (the kernel's
    working board), ``goal`` (int8, read-only), ``goal_square`` (each tile's goal
    square), ``nbr``, ``cols``, ``args`` (the kernel's own arguments, a tuple),
    ``stats`` (int64[4]) and ``path`` (int8[MAX_PATH + 1])."""


structref.define_proxy(
    Frame, FrameType,
    ["board", "goal", "goal_square", "nbr", "cols", "args", "stats", "path"],
)  # fmt: skip


@jit
def _load(start, frame):
    """Copy ``start`` into the frame's board and zero its counters; 1 when the
    goal is reachable, UNSOLVABLE when not (the parity of the permutation from
    start to goal against the blank's Manhattan displacement, as
    :func:`harness.puzzle.is_solvable`), NOT_A_BOARD for a tile out of range or
    twice."""
    board = frame.board
    goal_square = frame.goal_square
    n = board.shape[0]
    if len(start) != n:
        return NOT_A_BOARD
    blank = -1
    for c in range(n):
        t = start[c]
        if t < 0 or t >= n:
            return NOT_A_BOARD
        board[c] = t
        if t == 0:
            blank = c
    # inversions of square-in-start -> square-in-goal; equal goal squares: a tile twice
    inversions = 0
    for i in range(n):
        a = goal_square[board[i]]
        for j in range(i + 1, n):
            b = goal_square[board[j]]
            if a == b:
                return NOT_A_BOARD
            if a > b:
                inversions += 1
    cols = frame.cols
    home = goal_square[0]
    moved = abs(blank // cols - home // cols) + abs(blank % cols - home % cols)
    stats = frame.stats
    for i in range(stats.shape[0]):
        stats[i] = 0
    return 1 if (inversions & 1) == (moved & 1) else UNSOLVABLE


@jit
def ida_additive_one(start, frame):
    ok = _load(start, frame)
    if ok < 0:
        return ok
    return ida_additive(
        frame.board, frame.goal, frame.nbr, *frame.args, frame.stats, frame.path
    )


@jit
def ida_linear_conflict_one(start, frame):
    ok = _load(start, frame)
    if ok < 0:
        return ok
    return ida_linear_conflict(
        frame.board, frame.goal, frame.nbr, *frame.args, frame.stats, frame.path
    )


@jit
def ida_pdb_one(start, frame):
    ok = _load(start, frame)
    if ok < 0:
        return ok
    return ida_pdb(
        frame.board, frame.goal, frame.nbr, *frame.args, frame.stats, frame.path
    )


@jit
def _count_state(board, line_of, goal_line, weight, lines, codes, ids):
    """The id of a board's row (or column) count state, -1 if none: the counts
    coded as one integer (square ``c`` holding tile ``t`` adds
    ``weight[line_of[c] * lines + goal_line[t]]``, the blank its line times
    ``weight[lines * lines]``) and found among the sorted ``codes``, as
    :meth:`harness.heuristics.walking_distance.WalkingDistance.ids_many` does."""
    code = 0
    for c in range(board.shape[0]):
        t = board[c]
        if t == 0:
            code += line_of[c] * weight[lines * lines]
        else:
            code += weight[line_of[c] * lines + goal_line[t]]
    at = np.searchsorted(codes, code)
    if at < codes.shape[0] and codes[at] == code:
        return ids[at]
    return -1


@jit
def ida_walking_distance_one(start, frame):
    """The start's count states are found here (``frame.args`` ends with the
    coded states of :func:`walking_distance_args`), not in Python per call."""
    ok = _load(start, frame)
    if ok < 0:
        return ok
    (row_dist, row_next, col_dist, col_next, goal_row, goal_col, row_line, row_weight,
     rows, row_codes, row_ids, col_line, col_weight, cols, col_codes,
     col_ids) = frame.args  # fmt: skip
    row_id = _count_state(
        frame.board, row_line, goal_row, row_weight, rows, row_codes, row_ids
    )
    col_id = _count_state(
        frame.board, col_line, goal_col, col_weight, cols, col_codes, col_ids
    )
    if row_id < 0 or col_id < 0:
        return NOT_A_BOARD
    return ida_walking_distance(
        frame.board, frame.goal, frame.nbr, row_id, col_id, row_dist, row_next,
        col_dist, col_next, goal_row, goal_col, frame.stats, frame.path,
    )  # fmt: skip


def entry_args(kernel: Any, data: Any) -> tuple[tuple, Callable[..., tuple] | None]:
    """(the frame's ``args``, the start arguments computed per call or None) for a
    heuristic's IDA* kernel (``data``: its tables): the kernel's own, except where
    the entry finds the start's arguments itself (walking distance)."""
    if kernel.function == "ida_walking_distance":
        return walking_distance_args(data, kernel.args), None
    return kernel.args, kernel.start_args


def walking_distance_args(data: Any, args: tuple) -> tuple:
    """The walking-distance kernel's arguments (``args``) followed by what its
    one-board entry needs to find a start's count states: per side, each square's
    line, the digit weights, the line count, and the sorted state codes with
    their ids (``data``: the heuristic's tables)."""
    g = data.grid
    square = np.arange(g.squares)
    out = list(args)
    for side, lines, width, line_of in (
        ("row", g.rows, g.cols, square // g.cols),
        ("col", g.cols, g.rows, square % g.cols),
    ):
        codes, ids = data.coded(side)
        weight = (width + 1) ** np.arange(lines * lines + 1, dtype=np.int64)
        out += [line_of.astype(np.int64), weight, np.int64(lines), codes, ids]
    return tuple(out)


def make_frame(
    goal: tuple, cols: int, nbr: np.ndarray, args: tuple
) -> tuple[Frame, np.ndarray, np.ndarray]:
    """``(frame, stats, path)``: a frame for boards of ``len(goal)`` squares toward
    ``goal`` (``args``: the kernel's arguments between ``nbr`` and ``stats``),
    and the counters and path arrays it holds, which its entry fills."""
    n = len(goal)
    target = np.array(goal, dtype=np.int8)
    target.flags.writeable = False
    goal_square = np.zeros(n, dtype=np.int8)
    goal_square[target] = np.arange(n, dtype=np.int8)
    stats = np.zeros(4, dtype=np.int64)
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    frame = Frame(
        np.zeros(n, dtype=np.int8), target, goal_square, nbr, np.int64(cols),
        tuple(args), stats, path,
    )  # fmt: skip
    return frame, stats, path


def bind(entry: Any, sample: tuple, frame: Frame, *extra: Any) -> Callable[..., int]:
    """The compiled overload of ``entry`` (a ``*_one`` dispatcher) for boards
    typed as ``sample`` and this frame: compiled (or loaded from numba's cache)
    by one call through the dispatcher, then called directly, which skips the
    dispatcher's typing of every argument on each call. Callers must pass a
    tuple of as many ints as ``sample`` has (``extra``: as these are typed)."""
    entry(sample, frame, *extra)
    signature = tuple(numba.typeof(v) for v in (sample, frame, *extra))
    return entry.get_overload(signature)
