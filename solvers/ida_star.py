"""IDA*: depth-first searches under a rising f bound (Korf 1985), in pure Python.

Data structures: one mutable board (a list) changed in place and undone on
backtrack, the path as a list of move indices, and per blank square and previous
move a precomputed tuple of the moves allowed next: the move that undoes the
previous one is never generated. h is updated per move, never recomputed: a
tile-additive heuristic (``tile_cost``: misplaced, manhattan) through a per-move
delta table (one index); ``linear_conflict`` as manhattan's delta plus the two
lines the move changes, looked up in per-line memos. Any other heuristic is
evaluated in full on each child (the reference the incremental ones are tested
against: same h, so identical counters).

Optimal: with an admissible heuristic. IDA* keeps no closed set, so on an
unsolvable board it would raise the bound forever: ``is_solvable`` is checked
first and None is returned at once (counters stay 0).

Counters follow Korf's conventions, so they compare with his published
15-puzzle figures (``harness/data/korf100.tsv``): blank moves tried in the order
up, left, right, down; generated = every child created, including those then
cut off by the bound, summed over all iterations, plus 1 for the root (once, not
per iteration: that is what reproduces his counts), the last iteration stopping
at the first goal generated; expanded = nodes whose children were generated
(every visit, summed over iterations); iterations = bounds tried; max_frontier =
the deepest recursion, which is the last bound (no node deeper than the bound
is entered, and the goal is found exactly at it).
"""

from __future__ import annotations

import sys

from harness.heuristics import EVALUATE, NO_TABLES, Heuristic, LineConflicts, manhattan
from harness.puzzle import MOVE_ORDER, Board, Grid, Moves, is_solvable
from harness.solver import Counters, register

#: Deepest known optimum accepted on boards bigger than 3x3, per heuristic. Pure
#: Python generates ~3M nodes/s with manhattan (~0.6M/s with linear_conflict, which
#: needs ~10x fewer); Korf's 100 need 0.5M to 6e9 nodes with manhattan, and most
#: beyond depth 52 need more than 1e8. misplaced on one random 4x4 board each at
#: depth 26/28/30: 0.6M/4.4M/14M nodes (x ~3.5 per 2 moves), so 34 is ~3 min.
_MAX_DEPTH_LARGE = {"misplaced": 34, "manhattan": 52, "linear_conflict": 54}


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Decline deep boards bigger than 3x3 that would run for hours.

    Unknown depth is accepted: unsolvable boards are answered at once, and the
    runner's budget bounds the rest."""
    if g.squares <= 9 or depth is None:
        return None
    limit = _MAX_DEPTH_LARGE.get(heuristic or "manhattan", 52)
    if depth > limit:
        return (
            f"depth {depth} on {g.label} with {heuristic}: pure-Python IDA* needs "
            f"hours (takes depth <= {limit})"
        )
    return None


def _allowed_moves(g: Grid, deltas: list | None) -> tuple:
    """next[blank][previous move index, 4 = none] -> ((move, target, delta), ...)."""
    table = []
    for blank in range(g.squares):
        per_last = []
        for last in range(5):
            per_last.append(
                tuple(
                    (m, target, deltas[blank][target] if deltas else None)
                    for name, target in g.neighbours[blank]
                    # MOVE_ORDER is "ulrd": index 3 - m undoes move m.
                    if (m := MOVE_ORDER.index(name)) != 3 - last
                )
            )
        table.append(tuple(per_last))
    return tuple(table)


