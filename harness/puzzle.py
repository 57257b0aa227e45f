"""The sliding-tile puzzle: boards, moves, goals, solvability, ranks and parsing.

A board is a row-major tuple of ``rows * cols`` squares; tile ``t`` is the int ``t``
and the blank is ``0``. Moves name the direction the **blank** travels (``u d l r``,
the online judge's convention). Geometry lives in :class:`Grid`, so rectangular
boards (2x3, 3x4, ...) work everywhere. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from math import factorial

Board = tuple[int, ...]
Moves = str

#: Fixed move order used by every successor function: Korf's Up, Left, Right, Down.
MOVE_ORDER = "ulrd"
OPPOSITE = {"u": "d", "d": "u", "l": "r", "r": "l"}
BLANK_TOKENS = frozenset({"x", "X", "0", "_"})
MIN_SIDE, MAX_SIDE = 2, 5
GOAL_NAMES = ("standard", "spiral", "blank-first")


class BoardError(ValueError):
    """Input that is not a valid board; the message names the token and the reason."""


class IllegalMoveError(ValueError):
    """A move string that leaves the board or contains an unknown letter."""

    def __init__(self, index: int, move: str, reason: str) -> None:
        super().__init__(f"move {index + 1} ({move!r}): {reason}")
        self.index = index
        self.move = move


@dataclass(frozen=True, slots=True)
class Grid:
    """Geometry of a ``rows x cols`` board. Build with :func:`grid` (cached)."""

    rows: int
    cols: int
    #: For each blank square: ((move, square the blank moves to), ...) in MOVE_ORDER.
    neighbours: tuple[tuple[tuple[str, int], ...], ...] = field(repr=False)

    @property
    def squares(self) -> int:
        return self.rows * self.cols

    @property
    def label(self) -> str:
        return f"{self.rows}x{self.cols}"

    def successors(self, board: Board) -> Iterator[tuple[str, Board]]:
        """Yield ``(move, child)`` for every legal blank move, in MOVE_ORDER."""
        blank = board.index(0)
        squares = list(board)
        for move, target in self.neighbours[blank]:
            squares[blank], squares[target] = squares[target], 0
            yield move, tuple(squares)
            squares[target], squares[blank] = squares[blank], 0

    def row_col(self, square: int) -> tuple[int, int]:
        return divmod(square, self.cols)


@cache
def grid(rows: int, cols: int | None = None) -> Grid:
    """The cached :class:`Grid` for ``rows x cols`` (rows x rows when cols is
    omitted)."""
    cols = rows if cols is None else cols
    for side in (rows, cols):
        if not MIN_SIDE <= side <= MAX_SIDE:
            raise BoardError(
                f"board size {rows}x{cols}: each side must be {MIN_SIDE} to {MAX_SIDE}"
            )
    steps = {"u": (-1, 0), "l": (0, -1), "r": (0, 1), "d": (1, 0)}
    neighbours = []
    for square in range(rows * cols):
        r, c = divmod(square, cols)
        around = []
        for move in MOVE_ORDER:
            dr, dc = steps[move]
            if 0 <= r + dr < rows and 0 <= c + dc < cols:
                around.append((move, (r + dr) * cols + c + dc))
        neighbours.append(tuple(around))
    return Grid(rows, cols, tuple(neighbours))


def parse_size(text: str) -> Grid:
    """``"3x3"``, ``"4x4"``, ``"2x3"`` or ``"4"`` -> Grid; BoardError otherwise."""
    m = re.fullmatch(r"\s*([0-9]+)\s*(?:[xX×]\s*([0-9]+))?\s*", text)  # ASCII, not \d
    if not m:
        raise BoardError(f"board size {text!r}: expected ROWSxCOLS, e.g. 3x3")
    rows = int(m.group(1))
    return grid(rows, int(m.group(2)) if m.group(2) else rows)


# --------------------------------------------------------------------- goals


def goal_board(spec: str, g: Grid) -> Board:
    """The goal named ``standard``, ``spiral`` or ``blank-first``, or parsed tokens."""
    name = spec.strip().lower()
    n = g.squares
    if name == "standard":
        return tuple(range(1, n)) + (0,)
    if name == "blank-first":
        return tuple(range(n))
    if name == "spiral":
        return _spiral(g)
    try:
        return parse_board(spec, g)
    except BoardError as err:
        raise BoardError(
            f"goal {spec!r}: not one of {', '.join(GOAL_NAMES)} and not a board ({err})"
        ) from None


def goal_name(goal: Board, g: Grid) -> str:
    """The name of a goal board if it has one, else its tokens."""
    for name in GOAL_NAMES:
        if goal_board(name, g) == goal:
            return name
    return format_board(goal)


def _spiral(g: Grid) -> Board:
    """Tiles 1..n-1 clockwise from the top-left corner; the blank ends the spiral."""
    squares = [0] * g.squares
    top, bottom, left, right = 0, g.rows - 1, 0, g.cols - 1
    order: list[int] = []
    while top <= bottom and left <= right:
        order += [top * g.cols + c for c in range(left, right + 1)]
        order += [r * g.cols + right for r in range(top + 1, bottom + 1)]
        if top < bottom:
            order += [bottom * g.cols + c for c in range(right - 1, left - 1, -1)]
        if left < right:
            order += [r * g.cols + left for r in range(bottom - 1, top, -1)]
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    for tile, square in enumerate(order[:-1], start=1):
        squares[square] = tile
    return tuple(squares)


# ------------------------------------------------------------ parse / format


def tokenize(text: str) -> list[str]:
    """Split board text into tokens. A single compact 3x3 word (``123x46758``)
    becomes nine tokens; row separators ``/`` and commas are ignored."""
    words = re.sub(r"[/,|]", " ", text).split()
    if len(words) == 1 and len(words[0]) == 9:
        return list(words[0])
    return words


def parse_board(text: str | Sequence[str], g: Grid | None = None) -> Board:
    """Parse tokens (``x``/``X``/``0``/``_`` for the blank) into a Board.

    ``g`` fixes the size; without it the token count must be n * n (4, 9, 16, 25).
    Raises BoardError naming the offending token and why.
    """
    tokens = tokenize(text) if isinstance(text, str) else list(text)
    if g is None:
        side = round(len(tokens) ** 0.5)
        if side * side != len(tokens) or not MIN_SIDE <= side <= MAX_SIDE:
            raise BoardError(
                f"{len(tokens)} tokens do not make an n x n board of side "
                f"{MIN_SIDE} to {MAX_SIDE}"
            )
        g = grid(side)
    n = g.squares
    if len(tokens) != n:
        raise BoardError(
            f"expected {n} tokens for a {g.label} board, got {len(tokens)}"
        )
    if not any(t in BLANK_TOKENS for t in tokens):
        raise BoardError("no blank: one token must be x, X, 0 or _")
    board: list[int] = []
    seen: dict[int, int] = {}
    for pos, token in enumerate(tokens, start=1):
        if token in BLANK_TOKENS:
            value = 0
        elif token.isascii() and token.isdigit():  # "²".isdigit(), int("²") fails
            value = int(token)
            if not 1 <= value <= n - 1:
                raise BoardError(
                    f"token {pos} {token!r}: tile out of range 1..{n - 1}"
                )
        else:
            raise BoardError(
                f"token {pos} {token!r}: not a tile number or blank (x, X, 0, _)"
            )
        if value in seen:
            what = "blank" if value == 0 else f"tile {value}"
            first = seen[value]
            raise BoardError(
                f"token {pos} {token!r}: duplicate {what} (first at token {first})"
            )
        seen[value] = pos
        board.append(value)
    return tuple(board)


def format_board(board: Board, g: Grid | None = None, *, as_grid: bool = False) -> str:
    """Tokens separated by spaces (blank as ``x``); ``as_grid`` gives aligned rows."""
    tokens = ["x" if v == 0 else str(v) for v in board]
    if not as_grid:
        return " ".join(tokens)
    if g is None:
        g = grid(round(len(board) ** 0.5))
        if g.squares != len(board):  # would silently drop squares of a 2x3 board
            raise ValueError(
                f"{len(board)} squares: pass the grid of a board that is not n x n"
            )
    width = max(map(len, tokens))
    return "\n".join(
        " ".join(t.rjust(width) for t in tokens[r * g.cols : (r + 1) * g.cols])
        for r in range(g.rows)
    )


# ---------------------------------------------------------------- replay


def apply_moves(board: Board, moves: str, g: Grid) -> Board:
    """Play ``moves`` from ``board``; IllegalMoveError at the first bad move."""
    squares = list(board)
    blank = squares.index(0)
    for index, move in enumerate(moves):
        if move not in OPPOSITE:
            raise IllegalMoveError(index, move, "not one of u, d, l, r")
        target = dict(g.neighbours[blank]).get(move)
        if target is None:
            raise IllegalMoveError(index, move, "the blank would leave the board")
        squares[blank], squares[target] = squares[target], 0
        blank = target
    return tuple(squares)


# ---------------------------------------------------------- packed boards


def pack(board: Board, bits: int) -> int:
    """The board as one int, ``bits`` per square (square 0 lowest): a compact,
    deterministic dict key for blind searches."""
    key = 0
    for square, tile in enumerate(board):
        key |= tile << (square * bits)
    return key


def packed_blank(key: int, squares: int, bits: int) -> int:
    """The blank's square in a board packed by :func:`pack`."""
    mask = (1 << bits) - 1
    for square in range(squares):
        if not (key >> (square * bits)) & mask:
            return square
    raise ValueError("packed board without a blank")


