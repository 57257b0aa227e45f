"""The compiled solvers (ida_star_jit, astar_cantor_jit) and the table walk.

Correctness only; speed is in ``tests/benchmarks/bench_korf.py``. Compiled and pure
solvers must agree exactly (path length and every counter) on 3x3 boards and on
4x4 boards 15 random moves from the goal; IDA* + Manhattan must reproduce Korf's
published node counts; the pattern-database heuristics must solve Korf instances
optimally; numba must stay out of start-up and work without a writable cache.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest

from harness.configs import parse_config
from harness.heuristics import make_heuristic
from harness.puzzle import Board, Grid, apply_moves, goal_board, grid, is_solvable
from harness.solver import Counters, all_solvers

G3, G4 = grid(3), grid(4)
PAIRS = [("ida_star_jit", "ida_star"), ("astar_cantor_jit", "astar_dict")]


def korf(ident: int) -> tuple[Board, int, int]:
    """(board, optimal length, published IDA*+Manhattan generated count)."""
    text = files("harness").joinpath("data/korf100.tsv").read_text()
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            i, tiles, length, nodes = line.split("\t")
            if int(i) == ident:
                return tuple(map(int, tiles.split())), int(length), int(nodes)
    raise KeyError(ident)


_made: dict[tuple, object] = {}


def solve(name: str, heuristic: str | None, start: Board, goal: Board, g: Grid):
    """(moves, counters) after the solver's prepare(), heuristics made once."""
    spec = all_solvers()[name]
    key = (name, heuristic, goal, g)
    h = None
    if heuristic:
        hkey = (heuristic, goal, g)
        if hkey not in _made:
            _made[hkey] = make_heuristic(heuristic, goal, g)
        h = _made[hkey]
    if key not in _made and spec.prepare is not None:
        spec.prepare(g, goal, h)
        _made[key] = True
    counters = Counters()
    return spec.solve(start, goal, g, counters=counters, heuristic=h), counters


def walk(goal: Board, g: Grid, steps: int, rng: random.Random) -> Board:
    board = goal
    for _ in range(steps):
        board = rng.choice(list(g.successors(board)))[1]
    return board


