"""Solvers whose cost is known exactly, for tests of what the runner measures.

- ``alloc64``: allocates and touches exactly 64 MiB (one bytearray, a write to
  every page) during the solve, then answers with a BFS; its memory row must say
  the solve added 64 MiB, whatever the worker held before.
- ``count_calls``: a BFS that appends one line per call to the file named by the
  environment variable ``COUNT_CALLS_FILE`` (how many solves the runner made).
- ``spin80``: a BFS that then spins until the call has used 80 ms of CPU time
  (slow, and allocating next to nothing).
- ``cache_answers``: keeps every answer (and its counters) between calls: the
  first solve of a board is a BFS plus 5 ms of spinning, every later one a dict
  lookup. The loop times flatter it; the rows must say so.
- ``flaky_counts``: a BFS whose ``expanded`` grows by one on every call: the
  solves of one loop disagree, so the cell is nondeterministic.
- ``logged``: a BFS that appends ``("solve", start)`` to ``CALLS`` on every call
  (an in-process log of the order of calls, for the tests of the worker).
"""

from __future__ import annotations

import os
import time
from collections import deque

from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, register

MIB = 2**20
PAGE = 4096


def _bfs(start: Board, goal: Board, grid: Grid, counters: Counters) -> Moves | None:
    if not is_solvable(start, goal, grid):
        return None
    parent: dict[Board, tuple[Board, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        board = queue.popleft()
        if board == goal:
            moves = []
            while parent[board] is not None:
                board, move = parent[board]
                moves.append(move)
            return "".join(reversed(moves))
        counters.expanded += 1
        for move, child in grid.successors(board):
            counters.generated += 1
            if child not in parent:
                parent[child] = (board, move)
                queue.append(child)
    return None


@register("alloc64", optimal=True)
def alloc64(
    start: Board, goal: Board, grid: Grid, *, counters: Counters, heuristic=None
) -> Moves | None:
    """BFS, plus 64 MiB allocated and every page of it written during the solve."""
    block = bytearray(64 * MIB)  # calloc'd: untouched pages are not resident yet
    for offset in range(0, len(block), PAGE):
        block[offset] = 1
    moves = _bfs(start, goal, grid, counters)
    del block
    return moves


@register("spin80", optimal=True)
def spin80(
    start: Board, goal: Board, grid: Grid, *, counters: Counters, heuristic=None
) -> Moves | None:
    """BFS, then a busy loop until the call has taken 80 ms of CPU time."""
    began = time.process_time()
    moves = _bfs(start, goal, grid, counters)
    while time.process_time() - began < 0.08:
        pass
    return moves


@register("count_calls", optimal=True)
def count_calls(
    start: Board, goal: Board, grid: Grid, *, counters: Counters, heuristic=None
) -> Moves | None:
    """BFS; each call appends a line to $COUNT_CALLS_FILE."""
    path = os.environ.get("COUNT_CALLS_FILE")
    if path:
        with open(path, "a") as fh:
            fh.write(f"{start}\n")
    return _bfs(start, goal, grid, counters)


_ANSWERS: dict[tuple, tuple[Moves | None, dict[str, int]]] = {}


@register("cache_answers", optimal=True)
def cache_answers(
    start: Board, goal: Board, grid: Grid, *, counters: Counters, heuristic=None
) -> Moves | None:
    """An answer cache between calls: a miss costs a BFS and 5 ms of CPU."""
    key = (start, goal)
    if key not in _ANSWERS:
        began = time.process_time()
        moves = _bfs(start, goal, grid, counters)
        while time.process_time() - began < 0.005:
            pass
        _ANSWERS[key] = (moves, counters.as_dict())
    moves, counted = _ANSWERS[key]
    counters.expanded, counters.generated = counted["expanded"], counted["generated"]
    return moves


_CALLS = [0]


@register("flaky_counts", optimal=True)
def flaky_counts(
    start: Board, goal: Board, grid: Grid, *, counters: Counters, heuristic=None
) -> Moves | None:
    """A BFS that counts one more expansion on every call than on the last."""
    _CALLS[0] += 1
    moves = _bfs(start, goal, grid, counters)
    counters.expanded += _CALLS[0]
    return moves


CALLS: list[tuple[str, object]] = []


@register("logged", optimal=True)
def logged(
    start: Board, goal: Board, grid: Grid, *, counters: Counters, heuristic=None
) -> Moves | None:
    """A BFS that logs each call in CALLS (read by the tests in this process)."""
    CALLS.append(("solve", start))
    return _bfs(start, goal, grid, counters)
