"""Heuristics: lower bounds on the number of moves from a board to a goal.

A :class:`Heuristic` is bound to one goal and grid when it is made, so solvers just
call ``h(board)``. Tile-additive heuristics (misplaced, manhattan) also expose a
``tile_cost[tile][cell]`` table, which lets IDA* update ``h`` per move in O(1).
None of them counts the blank. Standard library only.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.puzzle import Board, Grid


@dataclass(frozen=True, slots=True)
class Heuristic:
    """A lower bound bound to ``goal`` on ``grid``; call it with a board."""

    name: str
    goal: Board
    grid: Grid
    estimate: Callable[[Board], int] = field(repr=False)
    #: tile_cost[tile][cell]: the tile's share of h when it stands on cell (blank: 0).
    #: Present only when h is the sum of these shares, so it can be updated per move.
    tile_cost: tuple[tuple[int, ...], ...] | None = field(default=None, repr=False)
    #: Anything a compiled solver needs to evaluate the same bound (e.g. PDB arrays).
    data: object = field(default=None, repr=False, compare=False)

    def __call__(self, board: Board) -> int:
        return self.estimate(board)


@dataclass(frozen=True, slots=True)
class HeuristicInfo:
    """A registered heuristic family: how to make it and where it applies."""

    name: str
    make: Callable[[Board, Grid], Heuristic]
    description: str
    #: None when it accepts the grid, else the reason it does not.
    refuses: Callable[[Grid], str | None] = lambda g: None


_REGISTRY: dict[str, HeuristicInfo] = {}


def register_heuristic(
    name: str,
    description: str,
    refuses: Callable[[Grid], str | None] | None = None,
) -> Callable[[Callable[[Board, Grid], Heuristic]], Callable[[Board, Grid], Heuristic]]:
    """Decorator: add a heuristic factory ``make(goal, grid) -> Heuristic``."""

    def wrap(make: Callable[[Board, Grid], Heuristic]):
        _REGISTRY[name] = HeuristicInfo(
            name, make, description, refuses or (lambda g: None)
        )
        return make

    return wrap


def all_heuristics() -> dict[str, HeuristicInfo]:
    """Every registered heuristic family, by name (sorted)."""
    return dict(sorted(_REGISTRY.items()))


def make_heuristic(name: str, goal: Board, g: Grid) -> Heuristic:
    """Bind heuristic ``name`` to a goal; KeyError for an unknown name,
    ValueError when it does not apply to the grid."""
    if name not in _REGISTRY:
        raise KeyError(
            f"unknown heuristic {name!r}; known: {', '.join(sorted(_REGISTRY))}"
        )
    info = _REGISTRY[name]
    reason = info.refuses(g)
    if reason:
        raise ValueError(f"heuristic {name!r} does not apply to {g.label}: {reason}")
    return info.make(goal, g)


def _positions(goal: Board) -> list[int]:
    where = [0] * len(goal)
    for cell, tile in enumerate(goal):
        where[tile] = cell
    return where


def _additive(name: str, goal: Board, g: Grid, cost: Callable[[int, int], int]):
    table = tuple(
        tuple(0 if tile == 0 else cost(tile, cell) for cell in range(g.cells))
        for tile in range(g.cells)
    )

    def estimate(board: Board) -> int:
        return sum([table[tile][cell] for cell, tile in enumerate(board)])

    return Heuristic(name, goal, g, estimate, table)


@register_heuristic("misplaced", "tiles not on their goal cell (blank not counted)")
def misplaced(goal: Board, g: Grid) -> Heuristic:
    where = _positions(goal)
    return _additive("misplaced", goal, g, lambda t, c: int(where[t] != c))


@register_heuristic("manhattan", "sum of tiles' grid distances to their goal cells")
def manhattan(goal: Board, g: Grid) -> Heuristic:
    where = _positions(goal)

    def dist(tile: int, cell: int) -> int:
        (r, c), (gr, gc) = g.row_col(cell), g.row_col(where[tile])
        return abs(r - gr) + abs(c - gc)

    return _additive("manhattan", goal, g, dist)


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
        where = [0] * g.cells
        for cell, tile in enumerate(goal):
            where[tile] = cell
        # Per line: tile -> its goal position along the line, for the tiles whose
        # goal lies on that line (the others take no part in its conflicts).
        self.along: list[dict[int, int]] = []
        self.slices: list[slice] = []
        for r in range(g.rows):
            self.slices.append(slice(r * g.cols, (r + 1) * g.cols))
            self.along.append(
                {
                    t: where[t] % g.cols
                    for t in range(1, g.cells)
                    if where[t] // g.cols == r
                }
            )
        for c in range(g.cols):
            self.slices.append(slice(c, None, g.cols))
            self.along.append(
                {
                    t: where[t] // g.cols
                    for t in range(1, g.cells)
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
        md = sum([self.manhattan[tile][cell] for cell, tile in enumerate(board)])
        extra = 0
        for along, sl in zip(self.along, self.slices, strict=True):
            extra += _must_leave([along[t] for t in board[sl] if t in along])
        return md + 2 * extra

    def lines_changed(self, blank: int, target: int) -> tuple[int, int]:
        """The two lines whose order changes when the blank moves blank -> target."""
        if abs(blank - target) == 1:  # horizontal: the two columns
            return self.rows + blank % self.cols, self.rows + target % self.cols
        return blank // self.cols, target // self.cols


@register_heuristic(
    "linear_conflict",
    "manhattan + 2 per tile that must leave its goal row/column to let others pass",
)
def linear_conflict(goal: Board, g: Grid) -> Heuristic:
    """Hansson, Mayer & Yung (1992), in its admissible form: per line, count the
    tiles outside a longest in-order subset (not "+2 per conflicting pair", which
    overestimates when one tile conflicts with several)."""
    lines = LineConflicts(goal, g)
    # data: solvers update h per move from it (a fresh LineConflicts per solve
    # keeps its memo out of the next measurement).
    return Heuristic("linear_conflict", goal, g, lines.estimate, data=lines)


# Pattern-database heuristics (pdb44, pdb555, pdb663) register themselves here too,
# so make_heuristic knows them whatever was imported first. harness.pdb imports only
# the standard library at module level; its tables are made when a heuristic is.
import harness.pdb  # noqa: E402, F401
