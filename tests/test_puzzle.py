"""The puzzle core: parsing and formatting, goals, moves, solvability, ranks.

Property tests (hypothesis) over every board size 2x2 .. 5x5, rectangular too;
solvability is checked against exhaustive reachability on 2x2, 2x3, 3x2 (a BFS
here) and 3x3 (the oracle's BFS) for several goals.
"""

from __future__ import annotations

import random
from collections import deque
from importlib.resources import files
from math import factorial

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.puzzle import (
    MOVE_ORDER,
    OPPOSITE,
    Board,
    BoardError,
    Grid,
    IllegalMoveError,
    apply_moves,
    boards_from_tokens,
    format_board,
    goal_board,
    goal_name,
    grid,
    is_solvable,
    parse_board,
    parse_size,
    rank,
    unrank,
)

SHAPES = [(2, 2), (2, 3), (3, 2), (3, 3), (2, 4), (3, 4), (4, 4), (4, 5), (5, 5)]


@st.composite
def grids(draw) -> Grid:
    return grid(*draw(st.sampled_from(SHAPES)))


@st.composite
def grid_and_board(draw) -> tuple[Grid, Board]:
    g = draw(grids())
    return g, tuple(draw(st.permutations(range(g.squares))))


# ------------------------------------------------------------ parse / format


@given(grid_and_board())
def test_format_then_parse_round_trips(gb) -> None:
    g, board = gb
    assert parse_board(format_board(board), g) == board
    assert parse_board(format_board(board, g, as_grid=True), g) == board


@given(grid_and_board(), st.sampled_from(["x", "X", "0", "_"]), st.randoms())
def test_blank_spellings_and_any_whitespace(gb, blank: str, rnd) -> None:
    g, board = gb
    tokens = [blank if t == 0 else str(t) for t in board]
    text = "".join(tok + rnd.choice([" ", "\n", "\t", "  \n "]) for tok in tokens)
    assert parse_board(text, g) == board


@given(st.permutations(range(9)))
def test_compact_3x3_words(board) -> None:
    board = tuple(board)
    word = "".join("x" if t == 0 else str(t) for t in board)
    assert parse_board(word) == board  # 123x46758 style
    assert parse_board(word.replace("x", "0")) == board  # 123804765 style


def test_seed_inputs() -> None:
    g = grid(3)
    expected = (2, 3, 4, 1, 5, 0, 7, 6, 8)
    assert parse_board("2 3 4 1 5 x 7 6 8", g) == expected
    assert parse_board("2 3 4\n1 5 x\n7 6 8\n", g) == expected
    assert parse_board("2 3 4 / 1 5 x / 7 6 8") == expected
    assert parse_board("23415x768") == expected
    assert format_board(expected) == "2 3 4 1 5 x 7 6 8"
    assert format_board(expected, g, as_grid=True) == "2 3 4\n1 5 x\n7 6 8"


@given(grid_and_board())
def test_grid_format_has_the_grid_shape(gb) -> None:
    g, board = gb
    lines = format_board(board, g, as_grid=True).splitlines()
    assert len(lines) == g.rows
    assert all(len(line.split()) == g.cols for line in lines)


@given(grids(), st.lists(st.text(min_size=1, max_size=3), min_size=1, max_size=30))
def test_any_tokens_parse_or_raise_board_error(g: Grid, tokens: list[str]) -> None:
    """Garbage never escapes as another exception (a traceback at the CLI)."""
    try:
        board = parse_board(tokens, g)
    except BoardError as err:
        assert str(err)
    else:
        assert sorted(board) == list(range(g.squares))


BAD_INPUTS = [
    ("1 2 3", "expected 9 tokens for a 3x3 board, got 3"),
    ("1 2 3 4 5 6 7 8 x 1", "got 10"),
    ("1 1 3 4 5 6 7 8 x", "token 2 '1': duplicate tile 1 (first at token 1)"),
    ("x 2 3 4 5 6 7 8 0", "token 9 '0': duplicate blank"),
    ("1 2 3 4 5 6 7 8 9", "no blank"),
    ("1 2 3 4 5 6 7 9 x", "token 8 '9': tile out of range 1..8"),
    ("1 2 3 4 5 6 7 a x", "token 8 'a': not a tile number or blank"),
    ("1 2 3 4 5 6 7 -8 x", "token 8 '-8': not a tile number or blank"),
    ("1 2 3 4 5 6 7 ² x", "token 8 '²': not a tile number or blank"),
]


@pytest.mark.parametrize(("text", "message"), BAD_INPUTS)
def test_bad_boards_are_rejected_with_their_reason(text: str, message: str) -> None:
    with pytest.raises(BoardError) as info:
        parse_board(text, grid(3))
    assert message in str(info.value)