def moves_from_blanks(blanks: Sequence[int], g: Grid) -> Moves:
    """The move string that walks the blank through ``blanks`` (adjacent squares)."""
    step_to_move = {-g.cols: "u", g.cols: "d", -1: "l", 1: "r"}
    steps = zip(blanks, blanks[1:], strict=False)
    return "".join(step_to_move[b - a] for a, b in steps)


# ----------------------------------------------------------- solvability


def permutation_parity(perm: Sequence[int]) -> int:
    """0 for an even permutation of 0..n-1, 1 for odd (cycle count, O(n))."""
    seen = [False] * len(perm)
    parity = 0
    for start in range(len(perm)):
        length = 0
        i = start
        while not seen[i]:
            seen[i] = True
            i = perm[i]
            length += 1
        if length:
            parity ^= (length - 1) & 1
    return parity


def is_solvable(start: Board, goal: Board, g: Grid) -> bool:
    """True when ``goal`` is reachable from ``start`` (same tiles, same grid).

    Every move is a transposition with the blank, and moves the blank one square:
    the parity of the permutation taking start to goal must equal the parity of
    the blank's Manhattan displacement. Holds for every rows, cols >= 2.
    """
    where = {tile: square for square, tile in enumerate(goal)}
    # parity of the permutation square in start -> square in goal: of its inversions,
    # counted with a bit mask of the goal squares already seen
    seen = inversions = 0
    for tile in start:
        square = where[tile]
        inversions += (seen >> square).bit_count()
        seen |= 1 << square
    sr, sc = g.row_col(start.index(0))
    gr, gc = g.row_col(goal.index(0))
    return inversions & 1 == (abs(sr - gr) + abs(sc - gc)) & 1


