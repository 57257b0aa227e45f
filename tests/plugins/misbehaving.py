"""Test plugin: one well-behaved reference solver and one solver per way a solver
can misbehave. Loaded with ``--plugin tests/plugins/misbehaving.py`` (never on import
of the test suite), so it also exercises the plugin mechanism itself."""

from __future__ import annotations

import ctypes
import os
import signal
import time
from collections import deque
from fractions import Fraction

from harness.puzzle import Board, Grid
from harness.solver import Counters, register, weight_param


def _bfs(start: Board, goal: Board, grid: Grid, counters: Counters) -> str | None:
    """Plain BFS with parent links: optimal, deterministic (fixed move order)."""
    parent: dict[Board, tuple[Board, str] | None] = {start: None}
    queue = deque([start])
    while queue:
        board = queue.popleft()
        counters.expanded += 1
        if board == goal:
            path = []
            while parent[board] is not None:
                board, move = parent[board]
                path.append(move)
            return "".join(reversed(path))
        for move, child in grid.successors(board):
            counters.generated += 1
            if child not in parent:
                parent[child] = (board, move)
                queue.append(child)
        counters.max_frontier = max(counters.max_frontier, len(queue))
    return None


def _refuse_big(grid: Grid, depth: int | None, heuristic: str | None) -> str | None:
    return "plain BFS would exhaust memory on 4x4" if grid.squares > 9 else None


@register("good_bfs", optimal=True, refuses=_refuse_big, budget_seconds=20)
def good_bfs(start, goal, grid, *, counters, heuristic):
    """Reference: breadth-first search (what every other cell is checked against)."""
    return _bfs(start, goal, grid, counters)


@register("good_greedy", optimal=False, budget_seconds=20)
def good_greedy(start, goal, grid, *, counters, heuristic):
    """Not optimal: a correct but deliberately roundabout path (BFS + a detour)."""
    path = _bfs(start, goal, grid, counters)
    if not path:
        return path
    return path + _detour(goal, grid)


def _detour(board: Board, grid: Grid) -> str:
    """A legal there-and-back pair of moves from ``board`` (ends where it began)."""
    move, _ = next(iter(grid.successors(board)))
    return move + {"u": "d", "d": "u", "l": "r", "r": "l"}[move]


@register("hang", optimal=True, budget_seconds=0.5)
def hang(start, goal, grid, *, counters, heuristic):
    """Never returns (pure Python: the in-process alarm stops it)."""
    while True:
        time.sleep(0.01)


@register("hang_wrapped", optimal=True, budget_seconds=0.5)
def hang_wrapped(start, goal, grid, *, counters, heuristic):
    """Never returns, and wraps the alarm's exception in another when it arrives, as
    numba's dispatcher does when the alarm fires inside compiled code ("SystemError:
    ... returned a result with an exception set", the alarm's exception its cause)."""
    try:
        while True:
            time.sleep(0.01)
    except BaseException as err:
        raise SystemError("returned a result with an exception set") from err


