"""NBS: near-optimal bidirectional search (Chen, Holte, Zilles and Sturtevant,
"Front-to-end bidirectional heuristic search with near-optimal node
expansions", IJCAI 2017).

Two front-to-end searches, forward from the start (h toward the goal) and
backward from the goal (the same heuristic family bound to the start,
:mod:`solvers._front_to_end`). NBS expands *pairs*: a board u of the forward open
list and a board v of the backward one minimising the pair's lower bound
lb(u, v) = max(fF(u), fB(v), gF(u) + gB(v) + 1) (unit costs, epsilon = 1), and
expands both. The paper proves it never expands more than twice the boards of
the best admissible front-to-end bidirectional search on the instance
(consistent heuristics). U, the cheapest start-to-goal path found, is updated
whenever a child is reached by the other direction; the search stops when the
least lower bound C reaches U, which is then optimal.

The least pair is found as in the paper's implementation (HOG2
generic/NBSQueue.h): each direction keeps a *waiting* heap ordered by f and a
*ready* heap ordered by g (then f); boards with f <= C move from waiting to
ready; when the two ready tops have gF + gB + 1 <= C they are the pair;
otherwise C rises to the least of the waiting tops' f and the ready tops' g sum
+ 1. Heap entries go stale when a board is closed or reached more cheaply
(then it waits again); stale entries are skipped at the top.

Optimal with an admissible heuristic; unsolvable boards are told by the parity
test first. Counters: expanded = boards expanded in both directions (two per
pair, once a board is not expanded twice); generated = children created;
max_frontier = the largest sum of the two open lists; iterations = pairs
expanded; extra: expanded_forward, expanded_backward, meeting_g (g from the
start of the board where the returned path crosses).
"""

from __future__ import annotations

from heapq import heappop, heappush

from harness.heuristics import EVALUATE, NO_TABLES, Heuristic, manhattan
from harness.puzzle import Board, Grid, Moves, is_solvable
from harness.solver import Counters, register
from solvers._front_to_end import Direction, backward_heuristic, count, path, refuses


class _Lists:
    """One direction's open boards split into waiting (by f) and ready (by g)."""

    def __init__(self, side: Direction, root: Board) -> None:
        self.side = side
        self.waiting: list[tuple[int, int, Board]] = []  # (f, g, board)
        self.ready: list[tuple[int, int, Board]] = []  # (g, f, board)
        self.is_ready: set[Board] = set()
        self.push(root)

    def push(self, board: Board) -> None:
        """(Re)open ``board`` at its current g: it waits until f <= C."""
        g = self.side.g[board]
        self.is_ready.discard(board)
        heappush(self.waiting, (g + self.side.h(board), g, board))

    def _live(self, heap: list, g_at: int, ready: bool) -> tuple | None:
        side = self.side
        while heap:
            top = heap[0]
            board = top[2]
            if (
                board in side.open
                and side.g[board] == top[g_at]
                and (board in self.is_ready) == ready
            ):
                return top
            heappop(heap)
        return None

    def waiting_top(self) -> tuple[int, int, Board] | None:
        return self._live(self.waiting, 1, False)

    def ready_top(self) -> tuple[int, int, Board] | None:
        return self._live(self.ready, 0, True)

    def make_ready(self) -> None:
        """Move the waiting top (live) to the ready heap."""
        f, g, board = heappop(self.waiting)
        self.is_ready.add(board)
        heappush(self.ready, (g, f, board))


def _least_pair(
    lists: tuple[_Lists, _Lists], bound: int
) -> tuple[int, Board, Board] | None:
    """(C, u, v): the least lower bound C (never below ``bound``, the last one) and
    a pair of open boards attaining it; None when a direction has no open board."""
    fw, bw = lists
    while True:
        rf, rb = fw.ready_top(), bw.ready_top()
        if rf is not None and rb is not None and rf[0] + rb[0] + 1 <= bound:
            return bound, rf[2], rb[2]
        moved = False
        for side in lists:
            top = side.waiting_top()
            if top is not None and top[0] <= bound:
                side.make_ready()
                moved = True
        if moved:
            continue
        candidates = [t[0] for t in (fw.waiting_top(), bw.waiting_top()) if t]
        if rf is not None and rb is not None:
            candidates.append(rf[0] + rb[0] + 1)
        if not candidates or (rf is None and fw.waiting_top() is None) or (
            rb is None and bw.waiting_top() is None
        ):
            return None
        bound = max(bound, min(candidates))


@register(
    "nbs",
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
    """NBS: near-optimal bidirectional search, expanding pairs (IJCAI 2017).

    Shortest move string from ``start`` to ``goal``; None when unsolvable.
    """
    if not is_solvable(start, goal, grid):
        return None
    if start == goal:
        return ""
    h = heuristic if heuristic is not None else manhattan(goal, grid)
    sides = (Direction(start, h), Direction(goal, backward_heuristic(h, start, grid)))
    lists = (_Lists(sides[0], start), _Lists(sides[1], goal))
    best, meeting = None, None  # U and the board where it crosses
    bound = max_frontier = pairs = 0
    try:
        while True:
            pair = _least_pair(lists, bound)
            if pair is None:
                break  # cannot happen on a solvable board: the sides meet first
            bound = pair[0]
            if best is not None and bound >= best:
                break
            max_frontier = max(max_frontier, len(sides[0].open) + len(sides[1].open))
            pairs += 1
            for d, board in enumerate(pair[1:]):
                mine, theirs = sides[d], sides[1 - d]
                if board not in mine.open:
                    continue  # never for a live top: a guard against expanding twice
                for child in mine.children(board, grid):
                    lists[d].push(child)
                    other = theirs.g.get(child)
                    if other is not None and (
                        best is None or mine.g[child] + other < best
                    ):
                        best, meeting = mine.g[child] + other, child
        if meeting is None:
            raise AssertionError("solvable board but the searches never met")
        return path(sides[0], sides[1], meeting, grid)
    finally:
        counters.iterations += pairs
        meeting_g = sides[0].g.get(meeting) if meeting is not None else None
        count(counters, sides[0], sides[1], max_frontier, meeting_g)
