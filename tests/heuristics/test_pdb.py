"""Pattern databases: tables equal an independent search, bounds are admissible,
the cache is checked and rebuilt, and the registry refuses the wrong grids.

The compiled builder searches placements x blank *regions*; the reference here is a
plain 0-1 BFS over (tile squares, blank square) in pure Python, so the two share no
code. Admissibility is exhaustive on 3x3 (every board against the oracle) and on
4x4 checked against Korf's published optimal lengths.
"""

from __future__ import annotations

import os

import random
from collections import deque
from importlib.resources import files
from math import perm

import pytest
from space3 import h_values, space

from harness.heuristics import make_heuristic, pdb, pdb_files, walking_distance
from harness.puzzle import Board, Grid, apply_moves, goal_board, grid, unrank

G3, G4 = grid(3), grid(4)


def korf100() -> list[tuple[int, Board, int]]:
    """(id, board, optimal length) from the packaged copy of Korf's table."""
    text = files("harness").joinpath("data/korf100.tsv").read_text()
    rows = []
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            ident, tiles, length, _nodes = line.split("\t")
            rows.append((int(ident), tuple(map(int, tiles.split())), int(length)))
    return rows


def reference_table(g: Grid, squares: tuple[int, ...], blank: int) -> dict:
    """Fewest moves of the pattern tiles from each placement home, minimised over
    blank squares: 0-1 BFS where a blank move swapping a non-pattern tile is free."""
    start = (squares, blank)
    dist = {start: 0}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        placed, at = state
        for _move, target in g.neighbours[at]:
            if target in placed:
                moved = tuple(at if c == target else c for c in placed)
                child, cost = (moved, target), dist[state] + 1
            else:
                child, cost = (placed, target), dist[state]
            if child not in dist or dist[child] > cost:
                dist[child] = cost
                if cost == dist[state]:
                    queue.appendleft(child)
                else:
                    queue.append(child)
    best: dict[tuple[int, ...], int] = {}
    for (placed, _at), d in dist.items():
        best[placed] = min(best.get(placed, d), d)
    return best


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    """A fresh cache folder and no tables in memory (restored afterwards)."""
    monkeypatch.setenv("NPUZZLE_CACHE", str(tmp_path))
    pdb.clear_memory()
    yield tmp_path
    pdb.clear_memory()


# ------------------------------------------------------------ the tables


@pytest.mark.parametrize(
    ("squares", "blank"),
    [((1, 2, 4, 5), 0), ((3, 6, 7, 8), 0), ((1, 2, 0, 5), 4), ((0, 3, 6, 7, 8), 4)],
)
def test_builder_equals_a_plain_0_1_bfs(squares, blank) -> None:
    table = pdb.build_table(G3, squares, blank)
    expected = reference_table(G3, squares, blank)
    assert len(expected) == len(table)  # every placement is reachable
    mult = [perm(8 - i, len(squares) - 1 - i) for i in range(len(squares))]
    wrong = [
        (placed, d, int(table[pdb._index(list(placed), mult)]))
        for placed, d in expected.items()
        if table[pdb._index(list(placed), mult)] != d
    ]
    assert not wrong, wrong[:5]


def test_4x4_three_tile_table_equals_the_plain_bfs() -> None:
    squares = (12, 13, 14)
    table = pdb.build_table(G4, squares, 0)
    mult = [perm(15 - i, 2 - i) for i in range(3)]
    for placed, d in reference_table(G4, squares, 0).items():
        assert table[pdb._index(list(placed), mult)] == d


@pytest.mark.slow
@pytest.mark.parametrize("goal_name", ["standard", "blank-first", "spiral"])
def test_pdb44_is_admissible_on_every_3x3_board(goal_name: str) -> None:
    """Exhaustive: h <= exact distance for all 181,440 solvable boards, h == 0 only
    at the goal, and the mirror is on (every named 3x3 goal has its blank on the
    diagonal)."""
    goal, dist, reachable = space(goal_name)
    assert make_heuristic("pdb44", goal, G3).data.mirror
    h = h_values("pdb44", goal_name)[reachable]  # shared with test_heuristics.py
    assert (h <= dist[reachable]).all()
    assert (h == 0).sum() == 1


