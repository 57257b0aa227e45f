"""A* over board tuples with dicts for the best known g and the parent links.

Data structures: a binary heap (``heapq``) of ``(f, tie, g, board)`` entries, a dict
``best_g`` (board -> cheapest g found) and a dict ``parent`` (board -> the board it
was reached from). The goal is tested when a board is popped, not when it is
generated, which is what makes A* optimal. A board whose g improves is pushed
again rather than updated in place, so the older heap entry goes stale and is
skipped on pop. Equal f values are popped first-in first-out through the ``tie``
counter, so runs are deterministic and boards are never compared. With a
tile-additive heuristic (``tile_cost`` table: misplaced, manhattan) h is updated
per move in O(1); ``linear_conflict`` as manhattan's delta plus the two lines the
move changes, from per-line memos; any other heuristic is evaluated on each new
child (tests check the incremental values give the same counters).

Optimal: with an admissible heuristic (all built-in ones; a consistent one also
never re-expands a board). ``is_solvable`` is checked first, so an unsolvable
board returns None at once instead of exhausting its component.

Tile costs (``cost_model`` other than unit, :mod:`harness.core.costs`): the same
search with g summed from the moved tiles' costs (floats) and h from the cost
model's heuristic (cost-weighted Manhattan by default); a separate loop, so the
unit search is untouched (``solvers/_cheapest.py``, shared with
``ucs``). Optimal with an admissible h: the cheapest path.

Counters: expanded = boards popped (stale entries excluded) whose successors were
generated, so the goal itself is not counted; generated = successors created,
including those already known at an equal or lower g; max_frontier = the largest
heap size seen, stale entries included (they occupy memory); extra["stale"] =
stale entries popped and skipped.
"""

from __future__ import annotations

from heapq import heappop, heappush

from harness.heuristics import EVALUATE, NO_TABLES, Heuristic, LineConflicts, manhattan
from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, register, tile_costs
from solvers._cheapest import cheapest_first, walk_back

#: Boards with more squares than this have more than 181,440 reachable boards.
_SMALL_SQUARES = 9
#: Deepest known optimum accepted on larger boards, per heuristic: A* keeps every
#: generated board, so deep 4x4 boards exhaust memory before time. Measured on
#: Korf's #71 (44 moves): 1.1 GB peak RSS with manhattan, 136 MB with
#: linear_conflict; #13 (46 moves, linear_conflict): 210 MB.
_MAX_DEPTH_LARGE = {"misplaced": 28, "manhattan": 46, "linear_conflict": 48}


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Decline deep boards on grids larger than 3x3."""
    if g.squares <= _SMALL_SQUARES:
        return None
    limit = _MAX_DEPTH_LARGE.get(heuristic or "manhattan", 40)
    if depth is not None and depth > limit:
        return (
            f"depth {depth} on {g.label} with {heuristic}: A* would store tens of "
            f"millions of boards (takes depth <= {limit})"
        )
    return None


@register(
    "astar_dict",
    optimal=True,
    needs=(EVALUATE, NO_TABLES),  # any h(board) made without tables
    default_heuristic="manhattan",
    refuses=_refuses,
    sizes="any (larger than 3x3: depth-limited, see refusals)",
    costs=True,
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
    cost_model: str = "unit",
) -> Moves | None:
    """A* over board tuples with dicts for the best known g and the parent links.

    Shortest (with tile costs: cheapest) move string from ``start`` to ``goal``;
    None when unsolvable.
    """
    if not is_solvable(start, goal, grid):
        return None
    if cost_model != "unit":
        return _solve_costs(start, goal, grid, counters, heuristic, cost_model)
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
    neighbours = grid.neighbours
    tie = 0
    heap = [(h_of(start), tie, 0, start)]
    best_g: dict[Board, int] = {start: 0}
    parent: dict[Board, Board | None] = {start: None}
    expanded = generated = stale = max_frontier = 0
    try:
        while heap:
            if len(heap) > max_frontier:
                max_frontier = len(heap)
            f, _, g, board = heappop(heap)
            if g > best_g[board]:
                stale += 1  # a cheaper copy of this board was pushed after this one
                continue
            if board == goal:
                return walk_back(parent, board, grid)
            expanded += 1
            blank = board.index(0)
            h = f - g
            if lines is not None:
                parent_extras = lines.extras(board)
            g += 1
            for _, target in neighbours[blank]:
                squares = list(board)
                tile = squares[target]
                squares[blank] = tile
                squares[target] = 0
                child = tuple(squares)
                generated += 1
                known = best_g.get(child)
                if known is not None and known <= g:
                    continue
                best_g[child] = g
                parent[child] = board
                if lines is not None:
                    a, b = changed[blank][target]
                    h_child = (
                        h
                        - cost[tile][target]
                        + cost[tile][blank]
                        + 2
                        * (
                            extra(a, child[slices[a]])
                            + extra(b, child[slices[b]])
                            - parent_extras[a]
                            - parent_extras[b]
                        )
                    )
                elif cost is not None:
                    h_child = h - cost[tile][target] + cost[tile][blank]
                else:
                    h_child = h_of(child)
                tie += 1
                heappush(heap, (g + h_child, tie, g, child))
        raise AssertionError("solvable board but the heap ran dry")
    finally:
        counters.expanded += expanded
        counters.generated += generated
        counters.max_frontier = max(counters.max_frontier, max_frontier)
        if stale:
            counters.extra["stale"] = counters.extra.get("stale", 0) + stale


def _solve_costs(
    start: Board, goal: Board, grid: Grid, counters: Counters,
    heuristic: Heuristic | None, cost_model: str,
) -> Moves:  # fmt: skip
    """The search with g in tile costs: the cheapest path (see the module)."""
    h_of = heuristic if heuristic is not None else manhattan(goal, grid, cost_model)
    if h_of.cost_model != cost_model:
        raise ValueError(f"heuristic {h_of.name} bounds {h_of.cost_model} costs, "
                         f"not {cost_model}")  # fmt: skip
    move_cost = tile_costs(cost_model, grid.squares)
    return cheapest_first(start, goal, grid, counters, move_cost, h_of, h_of.tile_cost)
