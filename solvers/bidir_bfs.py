"""Bidirectional breadth-first search: one BFS from the start, one from the goal.

Data structures: boards packed into ints (``bits`` per square, square ``i`` at bit
``i * bits``); per side a ``parent`` dict (every board that side has reached -> the
board it came from) and its current layer as a list. Each step grows the side
whose layer is smaller by one *whole* layer, checking every child against the
other side's parent dict, and stops only after that layer is complete, returning
the shortest meeting found in it.

Why that is optimal: before the step the two searched balls (radius ``df`` and
``db``) were disjoint, so the optimum is at least ``df + db + 1``; a meeting in the
new layer costs ``df + 1 + d`` with ``d <= db``, so every meeting found in that layer
has the optimal length. Stopping node-by-node at the first meeting, or comparing
against only the other frontier mid-layer, is the classic bug this layout avoids;
finishing the layer and keeping the minimum makes the result independent of
that argument anyway.

Optimal: always. Complete: it does not call ``is_solvable``; an unreachable goal
is proved when either side runs out of boards. Both sides then grow in their
own components, so on 3x3 it stores up to ~300,000 boards (measured 297,528
expansions for ``1 2 3 4 5 6 8 7 x``), more than plain BFS's 181,440.

Counters: expanded = boards whose successors were generated (both sides);
generated = successors created (duplicates included); max_frontier = the largest
sum of the two current layers; iterations = layers grown (both sides).
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

#: Above this many boards in the start's component, only known depths are taken.
_EXHAUSTIVE_LIMIT = 2_000_000
#: Deepest known optimum accepted on larger boards: each side goes ~depth/2 deep
#: (4x4: ~3.4M boards per side at 20 moves each).
_MAX_DEPTH_LARGE = 40


def _refuses(g: Grid, depth: int | None, heuristic: str | None) -> str | None:
    """Decline boards whose two balls would not fit in memory or a minute."""
    if factorial(g.squares) // 2 <= _EXHAUSTIVE_LIMIT:
        return None
    if depth is None:
        return (
            f"optimum unknown on {g.label}: proving a board unsolvable would exhaust "
            f"{factorial(g.squares) // 2:,} boards"
        )
    if depth > _MAX_DEPTH_LARGE:
        return (
            f"depth {depth} on {g.label}: each side would store every board within "
            f"{(depth + 1) // 2} moves (takes depth <= {_MAX_DEPTH_LARGE})"
        )
    return None


def _chain(parent: dict[int, int], key: int) -> list[int]:
    """Boards from ``key`` back to that side's root, inclusive."""
    chain = [key]
    while parent[key] != key:
        key = parent[key]
        chain.append(key)
    return chain


def _moves(boards: list[int], g: Grid, bits: int) -> Moves:
    return moves_from_blanks([packed_blank(key, g.squares, bits) for key in boards], g)


@register(
    "bidir_bfs",
    optimal=True,
    refuses=_refuses,
    sizes="any whose component has <= 2M boards (<= 3x3, 2x4); larger: depth <= 40",
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
) -> Moves | None:
    """Bidirectional breadth-first search: one BFS from the start, one from the goal.

    Shortest move string from ``start`` to ``goal``; None when unreachable.
    """
    bits = max(1, (grid.squares - 1).bit_length())
    mask = (1 << bits) - 1
    root, target = pack(start, bits), pack(goal, bits)
    if root == target:
        return ""
    # Per blank square: (shift of the target square, shift of the blank square, target).
    shifts = [
        [(t * bits, b * bits, t) for _, t in grid.neighbours[b]]
        for b in range(grid.squares)
    ]
    # Side 0 searches from the start, side 1 from the goal.
    parents: tuple[dict[int, int], dict[int, int]] = ({root: root}, {target: target})
    layers = [[root], [target]]
    blank_layers = [[start.index(0)], [goal.index(0)]]
    expanded = generated = max_frontier = grown = 0
    meeting = None
    try:
        while layers[0] and layers[1]:
            max_frontier = max(max_frontier, len(layers[0]) + len(layers[1]))
            side = 0 if len(layers[0]) <= len(layers[1]) else 1
            mine, theirs = parents[side], parents[1 - side]
            grown += 1
            best = None  # (length via the other side, meeting board)
            next_layer: list[int] = []
            next_blanks: list[int] = []
            push, push_blank = next_layer.append, next_blanks.append
            for key, blank in zip(layers[side], blank_layers[side], strict=True):
                expanded += 1
                for st, sb, square in shifts[blank]:
                    tile = (key >> st) & mask
                    child = key - (tile << st) + (tile << sb)
                    generated += 1
                    if child in mine:
                        continue
                    mine[child] = key
                    if child in theirs:
                        # Every meeting in this layer has the same length (see the
                        # module docstring); keep the shortest to rely on no proof.
                        length = len(_chain(theirs, child))
                        if best is None or length < best[0]:
                            best = (length, child)
                    push(child)
                    push_blank(square)
            layers[side], blank_layers[side] = next_layer, next_blanks
            if best is not None:
                meeting = best[1]
                break
        if meeting is None:
            return None
        forward = _chain(parents[0], meeting)[::-1]  # start ... meeting
        backward = _chain(parents[1], meeting)[1:]  # after meeting ... goal
        return _moves(forward + backward, grid, bits)
    finally:
        counters.expanded += expanded
        counters.generated += generated
        counters.max_frontier = max(counters.max_frontier, max_frontier)
        counters.iterations += grown