def test_mirror_is_off_when_the_blank_is_off_the_diagonal() -> None:
    from harness.core.oracle import distances

    goal = (1, 0, 2, 3, 4, 5, 6, 7, 8)  # blank on square 1
    s = pdb.pdb_set("pdb44", goal, G3)
    assert not s.mirror
    dist = distances(goal, G3)
    rng = random.Random(7)
    for _ in range(2000):
        r = rng.randrange(len(dist))
        if dist[r] >= 0:
            assert s.estimate(unrank(r, 9)) <= dist[r]


def test_mirrored_max_is_at_least_the_plain_sum() -> None:
    goal = goal_board("blank-first", G4)
    plain = pdb.pdb_set("pdb555", goal, G4, mirror=False)
    both = pdb.pdb_set("pdb555", goal, G4)
    raised = 0
    for _, board, _length in korf100()[:30]:
        assert both.estimate(board) >= plain.estimate(board)
        raised += both.estimate(board) > plain.estimate(board)
    assert raised > 0  # the mirror must actually add information somewhere


@pytest.mark.parametrize(
    "name", ["pdb555", pytest.param("pdb663", marks=pytest.mark.slow)]
)
def test_4x4_pdbs_are_admissible_on_korf100_and_walks(name: str) -> None:
    """h <= the published optimum on all 100, h <= k on boards k random moves from
    the goal, h(goal) == 0. (6-6-3 builds two 5.8M-entry tables: ~10 s of CPU the
    first time, then cached.) Not tested: consistency. Taking the minimum over
    blank positions makes these PDBs inconsistent (h can drop by more than 1 in
    one move), which IDA* tolerates; A* with a closed list would need reopening."""
    goal = goal_board("blank-first", G4)
    h = make_heuristic(name, goal, G4)
    assert h(goal) == 0
    for ident, board, length in korf100():
        assert h(board) <= length, f"#{ident}: h={h(board)} > {length}"
    rng = random.Random(11)
    for _ in range(20):
        board = goal
        for k in range(1, 61):
            board = rng.choice(list(G4.successors(board)))[1]
            assert h(board) <= k


def test_pure_estimate_equals_the_kernel_value() -> None:
    import numpy as np

    from harness import kernels

    goal = goal_board("standard", G4)  # blank bottom-right: the rotated shapes
    s = pdb.pdb_set("pdb555", goal, G4)
    a = s.arrays
    rng = random.Random(5)
    board = goal
    for _ in range(200):
        board = rng.choice(list(G4.successors(board)))[1]
        compiled = kernels.pdb_value(
            np.array(board, dtype=np.int8), a["tables"], a["offsets"], a["gtiles"],
            a["gsize"], a["gmult"], a["mirror"], a["moffsets"], a["mtiles"],
            a["gsquaremap"], a["msquaremap"], a["packed"], a["gcost"],
        )
        assert compiled == s.estimate(board)


def test_partitions_cover_every_tile_but_the_blank_once() -> None:
    for name, ((rows, cols), _groups) in pdb.PARTITIONS.items():
        g = grid(rows, cols)
        for goal_name in ("standard", "blank-first", "spiral"):
            goal = goal_board(goal_name, g)
            squares = [c for grp in pdb.partition_squares(name, goal, g) for c in grp]
            assert sorted(squares) == sorted(set(range(g.squares)) - {goal.index(0)})


# ------------------------------------------------------------ the cache


