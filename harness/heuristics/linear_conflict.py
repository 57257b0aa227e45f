"""Linear conflict (Hansson, Mayer & Yung 1992): Manhattan distance plus two moves
per tile that must leave its goal row or column to let others pass."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import replace

from harness.heuristics.registry import Heuristic, Kernel, register_heuristic
from harness.heuristics.tiles import manhattan
from harness.puzzle import Board, Grid


def _must_leave(line: list[int]) -> int:
    """Fewest tiles to take out of a line so the rest are in goal order (the
    line's length minus its longest increasing subsequence)."""
    tails: list[int] = []
    for x in line:
        i = bisect_left(tails, x)
        tails[i : i + 1] = [x]
    return len(line) - len(tails)


class LineConflicts:
    """Linear conflict per line, memoised: h = manhattan + 2 * sum of line extras.

    A move changes the order of exactly two lines (two columns for a horizontal
    move, two rows for a vertical one), so a child's h is its parent's plus the
    manhattan delta plus the change of those two lines. Lines 0..rows-1 are rows,
    then columns.
    """

    def __init__(self, goal: Board, g: Grid) -> None:
        #: manhattan's tile_cost table: the tile-additive part of this heuristic
        self.manhattan = manhattan(goal, g).tile_cost
        where = [0] * g.squares
        for square, tile in enumerate(goal):
            where[tile] = square
        # Per line: tile -> its goal position along the line, for the tiles whose
        # goal lies on that line (the others take no part in its conflicts).
        self.along: list[dict[int, int]] = []
        self.slices: list[slice] = []
        for r in range(g.rows):
            self.slices.append(slice(r * g.cols, (r + 1) * g.cols))
            self.along.append(
                {
                    t: where[t] % g.cols
                    for t in range(1, g.squares)
                    if where[t] // g.cols == r
                }
            )
        for c in range(g.cols):
            self.slices.append(slice(c, None, g.cols))
            self.along.append(
                {
                    t: where[t] // g.cols
                    for t in range(1, g.squares)
                    if where[t] % g.cols == c
                }
            )
        self.memo: list[dict[tuple[int, ...], int]] = [{} for _ in self.slices]
        self.rows, self.cols = g.rows, g.cols

    def extra(self, line: int, tiles: tuple[int, ...]) -> int:
        """Tiles that must leave ``line`` (memoised per line)."""
        found = self.memo[line].get(tiles)
        if found is None:
            along = self.along[line]
            found = _must_leave([along[t] for t in tiles if t in along])
            self.memo[line][tiles] = found
        return found

    def extras(self, board: Board) -> list[int]:
        return [self.extra(i, tuple(board[sl])) for i, sl in enumerate(self.slices)]

    def estimate(self, board: Board) -> int:
        """The full linear-conflict value of ``board``. Bypasses the memo, so a
        heuristic reused across timed solves carries no state from one to the next."""
        md = sum([self.manhattan[tile][square] for square, tile in enumerate(board)])
        extra = 0
        for along, sl in zip(self.along, self.slices, strict=True):
            extra += _must_leave([along[t] for t in board[sl] if t in along])
        return md + 2 * extra

    def lines_changed(self, blank: int, target: int) -> tuple[int, int]:
        """The two lines whose order changes when the blank moves blank -> target."""
        if abs(blank - target) == 1:  # horizontal: the two columns
            return self.rows + blank % self.cols, self.rows + target % self.cols
        return blank // self.cols, target // self.cols


def _ida_kernel(h: Heuristic) -> Kernel:
    from harness import kernels

    return Kernel("ida_linear_conflict", kernels.conflict_arrays(h.goal, h.grid))


def _best_first_kernel(h: Heuristic) -> Kernel:
    return replace(_ida_kernel(h), function="best_first_linear_conflict")


def _astar_kernel(h: Heuristic) -> Kernel:
    from harness import kernels

    return Kernel("astar_cantor", (kernels.manhattan_costs(h.goal, h.grid), True))


@register_heuristic(
    "linear_conflict",
    "manhattan + 2 per tile that must leave its goal row/column to let others pass",
    kernels={"ida": _ida_kernel, "astar_cantor": _astar_kernel,
             "best_first": _best_first_kernel},
)
def linear_conflict(goal: Board, g: Grid) -> Heuristic:
    """Hansson, Mayer & Yung (1992), in its admissible form: per line, count the
    tiles outside a longest in-order subset (not "+2 per conflicting pair", which
    overestimates when one tile conflicts with several)."""
    lines = LineConflicts(goal, g)
    # data: solvers update h per move from it (a fresh LineConflicts per solve
    # keeps its memo out of the next measurement).
    return Heuristic("linear_conflict", goal, g, lines.estimate, data=lines)
