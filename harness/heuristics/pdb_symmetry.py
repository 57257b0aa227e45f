"""Which pattern tables of a partition are the same table seen through a symmetry.

A pattern's table depends only on its goal squares and on the region of free squares
holding the goal blank (the blank moves free of cost inside it). A symmetry ``s`` of
the board (a rotation or reflection) carries the pattern's moves onto moves of the
pattern with goal squares ``s(squares)``, so when ``s`` maps group G's squares onto an
already built table's squares and the blank's region onto that table's blank region,
G reads that table: slot j of the table is G's tile homed on ``s^-1(square j)``, at
the square ``s(pos)``. Korf & Felner's 6-6-6-6 partition of the 24-puzzle has three
2x3 corner blocks that are rotations of one another, so four groups need two tables.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.puzzle import Grid


def symmetries(rows: int, cols: int) -> list[tuple[int, ...]]:
    """The board's symmetries as square maps, identity first: the 8 of an n x n board,
    the 4 of a rectangle (identity, both flips, the half turn)."""

    def maps(fs) -> list[tuple[int, ...]]:
        out = []
        for f in fs:
            squares = []
            for x in range(rows * cols):
                r, c = f(*divmod(x, cols))
                squares.append(r * cols + c)
            out.append(tuple(squares))
        return out

    r1, c1 = rows - 1, cols - 1
    if rows != cols:
        return maps([
            lambda r, c: (r, c),
            lambda r, c: (r1 - r, c1 - c),
            lambda r, c: (r, c1 - c),
            lambda r, c: (r1 - r, c),
        ])
    return maps([  # the order partition_squares has always tried them in
        lambda r, c: (r, c),
        lambda r, c: (c, c1 - r),
        lambda r, c: (r1 - r, c1 - c),
        lambda r, c: (c1 - c, r),
        lambda r, c: (c, r),
        lambda r, c: (c1 - c, r1 - r),
        lambda r, c: (r, c1 - c),
        lambda r, c: (r1 - r, c),
    ])


def region(g: Grid, occupied: frozenset[int], square: int) -> frozenset[int]:
    """The free squares connected to ``square`` (itself free) around ``occupied``."""
    seen = {square}
    stack = [square]
    while stack:
        at = stack.pop()
        for _move, nxt in g.neighbours[at]:
            if nxt not in occupied and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return frozenset(seen)


@dataclass(frozen=True, slots=True)
class SharedTable:
    """How one group reads a table: ``table`` indexes the unique tables,
    ``squaremap[square]`` is the board square's image in the table's frame, and
    ``slots[j]`` the group's goal square for table slot j."""

    table: int
    squaremap: tuple[int, ...]
    slots: tuple[int, ...]


def share_tables(
    g: Grid, groups: tuple[tuple[int, ...], ...], blank: int
) -> tuple[list[tuple[int, ...]], list[SharedTable]]:
    """(the goal squares of each table to build, in slot order; how each group reads
    one). A group becomes a table of its own, in its own square order, unless a
    symmetry maps it onto an earlier table with the goal blank's region onto that
    table's, so a partition without such pairs keeps one table per group."""
    maps = symmetries(g.rows, g.cols)
    tables: list[tuple[int, ...]] = []
    blank_regions: list[frozenset[int]] = []
    shared: list[SharedTable] = []
    for squares in groups:
        found = None
        for t, table in enumerate(tables):
            for s in maps:
                image = frozenset(s[c] for c in squares)
                if image != frozenset(table):
                    continue
                if region(g, image, s[blank]) != blank_regions[t]:
                    continue
                inverse = {s[c]: c for c in range(g.squares)}
                found = SharedTable(t, s, tuple(inverse[c] for c in table))
                break
            if found is not None:
                break
        if found is None:
            tables.append(tuple(squares))
            blank_regions.append(region(g, frozenset(squares), blank))
            found = SharedTable(len(tables) - 1, maps[0], tuple(squares))
        shared.append(found)
    return tables, shared
