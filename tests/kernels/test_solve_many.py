"""Batch entry points (``solve_many``) give exactly what ``solve`` gives board by
board -- answers and counters -- and ``harness solve`` prints the same lines and
the same one-line errors whether it solves a batch in groups or board by board
(``--stats``)."""

from __future__ import annotations

import random

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.core.batch import board_array, solvable_for
from harness.heuristics import make_heuristic
from harness.puzzle import apply_moves, goal_board, grid
from harness.solver import Counters, all_solvers

runner = CliRunner()


def random_boards(g, count, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        squares = list(range(g.squares))
        rng.shuffle(squares)
        out.append(tuple(squares))
    return out


def walked(goal, g, count, steps, seed):
    """Solvable boards ``steps`` random moves from the goal (for 4x4)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        board = goal
        for _ in range(steps):
            _, board = rng.choice(list(g.successors(board)))
        out.append(board)
    return out


def one_by_one(spec, boards, goal, g, h):
    answers, counts = [], []
    for board in boards:
        counters = Counters()
        answers.append(spec.solve(board, goal, g, counters=counters, heuristic=h))
        counts.append(list(counters.as_dict().values()))
    return answers, counts


def assert_same(spec, boards, goal, g, h=None) -> None:
    answers, counts = spec.solve_many(board_array(boards, g), goal, g, heuristic=h)
    expected, expected_counts = one_by_one(spec, boards, goal, g, h)
    assert list(answers) == expected
    assert counts.tolist() == expected_counts
    assert None in expected or g.squares > 9  # unsolvable boards were in the batch


@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 2), (3, 3)])
@pytest.mark.parametrize("goal_name", ["standard", "spiral", "blank-first"])
def test_table_many_equals_table(shape, goal_name) -> None:
    g = grid(*shape)
    try:
        goal = goal_board(goal_name, g)
    except ValueError:
        pytest.skip(f"no {goal_name} goal on {g.label}")
    spec = all_solvers()["table"]
    spec.prepare(g, goal, None)
    assert_same(spec, [goal, *random_boards(g, 300, len(goal_name))], goal, g)


@pytest.mark.parametrize(
    "heuristic", ["pdb44", "walking_distance", "manhattan", "linear_conflict"]
)
def test_ida_star_jit_many_equals_ida_star_jit(heuristic) -> None:
    spec = all_solvers()["ida_star_jit"]
    g = grid(3)
    for goal_name in ("standard", "spiral"):
        goal = goal_board(goal_name, g)
        h = make_heuristic(heuristic, goal, g)
        spec.prepare(g, goal, h)
        assert_same(spec, [goal, *random_boards(g, 60, 1)], goal, g, h)
    if heuristic != "pdb44":
        for shape, boards in (((2, 3), 40), ((3, 4), 8)):
            g = grid(*shape)
            goal = goal_board("standard", g)
            h = make_heuristic(heuristic, goal, g)
            some = walked(goal, g, boards, 24, 2) + random_boards(g, 10, 3)
            assert_same(spec, some, goal, g, h)


def test_walking_distance_ids_of_a_batch_equal_ids() -> None:
    from harness.heuristics.walking_distance import walking_distance

    for shape in ((3, 3), (2, 3), (3, 4), (4, 4)):
        g = grid(*shape)
        for goal_name in ("standard", "spiral") if shape == (3, 3) else ("standard",):
            try:
                goal = goal_board(goal_name, g)
            except ValueError:
                continue
            wd = walking_distance(goal, g)
            boards = [goal, *random_boards(g, 200, 7)]
            rows, cols = wd.ids_many(board_array(boards, g))
            assert list(zip(rows.tolist(), cols.tolist())) == [wd.ids(b) for b in boards]


def test_ida_star_jit_many_with_start_args_board_by_board(monkeypatch) -> None:
    """A kernel whose start arguments come one board at a time (no
    ``start_args_many``) gives the same batch."""
    import dataclasses

    import solvers.ida_star_jit as module

    spec = all_solvers()["ida_star_jit"]
    g = grid(3)
    goal = goal_board("standard", g)
    h = make_heuristic("walking_distance", goal, g)
    spec.prepare(g, goal, h)
    kernel = module._kernel(goal, g, h)
    assert kernel.start_args_many is not None
    monkeypatch.setattr(
        module, "_kernel",
        lambda *a: dataclasses.replace(kernel, start_args_many=None),
    )  # fmt: skip
    assert_same(spec, [goal, *random_boards(g, 40, 8)], goal, g, h)


def test_ida_star_jit_many_without_a_batch_kernel_or_past_its_width(
    monkeypatch,
) -> None:
    """A kernel with no ``*_many`` driver (a plugin's) is called board by board;
    a path longer than the batch keeps is solved again on its own."""
    import solvers.ida_star_jit as module
    from harness import kernels

    spec = all_solvers()["ida_star_jit"]
    g = grid(3)
    goal = goal_board("standard", g)
    h = make_heuristic("manhattan", goal, g)
    spec.prepare(g, goal, h)
    boards = [goal, *random_boards(g, 30, 4)]
    monkeypatch.setattr(module, "_width", lambda g: 12)
    assert_same(spec, boards, goal, g, h)
    monkeypatch.delattr(kernels, "ida_additive_many")
    assert_same(spec, boards, goal, g, h)


# --------------------------------------------------------------- harness solve


def text_of(boards) -> str:
    return "".join(
        " ".join("x" if t == 0 else str(t) for t in b) + "\n" for b in boards
    )


BOARDS = random_boards(grid(3), 300, 9)  # > MIN_BATCH: groups of up to 256 here


@pytest.mark.parametrize("solver", ["table", "ida_star_jit[pdb44]", "table-single"])
def test_solve_prints_the_same_lines_in_groups_and_board_by_board(
    solver, monkeypatch
) -> None:
    """``table-single``: table without its batch entry point (a solver with only
    ``solve``, called per board and judged in groups)."""
    if solver == "table-single":
        import dataclasses

        from harness import solver as registry

        solver = "table"
        spec = registry.all_solvers()[solver]
        monkeypatch.setitem(
            registry._REGISTRY, solver, dataclasses.replace(spec, solve_many=None)
        )
    text = text_of(BOARDS)
    grouped = runner.invoke(app, ["solve", "--solver", solver], input=text)
    single = runner.invoke(app, ["solve", "--solver", solver, "--stats"], input=text)
    assert grouped.exit_code == 0 and single.exit_code == 0, grouped.output
    assert grouped.stdout == single.stdout
    lines = grouped.stdout.splitlines()
    assert len(lines) == len(BOARDS) and "unsolvable" in lines
    goal = goal_board("standard", grid(3))
    for board, line in zip(BOARDS, lines):
        if line != "unsolvable":
            assert apply_moves(board, line, grid(3)) == goal


def test_a_batch_entry_point_that_raises_warns_once_and_goes_board_by_board(
    monkeypatch,
) -> None:
    """A solver whose ``solve_many`` raises still answers every board (board by
    board, ``solve``), but not silently: one warning line names the solver and the
    error, for the whole batch, not per group."""
    import dataclasses

    from harness import solver as registry

    calls = []

    def broken(boards, goal, g, *, heuristic=None):
        calls.append(len(boards))
        if len(boards) > 1:  # the set-up call on the goal alone passes
            raise ValueError("kernel out of bounds")
        return spec.solve_many(boards, goal, g, heuristic=heuristic)

    spec = registry.all_solvers()["table"]
    monkeypatch.setitem(
        registry._REGISTRY, "table", dataclasses.replace(spec, solve_many=broken)
    )
    text = text_of(BOARDS)
    result = runner.invoke(app, ["solve", "--solver", "table"], input=text)
    assert result.exit_code == 0, result.output
    expected = runner.invoke(
        app, ["solve", "--solver", "table", "--stats"], input=text
    )
    assert result.stdout == expected.stdout
    warnings = [w for w in result.stderr.splitlines() if w.startswith("warning:")]
    assert warnings == [
        "warning: table: its batch entry point (solve_many) raised ValueError: "
        "kernel out of bounds; solving board by board instead"
    ]
    assert len(calls) == 2  # the set-up call, then one group: never again


PLUGIN = '''
from harness.solver import Counters, register
from solvers.table import solve as table

BAD = {BAD}

@register("wrong_at", optimal=True)
def wrong_at(start, goal, grid, *, counters, heuristic=None):
    moves = table(start, goal, grid, counters=Counters())
    if start == BAD:
        return {ANSWER}
    return moves
'''


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ('"uu" + (moves or "")', "illegal path: move 1"),
        ("moves + 'u'", "ends at"),
        ("None", "said unsolvable, but the board is solvable"),
        ("1 / 0", "wrong_at failed: ZeroDivisionError: division by zero"),
        ("b'ul'", "returned bytes, not a move string"),
    ],
)
def test_a_wrong_answer_deep_in_a_batch_is_the_same_one_line_error(
    tmp_path, answer, message
) -> None:
    """A board past the 200th of 300 is answered wrong: the answers before it are
    printed, then one error line naming it, in groups as board by board."""
    g = grid(3)
    solvable = solvable_for(goal_board("standard", g), g)
    number = next(  # a solvable board with the blank in the top row
        i + 1 for i in range(199, 300) if solvable(BOARDS[i]) and BOARDS[i].index(0) < 3
    )
    bad = BOARDS[number - 1]
    plugin = tmp_path / "wrong_at.py"
    plugin.write_text(PLUGIN.replace("{BAD}", repr(bad)).replace("{ANSWER}", answer))
    text = text_of(BOARDS)
    outputs = []
    for extra in ([], ["--stats"]):
        result = runner.invoke(
            app, ["solve", "--plugin", str(plugin), "--solver", "wrong_at", *extra],
            input=text,
        )  # fmt: skip
        assert result.exit_code == 1
        errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
        assert len(errors) == 1 and errors[0].startswith(f"error: board {number}: ")
        assert message in errors[0], errors[0]
        assert "Traceback" not in result.output
        outputs.append((result.stdout, errors[0]))
    assert outputs[0] == outputs[1]
    assert outputs[0][0].count("\n") == number - 1


def test_bad_input_deep_in_a_batch_names_line_and_token() -> None:
    lines = text_of(BOARDS).splitlines()
    lines[250] = lines[250].replace("5", "five")
    result = runner.invoke(app, ["solve", "--solver", "table"], input="\n".join(lines))
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: stdin") and "line 251" in line and "'five'" in line
