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
from itertools import chain, repeat
from operator import is_, itemgetter

from harness.puzzle import BLANK_TOKENS, Board, Grid, apply_moves


@cache
def _token_values(squares: int) -> dict[str, int]:
    values = {str(t): t for t in range(1, squares)}
    values.update(dict.fromkeys(BLANK_TOKENS, 0))
    return values


def read_batch(text: str, g: Grid) -> list[Board] | None:
    """Every board of ``text`` when it is plain (whitespace-separated tile tokens,
    complete boards, each a permutation); None otherwise, and the caller's precise
    reader then names the problem."""
    if g.squares <= 10 and len(text) >= LONG_INPUT:
        boards = _read_chars(text, g)
        if boards is not None:
            return boards
    if "/" in text or "," in text or "|" in text:
        return None
    words = text.split()
    n = g.squares
    values = _token_values(n)
    if not words or len(words) % n or not values.keys() >= set(words):
        return None
    numbers = list(map(values.__getitem__, words))
    boards = list(zip(*[iter(numbers)] * n))  # n at a time, as tuples
    for board in boards:
        if len(set(board)) != n:
            return None  # a duplicate (and so a missing tile): the slow path says which
    return boards


#: Inputs at least this long (about 100 3x3 boards) are read by :func:`_read_chars`.
LONG_INPUT = 2000
#: The ASCII characters ``str.split()`` splits on.
_SPACES = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"


@cache
def _char_values(squares: int):
    """int8 per byte: the tile a one-character token stands for, -2 for
    whitespace, -1 for anything else."""
    import numpy as np

    table = np.full(256, -1, dtype=np.int8)
    table[list(_SPACES)] = -2
    for token, value in _token_values(squares).items():
        if len(token) == 1:
            table[ord(token)] = value
    return table


def _read_chars(text: str, g: Grid) -> list[Board] | None:
    """:func:`read_batch` with numpy, when every token is one character (boards of
    up to 10 squares): the same boards, or None for anything it does not read
    (the caller then reads token by token)."""
    import numpy as np

    n = g.squares
    raw = np.frombuffer(text.encode("ascii", "replace"), dtype=np.uint8)
    kind = _char_values(n)[raw]
    if (kind == -1).any():
        return None
    token = kind >= 0
    if (token[1:] & token[:-1]).any():  # a token of two or more characters
        return None
    values = kind[token]
    if not len(values) or len(values) % n:
        return None
    if (np.sort(values.reshape(-1, n), axis=1) != np.arange(n)).any():
        return None  # a duplicate: the slow path says which
    return list(zip(*[iter(values.tolist())] * n))


@cache
def _steps(g: Grid) -> tuple[int, ...]:
    """``table[byte * 32 + square]``: the blank's square after the move whose letter
    has that byte, from ``square``; -1 off the board or for any other byte."""
    table = [-1] * (256 * 32)
    for square, around in enumerate(g.neighbours):
        for move, target in around:
            table[ord(move) * 32 + square] = target
    return tuple(table)


def replay(board: Board, moves: str, g: Grid) -> Board:
    """``apply_moves(board, moves, g)``, faster: the board reached, or
    IllegalMoveError naming the first bad move (from apply_moves itself)."""
    steps = _steps(g)
    squares = list(board)
    blank = squares.index(0)
    try:
        for code in moves.encode("ascii"):
            target = steps[code * 32 + blank]
            if target < 0:
                raise ValueError(code)
            squares[blank] = squares[target]
            blank = target
    except ValueError:  # UnicodeEncodeError included
        apply_moves(board, moves, g)  # raises with the precise message
        raise AssertionError("replay and apply_moves disagree") from None
    squares[blank] = 0
    return tuple(squares)