def random_boards(goal: Board, g: Grid, count: int, seed: str) -> list[Board]:
    """Uniform permutations, both parities (unsolvable ones included on purpose)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        squares = list(range(g.squares))
        rng.shuffle(squares)
        out.append(tuple(squares))
    return out


# ------------------------------------------------- compiled == pure, exactly


@pytest.mark.parametrize(("fast", "pure"), PAIRS)
@pytest.mark.parametrize("heuristic", ["manhattan", "linear_conflict", "misplaced"])
@pytest.mark.parametrize("goal_name", ["standard", "spiral", "blank-first"])
def test_compiled_equals_pure_on_3x3(fast, pure, heuristic, goal_name) -> None:
    goal = goal_board(goal_name, G3)
    rng = random.Random(f"{goal_name}-{heuristic}")
    # pure IDA* with misplaced tiles is slow on deep boards: short walks only, and
    # of the uniform boards just the unsolvable ones
    longest = 20 if heuristic == "misplaced" else 40
    boards = [walk(goal, G3, rng.randint(0, longest), rng) for _ in range(6)]
    uniform = random_boards(goal, G3, 4, f"{goal_name}-{heuristic}")
    if heuristic == "misplaced":
        uniform = [b for b in uniform if not is_solvable(b, goal, G3)]
    boards += uniform
    for board in boards:
        fast_moves, fast_counters = solve(fast, heuristic, board, goal, G3)
        pure_moves, pure_counters = solve(pure, heuristic, board, goal, G3)
        assert (fast_moves is None) == (pure_moves is None)
        if fast_moves is not None:
            assert apply_moves(board, fast_moves, G3) == goal
            assert len(fast_moves) == len(pure_moves)
        assert fast_counters == pure_counters, board


@pytest.mark.parametrize("heuristic", ["manhattan", "linear_conflict"])
def test_ida_star_jit_equals_pure_on_4x4_walks(heuristic: str) -> None:
    """15 random moves from both 4x4 goals: same path length, same counters."""
    for goal_name in ("blank-first", "standard"):
        goal = goal_board(goal_name, G4)
        rng = random.Random(f"walk15-{goal_name}")
        for _ in range(5):
            board = walk(goal, G4, 15, rng)
            fast, fast_counters = solve("ida_star_jit", heuristic, board, goal, G4)
            pure, pure_counters = solve("ida_star", heuristic, board, goal, G4)
            assert apply_moves(board, fast, G4) == goal
            assert len(fast) == len(pure) <= 15
            assert fast_counters == pure_counters


def test_astar_cantor_jit_on_other_grids() -> None:
    """2x3 and 3x4 (12! ranks, arrays mapped lazily): equal to astar_dict."""
    for g, steps in ((grid(2, 3), 30), (grid(3, 4), 22)):
        goal = goal_board("standard", g)
        rng = random.Random(g.label)
        for _ in range(3):
            board = walk(goal, g, steps, rng)
            fast = solve("astar_cantor_jit", "manhattan", board, goal, g)
            pure = solve("astar_dict", "manhattan", board, goal, g)
            assert apply_moves(board, fast[0], g) == goal
            assert len(fast[0]) == len(pure[0]) and fast[1] == pure[1]


# ------------------------------------------------------------ Korf's counts


@pytest.mark.parametrize("ident", [79, 12])
def test_ida_star_jit_reproduces_korfs_published_node_counts(ident: int) -> None:
    board, length, published = korf(ident)
    goal = goal_board("blank-first", G4)
    moves, counters = solve("ida_star_jit", "manhattan", board, goal, G4)
    assert apply_moves(board, moves, G4) == goal
    assert len(moves) == length
    assert counters.generated == published
    assert counters.max_frontier == length


@pytest.mark.slow
@pytest.mark.parametrize("ident", [79, 12])
def test_pure_and_compiled_ida_star_agree_on_korf(ident: int) -> None:
    board, _, _ = korf(ident)
    goal = goal_board("blank-first", G4)
    fast = solve("ida_star_jit", "manhattan", board, goal, G4)
    pure = solve("ida_star", "manhattan", board, goal, G4)
    assert fast[0] == pure[0] and fast[1] == pure[1]


# ------------------------------------------------------ pattern databases


@pytest.mark.parametrize("ident", [79, 12, 55, 9, 42])
def test_pdb555_solves_korf_instances_optimally(ident: int) -> None:
    board, length, published = korf(ident)
    goal = goal_board("blank-first", G4)
    moves, counters = solve("ida_star_jit", "pdb555", board, goal, G4)
    assert apply_moves(board, moves, G4) == goal
    assert len(moves) == length
    assert counters.generated < published  # far fewer nodes than Manhattan


@pytest.mark.slow
@pytest.mark.parametrize("ident", [1, 17, 60, 88])
def test_pdb663_solves_hard_korf_instances_optimally(ident: int) -> None:
    """#17 and #60 are the deepest (66 moves); #88 the costliest with Manhattan."""
    board, length, _ = korf(ident)
    goal = goal_board("blank-first", G4)
    moves, _ = solve("ida_star_jit", "pdb663", board, goal, G4)
    assert apply_moves(board, moves, G4) == goal
    assert len(moves) == length


def test_pdb_on_the_standard_goal() -> None:
    """Korf's boards rotated 180 degrees and relabelled t -> 16 - t face the
    standard goal with the same optimum (korf100.tsv header)."""
    goal = goal_board("standard", G4)
    for ident in (79, 12):
        board, length, _ = korf(ident)
        turned = tuple(0 if t == 0 else 16 - t for t in reversed(board))
        moves, _ = solve("ida_star_jit", "pdb555", turned, goal, G4)
        assert apply_moves(turned, moves, G4) == goal and len(moves) == length


def test_pdb44_agrees_with_pure_ida_star_on_3x3() -> None:
    """The pure solver evaluates the PDB through Heuristic.estimate, the kernel
    through its own indexing: equal counters mean equal h on every node."""
    goal = goal_board("standard", G3)
    h = make_heuristic("pdb44", goal, G3)
    rng = random.Random("pdb44")
    from solvers import ida_star

    for _ in range(5):
        board = walk(goal, G3, 40, rng)
        fast = solve("ida_star_jit", "pdb44", board, goal, G3)
        pure_counters = Counters()
        pure = ida_star.solve(board, goal, G3, counters=pure_counters, heuristic=h)
        assert len(fast[0]) == len(pure) and fast[1] == pure_counters