# ----------------------------------------------------------------- ranks


def rank(board: Sequence[int]) -> int:
    """Lexicographic (Lehmer / Cantor) rank of a permutation of 0..n-1, in range(n!)."""
    n = len(board)
    result = 0
    used = 0  # bit mask of values already seen
    for i, v in enumerate(board):
        smaller_unused = v - (used & ((1 << v) - 1)).bit_count()
        result += smaller_unused * factorial(n - 1 - i)
        used |= 1 << v
    return result


def unrank(index: int, n: int) -> Board:
    """Inverse of :func:`rank`: the permutation of 0..n-1 with that rank."""
    if not 0 <= index < factorial(n):
        raise ValueError(f"rank {index} out of range for n={n}")
    pool = list(range(n))
    out = []
    for i in range(n - 1, -1, -1):
        q, index = divmod(index, factorial(i))
        out.append(pool.pop(q))
    return tuple(out)


# ------------------------------------------------------------ judge input


def boards_from_tokens(
    tokens: Iterable[str],
    g: Grid,
    *,
    lines: Sequence[int] | None = None,
    first_board: int = 0,
) -> Iterator[Board]:
    """Group a token stream into boards of ``g``'s size (POJ 1077 style input).

    An incomplete trailing board raises BoardError saying how many tokens are missing.
    ``lines`` gives each token's input line; errors then start with ``line N:``.
    ``first_board``: boards before these tokens (a later part of a long input), so
    an error numbers its board in the whole input.
    """

    def at(index: int) -> str:
        return f"line {lines[index]}: " if lines is not None else ""

    chunk: list[str] = []
    count = first_board
    index = -1
    for index, token in enumerate(tokens):
        chunk.append(token)
        if len(chunk) == g.squares:
            count += 1
            try:
                yield parse_board(chunk, g)
            except BoardError as err:
                bad = re.match(r"token (\d+) ", str(err))
                first = index - g.squares + 1
                where = first + (int(bad.group(1)) - 1 if bad else 0)
                raise BoardError(f"{at(where)}board {count}: {err}") from None
            chunk = []
    if chunk:
        missing = g.squares - len(chunk)
        raise BoardError(
            f"{at(index)}board {count + 1}: incomplete, {len(chunk)} of {g.squares} "
            f"tokens ({missing} missing)"
        )
