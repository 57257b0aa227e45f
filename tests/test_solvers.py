"""Every registered solver x heuristic against exact distances.

Each path is replayed from the start and must reach the goal; its length must equal
the full-BFS distance (``harness.core.oracle``) for optimal solvers and never undercut it
for the others; unsolvable boards must give None. Also: whole 2x2 and 2x3 spaces,
solver-specific promises (BFS exhausts a component, A* variants agree, incremental
heuristics equal full recomputation) and Korf's published IDA* node counts.
"""

from __future__ import annotations

import random
from importlib.resources import files
from itertools import permutations

import pytest
from known_boards import G3, KNOWN, STANDARD, Known

from harness.configs import SolverConfig, select_solvers
from harness.heuristics import Heuristic, make_heuristic
from harness.puzzle import (
    Board,
    Grid,
    apply_moves,
    goal_board,
    grid,
    is_solvable,
    parse_board,
)
from harness.solver import Counters, all_solvers

CONFIGS = select_solvers("all")
MINE = ("bfs", "bidir_bfs", "astar_dict", "astar_cantor", "ida_star")
_heuristics: dict[tuple[str, Board, Grid], Heuristic] = {}
_prepared: set[tuple[str, Board, Grid]] = set()


def run(
    config: SolverConfig, start: Board, goal: Board, g: Grid
) -> tuple[str | None, Counters]:
    """Solve once with fresh counters; heuristics and prepare() are done once."""
    key = (config.heuristic or "", goal, g)
    h = None
    if config.heuristic:
        if key not in _heuristics:
            _heuristics[key] = make_heuristic(config.heuristic, goal, g)
        h = _heuristics[key]
    if config.spec.prepare and (config.label, goal, g) not in _prepared:
        config.spec.prepare(g, goal, h)
        _prepared.add((config.label, goal, g))
    counters = Counters()
    moves = config.solve(start, goal, g, counters=counters, heuristic=h)
    return moves, counters


def check_answer(
    config: SolverConfig, start: Board, goal: Board, g: Grid, moves, exact: int | None
) -> None:
    if exact is None:
        assert moves is None, f"{config.label} solved an unsolvable board"
        return
    assert moves is not None, f"{config.label} gave up on a board {exact} moves away"
    assert apply_moves(start, moves, g) == goal
    if config.spec.optimal:
        assert len(moves) == exact
    else:
        assert len(moves) >= exact
        if config.bound is not None:  # the claimed bound holds on every answer
            assert len(moves) <= config.bound * exact, config.label


def _slow_if(config: SolverConfig, depth: int | None) -> list:
    # Pure-Python IDA* with misplaced tiles needs ~5e6 nodes on the 30-31 move boards.
    heavy = config.heuristic == "misplaced" and config.spec.name == "ida_star"
    return [pytest.mark.slow] if heavy and (depth or 0) >= 25 else []


#: Uniform-cost search without a heuristic expands every state up to the
#: optimum through a Python heap: the random boards test it up to this depth,
#: the known boards (every depth) cover the rest.
UCS_RANDOM_DEPTH = 20


def _refused(config: SolverConfig, g: Grid, depth: int | None) -> str | None:
    return config.refuses(g, depth)


# --------------------------------------------------------------- the fixtures


@pytest.mark.parametrize("k", KNOWN, ids=lambda k: k.name)
def test_fixture_optima_are_exact(k: Known, exact_distance) -> None:
    assert exact_distance(k.start, k.goal, k.grid) == k.optimum
    assert is_solvable(k.start, k.goal, k.grid) == (k.optimum is not None)


def test_builtin_solvers_are_registered_under_their_module_names() -> None:
    specs = all_solvers()
    for name in MINE:
        assert specs[name].module == f"solvers.{name}"
        assert specs[name].optimal
        assert specs[name].description
    for name in ("astar_dict", "astar_cantor", "ida_star"):
        assert specs[name].default_heuristic == "manhattan"
        assert set(specs[name].heuristics) >= {
            "misplaced",
            "manhattan",
            "linear_conflict",
        }


TYPO_PLUGIN = """
from harness.heuristics import EVALUATE
from harness.solver import register

@register("typo_greedy", optimal=False, needs=(EVALUATE, "tile_costs"))
def solve(start, goal, grid, *, counters, heuristic):
    return None
"""