@register(
    "ida_star",
    optimal=True,
    needs=(EVALUATE, NO_TABLES),  # any h(board) made without tables
    default_heuristic="manhattan",
    refuses=_refuses,
    budget_seconds=120.0,
    sizes="any (larger than 3x3: depth-limited, see refusals)",
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """IDA*: depth-first searches under a rising f bound (Korf 1985), in pure Python.

    Shortest move string from ``start`` to ``goal``; None when unsolvable.
    """
    if not is_solvable(start, goal, grid):
        return None
    h_of = heuristic if heuristic is not None else manhattan(goal, grid)
    cost = h_of.tile_cost
    lines = None
    if isinstance(h_of.data, LineConflicts):
        # h = manhattan + 2 * line extras: update manhattan per move and
        # re-evaluate only the two lines a move changes (fresh memo per solve).
        lines = LineConflicts(goal, grid)
        cost = lines.manhattan
        line_extras = lines.extras(start)
    deltas = None
    if cost is not None:
        # deltas[blank][target][tile]: change of the tile-additive part of h when
        # ``tile`` slides from ``target`` into the blank's square.
        deltas = [
            {
                target: tuple(
                    cost[t][blank] - cost[t][target] for t in range(grid.squares)
                )
                for _, target in grid.neighbours[blank]
            }
            for blank in range(grid.squares)
        ]
    allowed = _allowed_moves(grid, deltas)
    board = list(start)
    goal_squares = list(goal)
    path: list[int] = []
    # Korf's published counts include the root once, not once per iteration
    # (checked: this reproduces his figures for #12, #79 and others exactly).
    generated, expanded, iterations = 1, 0, 0
    h_start = bound = h_of(start)
    next_bound = 0

    def search_additive(blank: int, g: int, h: int, last: int) -> bool:
        nonlocal generated, expanded, next_bound
        expanded += 1
        g += 1
        for move, target, delta in allowed[blank][last]:
            tile = board[target]
            h_child = h + delta[tile]
            generated += 1
            if g + h_child > bound:
                if g + h_child < next_bound:
                    next_bound = g + h_child
                continue
            board[blank] = tile
            board[target] = 0
            path.append(move)
            if h_child == 0 and board == goal_squares:
                return True
            if search_additive(target, g, h_child, move):
                return True
            path.pop()
            board[target] = tile
            board[blank] = 0
        return False

    if lines is not None:
        memo, slices, extra = lines.memo, lines.slices, lines.extra
        allowed_lc = tuple(
            tuple(
                tuple(
                    (m, t, d, a, slices[a], memo[a], b, slices[b], memo[b])
                    for m, t, d in per_last
                    for a, b in (lines.lines_changed(blank, t),)
                )
                for per_last in allowed[blank]
            )
            for blank in range(grid.squares)
        )

    def search_lines(blank: int, g: int, h: int, last: int) -> bool:
        nonlocal generated, expanded, next_bound
        expanded += 1
        g += 1
        for move, target, delta, a, slice_a, memo_a, b, slice_b, memo_b in allowed_lc[
            blank
        ][last]:
            tile = board[target]
            board[blank] = tile
            board[target] = 0
            key_a = tuple(board[slice_a])
            new_a = memo_a.get(key_a)
            if new_a is None:
                new_a = extra(a, key_a)
            key_b = tuple(board[slice_b])
            new_b = memo_b.get(key_b)
            if new_b is None:
                new_b = extra(b, key_b)
            old_a, old_b = line_extras[a], line_extras[b]
            h_child = h + delta[tile] + 2 * (new_a + new_b - old_a - old_b)
            generated += 1
            if g + h_child <= bound:
                path.append(move)
                if h_child == 0 and board == goal_squares:
                    return True
                line_extras[a], line_extras[b] = new_a, new_b
                if search_lines(target, g, h_child, move):
                    return True
                line_extras[a], line_extras[b] = old_a, old_b
                path.pop()
            elif g + h_child < next_bound:
                next_bound = g + h_child
            board[target] = tile
            board[blank] = 0
        return False

    def search_general(blank: int, g: int, h: int, last: int) -> bool:
        nonlocal generated, expanded, next_bound
        expanded += 1
        g += 1
        for move, target, _ in allowed[blank][last]:
            tile = board[target]
            board[blank] = tile
            board[target] = 0
            h_child = h_of(tuple(board))
            generated += 1
            if g + h_child <= bound:
                path.append(move)
                if h_child == 0 and board == goal_squares:
                    return True
                if search_general(target, g, h_child, move):
                    return True
                path.pop()
            elif g + h_child < next_bound:
                next_bound = g + h_child
            board[target] = tile
            board[blank] = 0
        return False

    if lines is not None:
        search = search_lines
    elif deltas is not None:
        search = search_additive
    else:
        search = search_general
    # Recursion depth is the bound; 4x4 optima reach 80 and 5x5 ones more.
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 10_000))
    try:
        while True:
            iterations += 1
            if board == goal_squares:
                return ""
            next_bound = 1 << 30
            if search(start.index(0), 0, h_start, 4):
                return "".join(MOVE_ORDER[m] for m in path)
            bound = next_bound
    finally:
        sys.setrecursionlimit(old_limit)
        counters.expanded += expanded
        counters.generated += generated
        counters.iterations += iterations
        counters.max_frontier = max(counters.max_frontier, len(path))
