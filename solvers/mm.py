"""MM: bidirectional heuristic search that meets in the middle (Holte, Felner,
Sharon and Sturtevant, "Bidirectional search that is guaranteed to meet in the
middle", AAAI 2016).

Two front-to-end A*-like searches, forward from the start (h toward the goal)
and backward from the goal (the same heuristic family bound to the start,
:mod:`solvers._front_to_end`). A board n of either direction has priority
pr(n) = max(f(n), 2g(n)); each step expands the board of least priority of the
direction whose least priority is smaller (forward on ties), so neither
direction expands a board more than C*/2 from its root unless its f is already
at least C*. U, the cheapest start-to-goal path found, is updated whenever a
child is reached by the other direction. Termination is the paper's (unit
costs, epsilon = 1): stop when U <= max(C, fminF, fminB, gminF + gminB + 1), C
the smaller least priority, fmin and gmin the least f and g on each open list;
U is then optimal. As the HOG2 reference (generic/MM.h), equal priorities are
broken toward the smaller g.

Data structures: per direction a dict of g (open and closed boards), a set of
open boards, parent links, and three binary heaps (by priority, by f, by g)
whose entries go stale when a board is closed or reached more cheaply; stale
entries are skipped when they reach the top. Optimal with an admissible
heuristic (consistency is not needed: closed boards are reopened). Unsolvable
boards are told by the parity test first.

Counters: expanded = boards expanded in both directions (the goal test is the
termination rule, so meeting boards count as expanded only if they were);
generated = children created (those reached no cheaper included); max_frontier
= the largest sum of the two open lists; extra: expanded_forward,
expanded_backward, meeting_g (g from the start of the board where the returned
path crosses).
"""

from __future__ import annotations

from heapq import heappop, heappush

from harness.heuristics import EVALUATE, NO_TABLES, Heuristic, manhattan
from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, register
from solvers._front_to_end import Direction, backward_heuristic, count, path, refuses


class _Queues:
    """One direction's three heaps over its open boards: priority, f and g."""

    def __init__(self, side: Direction, root: Board) -> None:
        self.side = side
        self.by_pr: list[tuple[int, int, int, Board]] = []
        self.by_f: list[tuple[int, int, Board]] = []
        self.by_g: list[tuple[int, int, Board]] = []
        self.push(root)

    def push(self, board: Board) -> None:
        g = self.side.g[board]
        f = g + self.side.h(board)
        heappush(self.by_pr, (max(f, 2 * g), g, f, board))
        heappush(self.by_f, (f, g, board))
        heappush(self.by_g, (g, f, board))

    def _live(self, heap: list, g_at: int) -> tuple | None:
        """The top entry after dropping stale ones (closed, or g improved since)."""
        side = self.side
        while heap:
            top = heap[0]
            board = top[-1]
            if board in side.open and side.g[board] == top[g_at]:
                return top
            heappop(heap)
        return None

    def least(self) -> tuple[int, int, int] | None:
        """(least priority, least f, least g) over the open boards; None if none."""
        pr = self._live(self.by_pr, 1)
        if pr is None:
            return None
        return pr[0], self._live(self.by_f, 1)[0], self._live(self.by_g, 0)[0]

    def pop(self) -> Board:
        return heappop(self.by_pr)[-1]  # least() has just made the top live


@register(
    "mm",
    optimal=True,
    needs=(EVALUATE, NO_TABLES),  # the backward h is made per start board
    default_heuristic="manhattan",
    refuses=refuses,
    sizes="any (larger than 3x3: depth-limited, see refusals)",
    in_all="none",  # named only: the main job's 90 s was not measured with it
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """MM: bidirectional heuristic search that meets in the middle (AAAI 2016).

    Shortest move string from ``start`` to ``goal``; None when unsolvable.
    """
    if not is_solvable(start, goal, grid):
        return None
    if start == goal:
        return ""
    h = heuristic if heuristic is not None else manhattan(goal, grid)
    sides = (Direction(start, h), Direction(goal, backward_heuristic(h, start, grid)))
    queues = (_Queues(sides[0], start), _Queues(sides[1], goal))
    best, meeting = None, None  # U and the board where it crosses
    max_frontier = 0
    try:
        while True:
            fw, bw = queues[0].least(), queues[1].least()
            if fw is None or bw is None:
                break  # cannot happen on a solvable board: the sides meet first
            c = min(fw[0], bw[0])
            if best is not None and best <= max(c, fw[1], bw[1], fw[2] + bw[2] + 1):
                break
            max_frontier = max(max_frontier, len(sides[0].open) + len(sides[1].open))
            d = 0 if fw[0] <= bw[0] else 1
            mine, theirs = sides[d], sides[1 - d]
            board = queues[d].pop()
            for child in mine.children(board, grid):
                queues[d].push(child)
                other = theirs.g.get(child)
                if other is not None and (best is None or mine.g[child] + other < best):
                    best, meeting = mine.g[child] + other, child
        if meeting is None:
            raise AssertionError("solvable board but the searches never met")
        return path(sides[0], sides[1], meeting, grid)
    finally:
        meeting_g = sides[0].g.get(meeting) if meeting is not None else None
        count(counters, sides[0], sides[1], max_frontier, meeting_g)
