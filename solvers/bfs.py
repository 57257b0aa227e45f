"""Breadth-first search with an open list (layers) and a closed set (parent dict).

Data structures: each board is packed into one int (``bits`` per square, square ``i`` at
bit ``i * bits``), so children are made with two shifts and hashed cheaply. The
open list is the current and next layer (plain lists, plus the blank square of each
board); the closed set is ``parent``: every board ever queued -> the board it was
reached from. The goal is tested when a board is generated, which is still
optimal for unit-cost moves and spares the last layer.

Optimal: always (blind, unit costs). Complete: it does not call ``is_solvable``;
an unreachable goal is proved by exhausting the start's component (181,440 boards
on 3x3), which is the point of keeping it in the benchmark.

Counters: expanded = boards taken off the open list whose successors were
generated; generated = successors created (duplicates included); max_frontier =
the largest layer (the whole open list at a layer boundary); iterations = layers.
"""

from __future__ import annotations

from math import factorial

from harness.heuristics import Heuristic
from harness.puzzle import (
    Board,
    Grid,
    Moves,
    moves_from_blanks,
    pack,
    packed_blank,
)
from harness.solver import Counters, register

#: Above this many boards in the start's component, only shallow boards are taken.
_EXHAUSTIVE_LIMIT = 2_000_000
#: Deepest known optimum accepted on larger boards (4x4: ~3.4M boards within 20).
_MAX_DEPTH_LARGE = 20


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Decline boards whose search would not fit in memory or a minute."""
    if factorial(g.squares) // 2 <= _EXHAUSTIVE_LIMIT:
        return None
    if depth is None:
        return (
            f"optimum unknown on {g.label}: blind BFS may have to exhaust "
            f"{factorial(g.squares) // 2:,} boards"
        )
    if depth > _MAX_DEPTH_LARGE:
        return (
            f"depth {depth} on {g.label}: blind BFS stores every board within "
            f"{depth} moves (takes depth <= {_MAX_DEPTH_LARGE})"
        )
    return None


def _path(parent: dict[int, int], key: int, g: Grid, bits: int) -> Moves:
    """Walk parent links back to the root; the moves are read off the blank's steps."""
    chain = [key]
    while parent[key] != key:
        key = parent[key]
        chain.append(key)
    blanks = [packed_blank(k, g.squares, bits) for k in reversed(chain)]
    return moves_from_blanks(blanks, g)


@register(
    "bfs",
    optimal=True,
    refuses=_refuses,
    sizes="any whose component has <= 2M boards (<= 3x3, 2x4); larger: depth <= 20",
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """Breadth-first search with an open list (layers) and a closed set (parent dict).

    Shortest move string from ``start`` to ``goal``; None when unreachable.
    """
    bits = max(1, (grid.squares - 1).bit_length())
    mask = (1 << bits) - 1
    root, target = pack(start, bits), pack(goal, bits)
    if root == target:
        return ""
    # Per blank square, in MOVE_ORDER: (shift of the target square, of the blank,
    # target).
    shifts = [
        [(t * bits, b * bits, t) for _, t in grid.neighbours[b]]
        for b in range(grid.squares)
    ]
    parent = {root: root}
    layer, blanks = [root], [start.index(0)]
    expanded = generated = max_frontier = layers = 0
    try:
        while layer:
            layers += 1
            max_frontier = max(max_frontier, len(layer))
            next_layer: list[int] = []
            next_blanks: list[int] = []
            push, push_blank = next_layer.append, next_blanks.append
            for key, blank in zip(layer, blanks, strict=True):
                expanded += 1
                for st, sb, square in shifts[blank]:
                    tile = (key >> st) & mask
                    child = key - (tile << st) + (tile << sb)
                    generated += 1
                    if child in parent:
                        continue
                    parent[child] = key
                    if child == target:
                        return _path(parent, child, grid, bits)
                    push(child)
                    push_blank(square)
            layer, blanks = next_layer, next_blanks
        return None
    finally:
        counters.expanded += expanded
        counters.generated += generated
        counters.max_frontier = max(counters.max_frontier, max_frontier)
        counters.iterations += layers
