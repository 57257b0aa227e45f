"""Reading ``harness solve``'s input: boards from text, and standard input in parts.

The input is copied to an anonymous temporary file (:func:`spool_input`) and read
in parts of CHUNK_LINES lines that end where a board ends (:func:`parts`), so
memory stays flat in the input's size. :func:`check_input` reads every part once
before any board is solved; :func:`read_boards` turns a part into boards, naming
line, board and token in its errors. Moved from :mod:`harness.cli.solve`, which
solves and prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import BinaryIO

from harness.cli.common import fail
from harness.core.batch import read_batch
from harness.puzzle import (
    MAX_SIDE,
    MIN_SIDE,
    Board,
    BoardError,
    Grid,
    boards_from_tokens,
)


def split_tokens(text: str, grid: Grid, first_line: int = 1) -> list[tuple[str, int]]:
    """(token, line number) for every token (:func:`harness.puzzle.boards_from_tokens`
    groups them into boards); ``first_line``: the number of the text's first line.
    A word of exactly ``squares`` characters on a board of at most 9 squares is a
    compact board (``123x46758``): one token per character, as no single tile
    token can be that long."""
    out: list[tuple[str, int]] = []
    for line_no, line in enumerate(text.splitlines(), start=first_line):
        for word in re.sub(r"[/,|]", " ", line).split():
            if grid.squares <= 9 and len(word) == grid.squares:
                out.extend((ch, line_no) for ch in word)
            else:
                out.append((word, line_no))
    return out


def token_count(line: str, grid: Grid) -> int:
    """How many tokens :func:`split_tokens` finds on one line."""
    words = re.sub(r"[/,|]", " ", line).split()
    if grid.squares > 9:
        return len(words)
    return sum(grid.squares if len(w) == grid.squares else 1 for w in words)


def read_boards(
    text: str, grid: Grid, first_line: int = 1, first_board: int = 0
) -> list[Board]:
    """Every board in ``text``; BoardError naming line, board and token otherwise
    (numbered from ``first_line`` and after ``first_board`` boards: a part of a
    longer input). Plain input takes the fast batch reader; anything else the
    precise one."""
    boards = read_batch(text, grid)
    if boards is None:
        tokens = split_tokens(text, grid, first_line)
        boards = list(
            boards_from_tokens(
                [t for t, _ in tokens], grid, lines=[n for _, n in tokens],
                first_board=first_board,
            )
        )  # fmt: skip
    return boards


def infer_size(text: str) -> Grid | None:
    """The side N (2 <= N <= 5, not the default 3) when every non-empty line
    of ``text`` holds exactly one NxN board and all of them parse as such; None
    otherwise (3x3 input, several boards per line, rows on their own lines, mixed
    sizes). Decided from the first line, so 3x3 input costs nothing here."""
    from math import isqrt

    from harness.puzzle import grid

    first = next((line for line in text.splitlines() if line.strip()), "")
    count = len(re.sub(r"[/,|]", " ", first).split())
    side = isqrt(count)
    if side * side != count or side == 3 or not MIN_SIDE <= side <= MAX_SIDE:
        return None
    g = grid(side)
    if set(line_counts(text, g).values()) != {g.squares}:
        return None
    try:
        read_boards(text, g)
    except BoardError:
        return None
    return g


def line_counts(text: str, g: Grid, first_line: int = 1) -> dict[int, int]:
    counts: dict[int, int] = {}
    for _, line in split_tokens(text, g, first_line):
        counts[line] = counts.get(line, 0) + 1
    return counts


def size_hint(text: str, g: Grid, first_line: int = 1) -> str | None:
    """``line L has N tokens; a 3x3 board has 9 (use --size KxK)`` for the first
    line holding a whole board of another side, else None."""
    for line, count in line_counts(text, g, first_line).items():
        side = round(count**0.5)
        if count != g.squares and side * side == count and MIN_SIDE <= side <= MAX_SIDE:
            return (
                f"line {line} has {count} tokens; a {g.label} board has {g.squares} "
                f"(use --size {side}x{side})"
            )
    return None


#: Standard input is read in parts of this many lines (more when a board has not
#: ended at the last one), each checked, then solved, on its own.
CHUNK_LINES = 8192
#: A longer line is refused (a board line is at most ~75 bytes; one line holding
#: a whole file's boards would defeat reading in parts).
MAX_LINE_BYTES = 1 << 20


def spool_input(stream) -> tuple[BinaryIO, int]:
    """Standard input copied to an anonymous temporary file (no name: nothing to
    plant or leave behind), rewound: (file, bytes). One-line error on a full disk."""
    import shutil
    import tempfile

    spool = tempfile.TemporaryFile()
    try:
        shutil.copyfileobj(stream, spool, 1 << 20)
    except OSError as err:
        spool.close()
        raise fail(f"stdin: cannot keep the input in a temporary file: "
                   f"{err.strerror or err}") from None  # fmt: skip
    size = spool.tell()
    spool.seek(0)
    return spool, size


def parts(fh: BinaryIO, g: Grid | None) -> Iterator[tuple[str, int]]:
    """(text, number of its first line) of each part of the input: about
    CHUNK_LINES lines, ending where a board ends (with ``g`` None, the first part
    only, for the size to be inferred from). One-line error for a line that is
    not UTF-8 (its byte offset in the input) or longer than MAX_LINE_BYTES."""
    lines: list[str] = []
    first, number, offset, tokens = 1, 0, 0, 0
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            break
        number += 1
        if len(raw) > MAX_LINE_BYTES:
            raise fail(f"stdin: line {number} is longer than {MAX_LINE_BYTES:,} "
                       "bytes (one board per line)")  # fmt: skip
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise fail(f"stdin: not text ({err.reason} at byte "
                       f"{offset + err.start})") from None  # fmt: skip
        offset += len(raw)
        lines.append(line)
        if g is not None:
            tokens += token_count(line, g)
        if len(lines) >= CHUNK_LINES and (g is None or tokens % g.squares == 0):
            yield "".join(lines), first
            first, lines, tokens = number + 1, [], 0
        elif len(lines) >= 16 * CHUNK_LINES:  # no board ends at a line's end
            raise fail(f"stdin: no board ends at the end of a line within lines "
                       f"{first}-{number}; write one board per line")  # fmt: skip
    if lines:
        yield "".join(lines), first


def check_input(spool: BinaryIO, g: Grid, hint: bool, where: str = "stdin") -> int:
    """Read the whole input once, part by part, before any board is solved: how
    many boards it holds; one-line error naming ``where`` it came from, line,
    board and token otherwise (``hint``: say so when a line holds a board of
    another size)."""
    count = 0
    spool.seek(0)
    for text, first in parts(spool, g):
        try:
            count += len(read_boards(text, g, first, count))
        except BoardError as err:
            said = size_hint(text, g, first) if hint else None
            raise fail(f"{where} {said or err}") from None
    spool.seek(0)
    if not count:
        expected = f"{g.squares} tokens per {g.label} board"
        raise fail(f"{where}: no board (expected {expected})")
    return count
