"""The exact distance oracle: published histograms, agreement with a plain BFS and
with the pure-Python ranks, and the disk cache (corrupt, truncated, unwritable)."""

from __future__ import annotations

import random
from collections import deque
from importlib.resources import files
from pathlib import Path

import numpy as np
import pytest

from harness.core import oracle
from harness.puzzle import (
    Board,
    Grid,
    goal_board,
    grid,
    is_solvable,
    rank,
    unrank,
)

G3 = grid(3)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets an empty cache folder and an empty in-process memo."""
    monkeypatch.setenv("NPUZZLE_CACHE", str(tmp_path / "cache"))
    oracle.clear_memory()
    yield tmp_path / "cache"
    oracle.clear_memory()


def _published() -> dict[str, list[int]]:
    text = files("harness").joinpath("data/8puzzle-depth-distribution.tsv").read_text()
    corner, centre = [], []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        depth, a, b = map(int, line.split("\t"))
        assert depth == len(corner)
        corner.append(a)
        centre.append(b)
    while centre[-1] == 0:
        centre.pop()
    return {"corner": corner, "centre": centre}


@pytest.mark.parametrize(
    ("goal", "column"),
    [
        ("standard", "corner"),
        ("blank-first", "corner"),
        ("spiral", "centre"),
        ("1 2 3 4 x 5 6 7 8", "centre"),
        ("8 7 6 5 4 3 2 1 x", "corner"),
    ],
)
def test_histogram_matches_published_table(goal: str, column: str) -> None:
    assert oracle.histogram(goal_board(goal, G3), G3) == _published()[column]


def test_standard_goal_headline_figures() -> None:
    hist = oracle.histogram(goal_board("standard", G3), G3)
    assert len(hist) - 1 == 31 and hist[31] == 2
    assert sum(hist) == 181_440
    mean = sum(d * c for d, c in enumerate(hist)) / sum(hist)
    assert round(mean, 2) == 21.97
    assert len(oracle.histogram(goal_board("spiral", G3), G3)) - 1 == 30


def test_known_distances() -> None:
    standard = goal_board("standard", G3)
    assert oracle.distance((2, 3, 4, 1, 5, 0, 7, 6, 8), standard, G3) == 19
    assert oracle.distance((1, 2, 3, 0, 4, 6, 7, 5, 8), standard, G3) == 3
    assert oracle.distance(standard, standard, G3) == 0
    # Swapping two tiles flips the parity: unreachable.
    assert oracle.distance((2, 1, 3, 4, 5, 6, 7, 8, 0), standard, G3) is None


def test_all_permutations_and_rank_many_agree_with_puzzle_ranks() -> None:
    perms = oracle.all_permutations(9)
    assert perms.shape == (362_880, 9)
    assert np.array_equal(oracle.rank_many(perms), np.arange(362_880))
    rng = random.Random(7)
    for index in [0, 1, 362_879] + [rng.randrange(362_880) for _ in range(300)]:
        assert tuple(perms[index]) == unrank(index, 9)
        assert rank(tuple(int(v) for v in perms[index])) == index
    for n in range(1, 7):
        small = oracle.all_permutations(n)
        assert [tuple(map(int, row)) for row in small] == [
            unrank(i, n) for i in range(len(small))
        ]


@pytest.mark.parametrize("shape", [(2, 2), (2, 3), (3, 2), (3, 3)])
def test_neighbour_table_matches_successors(shape: tuple[int, int]) -> None:
    g = grid(*shape)
    table = oracle.neighbour_table(g)
    rng = random.Random(11)
    size = len(table)
    for index in rng.sample(range(size), min(size, 500)):
        board = unrank(index, g.squares)
        expected = [rank(child) for _, child in g.successors(board)]
        row = [int(v) for v in table[index] if v >= 0]
        assert row == expected


def _plain_bfs(goal: Board, g: Grid) -> dict[Board, int]:
    dist = {goal: 0}
    queue = deque([goal])
    while queue:
        board = queue.popleft()
        for _, child in g.successors(board):
            if child not in dist:
                dist[child] = dist[board] + 1
                queue.append(child)
    return dist


@pytest.mark.parametrize(
    ("shape", "goal"), [((2, 2), "standard"), ((2, 3), "standard"), ((3, 2), "spiral"),
                        ((2, 3), "2 x 5 4 3 1")]
)
def test_small_grids_equal_plain_bfs(shape: tuple[int, int], goal: str) -> None:
    g = grid(*shape)
    target = goal_board(goal, g)
    expected = _plain_bfs(target, g)
    dist = oracle.distances(target, g)
    for index, value in enumerate(dist):
        board = unrank(index, g.squares)
        assert expected.get(board, -1) == value
        assert (value >= 0) == is_solvable(board, target, g)


def test_3x3_equals_plain_bfs_for_the_spiral_goal() -> None:
    target = goal_board("spiral", G3)
    expected = _plain_bfs(target, G3)
    dist = oracle.distances(target, G3)
    assert int((dist >= 0).sum()) == len(expected) == 181_440
    for board, value in expected.items():
        assert dist[rank(board)] == value


def test_refuses_large_grids_and_bad_goals() -> None:
    for shape in [(4, 4), (3, 4), (2, 5)]:
        g = grid(*shape)
        with pytest.raises(ValueError, match="at most 9 squares"):
            oracle.distances(goal_board("standard", g), g)
    with pytest.raises(ValueError, match="not a 3x3 board"):
        oracle.distances((1, 2, 3), G3)
    with pytest.raises(ValueError, match="not a 3x3 board"):
        oracle.distance((1, 1, 2, 3, 4, 5, 6, 7, 0), goal_board("standard", G3), G3)


def test_result_is_read_only_and_memoised() -> None:
    goal = goal_board("standard", G3)
    first = oracle.distances(goal, G3)
    assert oracle.distances(goal, G3) is first
    with pytest.raises(ValueError):
        first[0] = 5


def test_disk_cache_written_reused_and_rebuilt_when_corrupt(
    private_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    goal = goal_board("spiral", G3)
    fresh = np.array(oracle.distances(goal, G3))
    (path,) = private_cache.joinpath("oracle").glob("3x3-*.bin")
    # Reused: a valid file is read back, the BFS does not run again.
    oracle.clear_memory()
    with monkeypatch.context() as patch:
        patch.setattr(oracle, "_build", lambda *_: pytest.fail("rebuilt a valid file"))
        assert np.array_equal(oracle.distances(goal, G3), fresh)

    raw = bytearray(path.read_bytes())
    raw[-1000] ^= 0x7F  # flip one distance: the checksum no longer matches
    path.write_bytes(bytes(raw))
    oracle.clear_memory()
    assert np.array_equal(oracle.distances(goal, G3), fresh)
    assert path.read_bytes() != bytes(raw), "the corrupt file was not rewritten"

    path.write_bytes(path.read_bytes()[:5000])  # truncated
    oracle.clear_memory()
    assert np.array_equal(oracle.distances(goal, G3), fresh)

    path.write_bytes(b"not json\n" + bytes(362_880))  # garbage header
    oracle.clear_memory()
    assert np.array_equal(oracle.distances(goal, G3), fresh)


def test_a_tampered_but_self_consistent_file_for_another_goal_is_not_used(
    private_cache: Path,
) -> None:
    standard, spiral = goal_board("standard", G3), goal_board("spiral", G3)
    oracle.distances(standard, G3)
    folder = private_cache / "oracle"
    (std_file,) = folder.glob("3x3-*.bin")
    # Copy the standard table under the spiral goal's file name: header says standard.
    target = folder / std_file.name.replace(
        "-".join(map(str, standard)), "-".join(map(str, spiral))
    )
    target.write_bytes(std_file.read_bytes())
    oracle.clear_memory()
    assert oracle.histogram(spiral, G3) == _published()["centre"]


def test_works_in_memory_when_cache_is_not_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("NPUZZLE_CACHE", str(blocker / "cache"))
    oracle.clear_memory()
    goal = goal_board("standard", G3)
    assert oracle.histogram(goal, G3) == _published()["corner"]
