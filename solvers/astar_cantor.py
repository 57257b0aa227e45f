"""A* where every board is its Cantor (Lehmer) rank into flat preallocated arrays.

Data structures: three arrays indexed by rank in ``range(n!)`` (``array`` module,
allocated once per solve: 9! = 362,880 entries on 3x3): ``best_g`` (signed byte,
-1 = never reached), ``parent`` (rank of the predecessor) and ``move`` (index of
the blank's move into it in MOVE_ORDER). The heap holds ``(f, tie, g, rank,
board)``; the board tuple rides along so a pop needs no unranking.

A child's rank is not recomputed from scratch: a move swaps the blank (value 0)
with tile ``v`` between squares ``lo < hi``, which changes only the Lehmer digits
from ``lo`` to ``hi``. Digit ``hi`` of the parent (how many smaller values lie
after ``v``) is read off the rank itself, and only the squares strictly between
``lo`` and ``hi`` are inspected (none for a horizontal move, cols - 1 for a
vertical one). The child's tuple is built only when it is pushed. h is updated
per move as in ``astar_dict`` (tile costs; linear conflict by its two changed
lines).

Search order, goal test at pop, stale-entry skipping and FIFO ties are those of
``astar_dict``, so both expand the same boards in the same order and report the
same counters; only the state store differs.

Optimal: with an admissible heuristic. ``is_solvable`` is checked first, so an
unsolvable board returns None at once. Boards with more than 10 squares are
refused: 12! ranks (3x4) would need ~2.9 GB of arrays.

Counters: expanded = boards popped (stale entries excluded) whose successors were
generated; generated = successors created (ranks computed), including those
already known at an equal or lower g; max_frontier = the largest heap size seen;
extra["stale"] = stale entries skipped.
"""

from __future__ import annotations

from array import array
from heapq import heappop, heappush
from math import factorial

from harness.heuristics import EVALUATE, NO_TABLES, Heuristic, LineConflicts, manhattan
from harness.puzzle import MOVE_ORDER, Board, Grid, Moves, is_solvable, rank
from harness.solver import Counters, register

#: Largest board whose rank arrays are allocated: 10! ranks x 6 bytes = 22 MB.
MAX_SQUARES = 10


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Decline boards whose n! rank arrays do not fit in memory."""
    if g.squares > MAX_SQUARES:
        return (
            f"{g.label} has {factorial(g.squares):,} ranks: arrays of "
            f"~{6 * factorial(g.squares) / 2**30:.0f} GiB "
            f"(takes at most {MAX_SQUARES} squares)"
        )
    return None


def _moves_table(g: Grid, weight: list[int]) -> tuple:
    """Per blank square: ((move index, target, blank is lo, ((between square, its
    weight), ...), weight of target, radix of target, weight of blank), ...)."""
    n = g.squares
    table = []
    for blank in range(n):
        entries = []
        for name, t in g.neighbours[blank]:
            lo, hi = min(blank, t), max(blank, t)
            between = tuple((k, weight[k]) for k in range(lo + 1, hi))
            entries.append(
                (
                    MOVE_ORDER.index(name),
                    t,
                    blank < t,
                    between,
                    weight[t],
                    n - t,
                    weight[blank],
                )
            )
        table.append(tuple(entries))
    return tuple(table)


@register(
    "astar_cantor",
    optimal=True,
    needs=(EVALUATE, NO_TABLES),  # any h(board) made without tables
    default_heuristic="manhattan",
    refuses=_refuses,
    sizes=f"at most {MAX_SQUARES} squares (2x2 .. 3x3, 2x4, 2x5)",
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """A* where every board is its Cantor (Lehmer) rank into flat preallocated arrays.

    Shortest move string from ``start`` to ``goal``; None when unsolvable.
    """
    reason = _refuses(grid, None, None)
    if reason:
        raise ValueError(f"astar_cantor: {reason}")
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
        changed = [
            {t: lines.lines_changed(b, t) for _, t in grid.neighbours[b]}
            for b in range(grid.squares)
        ]
        slices, extra = lines.slices, lines.extra
    n = grid.squares
    # weight[k] = (n-1-k)!: the place value of Lehmer digit k (radix n - k).
    weight = [factorial(n - 1 - k) for k in range(n)]
    table = _moves_table(grid, weight)
    size = factorial(n)
    best_g = array("b", [-1]) * size
    parent = array("i", [0]) * size
    move = array("b", [-1]) * size
    root, target_rank = rank(start), rank(goal)
    best_g[root] = 0
    parent[root] = root
    tie = 0
    heap = [(h_of(start), tie, 0, root, start)]
    expanded = generated = stale = max_frontier = 0
    try:
        while heap:
            if len(heap) > max_frontier:
                max_frontier = len(heap)
            f, _, g, r, board = heappop(heap)
            if g > best_g[r]:
                stale += 1  # a cheaper copy of this board was pushed after this one
                continue
            if r == target_rank:
                return _path(parent, move, r, root)
            expanded += 1
            blank = board.index(0)
            h = f - g
            if lines is not None:
                parent_extras = lines.extras(board)
            g += 1
            for m, t, blank_is_lo, between, w_t, radix_t, w_blank in table[blank]:
                v = board[t]
                smaller_between = 0
                between_weight = 0
                for k, w_k in between:
                    if board[k] < v:
                        smaller_between += 1
                        between_weight += w_k
                digit = (r // w_t) % radix_t  # Lehmer digit of square t
                if blank_is_lo:
                    # v moves from hi = t down to lo = blank; digit counts the
                    # smaller values after v.
                    child = (
                        r
                        + (1 + smaller_between + digit) * w_blank
                        + between_weight
                        - digit * w_t
                    )
                else:
                    # v moves from lo = t up to hi = blank: the inverse change.
                    s = digit - 1 - smaller_between
                    child = r - (digit * w_t + between_weight - s * w_blank)
                generated += 1
                known = best_g[child]
                if 0 <= known <= g:
                    continue
                best_g[child] = g
                parent[child] = r
                move[child] = m
                squares = list(board)
                squares[blank] = v
                squares[t] = 0
                child_board = tuple(squares)
                if lines is not None:
                    a, b = changed[blank][t]
                    h_child = (
                        h
                        - cost[v][t]
                        + cost[v][blank]
                        + 2
                        * (
                            extra(a, child_board[slices[a]])
                            + extra(b, child_board[slices[b]])
                            - parent_extras[a]
                            - parent_extras[b]
                        )
                    )
                elif cost is not None:
                    h_child = h - cost[v][t] + cost[v][blank]
                else:
                    h_child = h_of(child_board)
                tie += 1
                heappush(heap, (g + h_child, tie, g, child, child_board))
        raise AssertionError("solvable board but the heap ran dry")
    finally:
        counters.expanded += expanded
        counters.generated += generated
        counters.max_frontier = max(counters.max_frontier, max_frontier)
        if stale:
            counters.extra["stale"] = counters.extra.get("stale", 0) + stale


def _path(parent: array, move: array, r: int, root: int) -> Moves:
    """Follow parent ranks back to the root, collecting the recorded moves."""
    moves: list[str] = []
    while r != root:
        moves.append(MOVE_ORDER[move[r]])
        r = parent[r]
    return "".join(reversed(moves))
