"""Takahashi's walking distance: a table heuristic built by breadth-first search over
row and column tile-count states, in pure Python.

Module import is standard library only; numpy loads when a table is made.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from harness.heuristics.registry import Heuristic, Kernel, register_heuristic
from harness.puzzle import Board, Grid

#: Largest side walking distance is offered for (4x4 has 24,964 row states).
WD_MAX_SIDE = 4


@dataclass(eq=False)
class WalkingDistance:
    """Takahashi's walking distance: per row, how many tiles of each goal row it
    holds (the blank's row one short); a vertical move carries one tile to the
    blank's row. The fewest such moves from the board's row counts to the goal's,
    plus the same over columns, bounds the solution (each move is vertical or
    horizontal, never both). Tables come from a BFS over count matrices.

    ``row_dist[id]`` / ``row_next[id, side, goal_line]``: distance and successor of
    row state ``id`` when the blank moves to the lower (0: up) or higher (1: down)
    line and the tile it meets belongs to ``goal_line``; likewise for columns.
    """

    grid: Grid
    goal: Board
    goal_row: tuple[int, ...]  # per tile
    goal_col: tuple[int, ...]
    row_ids: dict[tuple, int] = field(repr=False)
    col_ids: dict[tuple, int] = field(repr=False)
    arrays: dict[str, Any] = field(repr=False)
    _coded_memo: dict[str, tuple] = field(default_factory=dict, repr=False)

    def ids(self, board: Board) -> tuple[int, int]:
        """(row state id, column state id) of a board."""
        g = self.grid
        rows = [[0] * g.rows for _ in range(g.rows)]
        cols = [[0] * g.cols for _ in range(g.cols)]
        for square, tile in enumerate(board):
            r, c = divmod(square, g.cols)
            if tile:
                rows[r][self.goal_row[tile]] += 1
                cols[c][self.goal_col[tile]] += 1
            else:
                blank_row, blank_col = r, c
        row_key = (tuple(map(tuple, rows)), blank_row)
        col_key = (tuple(map(tuple, cols)), blank_col)
        return self.row_ids[row_key], self.col_ids[col_key]

    def ids_many(self, boards) -> tuple[Any, Any]:
        """:meth:`ids` of every board of an int8 array (boards, squares), as two
        int64 arrays (-1 where a board's counts are no state of the tables): each
        count matrix (and blank line) is coded as one integer and looked up among
        the coded states."""
        return (
            self._ids_many(boards, self.grid.rows, self.grid.cols, "row"),
            self._ids_many(boards, self.grid.cols, self.grid.rows, "col"),
        )

    def _ids_many(self, boards, lines: int, width: int, side: str):
        import numpy as np

        g = self.grid
        codes, ids = self.coded(side)
        square = np.arange(g.squares)
        line_of = square // g.cols if side == "row" else square % g.cols
        goal_line = np.array(self.goal_row if side == "row" else self.goal_col)
        weight = (width + 1) ** np.arange(lines * lines, dtype=np.int64)
        # the digit of (line of the square, goal line of its tile), blank excluded
        digit = weight[line_of[None, :] * lines + goal_line[boards]]
        code = np.where(boards != 0, digit, 0).sum(axis=1)
        blank = line_of[np.argmax(boards == 0, axis=1)]
        code += blank * (width + 1) ** (lines * lines)
        at = np.minimum(np.searchsorted(codes, code), len(codes) - 1)
        return np.where(codes[at] == code, ids[at], -1)  # -1: not a state

    def coded(self, side: str):
        """(sorted codes, their ids) of every row or column state (memoized)."""
        found = self._coded_memo.get(side)
        if found is None:
            import numpy as np

            g = self.grid
            lines, width = (g.rows, g.cols) if side == "row" else (g.cols, g.rows)

            table = self.row_ids if side == "row" else self.col_ids
            base = width + 1
            coded = {}
            for (counts, blank), state in table.items():
                code = sum(
                    n * base ** (r * lines + k)
                    for r, line in enumerate(counts)
                    for k, n in enumerate(line)
                )
                coded[code + blank * base ** (lines * lines)] = state
            keys = np.array(sorted(coded), dtype=np.int64)
            found = (keys, np.array([coded[k] for k in keys.tolist()], np.int64))
            self._coded_memo[side] = found
        return found

    def estimate(self, board: Board) -> int:
        row, col = self.ids(board)
        return int(self.arrays["row_dist"][row] + self.arrays["col_dist"][col])


def _wd_table(lines: int, width: int, blank_line: int):
    """BFS over count matrices for ``lines`` lines of ``width`` squares whose goal
    has the blank on ``blank_line``: (ids, dist, next) as described above."""
    import numpy as np

    goal = tuple(
        tuple((width - (r == blank_line)) if k == r else 0 for k in range(lines))
        for r in range(lines)
    )
    start = (goal, blank_line)
    ids = {start: 0}
    order = [start]
    dist = [0]
    edges: list[tuple[int, int, int, int]] = []
    head = 0
    while head < len(order):
        counts, blank = order[head]
        here = head
        head += 1
        for side, other in ((0, blank - 1), (1, blank + 1)):
            if not 0 <= other < lines:
                continue
            for k in range(lines):
                if counts[other][k] == 0:
                    continue
                moved = [list(line) for line in counts]
                moved[other][k] -= 1
                moved[blank][k] += 1
                child = (tuple(map(tuple, moved)), other)
                if child not in ids:
                    ids[child] = len(order)
                    order.append(child)
                    dist.append(dist[here] + 1)
                edges.append((here, side, k, ids[child]))
    nxt = np.full((len(order), 2, lines), -1, dtype=np.int32)
    for here, side, k, there in edges:
        nxt[here, side, k] = there
    return ids, np.array(dist, dtype=np.int16), nxt


_wd_memo: dict[tuple, WalkingDistance] = {}
_wd_tables: dict[tuple, tuple] = {}


def walking_distance(goal: Board, g: Grid) -> WalkingDistance:
    """Walking-distance tables bound to ``goal`` (built once per process, ~0.5 s
    for 4x4 in pure Python)."""
    key = (g.rows, g.cols, goal)
    if key in _wd_memo:
        return _wd_memo[key]
    import numpy as np

    blank = goal.index(0)
    goal_row = [0] * g.squares
    goal_col = [0] * g.squares
    for square, tile in enumerate(goal):
        goal_row[tile], goal_col[tile] = divmod(square, g.cols)
    for lines, width, line in ((g.rows, g.cols, blank // g.cols),
                               (g.cols, g.rows, blank % g.cols)):
        if (lines, width, line) not in _wd_tables:
            _wd_tables[(lines, width, line)] = _wd_table(lines, width, line)
    row_ids, row_dist, row_next = _wd_tables[(g.rows, g.cols, blank // g.cols)]
    col_ids, col_dist, col_next = _wd_tables[(g.cols, g.rows, blank % g.cols)]
    arrays = {
        "row_dist": row_dist,
        "row_next": row_next,
        "col_dist": col_dist,
        "col_next": col_next,
        "goal_row": np.array(goal_row, dtype=np.int8),
        "goal_col": np.array(goal_col, dtype=np.int8),
    }
    result = WalkingDistance(
        g, goal, tuple(goal_row), tuple(goal_col), row_ids, col_ids, arrays
    )
    _wd_memo[key] = result
    return result


def _wd_refuses(g: Grid) -> str | None:
    if max(g.rows, g.cols) > WD_MAX_SIDE:
        return f"walking-distance tables are built for sides up to {WD_MAX_SIDE}"
    return None


def _ida_kernel(h: Heuristic) -> Kernel:
    a = h.data.arrays
    return Kernel(
        "ida_walking_distance",
        (a["row_dist"], a["row_next"], a["col_dist"], a["col_next"], a["goal_row"],
         a["goal_col"]),
        start_args=h.data.ids,  # the start's count states lead the tables
        start_args_many=h.data.ids_many,
    )  # fmt: skip


def _best_first_kernel(h: Heuristic) -> Kernel:
    return replace(_ida_kernel(h), function="best_first_walking_distance")


@register_heuristic(
    "walking_distance",
    "Takahashi's walking distance: row and column tile-count moves (>= manhattan)",
    refuses=_wd_refuses,
    tables=True,
    kernels={"ida": _ida_kernel, "best_first": _best_first_kernel},
)
def _make_walking_distance(goal: Board, g: Grid) -> Heuristic:
    wd = walking_distance(goal, g)
    return Heuristic("walking_distance", goal, g, wd.estimate, data=wd)