# ------------------------------------------------- the one-board entry


@pytest.mark.parametrize(
    "heuristic", ["manhattan", "misplaced", "linear_conflict", "walking_distance",
                  "pdb44"],
)  # fmt: skip
def test_one_board_entry_equals_the_general_path(heuristic: str) -> None:
    """``solve`` goes through the kernel's one-board entry (solvability tested in
    compiled code, the arguments bound once); ``_solve_general`` is the plain
    path. Same moves and counters on solvable and unsolvable boards, on grids
    whose blank parity depends on the width, toward other goals."""
    from solvers import ida_star_jit

    cases = [(G3, "standard"), (G3, "spiral"), (G3, "blank-first")]
    if heuristic != "pdb44":  # pdb44 is built for 3x3 only
        cases += [(grid(2, 3), "standard"), (grid(3, 2), "spiral"),
                  (grid(2, 4), "standard")]  # fmt: skip
    for g, goal_name in cases:
        goal = goal_board(goal_name, g)
        h = make_heuristic(heuristic, goal, g)
        rng = random.Random(f"one-{heuristic}-{g.label}-{goal_name}")
        deepest = 14 if heuristic == "misplaced" else 40
        boards = [walk(goal, g, rng.randint(0, deepest), rng) for _ in range(4)]
        boards += [goal] + [
            b for b in random_boards(goal, g, 6, f"one-{g.label}")
            if heuristic != "misplaced" or not is_solvable(b, goal, g)
        ]  # fmt: skip
        assert ida_star_jit._fast(goal, g, h) is not None  # the entry is taken
        for board in boards:
            one, plain = Counters(), Counters()
            moves = ida_star_jit.solve(board, goal, g, counters=one, heuristic=h)
            assert moves == ida_star_jit._solve_general(board, goal, g, h, plain)
            assert one == plain, (board, goal)
            assert (moves is None) == (not is_solvable(board, goal, g))


def test_one_board_entry_adds_to_the_counters_and_passes_odd_starts_on() -> None:
    """Counters are added to, as the general path does; a start that is not a
    tuple of the goal's tiles gets the general path's answer or error."""
    from solvers import ida_star_jit

    goal = goal_board("standard", G3)
    h = make_heuristic("manhattan", goal, G3)
    board = walk(goal, G3, 30, random.Random("odd"))
    once, twice = Counters(), Counters()
    ida_star_jit.solve(board, goal, G3, counters=once, heuristic=h)
    for _ in range(2):
        ida_star_jit.solve(board, goal, G3, counters=twice, heuristic=h)
    assert twice.expanded == 2 * once.expanded > 0
    assert twice.max_frontier == once.max_frontier
    as_list = ida_star_jit.solve(list(board), goal, G3, counters=once, heuristic=h)
    assert as_list == ida_star_jit.solve(board, goal, G3, counters=once, heuristic=h)
    for bad in ((9, *board[1:]), (-1, *board[1:])):
        with pytest.raises(KeyError):  # what is_solvable says of an unknown tile
            ida_star_jit.solve(bad, goal, G3, counters=Counters(), heuristic=h)
    with pytest.raises(KeyError):
        ida_star_jit._solve_general((9, *board[1:]), goal, G3, h, Counters())


# ------------------------------------------------------------ table walk


def test_table_walk_is_exact_for_any_goal() -> None:
    from harness.core.oracle import distance

    for goal_name in ("standard", "spiral", "blank-first"):
        goal = goal_board(goal_name, G3)
        for board in random_boards(goal, G3, 200, f"table-{goal_name}"):
            moves, counters = solve("table", None, board, goal, G3)
            exact = distance(board, goal, G3)
            if exact is None:
                assert moves is None
            else:
                assert apply_moves(board, moves, G3) == goal
                assert len(moves) == exact == counters.expanded


def test_table_walk_on_small_grids_and_goal_itself() -> None:
    for g in (grid(2, 2), grid(2, 3), grid(3, 2)):
        goal = goal_board("standard", g)
        assert solve("table", None, goal, goal, g)[0] == ""
        board = walk(goal, g, 25, random.Random(g.label))
        moves = solve("table", None, board, goal, g)[0]
        assert apply_moves(board, moves, g) == goal