def test_a_misspelt_capability_fails_at_registration_naming_it(tmp_path) -> None:
    from typer.testing import CliRunner

    from harness.cli import app
    from harness.heuristics import Capability, kernel, register_heuristic
    from harness.solver import register, register_spec

    valid = (
        "'h(board)', 'no tables', 'tile_cost', 'kernel:ida', 'kernel:astar_cantor', "
        "'kernel:best_first'"
    )
    with pytest.raises(ValueError) as err:
        register("typo_astar", optimal=True, needs=("h(boards)",))
    assert str(err.value).startswith(
        f"solver 'typo_astar' needs: unknown capability 'h(boards)'; valid: {valid}"
    )
    with pytest.raises(ValueError, match="^solver 'typo_ext' needs: unknown .*'ida'"):
        register_spec("typo_ext", solve=None, optimal=False, needs=("ida",))
    with pytest.raises(ValueError, match=(
        r"^heuristic 'typo_h': unknown kernel interface 'IDA' in kernels; "
        r"valid: ida, astar_cantor, best_first$"
    )):  # fmt: skip
        register_heuristic("typo_h", "a typo", kernels={"IDA": lambda h: None})
    with pytest.raises(ValueError, match="^unknown kernel interface 'astar'"):
        kernel("astar")
    assert "typo_astar" not in all_solvers() and "typo_ext" not in all_solvers()
    # the spellings the README teaches are the vocabulary, plain strings included
    register("spelt_right", optimal=False, needs=(kernel("ida"), "tile_cost"))(
        lambda *a, **k: None
    )
    assert all_solvers()["spelt_right"].needs == (
        Capability.KERNEL_IDA, Capability.TILE_COST)  # fmt: skip
    assert set(all_solvers()["spelt_right"].heuristics) >= {"manhattan", "misplaced"}
    plugin = tmp_path / "typo.py"
    plugin.write_text(TYPO_PLUGIN)
    out = CliRunner().invoke(app, ["solvers", "--plugin", str(plugin)])
    assert out.exit_code == 2 and "Traceback" not in out.output
    (line,) = out.stderr.strip().splitlines()
    assert line.startswith(f"error: --plugin {plugin}: ")
    assert "solver 'typo_greedy' needs: unknown capability 'tile_costs'" in line


# ------------------------------------------------------- known boards, 3x3


@pytest.mark.parametrize(
    ("config", "k"),
    [
        pytest.param(c, k, id=f"{c.label}-{k.name}", marks=_slow_if(c, k.optimum))
        for c in CONFIGS
        for k in KNOWN
    ],
)
def test_known_boards(config: SolverConfig, k: Known, exact_distance) -> None:
    if _refused(config, k.grid, k.optimum):
        pytest.skip(_refused(config, k.grid, k.optimum))
    moves, counters = run(config, k.start, k.goal, k.grid)
    check_answer(
        config, k.start, k.goal, k.grid, moves, exact_distance(k.start, k.goal, k.grid)
    )
    assert counters.generated >= counters.expanded >= 0
    if k.optimum and k.optimum > 1:
        assert counters.expanded > 0 and counters.max_frontier > 0


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.label)
@pytest.mark.parametrize("goal_name", ["standard", "spiral"])
def test_random_3x3_boards(
    config: SolverConfig, goal_name: str, exact_distance
) -> None:
    """Ten seeded uniformly random solvable boards per goal, lengths vs the table
    (unsolvable ones are covered by the known boards)."""
    goal = goal_board(goal_name, G3)
    rng = random.Random(f"3x3-{goal_name}")
    tried = 0
    while tried < 10:
        cells = list(range(9))
        rng.shuffle(cells)
        start = tuple(cells)
        if not is_solvable(start, goal, G3):
            continue
        tried += 1
        exact = exact_distance(start, goal, G3)
        if _refused(config, G3, exact) or _slow_if(config, exact):
            continue  # the known-board test covers the deep misplaced cases
        if config.spec.name == "ucs" and exact > UCS_RANDOM_DEPTH:
            continue  # ditto: pure-Python Dijkstra, ~1.4 s a board at depth 22
        moves, _ = run(config, start, goal, G3)
        check_answer(config, start, goal, G3, moves, exact)


