"""The 4-bit parallel PDB builder (``heuristics.pdb_build``) and ``pdb78``.

The builder's tables equal the plain 0-1 BFS of test_pdb.py (no shared code) and the
byte-per-entry builder; packed tables give the same IDA* search as byte tables
(same node counts on Korf instances), survive the cache's corruption checks, and
pdb78 is registered, declines 3x3, and costs the default 3x3 main job nothing.

The full pdb78 table (519M entries; ~1.4 GB and a minute or more of both cores to
build) is exercised only with NPUZZLE_FULL_PDB78=1 (the last test): CI checks the
builder and the packed lookups on smaller patterns instead.
"""

from __future__ import annotations

import os
from math import perm

import numpy as np
import pytest
from test_pdb import korf100, reference_table

from harness.heuristics import (
    Heuristic,
    all_heuristics,
    pdb,
    pdb_build,
    pdb_files,
    pdb_mirror,
)
from harness.heuristics.pdb_regions import Regions
from harness.puzzle import goal_board, grid
from harness.solver import Counters, all_solvers

G3, G4, G5 = grid(3), grid(4), grid(5)


@pytest.fixture
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NPUZZLE_CACHE", str(tmp_path))
    pdb.clear_memory()
    yield tmp_path
    pdb.clear_memory()


def unpacked(g, squares, blank) -> np.ndarray:
    return pdb_build.unpack(g, squares, pdb_build.build_packed(g, squares, blank))


@pytest.mark.parametrize(
    ("g", "squares", "blank"),
    [
        (G3, (1, 2, 4, 5), 0),
        (G3, (3, 6, 7, 8), 0),
        (G3, (1, 2, 0, 5), 4),
        (G4, (12, 13, 14), 0),
        (G4, (0, 5, 10, 15), 3),
        (G5, (1, 5), 0),  # 5x5: the goal blank alone in its corner
        (G5, (7, 17), 24),
    ],
)
def test_packed_builder_equals_a_plain_0_1_bfs(g, squares, blank) -> None:
    table = unpacked(g, squares, blank)
    k, n = len(squares), g.squares
    mult = [perm(n - 1 - i, k - 1 - i) for i in range(k)]
    expected = reference_table(g, squares, blank)
    assert len(expected) == len(table)
    wrong = [
        (placed, d, int(table[pdb._index(list(placed), mult)]))
        for placed, d in expected.items()
        if table[pdb._index(list(placed), mult)] != d
    ]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize(
    ("g", "squares", "blank"),
    [
        (G3, (3, 5, 6, 7, 8, 4), 0),  # blocks of 2 tiles, mirror-fixed squares
        (G3, (6, 8, 7, 3, 5, 4), 2),
        (G4, (12, 13, 14, 15), 0),  # one block, its own mirror
    ],
)
def test_mirrored_build_equals_the_full_search(g, squares, blank) -> None:
    """Left-right symmetric patterns are searched over half the blocks and the
    rest copied from their mirrors: the table equals the search of every block,
    and the plain 0-1 BFS."""
    regions = Regions(g.squares, g.cols, g.squares - len(squares))
    high = len(squares) - pdb_build.low_digits(g.squares, len(squares))
    assert pdb_mirror.symmetry(g, squares, blank, high, regions) is not None
    half = pdb_build.build_packed(g, squares, blank)
    assert (half == pdb_build.build_packed(g, squares, blank, mirror=False)).all()
    table = pdb_build.unpack(g, squares, half)
    mult = [perm(g.squares - 1 - i, len(squares) - 1 - i) for i in range(len(squares))]
    for placed, d in reference_table(g, squares, blank).items():
        assert table[pdb._index(list(placed), mult)] == d


def test_only_the_8_tile_half_of_pdb78_is_symmetric() -> None:
    goal = goal_board("blank-first", G4)
    seven, eight = pdb.partition_squares("pdb78", goal, G4)
    assert pdb_mirror.symmetry(G4, eight, 0, 4, Regions(16, 4, 8)) == [
        3, 2, 1, 0, 7, 6, 5, 4
    ]
    assert pdb_mirror.symmetry(G4, seven, 0, 3, Regions(16, 4, 9)) is None
    # the 3x3 pattern above, with the goal blank where its mirror is elsewhere
    six = Regions(9, 3, 3)
    assert pdb_mirror.symmetry(G3, (3, 5, 6, 7, 8, 4), 1, 2, six) is not None
    assert pdb_mirror.symmetry(G3, (0, 1, 3, 4, 6, 7), 2, 2, six) is None