@register("hang_hard", optimal=True, budget_seconds=0.5)
def hang_hard(start, goal, grid, *, counters, heuristic):
    """Never returns and blocks SIGALRM, like compiled code that never checks for
    signals: only killing the worker stops it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    while True:
        pass


@register("raises", optimal=True)
def raises(start, goal, grid, *, counters, heuristic):
    raise ValueError("deliberate failure in the solver")


@register("exits", optimal=True)
def exits(start, goal, grid, *, counters, heuristic):
    os._exit(3)


@register("segfault", optimal=True)
def segfault(start, goal, grid, *, counters, heuristic):
    ctypes.string_at(0)


@register("hog", optimal=True, budget_seconds=20)
def hog(start, goal, grid, *, counters, heuristic):
    """Allocates without bound (touching the memory, so it is really used)."""
    blocks = []
    while True:
        blocks.append(bytearray(16 * 1024 * 1024))


@register("illegal", optimal=True)
def illegal(start, goal, grid, *, counters, heuristic):
    """Returns a path that walks the blank off the top edge."""
    return "u" * grid.rows + (_bfs(start, goal, grid, counters) or "")


@register("wrong_end", optimal=False)
def wrong_end(start, goal, grid, *, counters, heuristic):
    """A legal path that stops one move short of the goal (or wanders off it)."""
    path = _bfs(start, goal, grid, counters)
    return path[:-1] if path else _detour(goal, grid)[:1]


@register("says_unsolvable", optimal=True)
def says_unsolvable(start, goal, grid, *, counters, heuristic):
    counters.expanded += 1
    return None


@register("long_optimal", optimal=True)
def long_optimal(start, goal, grid, *, counters, heuristic):
    """Declares itself optimal but returns the optimum plus a detour."""
    path = _bfs(start, goal, grid, counters)
    return None if path is None else path + _detour(goal, grid)


_calls = 0


@register("flaky_counters", optimal=True)
def flaky_counters(start, goal, grid, *, counters, heuristic):
    """Correct paths, but its expanded count changes on every call."""
    global _calls
    _calls += 1
    path = _bfs(start, goal, grid, counters)
    counters.expanded += _calls
    return path


@register("wrong_type", optimal=True)
def wrong_type(start, goal, grid, *, counters, heuristic):
    return list(_bfs(start, goal, grid, counters) or "")


@register("noop", optimal=False, budget_seconds=5)
def noop(start, goal, grid, *, counters, heuristic):
    """Does nothing (the runner-overhead baseline); correct only when start == goal."""
    return ""


_prepared: list[tuple] = []


def _prepare_astar(grid: Grid, goal: Board, heuristic) -> None:
    """Stands in for table building / compilation: set-up the runner times apart."""
    _prepared.append((grid.label, goal))
    time.sleep(0.05)


@register(
    "good_astar",
    optimal=True,
    heuristics=("manhattan", "misplaced"),
    prepare=_prepare_astar,
    budget_seconds=20,
)
def good_astar(start, goal, grid, *, counters, heuristic):
    """A* with the given heuristic (FIFO ties): optimal, deterministic."""
    import heapq
    from itertools import count

    if not _prepared:
        raise RuntimeError("solve called before prepare")
    tie = count()
    frontier = [(heuristic(start), next(tie), 0, start)]
    best_g = {start: 0}
    parent: dict[Board, tuple[Board, str] | None] = {start: None}
    while frontier:
        _, _, g, board = heapq.heappop(frontier)
        if g > best_g[board]:
            continue
        counters.expanded += 1
        if board == goal:
            path = []
            while parent[board] is not None:
                board, move = parent[board]
                path.append(move)
            return "".join(reversed(path))
        for move, child in grid.successors(board):
            counters.generated += 1
            if child not in best_g or g + 1 < best_g[child]:
                best_g[child] = g + 1
                parent[child] = (board, move)
                heapq.heappush(
                    frontier, (g + 1 + heuristic(child), next(tie), g + 1, child)
                )
        counters.max_frontier = max(counters.max_frontier, len(frontier))
    return None


@register("sleepy", optimal=True, budget_seconds=20)
def sleepy(start, goal, grid, *, counters, heuristic):
    """Correct but slow (BFS, then a pause): lets tests interrupt a run half-way."""
    time.sleep(0.15)
    return _bfs(start, goal, grid, counters)


@register("extra_counters", optimal=True, budget_seconds=20)
def extra_counters(start, goal, grid, *, counters, heuristic):
    """BFS that also fills a per-algorithm counter (stored in the ``extra`` column)."""
    path = _bfs(start, goal, grid, counters)
    counters.iterations = 1
    counters.extra["duplicates"] = counters.generated - counters.expanded
    return path


@register(
    "overshoot",
    optimal=False,
    bounded_by="w",
    params=(weight_param(Fraction(5, 4)),),
    budget_seconds=20,
)
def overshoot(start, goal, grid, *, counters, heuristic, w=Fraction(5, 4)):
    """Claims paths within w x the optimum, but pads the optimum with detours
    until it is just longer than that."""
    path = _bfs(start, goal, grid, counters)
    if not path:
        return path
    limit = w * len(path)
    padded = path
    while len(padded) <= limit:
        padded += _detour(goal, grid)
    return padded