# --------------------------------------------------- whole small spaces


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.label)
@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 2)])
def test_every_board_of_small_grids(
    config: SolverConfig, shape, exact_distance
) -> None:
    """All n! boards (both parities) against the standard and the spiral goal."""
    g = grid(*shape)
    for goal_name in ("standard", "spiral"):
        goal = goal_board(goal_name, g)
        h_refused = config.heuristic and _heuristic_refuses(config.heuristic, g)
        if h_refused or _refused(config, g, None):
            pytest.skip(f"{config.label} does not take {g.label}")
        for start in permutations(range(g.squares)):
            moves, _ = run(config, start, goal, g)
            check_answer(config, start, goal, g, moves, exact_distance(start, goal, g))


def _heuristic_refuses(name: str, g: Grid) -> str | None:
    from harness.heuristics import all_heuristics

    return all_heuristics()[name].refuses(g)


# --------------------------------------------------- algorithm promises


def test_bfs_proves_unsolvable_by_exhausting_the_component() -> None:
    bfs = SolverConfig(all_solvers()["bfs"], None)
    for k in (k for k in KNOWN if k.optimum is None):
        moves, counters = run(bfs, k.start, k.goal, k.grid)
        assert moves is None
        assert counters.expanded == 181_440  # 9!/2: every board of its parity


def test_bidir_bfs_proves_unsolvable_without_is_solvable() -> None:
    bidir = SolverConfig(all_solvers()["bidir_bfs"], None)
    k = next(k for k in STANDARD if k.optimum is None)
    moves, counters = run(bidir, k.start, k.goal, k.grid)
    assert moves is None
    assert counters.expanded >= 181_440  # one side exhausted its whole component


@pytest.mark.parametrize("heuristic", ["manhattan", "linear_conflict", "misplaced"])
def test_astar_cantor_expands_exactly_like_astar_dict(heuristic: str) -> None:
    """Same tie-breaking and goal test: only the state store differs, so the
    counters (and paths) must be identical; this also checks the incremental ranks."""
    specs = all_solvers()
    for k in KNOWN:
        if k.optimum is None or (heuristic == "misplaced" and k.optimum > 25):
            continue
        a = run(SolverConfig(specs["astar_dict"], heuristic), k.start, k.goal, k.grid)
        b = run(SolverConfig(specs["astar_cantor"], heuristic), k.start, k.goal, k.grid)
        assert a[0] == b[0]
        assert a[1] == b[1]


def _full_recompute(h: Heuristic) -> Heuristic:
    """The same bound under another name and without tile costs: a solver must
    then evaluate it in full on every child (its reference path)."""
    return Heuristic(f"{h.name}_full", h.goal, h.grid, h.estimate)


@pytest.mark.parametrize("name", ["ida_star", "astar_dict", "astar_cantor"])
@pytest.mark.parametrize("heuristic", ["manhattan", "linear_conflict", "misplaced"])
def test_incremental_h_equals_full_recomputation(heuristic: str, name: str) -> None:
    solver = all_solvers()[name]
    g4 = grid(4)
    goal4 = goal_board("standard", g4)
    walk = "ulldrurdlluurrddlluurdldrulurdd"
    boards = [(k.start, k.goal, k.grid) for k in KNOWN if k.optimum and k.optimum < 25]
    boards.append((apply_moves(goal4, walk, g4), goal4, g4))
    for start, goal, g in boards:
        if _refused(SolverConfig(solver, heuristic), g, 31):
            continue
        h = make_heuristic(heuristic, goal, g)
        fast, slow = Counters(), Counters()
        a = solver.solve(start, goal, g, counters=fast, heuristic=h)
        b = solver.solve(start, goal, g, counters=slow, heuristic=_full_recompute(h))
        assert a == b
        assert fast == slow


def _korf(number: int) -> tuple[Board, int, int]:
    text = files("harness").joinpath("data/korf100.tsv").read_text()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            ident, tiles, length, nodes = line.split("\t")
            if int(ident) == number:
                return tuple(map(int, tiles.split())), int(length), int(nodes)
    raise LookupError(number)