def test_cache_round_trip_corruption_and_truncation(isolated_cache) -> None:
    squares = (1, 2, 3, 6, 7)
    table, info = pdb.load_table(G4, squares, 0)
    assert info.source == "built"
    path = pdb_files.table_file(G4, squares, 0)
    assert path is not None and path.exists()
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # (mkstemp's 0600 was)

    pdb.clear_memory()
    again, info = pdb.load_table(G4, squares, 0)
    assert info.source == "cache" and (again == table).all()

    # flip one byte of the body: the checksum must catch it
    raw = bytearray(path.read_bytes())
    raw[-1000] ^= 0x01
    path.write_bytes(bytes(raw))
    pdb.clear_memory()
    rebuilt, info = pdb.load_table(G4, squares, 0)
    assert info.source == "built" and (rebuilt == table).all()

    path.write_bytes(path.read_bytes()[:5000])  # truncated
    pdb.clear_memory()
    assert pdb.load_table(G4, squares, 0)[1].source == "built"

    path.write_bytes(b"not json\n")  # garbage header
    pdb.clear_memory()
    assert pdb.load_table(G4, squares, 0)[1].source == "built"
    pdb.clear_memory()
    assert pdb.load_table(G4, squares, 0)[1].source == "cache"


def test_unwritable_cache_builds_in_memory(tmp_path, monkeypatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("NPUZZLE_CACHE", str(blocker / "cache"))  # cannot be made
    pdb.clear_memory()
    try:
        s = pdb.pdb_set("pdb44", goal_board("standard", G3), G3)
        assert {i.source for i in s.infos} == {"built"}
        assert s.estimate(goal_board("standard", G3)) == 0
    finally:
        pdb.clear_memory()


# ------------------------------------------------------------ registry


def test_registry_refuses_other_grids() -> None:
    with pytest.raises(ValueError, match="4x4"):
        make_heuristic("pdb663", goal_board("standard", G3), G3)
    with pytest.raises(ValueError, match="3x3"):
        make_heuristic("pdb44", goal_board("standard", G4), G4)


def test_summary_reports_size_and_source() -> None:
    s = pdb.pdb_set("pdb555", goal_board("blank-first", G4), G4)
    # the third group, {10, 11, 13, 14, 15}, is the first turned about the
    # anti-diagonal, so it reads the first group's table
    assert s.nbytes == 2 * 524_160 and len(s.infos) == 2
    assert "5-5-5" in s.summary() and "MiB" in s.summary()


def test_walk_reaches_goal_of_every_partition_shape() -> None:
    """The corner-blank goals use a symmetry of the blank-first shapes; a board one
    move from the goal must score exactly 1."""
    for goal_name in ("standard", "blank-first"):
        goal = goal_board(goal_name, G4)
        h = make_heuristic("pdb555", goal, G4)
        for move, _target in G4.neighbours[goal.index(0)]:
            assert h(apply_moves(goal, move, G4)) == 1


# ------------------------------------------------------------ walking distance


def test_walking_distance_tables_have_the_known_sizes() -> None:
    """24,964 row states for 4x4 (Takahashi); rows and columns alike."""
    wd = walking_distance.walking_distance(goal_board("standard", G4), G4)
    assert len(wd.row_ids) == len(wd.col_ids) == 24_964
    assert wd.estimate(goal_board("standard", G4)) == 0


@pytest.mark.slow
@pytest.mark.parametrize("goal_name", ["standard", "spiral"])
def test_walking_distance_is_admissible_and_beats_manhattan_on_3x3(
    goal_name: str,
) -> None:
    """Every solvable 3x3 board: manhattan <= walking distance <= exact."""
    _, dist, reachable = space(goal_name)
    # the values test_heuristics.py checked for admissibility too, computed once
    wd = h_values("walking_distance", goal_name)[reachable]
    md = h_values("manhattan", goal_name)[reachable]
    assert ((md <= wd) & (wd <= dist[reachable])).all()
    assert (wd > md).any()


def test_walking_distance_admissible_on_korf100() -> None:
    goal = goal_board("blank-first", G4)
    wd = make_heuristic("walking_distance", goal, G4)
    md = make_heuristic("manhattan", goal, G4)
    for ident, board, length in korf100():
        assert md(board) <= wd(board) <= length, ident
