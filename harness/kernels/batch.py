"""Batch drivers: one kernel call solves many boards (IDA*, every heuristic)."""

from __future__ import annotations

import numpy as np

from harness.kernels.base import MAX_PATH, jit
from harness.kernels.ida import (
    ida_additive,
    ida_linear_conflict,
    ida_pdb,
    ida_walking_distance,
)

# ----------------------------------------------- IDA*: a batch of boards per call
#
# One call per batch instead of one per board (a call's dispatch grows with its
# argument count: ~2.5 us for ida_pdb's 19). ``boards`` (b, squares) is overwritten;
# only boards with ``todo`` set are solved; ``stats`` (b, 4) and ``lengths`` (b,)
# receive each board's counters and path length (-1: none within MAX_PATH);
# ``moves`` (b, width) the paths, those longer than ``width`` left out (length
# still given: the caller solves them again one by one). ``*args`` are the
# kernel's own arguments between ``nbr`` and ``stats``.


@jit
def _keep_path(path, length, moves, i):
    if 0 < length <= moves.shape[1]:
        moves[i, :length] = path[:length]


@jit
def ida_additive_many(boards, todo, goal, nbr, stats, moves, lengths, *args):
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    for i in range(boards.shape[0]):
        if todo[i]:
            lengths[i] = ida_additive(boards[i], goal, nbr, *args, stats[i], path)
            _keep_path(path, lengths[i], moves, i)


@jit
def ida_linear_conflict_many(boards, todo, goal, nbr, stats, moves, lengths, *args):
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    for i in range(boards.shape[0]):
        if todo[i]:
            lengths[i] = ida_linear_conflict(
                boards[i], goal, nbr, *args, stats[i], path
            )
            _keep_path(path, lengths[i], moves, i)


@jit
def ida_pdb_many(boards, todo, goal, nbr, stats, moves, lengths, *args):
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    for i in range(boards.shape[0]):
        if todo[i]:
            lengths[i] = ida_pdb(boards[i], goal, nbr, *args, stats[i], path)
            _keep_path(path, lengths[i], moves, i)


@jit
def ida_walking_distance_many(
    boards, todo, goal, nbr, stats, moves, lengths, row_ids, col_ids, *args
):
    """As the others; each board's count states (``start_args``) in two arrays."""
    path = np.zeros(MAX_PATH + 1, dtype=np.int8)
    for i in range(boards.shape[0]):
        if todo[i]:
            lengths[i] = ida_walking_distance(
                boards[i], goal, nbr, row_ids[i], col_ids[i], *args, stats[i], path
            )
            _keep_path(path, lengths[i], moves, i)