@pytest.mark.parametrize(
    ("g", "squares", "blank"),
    [
        (G3, (3, 5, 6, 7, 8, 4), 0),  # mirrored blocks
        (G4, (1, 2, 3, 6, 7), 0),
        (G4, (12, 13, 14, 15), 0),  # one block, its own mirror
        (G5, (1, 5, 6), 0),
    ],
)
def test_pull_layers_build_the_same_table(g, squares, blank) -> None:
    """Backward layers from any point (the first layer on, half way, near the end),
    on one thread or three, give the push-only table."""
    push = pdb_build.build_packed(g, squares, blank, pull="never")
    for start, threads in ((0.0, 1), (0.5, 3), (0.9, 2), ("auto", 2)):
        pulled = pdb_build.build_packed(g, squares, blank, pull=start, threads=threads)
        assert (pulled == push).all(), (start, threads)


def test_one_thread_builds_the_same_table() -> None:
    squares = (1, 2, 3, 6, 7)
    assert (pdb_build.build_packed(G4, squares, 0, threads=1)
            == pdb_build.build_packed(G4, squares, 0, threads=3)).all()


@pytest.mark.parametrize("group", [0, 1, 2])
def test_packed_builder_equals_the_byte_builder_on_pdb555(group) -> None:
    goal = goal_board("blank-first", G4)
    squares = pdb.partition_squares("pdb555", goal, G4)[group]
    assert (unpacked(G4, squares, 0) == pdb.build_table(G4, squares, 0)).all()


def test_build_reports_progress_up_to_every_state() -> None:
    calls = []
    pdb_build.build_packed(G4, (12, 13, 14), 0, progress=lambda *a: calls.append(a))
    layers = [layer for layer, _done, _total in calls]
    assert layers == list(range(len(calls)))
    done = [d for _layer, d, _total in calls]
    assert done == sorted(done) and done[-1] == calls[-1][2]  # all states reached


def korf_quick(count: int):
    """The ``count`` Korf instances with the fewest published nodes."""
    rows = sorted(korf100(), key=lambda r: r[2])
    return rows[:count]


def solve_all(name: str, packed: bool, boards) -> list[tuple[int, int]]:
    goal = goal_board("blank-first", G4)
    s = pdb.pdb_set(name, goal, G4, packed=packed)
    h = Heuristic(name, goal, G4, s.estimate, data=s)
    spec = all_solvers()["ida_star_jit"]
    out = []
    for board in boards:
        counters = Counters()
        moves = spec.solve(board, goal, G4, counters=counters, heuristic=h)
        out.append((len(moves), counters.generated))
    return out


def test_packed_lookups_search_exactly_like_byte_lookups() -> None:
    """pdb555 stored both ways: the kernels (and the pure estimate) read the same
    values, so IDA* generates the same nodes and finds the same lengths."""
    boards = [board for _i, board, _length in korf_quick(6)]
    assert solve_all("pdb555", True, boards) == solve_all("pdb555", False, boards)
    goal = goal_board("blank-first", G4)
    a = pdb.pdb_set("pdb555", goal, G4, packed=True)
    b = pdb.pdb_set("pdb555", goal, G4, packed=False)
    for board in boards:
        assert a.estimate(board) == b.estimate(board)


def test_packed_cache_round_trip_and_corruption(isolated_cache) -> None:
    squares = (1, 2, 3, 6, 7)
    table, info = pdb.load_table(G4, squares, 0, packed=True)
    assert info.source == "built" and len(table) == perm(16, 5) // 2
    path = pdb_files.table_file(G4, squares, 0, packed=True)
    assert path is not None and path.name.endswith(".4bit.bin")
    pdb.clear_memory()
    again, info = pdb.load_table(G4, squares, 0, packed=True)
    assert info.source == "cache" and (again == table).all()

    raw = bytearray(path.read_bytes())
    raw[-1000] ^= 0x10  # one nibble
    path.write_bytes(bytes(raw))
    pdb.clear_memory()
    rebuilt, info = pdb.load_table(G4, squares, 0, packed=True)
    assert info.source == "built" and (rebuilt == table).all()

    path.write_bytes(path.read_bytes()[:5000])
    pdb.clear_memory()
    assert pdb.load_table(G4, squares, 0, packed=True)[1].source == "built"
    # a byte-per-entry file of the same pattern is a different file
    assert pdb_files.table_file(G4, squares, 0) != path


def test_pdb78_is_registered_for_ida_star_jit_and_declines_3x3() -> None:
    assert "pdb78" in all_heuristics()
    spec = all_solvers()["ida_star_jit"]
    assert "pdb78" in spec.heuristics
    assert spec.refuses(G3, 20, "pdb78")
    assert spec.refuses(G4, 50, "pdb78") is None