def test_each_kind_of_bad_input_has_its_own_message() -> None:
    reasons = set()
    for text, _ in BAD_INPUTS:
        with pytest.raises(BoardError) as info:
            parse_board(text, grid(3))
        reasons.add(str(info.value).split(": ")[-1].split(" (")[0].split(",")[0])
    assert len(reasons) >= 6  # count, duplicate tile/blank, blank, range, symbol


def test_bad_goals_and_sizes() -> None:
    g3 = grid(3)
    with pytest.raises(BoardError, match="goal '1 2 3 x'.*expected 9 tokens"):
        goal_board("1 2 3 x", g3)  # a 2x2 goal for a 3x3 board
    with pytest.raises(BoardError, match="not one of standard, spiral, blank-first"):
        goal_board("diagonal", g3)
    for text in ("3y3", "", "x3"):
        with pytest.raises(BoardError, match="expected ROWSxCOLS"):
            parse_size(text)
    for text in ("1x3", "6x6", "3x9"):
        with pytest.raises(BoardError, match="each side must be 2 to 5"):
            parse_size(text)
    assert parse_size("4") == grid(4) and parse_size("2x3") == grid(2, 3)


def test_token_stream_grouping() -> None:
    g = grid(3)
    tokens = "2 3 4 1 5 x 7 6 8 1 2 3 4 5 6 7 8 x".split()
    assert len(list(boards_from_tokens(tokens, g))) == 2
    with pytest.raises(
        BoardError, match=r"board 2: incomplete, 4 of 9 tokens \(5 missing\)"
    ):
        list(boards_from_tokens(tokens[:13], g))
    with pytest.raises(BoardError, match="board 2: token 1 '9'"):
        list(boards_from_tokens(tokens[:9] + ["9"] + tokens[10:], g))


# ------------------------------------------------------------------- goals


def test_named_goals() -> None:
    g3, g4 = grid(3), grid(4)
    assert goal_board("standard", g3) == parse_board("1 2 3 4 5 6 7 8 x", g3)
    assert goal_board("spiral", g3) == parse_board("1 2 3 8 x 4 7 6 5", g3)
    assert goal_board("blank-first", g3) == parse_board("x 1 2 3 4 5 6 7 8", g3)
    spiral4 = "1 2 3 4 12 13 14 5 11 x 15 6 10 9 8 7"
    assert goal_board("spiral", g4) == parse_board(spiral4, g4)
    assert goal_board("2 3 4 1 5 x 7 6 8", g3) == (2, 3, 4, 1, 5, 0, 7, 6, 8)


@given(grids(), st.sampled_from(["standard", "spiral", "blank-first"]))
def test_named_goals_are_boards_and_named_back(g: Grid, name: str) -> None:
    goal = goal_board(name, g)
    assert sorted(goal) == list(range(g.squares))
    if g.squares > 4 or name != "spiral":  # 2x2 spiral == 1 2 / x 3, no clash
        assert goal_name(goal, g) == name


# ------------------------------------------------------------------- moves


@given(grid_and_board(), st.lists(st.sampled_from("udlr"), max_size=40), st.randoms())
def test_replay_matches_successors_and_undoes(gb, wanted, rnd) -> None:
    g, board = gb
    walk = []
    current = board
    for _ in wanted:
        options = dict(g.successors(current))
        move = rnd.choice(sorted(options))
        walk.append(move)
        current = options[move]
    moves = "".join(walk)
    assert apply_moves(board, moves, g) == current
    back = "".join(OPPOSITE[m] for m in reversed(moves))
    assert apply_moves(current, back, g) == board


@given(grid_and_board())
def test_successors_are_single_swaps_in_move_order(gb) -> None:
    g, board = gb
    children = list(g.successors(board))
    blank = board.index(0)
    r, c = g.row_col(blank)
    inside = (r > 0) + (r < g.rows - 1) + (c > 0) + (c < g.cols - 1)
    assert len(children) == inside
    assert "".join(m for m, _ in children) == "".join(
        m for m in MOVE_ORDER if m in dict(children)
    )
    for _, child in children:
        assert sum(a != b for a, b in zip(board, child, strict=True)) == 2


@given(grid_and_board(), st.sampled_from("udlr"))
def test_first_illegal_move_is_reported(gb, direction: str) -> None:
    """Walk the blank to the edge, one step too far: the error names that step."""
    g, board = gb
    r, c = g.row_col(board.index(0))
    legal = {"u": r, "d": g.rows - 1 - r, "l": c, "r": g.cols - 1 - c}[direction]
    with pytest.raises(IllegalMoveError) as info:
        apply_moves(board, direction * (legal + 1) + "u", g)
    assert info.value.index == legal and info.value.move == direction
    assert f"move {legal + 1} ('{direction}'): the blank would leave the board" in str(
        info.value
    )
    with pytest.raises(IllegalMoveError, match=r"move 1 \('q'\): not one of"):
        apply_moves(board, "q", g)


