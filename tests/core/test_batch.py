"""The fast paths of ``harness solve`` (``harness.core.batch``) agree with the precise ones:
reading a batch with ``read_boards``' slow path, replay with ``apply_moves``
(messages included), ``solvable_for`` with ``is_solvable`` on every 3x3 board."""

from __future__ import annotations

import itertools
import random

import pytest

from harness.core.batch import read_batch, replay, solvable_for
from harness.puzzle import (
    IllegalMoveError,
    apply_moves,
    boards_from_tokens,
    goal_board,
    grid,
    is_solvable,
)

G3 = grid(3)


def slow_read(text, g):
    """The precise reader harness solve falls back on."""
    from harness.cli.board_input import split_tokens as _tokens

    tokens = _tokens(text, g)
    return list(boards_from_tokens([t for t, _ in tokens], g))


def test_plain_batches_read_like_the_precise_reader() -> None:
    rng = random.Random(3)
    lines = []
    for _ in range(300):
        squares = list(range(9))
        rng.shuffle(squares)
        blank = rng.choice(["x", "X", "0", "_"])
        lines.append(" ".join(blank if t == 0 else str(t) for t in squares))
    text = "\n".join(lines) + "\n"
    assert read_batch(text, G3) == slow_read(text, G3)
    four = grid(4)
    text4 = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3\n" * 3
    assert read_batch(text4, four) == slow_read(text4, four)


@pytest.mark.parametrize(
    "text",
    [
        "123x46758",  # compact word
        "1 2 3 / x 4 6 / 7 5 8",  # row separators
        "1 2 3 x 4 6 7 5",  # incomplete
        "1 2 3 x 4 6 7 5 5",  # duplicate
        "1 2 3 x 4 6 7 5 9",  # out of range
        "1 2 3 x 4 6 7 5 eight",
        "",
    ],
)
def test_anything_unusual_goes_to_the_precise_reader(text) -> None:
    assert read_batch(text, G3) is None


def test_replay_equals_apply_moves_messages_included() -> None:
    rng = random.Random(7)
    for g in (G3, grid(4), grid(2, 3), grid(5)):
        for _ in range(300):
            squares = list(range(g.squares))
            rng.shuffle(squares)
            board = tuple(squares)
            moves = "".join(rng.choice("udlr" + "udlr" * 3 + "xé") for _ in range(12))
            try:
                expected = apply_moves(board, moves, g)
            except IllegalMoveError as err:
                with pytest.raises(IllegalMoveError) as got:
                    replay(board, moves, g)
                assert str(got.value) == str(err)
            else:
                assert replay(board, moves, g) == expected


@pytest.mark.parametrize("goal_name", ["standard", "spiral", "blank-first"])
def test_solvability_equals_the_oracle_on_every_3x3_board(goal_name) -> None:
    """Both parity tests against the exhaustive BFS: reachable <=> distance >= 0."""
    from harness.core import oracle
    from harness.puzzle import rank

    goal = goal_board(goal_name, G3)
    dist = oracle.distances(goal, G3).tolist()
    solvable = solvable_for(goal, G3)
    for board in itertools.permutations(range(9)):
        reachable = dist[rank(board)] >= 0
        assert solvable(board) == reachable
        assert is_solvable(board, goal, G3) == reachable


def by_cycles(board, goal, g) -> bool:
    """The textbook test: permutation parity by cycles, blank displacement."""
    from harness.puzzle import permutation_parity

    where = {tile: square for square, tile in enumerate(goal)}
    sr, sc = divmod(board.index(0), g.cols)
    gr, gc = divmod(goal.index(0), g.cols)
    perm = [where[t] for t in board]
    return permutation_parity(perm) == (abs(sr - gr) + abs(sc - gc)) & 1


def test_solvable_for_on_other_sizes() -> None:
    rng = random.Random(11)
    for g in (grid(2), grid(2, 3), grid(3, 2), grid(4), grid(3, 5), grid(5)):
        for goal_name in ("standard", "blank-first"):
            goal = goal_board(goal_name, g)
            solvable = solvable_for(goal, g)
            for _ in range(500):
                squares = list(range(g.squares))
                rng.shuffle(squares)
                board = tuple(squares)
                assert solvable(board) == by_cycles(board, goal, g)
                assert is_solvable(board, goal, g) == by_cycles(board, goal, g)


# ------------------------------------------------------------- whole batches


def random_boards(g, count, rng):
    out = []
    for _ in range(count):
        squares = list(range(g.squares))
        rng.shuffle(squares)
        out.append(tuple(squares))
    return out