# ------------------------------------------------------------ registry


def test_refusals() -> None:
    specs = all_solvers()
    assert specs["astar_cantor_jit"].refuses(G4, 40, "manhattan")
    assert specs["astar_cantor_jit"].refuses(G3, 31, "manhattan") is None
    assert specs["table"].refuses(G4, None, None)
    assert specs["ida_star_jit"].refuses(G3, 20, "pdb663")
    assert specs["ida_star_jit"].refuses(G4, 60, "pdb663") is None
    assert specs["ida_star_jit"].refuses(G4, 66, "manhattan")
    assert parse_config("ida_star_jit[pdb663]").heuristic == "pdb663"


def test_prepare_without_a_heuristic_and_solve_without_prepare() -> None:
    goal = goal_board("standard", G3)
    spec = all_solvers()["ida_star_jit"]
    spec.prepare(G3, goal, None)
    board = apply_moves(goal, "ulur", G3)
    assert len(spec.solve(board, goal, G3, counters=Counters(), heuristic=None)) == 4


# ------------------------------------------------------------ numba handling


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **env},
    )


def test_numba_is_not_imported_by_the_registry() -> None:
    out = _python(
        "import sys; from harness.solver import all_solvers;"
        "from harness.configs import select_solvers;"
        "all_solvers(); select_solvers('all');"
        "print('numba' in sys.modules, 'numpy' in sys.modules)"
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_kernel_cache_is_keyed_by_every_kernel_module(tmp_path) -> None:
    """numba checks only a kernel's own file before loading it from the cache, and
    kernels compile in kernels of other files (the batch drivers the IDA* kernels,
    the pattern database builder its atomics in heuristics/pdb_ops): the cache
    folder changes with any of those modules' source."""
    import shutil

    import numba

    from harness.kernels import base

    assert Path(numba.config.CACHE_DIR).name == base.sources_digest()
    copies = []
    for folder in base.KERNEL_FOLDERS:
        copy = tmp_path / folder.name
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
        copies.append(copy)
    assert base.sources_digest(copies) == base.sources_digest()
    for edited in (copies[0] / "ida.py", copies[1] / "pdb_ops.py"):
        before = edited.read_text()
        edited.write_text(before + "\n")
        assert base.sources_digest(copies) != base.sources_digest(), edited.name
        edited.write_text(before)
    assert base.sources_digest(copies) == base.sources_digest()


@pytest.mark.slow
def test_solvers_work_when_numba_cannot_cache(tmp_path) -> None:
    """No cache locator at all (what numba meets on a read-only install): the
    kernel compiles in memory and solves (one kernel: compiling is slow)."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = (
        "from numba.core import caching\n"
        "caching.CacheImpl._locator_classes = []\n"
        "from harness import kernels\n"
        "from harness.solver import all_solvers, Counters\n"
        "from harness.puzzle import grid, goal_board, apply_moves\n"
        "g = grid(3); goal = goal_board('standard', g)\n"
        "start = apply_moves(goal, 'ulurdd', g)\n"
        "spec = all_solvers()['ida_star_jit']\n"
        "spec.prepare(g, goal, None)\n"
        "m = spec.solve(start, goal, g, counters=Counters(), heuristic=None)\n"
        "assert apply_moves(start, m, g) == goal, m\n"
        "print(kernels.CACHE_ENABLED)\n"
    )
    out = _python(code, NPUZZLE_CACHE=str(blocker / "x"), NUMBA_CACHE_DIR="")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_walking_distance_kernel_equals_pure_ida_star() -> None:
    """3x3 and 4x4 boards, both goals: equal counters mean equal h on every node
    (the kernel steps its row/column states, the pure solver recounts)."""
    for g, steps in ((G3, 40), (G4, 18), (grid(3, 4), 25)):
        for goal_name in ("standard", "blank-first"):
            goal = goal_board(goal_name, g)
            rng = random.Random(f"wd-{g.label}-{goal_name}")
            for _ in range(3):
                board = walk(goal, g, steps, rng)
                fast = solve("ida_star_jit", "walking_distance", board, goal, g)
                pure = solve("ida_star", "walking_distance", board, goal, g)
                assert apply_moves(board, fast[0], g) == goal
                assert len(fast[0]) == len(pure[0]) and fast[1] == pure[1]
