"""Fast paths for judging many boards (``harness solve``): read a batch, replay answers.

The checks are the same as :func:`harness.puzzle.parse_board` and
:func:`harness.puzzle.apply_moves`, done with lookup tables built once per grid:
a 3x3 board is read in about a microsecond and a 22-move answer replayed in about
two. Anything unusual (a bad token, a compact ``123x46758`` word, a duplicate, an
illegal move) falls back to the precise slow path, so error messages do not change.
Standard library only.
"""

from __future__ import annotations

from functools import cache

from harness.puzzle import BLANK_TOKENS, Board, Grid, apply_moves


@cache
def _token_values(cells: int) -> dict[str, int]:
    values = {str(t): t for t in range(1, cells)}
    values.update(dict.fromkeys(BLANK_TOKENS, 0))
    return values


def read_batch(text: str, g: Grid) -> list[Board] | None:
    """Every board of ``text`` when it is plain (whitespace-separated tile tokens,
    complete boards, each a permutation); None otherwise, and the caller's precise
    reader then names the problem."""
    if "/" in text or "," in text or "|" in text:
        return None
    words = text.split()
    n = g.cells
    values = _token_values(n)
    if not words or len(words) % n or not values.keys() >= set(words):
        return None
    numbers = list(map(values.__getitem__, words))
    boards = [tuple(numbers[i : i + n]) for i in range(0, len(numbers), n)]
    for board in boards:
        if len(set(board)) != n:
            return None  # a duplicate (and so a missing tile): the slow path says which
    return boards


@cache
def _steps(g: Grid) -> tuple[int, ...]:
    """``table[byte * 32 + cell]``: the blank's cell after the move whose letter
    has that byte, from ``cell``; -1 off the board or for any other byte."""
    table = [-1] * (256 * 32)
    for cell, around in enumerate(g.neighbours):
        for move, target in around:
            table[ord(move) * 32 + cell] = target
    return tuple(table)


def replay(board: Board, moves: str, g: Grid) -> Board:
    """``apply_moves(board, moves, g)``, faster: the board reached, or
    IllegalMoveError naming the first bad move (from apply_moves itself)."""
    steps = _steps(g)
    cells = list(board)
    blank = cells.index(0)
    try:
        for code in moves.encode("ascii"):
            target = steps[code * 32 + blank]
            if target < 0:
                raise ValueError(code)
            cells[blank] = cells[target]
            blank = target
    except ValueError:  # UnicodeEncodeError included
        apply_moves(board, moves, g)  # raises with the precise message
        raise AssertionError("replay and apply_moves disagree") from None
    cells[blank] = 0
    return tuple(cells)


def solvable_for(goal: Board, g: Grid):
    """``is_solvable(board, goal, g)`` as a function of the board alone, about twice
    as fast: the permutation taking the start to the goal (by goal cell) has the
    parity of its inversion count, counted with a bit mask of the cells seen; it
    must match the parity of the blank's displacement."""
    where = [0] * g.cells
    for cell, tile in enumerate(goal):
        where[tile] = cell
    gr, gc = divmod(goal.index(0), g.cols)
    need = tuple(
        (abs(c // g.cols - gr) + abs(c % g.cols - gc)) & 1 for c in range(g.cells)
    )

    def solvable(board: Board) -> bool:
        seen = 0
        inversions = 0
        for tile in board:
            cell = where[tile]
            inversions += (seen >> cell).bit_count()
            seen |= 1 << cell
        return inversions & 1 == need[board.index(0)]

    return solvable