# ------------------------------------------------------------- solvability


def _reachable(goal: Board, g: Grid) -> set[Board]:
    seen = {goal}
    queue = deque([goal])
    while queue:
        for _, child in g.successors(queue.popleft()):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return seen


@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 2)])
@pytest.mark.parametrize("goal_spec", ["standard", "spiral", "blank-first", "random"])
def test_solvable_iff_reachable_small(shape, goal_spec: str) -> None:
    g = grid(*shape)
    if goal_spec == "random":
        squares = list(range(g.squares))
        random.Random(str(shape)).shuffle(squares)
        goal = tuple(squares)
    else:
        goal = goal_board(goal_spec, g)
    reachable = _reachable(goal, g)
    assert len(reachable) == factorial(g.squares) // 2
    for i in range(factorial(g.squares)):
        board = unrank(i, g.squares)
        assert is_solvable(board, goal, g) == (board in reachable)


@pytest.mark.slow
@pytest.mark.parametrize("goal_spec", ["standard", "spiral", "blank-first", "random"])
def test_solvable_iff_reachable_3x3(goal_spec: str) -> None:
    from harness.core import oracle

    g = grid(3)
    if goal_spec == "random":
        goal = parse_board("4 8 x 6 1 5 2 7 3", g)
    else:
        goal = goal_board(goal_spec, g)
    dist = oracle.distances(goal, g)
    perms = oracle.all_permutations(9).tolist()
    verdicts = [is_solvable(tuple(p), goal, g) for p in perms]
    assert verdicts == (dist >= 0).tolist()


@given(
    grids().flatmap(
        lambda g: st.tuples(
            st.just(g),
            st.permutations(range(g.squares)),
            st.permutations(range(g.squares)),
        )
    )
)
def test_solvability_is_symmetric_and_flips_with_a_swap(gab) -> None:
    g, start, goal = gab
    start, goal = tuple(start), tuple(goal)
    assert is_solvable(start, goal, g) == is_solvable(goal, start, g)
    tiles = [i for i, t in enumerate(start) if t]
    swapped = list(start)
    swapped[tiles[0]], swapped[tiles[1]] = swapped[tiles[1]], swapped[tiles[0]]
    assert is_solvable(tuple(swapped), goal, g) != is_solvable(start, goal, g)


def test_korf_boards_solvable_for_blank_first_only() -> None:
    g = grid(4)
    text = files("harness").joinpath("data/korf100.tsv").read_text()
    boards = [
        tuple(map(int, line.split("\t")[1].split()))
        for line in text.splitlines()
        if line and not line.startswith("#")
    ]
    assert len(boards) == 100
    assert all(is_solvable(b, goal_board("blank-first", g), g) for b in boards)
    assert not any(is_solvable(b, goal_board("standard", g), g) for b in boards)


# ------------------------------------------------------------------- ranks


@settings(max_examples=300)
@given(
    st.integers(1, 12).flatmap(
        lambda n: st.tuples(st.just(n), st.integers(0, factorial(n) - 1))
    )
)
def test_rank_of_unrank(ni) -> None:
    n, i = ni
    assert rank(unrank(i, n)) == i


@given(st.integers(1, 16).flatmap(lambda n: st.permutations(range(n))))
def test_unrank_of_rank(perm) -> None:
    assert unrank(rank(perm), len(perm)) == tuple(perm)


def test_ranks_are_lexicographic_and_checked() -> None:
    from itertools import permutations

    assert [rank(p) for p in permutations(range(5))] == list(range(120))
    with pytest.raises(ValueError):
        unrank(120, 5)
    with pytest.raises(ValueError):
        unrank(-1, 5)


def test_grid_format_of_a_rectangle_needs_its_grid() -> None:
    board = (1, 2, 3, 4, 5, 0)
    assert format_board(board, grid(2, 3), as_grid=True) == "1 2 3\n4 5 x"
    with pytest.raises(ValueError, match="not n x n"):
        format_board(board, as_grid=True)  # used to print "1 2\n3 4", dropping squares


def test_packed_boards_and_moves_from_blank_squares() -> None:
    from harness.puzzle import moves_from_blanks, pack, packed_blank

    g = grid(3, 4)
    board = goal_board("standard", g)
    moves = "ullurdrdluul"
    squares, boards = [board.index(0)], {board}
    for move in moves:
        board = apply_moves(board, move, g)
        squares.append(board.index(0))
        boards.add(board)
        assert packed_blank(pack(board, 4), g.squares, 4) == board.index(0)
    assert len({pack(b, 4) for b in boards}) == len(boards)  # a key per board
    assert moves_from_blanks(squares, g) == moves
