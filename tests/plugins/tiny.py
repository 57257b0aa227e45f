"""Tiny in-memory datasets for runner tests (no dataset files needed)."""

from __future__ import annotations

import hashlib
import random

from harness.datasets import Dataset, Instance
from harness.puzzle import Board, Grid, apply_moves, goal_board, grid, is_solvable


def walk(goal: Board, g: Grid, length: int, seed: int) -> Board:
    """A board ``length`` random blank moves (no immediate undo) from ``goal``."""
    rng = random.Random(seed)
    board, last = goal, ""
    undo = {"u": "d", "d": "u", "l": "r", "r": "l"}
    for _ in range(length):
        moves = [m for m, _ in g.successors(board) if m != undo.get(last)]
        last = rng.choice(moves)
        board = apply_moves(board, last, g)
    return board


def bfs_depth(start: Board, goal: Board, g: Grid) -> int:
    frontier, seen, depth = {start}, {start}, 0
    while goal not in frontier:
        nxt = set()
        for board in frontier:
            for _, child in g.successors(board):
                if child not in seen:
                    seen.add(child)
                    nxt.add(child)
        frontier, depth = nxt, depth + 1
    return depth


def make_dataset(
    name: str,
    boards: list[Board],
    g: Grid | None = None,
    goal: Board | None = None,
    label: bool = True,
) -> Dataset:
    """A Dataset of ``boards``: exact optima by BFS when ``label`` (recorded as
    ``oracle``: the same exhaustive search), None otherwise."""
    g = g or grid(3)
    goal = goal or goal_board("standard", g)
    instances = []
    for i, start in enumerate(boards):
        solvable = is_solvable(start, goal, g)
        optimum = bfs_depth(start, goal, g) if solvable and label else None
        instances.append(
            Instance(
                f"t{i:03d}",
                start,
                goal,
                g,
                solvable,
                optimum,
                "oracle" if optimum is not None else None,
            )
        )
    try:  # the real checksum, so the dataset also saves and loads as a file
        from harness.datasets import make_dataset as assemble

        return assemble(name, g, goal, generator="test", params={}, seed=None,
                        instances=instances)  # fmt: skip
    except ImportError:
        text = "\n".join(f"{inst.id} {inst.start}" for inst in instances)
        return Dataset(
            name=name, grid=g, goal=goal, generator="test", params={}, seed=None,
            instances=tuple(instances),
            checksum=hashlib.sha256(text.encode()).hexdigest(),
        )  # fmt: skip


def tiny(name: str = "tiny", count: int = 3, depth: int = 6, unsolvable: bool = True):
    """``count`` shallow solvable 3x3 boards (walks of up to ``depth``), plus one
    unsolvable board (two tiles swapped) when asked."""
    g = grid(3)
    goal = goal_board("standard", g)
    boards = [walk(goal, g, depth - i % 3, seed=i) for i in range(count)]
    if unsolvable:
        swapped = list(goal)
        swapped[0], swapped[1] = swapped[1], swapped[0]
        boards.append(tuple(swapped))
    return make_dataset(name, boards, g, goal)
