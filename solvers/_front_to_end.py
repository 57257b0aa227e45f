"""What the front-to-end bidirectional searches (``mm``, ``nbs``) share: one search
direction (its open and closed boards, g, parents and heuristic), the expansion
of one board, the backward heuristic, the refusals and the path through the
meeting board.

Front-to-end: each direction estimates the distance to the other end's root
(forward: to the goal; backward: to the start), never to the other frontier.
The backward heuristic is the forward one's family made for the start as its
goal (``make_heuristic(h.name, start, grid)``): the 15-puzzle's moves are
reversible, so a lower bound on the distance from a board to the start is the
same family's bound with the start as goal. Heuristics with tables (pattern
databases, walking distance) are built for one goal; a table per start board
would cost more than the search, so these solvers need ``NO_TABLES`` and the
capability vocabulary leaves those heuristics out (``harness solvers`` says so).
"""

from __future__ import annotations

from collections.abc import Iterator

from harness.heuristics import Heuristic, make_heuristic
from harness.puzzle import Board, Grid, Moves
from harness.solver import Counters

#: Boards with more squares than this have more than 181,440 reachable boards.
_SMALL_SQUARES = 9
#: Deepest known optimum accepted on larger boards, per heuristic: both
#: directions keep every board they generate (as A* does, and MM/NBS with
#: Manhattan expand more than A* on the 15-puzzle: Holte et al. 2016, Table 1).
_MAX_DEPTH_LARGE = {"misplaced": 24, "manhattan": 40, "linear_conflict": 44}


def refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Decline deep boards on grids larger than 3x3."""
    if g.squares <= _SMALL_SQUARES:
        return None
    limit = _MAX_DEPTH_LARGE.get(heuristic or "manhattan", 36)
    if depth is not None and depth > limit:
        return (
            f"depth {depth} on {g.label} with {heuristic}: both directions would "
            f"store tens of millions of boards (takes depth <= {limit})"
        )
    return None


def backward_heuristic(h: Heuristic, start: Board, grid: Grid) -> Heuristic:
    """The same heuristic family bound to ``start``: the backward direction's
    estimate of the distance from a board to the start."""
    return make_heuristic(h.name, start, grid)


class Direction:
    """One direction of the search: ``g`` of every board reached (open or closed),
    the ``open`` ones, ``parent`` links toward its root, ``h`` toward the other
    end's root."""

    __slots__ = ("g", "open", "parent", "h", "expanded", "generated")

    def __init__(self, root: Board, h: Heuristic) -> None:
        self.g: dict[Board, int] = {root: 0}
        self.open: set[Board] = {root}
        self.parent: dict[Board, Board | None] = {root: None}
        self.h = h
        self.expanded = 0
        self.generated = 0

    def children(self, board: Board, grid: Grid) -> Iterator[Board]:
        """Close ``board`` and yield each child whose g improved (now open)."""
        self.open.discard(board)
        self.expanded += 1
        g = self.g[board] + 1
        blank = board.index(0)
        for _, target in grid.neighbours[blank]:
            squares = list(board)
            squares[blank] = squares[target]
            squares[target] = 0
            child = tuple(squares)
            self.generated += 1
            known = self.g.get(child)
            if known is not None and known <= g:
                continue  # reached as cheaply before (open or closed)
            self.g[child] = g
            self.parent[child] = board
            self.open.add(child)  # reopened when it was closed
            yield child

    def chain(self, board: Board) -> list[Board]:
        """Boards from ``board`` back to the root, inclusive."""
        out = [board]
        while (before := self.parent[out[-1]]) is not None:
            out.append(before)
        return out


def path(forward: Direction, backward: Direction, meeting: Board, grid: Grid) -> Moves:
    """The blank's moves from the start through ``meeting`` to the goal."""
    boards = forward.chain(meeting)[::-1] + backward.chain(meeting)[1:]
    step_to_move = {-grid.cols: "u", grid.cols: "d", -1: "l", 1: "r"}
    return "".join(
        step_to_move[after.index(0) - before.index(0)]
        for before, after in zip(boards, boards[1:])
    )


def count(counters: Counters, forward: Direction, backward: Direction,
          max_frontier: int, meeting_g: int | None) -> None:  # fmt: skip
    """Add a finished (or interrupted) search's counts to ``counters``."""
    counters.expanded += forward.expanded + backward.expanded
    counters.generated += forward.generated + backward.generated
    counters.max_frontier = max(counters.max_frontier, max_frontier)
    extra = counters.extra
    extra["expanded_forward"] = extra.get("expanded_forward", 0) + forward.expanded
    extra["expanded_backward"] = extra.get("expanded_backward", 0) + backward.expanded
    if meeting_g is not None:  # how far from the start the two searches met
        extra["meeting_g"] = meeting_g
