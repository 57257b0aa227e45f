"""Arrays the kernels take, built once per grid and goal in Python: neighbours,
Manhattan costs, the linear-conflict lines, bit-count tables; and the move letters
of a kernel's path."""

from __future__ import annotations

import numpy as np

from harness.puzzle import MOVE_ORDER, Grid

# ----------------------------------------------------------------- geometry


_nbr_memo: dict[tuple[int, int], np.ndarray] = {}


def neighbour_array(g: Grid) -> np.ndarray:
    """int8 (squares, 4): the square the blank reaches by each move in MOVE_ORDER,
    or -1.
    One read-only array per grid size (solvers call this per solve)."""
    out = _nbr_memo.get((g.rows, g.cols))
    if out is None:
        out = np.full((g.squares, 4), -1, dtype=np.int8)
        for square, around in enumerate(g.neighbours):
            for move, target in around:
                out[square, MOVE_ORDER.index(move)] = target
        out.flags.writeable = False
        _nbr_memo[(g.rows, g.cols)] = out
    return out


_LETTERS = bytes.maketrans(bytes(range(4)), MOVE_ORDER.encode())


def moves_to_str(path: np.ndarray, length: int) -> str:
    """Kernel path (move indices) -> the blank's move letters."""
    return path[:length].tobytes().translate(_LETTERS).decode("ascii")


def manhattan_costs(goal, g: Grid) -> np.ndarray:
    """int16 (tile, square): the tile's grid distance from square to its goal square."""
    cost = np.zeros((g.squares, g.squares), dtype=np.int16)
    for home, tile in enumerate(goal):
        if tile:
            for square in range(g.squares):
                cost[tile, square] = abs(square // g.cols - home // g.cols) + abs(
                    square % g.cols - home % g.cols
                )
    return cost


def conflict_arrays(goal, g: Grid) -> tuple:
    """Arguments of the linear-conflict kernels after ``nbr``: Manhattan costs,
    the squares of each row then each column, line lengths, each tile's goal row and
    column, rows, cols."""
    lines = g.rows + g.cols
    width = max(g.rows, g.cols)
    line_squares = np.zeros((lines, width), dtype=np.int8)
    line_len = np.zeros(lines, dtype=np.int8)
    for r in range(g.rows):
        line_len[r] = g.cols
        line_squares[r, : g.cols] = [r * g.cols + c for c in range(g.cols)]
    for c in range(g.cols):
        line_len[g.rows + c] = g.rows
        line_squares[g.rows + c, : g.rows] = [r * g.cols + c for r in range(g.rows)]
    goal_row = np.zeros(g.squares, dtype=np.int8)
    goal_col = np.zeros(g.squares, dtype=np.int8)
    for home, tile in enumerate(goal):
        goal_row[tile], goal_col[tile] = divmod(home, g.cols)
    return (
        manhattan_costs(goal, g), line_squares, line_len, goal_row, goal_col, g.rows,
        g.cols,
    )


def popcount16() -> np.ndarray:
    """uint8 table: number of set bits of every 16-bit value."""
    table = np.zeros(1 << 16, dtype=np.uint8)
    for bit in range(16):
        table[(np.arange(1 << 16) >> bit) & 1 == 1] += 1
    return table


def lowbit16() -> np.ndarray:
    """int8 table: index of the lowest set bit of every 16-bit value (-1 for 0)."""
    values = np.arange(1 << 16)
    table = np.full(1 << 16, -1, dtype=np.int8)
    for bit in range(15, -1, -1):
        table[(values >> bit) & 1 == 1] = bit
    return table