def odd_answers(boards, goal, g, rng):
    """Per board: a shortest path (the table's, up to 9 squares), None, a random string of
    moves (often illegal or ending elsewhere), an unknown letter, a NUL byte,
    a non-ASCII letter, "", or something that is not a string."""
    from harness.solver import Counters
    from solvers.table import solve as table

    answers = []
    for board in boards:
        kind = rng.randrange(10)
        if kind < 4 and g.squares <= 9:
            answers.append(table(board, goal, g, counters=Counters()))
        elif kind < 6:
            answers.append(None)
        elif kind == 6:
            answers.append("".join(rng.choice("udlr") for _ in range(rng.randrange(9))))
        elif kind == 7:
            answers.append(rng.choice(["uldx", "ud\x00l", "ué", "", "r"]))
        elif kind == 8:
            answers.append(rng.choice([17, b"ul", ["u"]]))
        else:
            answers.append("".join(rng.choice("udlr") for _ in range(rng.randrange(30))))
    return answers


@pytest.mark.parametrize("shape", [(3, 3), (2, 3), (3, 2), (4, 4), (5, 5)])
def test_batched_replay_and_solvability_equal_the_board_by_board_ones(shape) -> None:
    from harness.core.batch import board_array, replay_many, solvable_many

    g = grid(*shape)
    rng = random.Random(sum(shape))
    for goal_name in ("standard", "blank-first"):
        goal = goal_board(goal_name, g)
        boards = [goal, *random_boards(g, 400, rng)]
        answers = odd_answers(boards, goal, g, rng)
        arrays = board_array(boards, g)
        assert arrays.tolist() == [list(b) for b in boards]
        solvable = solvable_for(goal, g)
        assert solvable_many(arrays, goal, g).tolist() == [solvable(b) for b in boards]
        ends, clean, lengths = replay_many(arrays, answers, g)
        for i, (board, moves) in enumerate(zip(boards, answers)):
            if not isinstance(moves, str):
                assert not clean[i] and lengths[i] == 0
                continue
            assert lengths[i] == len(moves)
            try:
                end = replay(board, moves, g)
            except IllegalMoveError:
                assert not clean[i], (board, moves)
            else:
                assert clean[i] and tuple(ends[i]) == end, (board, moves)


def test_judge_many_equals_judge_verdicts_and_messages_included() -> None:
    from harness.core.judge import judge, judge_many
    from harness.solver import Counters
    from solvers.table import solve as table

    rng = random.Random(5)
    for g in (G3, grid(2, 3), grid(4)):
        goal = goal_board("standard", g)
        boards = [goal, *random_boards(g, 300, rng)]
        answers = odd_answers(boards, goal, g, rng)
        if g.squares <= 9:  # correct answers, and correct ones made wrong
            for i in range(0, len(boards), 3):
                answers[i] = table(boards[i], goal, g, counters=Counters())
            for i in range(1, len(boards), 7):
                path = table(boards[i], goal, g, counters=Counters())
                answers[i] = path[:-1] if path else path
        answers[0] = ""  # the goal itself: solved in no move
        solvable = solvable_for(goal, g)
        expected = [
            judge(a, b, goal, g, solvable=solvable(b)) for a, b in zip(answers, boards)
        ]
        assert judge_many(answers, boards, goal, g) == expected
        kinds = {v.status for v in expected}
        assert kinds == {"solved", "unsolvable", "invalid"}, kinds


@pytest.mark.parametrize(
    "tail",
    [
        "",  # plain: read by characters
        "1 2 3 x 4 6 7 5 8\u00a0",  # a no-break space: whitespace to str.split()
        "1\t2 3\x0bx 4 6\x0c7 5 8\r\n",
        "123x46758",  # compact word
        "1 2 3 / x 4 6 / 7 5 8",  # row separators
        "1 2 3 x 4 6 7 5 5",  # duplicate
        "1 2 3 x 4 6 7 5 10",  # a two-character token
        "1 2 3 x 4 6 7 5 é",
        "1 2 3 x 4 6 7 5",  # incomplete
    ],
)
def test_long_batches_read_like_the_precise_reader(tail) -> None:
    """Long inputs are read character by character; whatever that reader does not
    take goes on to the token reader, and the boards never differ."""
    from harness.puzzle import BoardError

    rng = random.Random(len(tail))
    lines = [
        " ".join("x" if t == 0 else str(t) for t in board)
        for board in random_boards(G3, 300, rng)
    ]
    text = "\n".join([*lines, tail]) + "\n"
    got = read_batch(text, G3)
    try:
        expected = slow_read(text, G3)
    except BoardError:
        assert got is None
    else:
        assert got is None or got == expected
        if not tail:
            assert got == expected