def solvable_for(goal: Board, g: Grid):
    """``is_solvable(board, goal, g)`` as a function of the board alone, about twice
    as fast: the permutation taking the start to the goal (by goal square) has the
    parity of its inversion count, counted with a bit mask of the squares seen; it
    must match the parity of the blank's displacement."""
    where = [0] * g.squares
    for square, tile in enumerate(goal):
        where[tile] = square
    gr, gc = divmod(goal.index(0), g.cols)
    need = tuple(
        (abs(c // g.cols - gr) + abs(c % g.cols - gc)) & 1 for c in range(g.squares)
    )

    def solvable(board: Board) -> bool:
        seen = 0
        inversions = 0
        for tile in board:
            square = where[tile]
            inversions += (seen >> square).bit_count()
            seen |= 1 << square
        return inversions & 1 == need[board.index(0)]

    return solvable


# ------------------------------------------------------------- whole batches
#
# The functions below take a whole batch at once, with numpy (imported when they
# are first called, so a one-board ``harness solve`` never pays for it). They give
# the same answers as the per-board functions above; anything they cannot decide
# cheaply (an illegal move, a stray character) is left to those.


def board_array(boards: list[Board], g: Grid):
    """The boards as an int8 array of shape (len(boards), squares)."""
    import numpy as np

    flat = np.fromiter(chain.from_iterable(boards), np.int8, len(boards) * g.squares)
    return flat.reshape(len(boards), g.squares)


@cache
def _parity_tables(goal: Board, g: Grid):
    import numpy as np

    where = np.zeros(g.squares, dtype=np.int8)
    for square, tile in enumerate(goal):
        where[tile] = square
    gr, gc = divmod(goal.index(0), g.cols)
    need = np.array(
        [(abs(c // g.cols - gr) + abs(c % g.cols - gc)) & 1 for c in range(g.squares)],
        dtype=np.int8,
    )
    first, second = np.triu_indices(g.squares, k=1)
    return where, need, first, second


def solvable_many(boards, goal: Board, g: Grid):
    """``[is_solvable(b, goal, g) for b in boards]`` as a bool array, for an int8
    array of boards (:func:`board_array`): the same inversion parity as
    :func:`solvable_for`, counted over all pairs of squares at once."""
    import numpy as np

    where, need, first, second = _parity_tables(goal, g)
    at = where[boards]  # the goal square of each tile, in board order
    inversions = np.count_nonzero(at[:, first] > at[:, second], axis=1)
    blank = np.argmax(boards == 0, axis=1)
    return (inversions & 1) == need[blank]


@cache
def _step_array(g: Grid):
    """int16 (256, squares): the blank's square after the move whose letter has that
    byte; byte 0 (padding) stays where it is; -1 off the board or any other byte."""
    import numpy as np

    table = np.full((256, g.squares), -1, dtype=np.int16)
    table[0] = np.arange(g.squares)
    for square, around in enumerate(g.neighbours):
        for move, target in around:
            table[ord(move), square] = target
    return table


def replay_many(boards, answers: list, g: Grid):
    """Replay every answer that is a move string from its board (an int8 array of
    boards, :func:`board_array`). Returns ``(ends, clean, lengths)``: the boards reached
    (int8 array) and a bool array, False where the answer is not a string or holds
    an illegal or unknown move (``ends`` is then not to be trusted): those answers
    are for :func:`replay` to judge, one by one; and the answers' lengths (0 for
    anything but a string). Longest answers first, so step
    ``s`` touches only the boards whose answers are longer than ``s``."""
    import numpy as np

    n = len(answers)
    clean = np.fromiter(map(is_, map(type, answers), repeat(str)), dtype=bool, count=n)
    texts = [a if a.__class__ is str else "" for a in answers]
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    order = np.argsort(-lengths, kind="stable")
    if n > 1:
        texts = itemgetter(*order.tolist())(texts)
    # one byte per character: anything non-ASCII becomes "?", not a move
    codes = np.frombuffer("".join(texts).encode("ascii", "replace"), dtype=np.uint8)
    ranked = lengths[order]
    longest = int(ranked[0]) if n else 0
    ends = boards[order]
    if longest:
        inside = np.arange(longest) < ranked[:, None]
        padded = np.zeros((n, longest), dtype=np.uint8)
        padded[inside] = codes
        if not codes.all():  # a NUL byte would read as padding
            clean[order] &= ~((padded == 0) & inside).any(axis=1)
        padded = np.ascontiguousarray(padded.T)
        # boards still moving at step s: the first active[s] (lengths descend)
        active = np.count_nonzero(ranked[None, :] > np.arange(longest)[:, None], 1)
        steps = _step_array(g)
        flat = ends.reshape(-1)
        base = np.arange(n, dtype=np.int64) * g.squares
        at = base + np.argmax(ends == 0, axis=1)  # the blank, as a flat index
        bad = np.zeros(n, dtype=bool)
        for s in range(longest):
            k = active[s]
            here = at[:k]
            target = steps[padded[s, :k], here - base[:k]]
            off = target < 0
            if off.any():
                bad[:k] |= off
                target[off] = (here - base[:k])[off]
            target = target + base[:k]
            flat[here] = flat[target]
            flat[target] = 0
            at[:k] = target
        clean[order] &= ~bad
    back = np.empty_like(order)
    back[order] = np.arange(n)
    return ends[back], clean, lengths