def test_default_datasets_never_make_pdb78(tmp_path) -> None:
    """``harness run`` of ida_star_jit[pdb78] over the 3x3 default datasets (what
    ``--solvers all`` includes): every cell is declined, so no worker builds or
    loads the 4x4 tables and the run takes seconds."""
    import subprocess
    import sys

    cache = tmp_path / "cache"
    env = {**os.environ, "CI": "1", "NPUZZLE_CACHE": str(cache)}
    proc = subprocess.run(
        [sys.executable, "-c", "from harness.cli import main; main()", "run",
         "--solvers", "ida_star_jit[pdb78]", "--datasets", "default",
         "--out", str(tmp_path / "out"), "--no-report", "--repeats", "1"],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert proc.returncode == 0, proc.stderr
    assert "defined for 4x4" in proc.stdout + proc.stderr
    assert not list(cache.glob("pdb/*.bin"))


@pytest.mark.skipif(
    not os.environ.get("NPUZZLE_FULL_PDB78"),
    reason="builds the full 7-8 tables (~1.4 GB, a minute or more): "
    "NPUZZLE_FULL_PDB78=1 runs it",
)
def test_full_pdb78_on_quick_korf_instances() -> None:
    from harness.heuristics import make_heuristic

    goal = goal_board("blank-first", G4)
    h = make_heuristic("pdb78", goal, G4)
    spec = all_solvers()["ida_star_jit"]
    for _i, board, length in korf_quick(20):
        counters = Counters()
        moves = spec.solve(board, goal, G4, counters=counters, heuristic=h)
        assert len(moves) == length
        assert h(board) <= length


# ------------------------------------------------------------ slow set-ups


def fake_cells(heuristic: str, count: int = 3):
    from types import SimpleNamespace

    from plugins.tiny import make_dataset, walk

    from harness.measure.plan import Cell

    goal = goal_board("standard", G3)
    ds = make_dataset("slowfake", [walk(goal, G3, 5 + i, seed=i) for i in range(count)])
    config = SimpleNamespace(heuristic=heuristic, label=f"s[{heuristic}]")
    return [Cell(config, ds, inst) for inst in ds.instances]


@pytest.fixture
def slow_heuristic():
    from harness.heuristics import registry

    calls = {"prebuild": 0, "estimate": 30.0}

    def prebuild(goal, g, report):
        calls["prebuild"] += 1
        for i in range(1, 5):
            report(i / 4, 10.0 * (4 - i))

    registry.register_heuristic(
        "slowfake", "test", setup_estimate=lambda goal, g: calls["estimate"],
        prebuild=prebuild,
    )(lambda goal, g: None)
    yield calls
    registry._REGISTRY.pop("slowfake")


def test_slow_setup_over_the_timeout_is_declined_with_the_reason(slow_heuristic):
    from harness.measure.plan import slow_setups

    said = []
    slow_heuristic["estimate"] = 900.0
    cells = slow_setups(fake_cells("slowfake"), 600.0, lambda c: True, said.append)
    assert all("over --setup-timeout 600 s" in c.refusal for c in cells)
    assert all("~900 s" in c.refusal for c in cells)
    assert slow_heuristic["prebuild"] == 0 and not said


def test_slow_setup_within_the_timeout_is_built_once_with_an_eta(slow_heuristic):
    from harness.measure.plan import slow_setups

    said = []
    cells = slow_setups(fake_cells("slowfake"), 600.0, lambda c: True, said.append)
    assert all(c.refusal is None for c in cells)
    assert slow_heuristic["prebuild"] == 1  # once for all cells of the grid and goal
    assert "~30 s estimated" in said[0] and "built and cached" in said[-1]


def test_cached_or_unneeded_setups_cost_nothing(slow_heuristic):
    from harness.measure.plan import slow_setups

    said = []
    slow_heuristic["estimate"] = None  # cached
    slow_setups(fake_cells("slowfake"), 600.0, lambda c: True, said.append)
    slow_heuristic["estimate"] = 30.0
    slow_setups(fake_cells("slowfake"), 600.0, lambda c: False, said.append)
    assert slow_heuristic["prebuild"] == 0 and not said


def test_pdb78_estimate_is_none_once_cached(isolated_cache, monkeypatch) -> None:
    goal = goal_board("blank-first", G4)
    assert pdb.setup_estimate("pdb78", goal, G4) > 0
    assert pdb.setup_estimate("pdb78", goal, G3) is None
    assert pdb.setup_estimate("pdb663", goal, G4) is None
    for squares in pdb.partition_squares("pdb78", goal, G4):
        pdb_files.table_file(G4, squares, 0, True).write_bytes(b"")
    assert pdb.setup_estimate("pdb78", goal, G4) is None