@pytest.mark.parametrize("number", [12, 79])
def test_ida_star_reproduces_korfs_node_counts(number: int) -> None:
    """Korf (1985), IDA* + manhattan, blank-first goal: generated nodes exactly."""
    start, length, nodes = _korf(number)
    g4 = grid(4)
    goal = goal_board("blank-first", g4)
    config = SolverConfig(all_solvers()["ida_star"], "manhattan")
    moves, counters = run(config, start, goal, g4)
    assert moves is not None and apply_moves(start, moves, g4) == goal
    assert len(moves) == length
    assert counters.generated == nodes
    assert counters.max_frontier == length
    assert counters.iterations >= 1


def test_ida_star_never_generates_the_undoing_move() -> None:
    """Counted by hand on a 2-move board (blank in the centre, goal "rd"): the root
    (1); its children in the order u, l, r (u and l are cut off by the bound, r
    leads on, so d is never reached): 3; after r the blank has u, l, d, but l would
    undo r and is not generated: u (cut off) and d (the goal): 2. Total 6; a solver
    that generated the undoing move would count 7."""
    ida = SolverConfig(all_solvers()["ida_star"], "manhattan")
    goal = goal_board("standard", G3)
    start = apply_moves(goal, "ul", G3)
    moves, counters = run(ida, start, goal, G3)
    assert moves == "rd"
    assert counters.generated == 6
    assert (counters.expanded, counters.iterations, counters.max_frontier) == (2, 1, 2)


def test_unsolvable_boards_answer_at_once_where_is_solvable_is_used() -> None:
    k = next(k for k in STANDARD if k.optimum is None)
    for name in ("astar_dict", "astar_cantor", "ida_star"):
        moves, counters = run(
            SolverConfig(all_solvers()[name], "manhattan"), k.start, k.goal, k.grid
        )
        assert moves is None
        assert counters.expanded == 0


# ------------------------------------------------------- larger boards


def test_shallow_4x4_boards_for_every_builtin() -> None:
    g4 = grid(4)
    goal = goal_board("standard", g4)
    start = apply_moves(goal, "uulldrdlurrd" * 1, g4)
    lengths = set()
    for config in CONFIGS:
        if config.spec.name in MINE and not _refused(config, g4, 12):
            if config.heuristic and _heuristic_refuses(config.heuristic, g4):
                continue
            moves, _ = run(config, start, goal, g4)
            assert moves is not None and apply_moves(start, moves, g4) == goal
            lengths.add(len(moves))
    assert len(lengths) == 1 and lengths.pop() <= 12  # all optimal solvers agree


def test_refusals() -> None:
    specs = all_solvers()
    g3, g4, g25 = grid(3), grid(4), grid(2, 5)
    for name in MINE:
        for depth in (None, 0, 31):
            for h in specs[name].heuristics or (None,):
                assert specs[name].refuses(g3, depth, h) is None
    assert "arrays" in specs["astar_cantor"].refuses(g4, 40, "manhattan")
    assert specs["astar_cantor"].refuses(g25, None, "manhattan") is None
    with pytest.raises(ValueError, match="astar_cantor"):
        specs["astar_cantor"].solve(
            goal_board("blank-first", g4),
            goal_board("standard", g4),
            g4,
            counters=Counters(),
            heuristic=None,
        )
    assert specs["bfs"].refuses(g4, None, None)  # could be unsolvable: 16!/2 boards
    assert specs["bfs"].refuses(g4, 45, None)
    assert specs["bfs"].refuses(g4, 12, None) is None
    assert specs["bidir_bfs"].refuses(g4, 30, None) is None
    assert specs["bidir_bfs"].refuses(g4, 60, None)
    assert specs["ida_star"].refuses(g4, 45, "manhattan") is None
    assert specs["ida_star"].refuses(g4, 66, "manhattan")
    assert specs["ida_star"].refuses(g4, 50, "misplaced")
    assert specs["ida_star"].refuses(g4, 30, "misplaced") is None


def test_counts_are_deterministic() -> None:
    k = next(k for k in STANDARD if k.optimum == 19)
    for config in CONFIGS:
        if _refused(config, k.grid, k.optimum):
            continue
        first, second = (
            run(config, k.start, k.goal, k.grid),
            run(config, k.start, k.goal, k.grid),
        )
        assert first == second, config.label


def test_parse_board_fixture_sanity() -> None:
    assert parse_board("1 2 3 4 5 6 7 8 x", G3) == goal_board("standard", G3)
