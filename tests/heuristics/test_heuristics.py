"""Every heuristic is admissible and consistent on the whole 3x3 space.

Exact distances of all 181,440 boards come from the exhaustive BFS of
``harness.core.oracle``, for the standard goal (blank in a corner) and the spiral goal
(blank in the centre). Also: tile-cost tables agree with the estimate, the
dominance order misplaced <= manhattan <= linear_conflict, and why our linear
conflict is not the textbook "+2 per conflicting pair".
"""

from __future__ import annotations

import numpy as np
import pytest
from space3 import h_values, space

from harness.core import oracle
from harness.heuristics import Heuristic, all_heuristics, make_heuristic
from harness.puzzle import Board, goal_board, grid, parse_board

G3 = grid(3)
GOALS = ["standard", "spiral"]


def _applies(name: str) -> bool:
    return all_heuristics()[name].refuses(G3) is None


HEURISTICS = [name for name in all_heuristics() if _applies(name)]
_space = space


def test_the_space_has_181440_boards_per_goal() -> None:
    for goal_name in GOALS:
        _, dist, reachable = _space(goal_name)
        assert len(reachable) == 181_440
        assert dist.max() == (31 if goal_name == "standard" else 30)


@pytest.mark.slow
@pytest.mark.parametrize("goal_name", GOALS)
@pytest.mark.parametrize("name", HEURISTICS)
def test_admissible_on_every_board(name: str, goal_name: str) -> None:
    goal, dist, reachable = _space(goal_name)
    h = h_values(name, goal_name)
    over = reachable[h[reachable] > dist[reachable]]
    assert over.size == 0, (
        f"{name} overestimates on {over.size} boards, e.g. rank {over[0]}: "
        f"h={h[over[0]]} > {dist[over[0]]}"
    )
    assert make_heuristic(name, goal, G3)(goal) == 0


# Found by this test: pdb44 jumps from 14 to 17 on the move 1 6 2 3 7 4 5 8 x -u->.
# Not a bug of the mirror: a pattern database that ignores the blank stores, per
# pattern, the minimum over blank squares, and one move can leave the square that
# attained it. Sampling every 7th board of the standard-goal space gave 2,904
# inconsistent edges without the mirror and 2,514 with it (worst jump 7 both ways).
# Such databases are admissible (tested exhaustively in test_pdb.py), which is all
# IDA* needs; A* with reopening (astar_dict) stays optimal too. Strict: if the
# databases ever become consistent, this marker must go.
_KNOWN_INCONSISTENT = pytest.mark.xfail(
    reason="blank-minimised pattern databases are admissible, not consistent",
    strict=True
)


@pytest.mark.slow
@pytest.mark.parametrize("goal_name", GOALS)
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=[_KNOWN_INCONSISTENT] if n == "pdb44" else [])
        for n in HEURISTICS
    ],
)
def test_consistent_on_every_move(name: str, goal_name: str) -> None:
    """h(a) <= 1 + h(b) for every move a -> b (in both directions), so h never
    drops by more than the cost of a move."""
    _, _, reachable = _space(goal_name)
    h = h_values(name, goal_name)
    table = oracle.neighbour_table(G3)[reachable]
    for column in range(table.shape[1]):
        has = table[:, column] >= 0
        here, there = h[reachable[has]], h[table[has, column]]
        assert (there >= 0).all()  # moves stay in the reachable half
        drops = np.abs(here.astype(int) - there) > 1
        assert not drops.any(), f"{name}: h changes by > 1 on {drops.sum()} moves"


@pytest.mark.slow
@pytest.mark.parametrize("goal_name", GOALS)
def test_dominance_misplaced_manhattan_linear_conflict(goal_name: str) -> None:
    _, _, reachable = _space(goal_name)
    mis, man, lc = (
        h_values(n, goal_name)[reachable]
        for n in ("misplaced", "manhattan", "linear_conflict")
    )
    assert (mis <= man).all() and (man <= lc).all()
    assert (man < lc).any()  # linear conflict really adds something


@pytest.mark.parametrize("goal_name", GOALS)
@pytest.mark.parametrize("name", HEURISTICS)
def test_tile_cost_tables_sum_to_the_estimate(name: str, goal_name: str) -> None:
    goal = goal_board(goal_name, G3)
    h = make_heuristic(name, goal, G3)
    if h.tile_cost is None:
        pytest.skip(f"{name} is not tile-additive")
    assert all(c == 0 for c in h.tile_cost[0])  # the blank never counts
    perms = oracle.all_permutations(9)[::97]  # a 3,741-board spread over all ranks
    cost = np.array(h.tile_cost)
    sums = cost[perms, np.arange(9)].sum(axis=1)
    assert sums.tolist() == [h(tuple(p)) for p in perms.tolist()]


def test_misplaced_never_counts_the_blank() -> None:
    goal = goal_board("standard", G3)
    h = make_heuristic("misplaced", goal, G3)
    assert h(parse_board("1 2 3 4 5 6 7 x 8", G3)) == 1  # only tile 8 is off


def _naive_linear_conflict(goal: Board, board: Board) -> int:
    """The textbook rule: manhattan + 2 for every pair of tiles that sit in their
    goal row (or column) in reversed order."""
    home = {t: divmod(c, 3) for c, t in enumerate(goal)}  # tile -> (row, col)
    pairs = 0
    for r in range(3):
        tiles = [t for t in board[r * 3 : r * 3 + 3] if t and home[t][0] == r]
        pairs += sum(
            home[a][1] > home[b][1] for i, a in enumerate(tiles) for b in tiles[i + 1 :]
        )
    for c in range(3):
        tiles = [t for t in board[c::3] if t and home[t][1] == c]
        pairs += sum(
            home[a][0] > home[b][0] for i, a in enumerate(tiles) for b in tiles[i + 1 :]
        )
    return make_heuristic("manhattan", goal, G3)(board) + 2 * pairs


def test_naive_pairwise_linear_conflict_overestimates_ours_does_not() -> None:
    """Row ``8 7 6`` style lines: three tiles pairwise reversed give 3 pairs (+6),
    yet moving two of them out of the line (+4) is enough. On the fully reversed
    board the naive rule says 32 while the optimum is 28; ours says 28."""
    goal = goal_board("standard", G3)
    board = parse_board("x 8 7 6 5 4 3 2 1", G3)
    exact = oracle.distance(board, goal, G3)
    naive = _naive_linear_conflict(goal, board)
    ours = make_heuristic("linear_conflict", goal, G3)(board)
    assert naive > exact, (naive, exact)
    assert ours <= exact
    assert ours > make_heuristic("manhattan", goal, G3)(board)


def test_heuristic_objects_are_bound_to_their_goal() -> None:
    for name in HEURISTICS:
        for goal_name in GOALS:
            goal = goal_board(goal_name, G3)
            h: Heuristic = make_heuristic(name, goal, G3)
            assert h.goal == goal and h.grid == G3 and h(goal) == 0
