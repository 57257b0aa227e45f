"""Datasets: deterministic generators, uniformity, the committed files (they load,
agree with the oracle and the published tables, and regenerate byte for byte), the
search path and selections, and one clear error per kind of malformed file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from importlib.resources import files
from pathlib import Path

import pytest
from where import ROOT

from harness import datasets as D
from harness.core import oracle
from harness.datasets import catalogue, generators
from harness.puzzle import (
    apply_moves,
    format_board,
    goal_board,
    grid,
    is_solvable,
    parse_board,
    permutation_parity,
)

ROOT = ROOT
COMMITTED = ROOT / "datasets"
G2x3, G3, G4 = grid(2, 3), grid(3), grid(4)
STANDARD3 = goal_board("standard", G3)


def _chi_square(counts: list[int], expected: list[float]) -> float:
    return sum((c - e) ** 2 / e for c, e in zip(counts, expected, strict=True))


# ---------------------------------------------------------------- bit stream


def test_splitmix64_matches_the_reference_outputs() -> None:
    # First outputs of Vigna's splitmix64.c from state 0 and from 1234567.
    stream = D.BitStream(0)
    assert [stream.next_u64() for _ in range(3)] == [
        0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F,
    ]
    assert D.BitStream(1234567).next_u64() == 6457827717110365317


def test_below_stays_in_range_and_hits_every_value() -> None:
    stream = D.BitStream(5)
    for n in (1, 2, 3, 7, 9, 16, 1000):
        values = [stream.below(n) for _ in range(40 * n)]
        assert set(values) == set(range(n))
    with pytest.raises(ValueError):
        stream.below(0)


def test_streams_differ_by_generator_and_seed() -> None:
    def first(gen: str, seed: int) -> int:
        return D.BitStream.for_dataset(gen, seed).next_u64()

    assert first("uniform", 1) == first("uniform", 1)
    assert len({first("uniform", 1), first("uniform", 2), first("unsolvable", 1)}) == 3


# ---------------------------------------------------------------- generators


@pytest.mark.parametrize(
    ("generator", "g", "kwargs"),
    [
        ("uniform", G3, {"count": 40}),
        ("unsolvable", G3, {"count": 40}),
        ("random_walk", G3, {"count": 30, "length": 25}),
        ("depth_strata", G3, {"count": 2, "unsolvable": 3}),
        ("uniform", G4, {"count": 20}),
        ("random_walk", G4, {"count": 20, "length": 40}),
        ("unsolvable", grid(2, 4), {"count": 20}),
    ],
)
def test_generating_twice_gives_identical_bytes(generator, g, kwargs) -> None:
    goal = goal_board("standard", g)
    texts = [
        D.dumps_dataset(D.generate(generator, g, goal, name="t", seed=9, **kwargs))
        for _ in range(2)
    ]
    assert texts[0] == texts[1]
    other = D.dumps_dataset(D.generate(generator, g, goal, name="t", seed=10, **kwargs))
    assert other != texts[0]
    ds = D.parse_dataset(texts[0])
    assert len(ds.instances) == len({i.start for i in ds.instances}), "duplicates"


def _numpy_free_dataset_text() -> str:
    """What the cross-version test regenerates: generators only, no oracle/numpy."""
    g = grid(4)
    goal = goal_board("standard", g)
    return "".join(
        D.dumps_dataset(D.generate(gen, g, goal, name="x", seed=77, count=15, **kw))
        for gen, kw in [("uniform", {}), ("unsolvable", {}),
                        ("random_walk", {"length": 33})]
    )


def _other_pythons() -> list[str]:
    """Working Python 3.12/3.13 interpreters on PATH or under pyenv (shims that
    refuse to run are skipped)."""
    candidates = [shutil.which(n) for n in ("python3.12", "python3.13")]
    candidates += sorted(str(p) for p in Path.home().glob(
        ".pyenv/versions/3.1[23]*/bin/python3"))
    found: dict[str, str] = {}
    for exe in filter(None, candidates):
        probe = subprocess.run(
            [exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=False,
        )
        version = probe.stdout.strip()
        if probe.returncode == 0 and version in ("3.12", "3.13"):
            found.setdefault(version, exe)
    return list(found.values())


_CROSS_VERSION = (
    "import sys; sys.path.insert(0, sys.argv[1])\n"
    "from harness import datasets as D\n"
    "from harness.puzzle import goal_board, grid\n"
    "g = grid(4); goal = goal_board('standard', g)\n"
    "sys.stdout.write(''.join(D.dumps_dataset(D.generate(gen, g, goal, name='x', "
    "seed=77, count=15, **kw)) for gen, kw in [('uniform', {}), ('unsolvable', {}), "
    "('random_walk', {'length': 33})]))\n"
)


def test_other_python_versions_generate_the_same_bytes() -> None:
    """The generators use no numpy and no library sampling: 3.12/3.13 must agree."""
    pythons = _other_pythons()
    if not pythons:
        pytest.skip("no working Python 3.12 or 3.13 found")
    expected = _numpy_free_dataset_text()
    for python in pythons:
        out = subprocess.run([python, "-c", _CROSS_VERSION, str(ROOT)],
                             capture_output=True, text=True, check=True)
        assert out.stdout == expected, python


def test_uniform_board_is_uniform_over_the_solvable_class_of_2x2() -> None:
    g = grid(2)
    goal = goal_board("standard", g)
    stream = D.BitStream(123)
    counts: dict = {}
    draws = 12_000
    for _ in range(draws):
        board = D.uniform_board(g, goal, stream)
        counts[board] = counts.get(board, 0) + 1
    assert len(counts) == 12  # 4!/2 solvable boards, each reached
    assert all(is_solvable(b, goal, g) for b in counts)
    # 11 degrees of freedom; 40 is far beyond p = 1e-4 (31.3). Fixed seed: no flake.
    assert _chi_square(list(counts.values()), [draws / 12] * 12) < 40


def test_random_permutation_parity_split_and_positions() -> None:
    stream = D.BitStream(2024)
    draws = 9000
    odd = 0
    where = [[0] * 9 for _ in range(9)]  # where[tile][cell]
    for _ in range(draws):
        perm = D.random_permutation(9, stream)
        odd += permutation_parity(perm)
        for cell, tile in enumerate(perm):
            where[tile][cell] += 1
    assert _chi_square([odd, draws - odd], [draws / 2] * 2) < 15  # 1 dof
    for tile in range(9):
        assert _chi_square(where[tile], [draws / 9] * 9) < 40  # 8 dof


def test_uniform_3x3_depths_follow_the_oracle_histogram() -> None:
    """Uniform over the solvable class <=> depth frequencies match the oracle's."""
    stream = D.BitStream(77)
    hist = oracle.histogram(STANDARD3, G3)
    draws = 6000
    depth_counts = [0] * len(hist)
    blank_at = [0] * 9
    for _ in range(draws):
        board = D.uniform_board(G3, STANDARD3, stream)
        depth_counts[oracle.distance(board, STANDARD3, G3)] += 1
        blank_at[board.index(0)] += 1
    # Pool the thin tails (depth < 14, > 28) so every bin expects >= ~15 boards.
    def pooled(values: list[float]) -> list[float]:
        return [sum(values[:14]), *values[14:29], sum(values[29:])]

    expected = pooled([draws * c / 181_440 for c in hist])
    assert _chi_square(pooled(depth_counts), expected) < 60  # 16 dof
    assert _chi_square(blank_at, [draws / 9] * 9) < 40


@pytest.mark.parametrize("g", [G3, G4, grid(2, 3)])
def test_unsolvable_and_uniform_give_the_right_class(g) -> None:
    for goal_spec in ("standard", "spiral", "blank-first"):
        goal = goal_board(goal_spec, g)
        for solvable in (True, False):
            boards = D.uniform_boards(g, goal, count=30, stream=D.BitStream(3),
                                      solvable=solvable)
            assert all(is_solvable(b, goal, g) == solvable for b in boards)


def test_random_walk_depths_are_bounded_by_the_walk_length() -> None:
    ds = D.generate("random_walk", G3, STANDARD3, name="w", seed=1, count=60,
                    length=17)
    for inst in ds.instances:
        true = oracle.distance(inst.start, STANDARD3, G3)
        assert inst.optimal_length == true
        assert true <= 17 and true % 2 == 1  # each move flips the blank's colour
        assert inst.id.startswith(f"d{true:02d}-")
    assert max(i.optimal_length for i in ds.instances) >= 11


def test_random_walk_never_undoes_a_move() -> None:
    # Length 2 on a 2x2: without undo, both moves go round the cycle, so no board
    # equals the goal; with undo half the walks would come back.
    g = grid(2)
    goal = goal_board("standard", g)
    boards = D.random_walk_boards(g, goal, count=2, length=2, stream=D.BitStream(0))
    assert goal not in boards
    with pytest.raises(D.DatasetError, match="found only 2 distinct boards"):
        D.random_walk_boards(g, goal, count=3, length=2, stream=D.BitStream(0))


def test_depth_strata_takes_k_per_depth_or_all_there_are() -> None:
    ds = D.generate("depth_strata", G3, STANDARD3, name="s", seed=4, count=3,
                    unsolvable=5)
    per_depth: dict = {}
    for inst in ds.instances:
        if inst.solvable:
            assert inst.optimal_length == oracle.distance(inst.start, STANDARD3, G3)
            per_depth[inst.optimal_length] = per_depth.get(inst.optimal_length, 0) + 1
    hist = oracle.histogram(STANDARD3, G3)
    assert per_depth == {d: min(3, c) for d, c in enumerate(hist)}
    assert sum(not i.solvable for i in ds.instances) == 5
    assert ds.params == {"count": 3, "depths": "0..31", "unsolvable": 5,
                         "label": "oracle"}
    assert [i.id for i in ds.instances[:4]] == [
        "d00-0001", "d01-0001", "d01-0002", "d02-0001"]
    chosen = D.generate("depth_strata", G3, STANDARD3, name="s", seed=4, count=2,
                        depths=D.parse_depths("20,22..23"))
    assert sorted(i.optimal_length for i in chosen.instances) == [20, 20, 22, 22,
                                                                  23, 23]


def test_depth_strata_refuses_impossible_requests() -> None:
    with pytest.raises(D.DatasetError, match=r"depth 32 .*0\.\.31"):
        D.generate("depth_strata", G3, STANDARD3, name="s", seed=1, count=1,
                   depths=[32])
    with pytest.raises(D.DatasetError, match="at most 9 squares"):
        D.generate("depth_strata", G4, goal_board("standard", G4), name="s", seed=1,
                   count=1)


def test_generate_rejects_bad_arguments() -> None:
    for kwargs, message in [
        ({"generator": "shuffle"}, "unknown generator"),
        ({"name": "default"}, "dataset name"),
        ({"name": "a b"}, "dataset name"),
        ({"seed": -1}, "seed"),
        ({"generator": "random_walk"}, "--length is required"),
        ({"label": "guess"}, "label 'guess'"),
    ]:
        args = {"generator": "uniform", "name": "t", "seed": 1, **kwargs}
        with pytest.raises(D.DatasetError, match=message):
            D.generate(args.pop("generator"), G3, STANDARD3, count=3, **args)
    with pytest.raises(D.DatasetError, match="label oracle"):
        D.generate("uniform", G4, goal_board("standard", G4), name="t", seed=1,
                   count=1, label="oracle")


def test_labelling_with_a_solver_records_the_source() -> None:
    g = grid(2, 3)
    goal = goal_board("standard", g)
    ds = D.generate("uniform", g, goal, name="t", seed=2, count=6,
                    label="solver:bfs")
    assert {i.optimal_source for i in ds.instances} == {"solver:bfs"}
    for inst in ds.instances:
        assert inst.optimal_length == oracle.distance(inst.start, goal, g)
    assert "--label 'solver:bfs'" in ds.command
    with pytest.raises(D.DatasetError, match="unknown solver"):
        D.generate("uniform", g, goal, name="t", seed=2, count=2,
                   label="solver:nope")


def test_parse_and_format_depths() -> None:
    assert D.parse_depths("0..3,7, 9-10") == [0, 1, 2, 3, 7, 9, 10]
    assert D.format_depths([0, 1, 2, 3, 7, 9, 10]) == "0..3,7,9..10"
    for bad in ("5..2", "x", "1,,2", "\u0665", "2..\u0665"):  # Arabic-Indic 5
        with pytest.raises(D.DatasetError, match="depths"):
            D.parse_depths(bad)


# ------------------------------------------------------------ committed sets


#: recipes whose labels take a solver minutes (25-walks needs the pdb6666 tables)
SLOW_RECIPES = ("15-walks", "25-walks")


@pytest.mark.parametrize(
    "name", [n for n in catalogue.RECIPES if n not in SLOW_RECIPES]
)
def test_committed_dataset_regenerates_byte_for_byte(name: str) -> None:
    built = D.dumps_dataset(catalogue.build(name)).encode()
    assert built == (COMMITTED / f"{name}.jsonl").read_bytes()
    # The header alone says how to make it again.
    loaded = D.load_dataset(COMMITTED / f"{name}.jsonl")
    assert D.dumps_dataset(D.regenerate(loaded)).encode() == built


@pytest.mark.slow
def test_committed_15_walks_regenerates_byte_for_byte() -> None:
    built = D.dumps_dataset(catalogue.build("15-walks")).encode()
    assert built == (COMMITTED / "15-walks.jsonl").read_bytes()


@pytest.mark.skipif(
    not os.environ.get("NPUZZLE_FULL_PDB6666"),
    reason="labels with ida_star_jit[pdb6666] (builds or loads its tables) and "
    "cross-checks with Manhattan: NPUZZLE_FULL_PDB6666=1 runs it",
)
def test_committed_25_walks_regenerates_byte_for_byte() -> None:
    built = D.dumps_dataset(catalogue.build("25-walks")).encode()
    assert built == (COMMITTED / "25-walks.jsonl").read_bytes()
    loaded = D.load_dataset(COMMITTED / "25-walks.jsonl")
    assert D.dumps_dataset(D.regenerate(loaded)).encode() == built


def test_committed_25_walks_say_how_their_labels_were_made() -> None:
    ds = D.load_dataset("25-walks")
    assert ds.params["length"] == "30,40,50,60,70,80,90" and len(ds.instances) == 35
    checked = 0
    for inst in ds.instances:
        assert inst.optimal_source == "solver:ida_star_jit[pdb6666]"
        if inst.optimal_length <= 60:
            assert inst.extra["cross_checked_by"] == "ida_star_jit[manhattan]"
            checked += 1
        else:
            assert "cross_checked_by" not in inst.extra
    assert D.summarize(ds)["cross_checked"] == {"ida_star_jit[manhattan]": checked}


def test_slow_recipes_ship_their_file_so_a_built_in_copy_is_never_remade(
    tmp_path, monkeypatch,
) -> None:
    for name in catalogue.PACKAGED:
        packaged = files("harness").joinpath(f"data/{name}.jsonl").read_bytes()
        assert packaged == (COMMITTED / f"{name}.jsonl").read_bytes()
    monkeypatch.setattr(catalogue, "repo_datasets_dir", lambda: None)  # a wheel
    monkeypatch.delenv("NPUZZLE_DATASETS", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(catalogue, "build", None)  # remaking it would fail here
    ds = D.load_dataset("25-walks")
    assert ds.path is None and len(ds.instances) == 35


def test_every_committed_file_has_a_recipe_and_vice_versa() -> None:
    assert {p.stem for p in COMMITTED.glob("*.jsonl")} == set(catalogue.RECIPES)


@pytest.mark.parametrize("name", sorted(catalogue.RECIPES))
def test_committed_dataset_loads_and_optima_are_exact(name: str) -> None:
    ds = D.load_dataset(name)
    assert ds.path is not None and ds.name == name
    assert ds.instances
    for inst in ds.instances:
        assert inst.goal == ds.goal and inst.grid == ds.grid
        assert inst.solvable == is_solvable(inst.start, ds.goal, ds.grid)
        if ds.grid.squares <= 9:
            assert inst.optimal_length == oracle.distance(inst.start, ds.goal, ds.grid)
            assert inst.optimal_source == ("oracle" if inst.solvable else None)


def test_committed_sizes_and_goals() -> None:
    expect = {
        "8-seeds": ("3x3", "standard"), "8-seeds-spiral": ("3x3", "spiral"),
        "8-strata": ("3x3", "standard"), "8-uniform": ("3x3", "standard"),
        "8-unsolvable": ("3x3", "standard"), "8-spiral": ("3x3", "spiral"),
        "8-mini": ("3x3", "standard"), "15-korf100": ("4x4", "blank-first"),
        "15-walks": ("4x4", "standard"), "25-korf50": ("5x5", "blank-first"),
        "25-walks": ("5x5", "blank-first"),
    }
    for name, (size, goal) in expect.items():
        s = D.summarize(D.load_dataset(name))
        assert (s["size"], s["goal"]) == (size, goal), name
    assert D.summarize(D.load_dataset("8-uniform"))["instances"] == 200
    assert D.summarize(D.load_dataset("8-unsolvable"))["unsolvable"] == 50
    strata = D.summarize(D.load_dataset("8-strata"))
    assert (strata["min_depth"], strata["max_depth"]) == (0, 31)
    assert set(strata["histogram"]) == set(range(32))


def test_seed_boards_and_their_published_answers() -> None:
    ds = D.load_dataset("8-seeds")
    by_board = {i.start: i for i in ds.instances}
    judge = by_board[parse_board("2 3 4 1 5 x 7 6 8", G3)]
    assert judge.optimal_length == 19
    assert by_board[parse_board("1 2 3 x 4 6 7 5 8", G3)].optimal_length == 3
    for inst in ds.instances:
        answer = inst.extra.get("published_answer")
        if answer:
            assert apply_moves(inst.start, answer, G3) == ds.goal
            assert len(answer) == inst.optimal_length
    spiral = D.load_dataset("8-seeds-spiral")
    assert spiral.goal == parse_board("1 2 3 8 x 4 7 6 5", G3)


def _korf_table() -> list[tuple[int, tuple[int, ...], int, int]]:
    rows = []
    text = files("harness").joinpath("data/korf100.tsv").read_text()
    for line in text.splitlines():
        if line and not line.startswith("#"):
            n, tiles, length, nodes = line.split("\t")
            rows.append((int(n), tuple(map(int, tiles.split())), int(length),
                         int(nodes)))
    return rows


def test_korf100_matches_the_published_table() -> None:
    ds = D.load_dataset("15-korf100")
    table = _korf_table()
    assert len(ds.instances) == len(table) == 100
    for inst, (n, tiles, length, nodes) in zip(ds.instances, table, strict=True):
        assert inst.id == f"korf-{n:03d}"
        assert inst.start == tiles and inst.solvable
        assert inst.optimal_length == length and inst.optimal_source == "published"
        assert inst.extra["published_nodes"] == nodes
    assert ds.instances[0].optimal_length == 57
    assert ds.goal == tuple(range(16))
    lengths = [i.optimal_length for i in ds.instances]
    assert round(sum(lengths) / 100, 2) == 53.05
    doubtful = {i.id for i in ds.instances if i.extra.get("nodes_doubtful")}
    assert doubtful == {"korf-022", "korf-088", "korf-089"}
    header = files("harness").joinpath("data/korf100.tsv").read_text()
    for rerun in catalogue.KORF_DOUBTFUL_NODES.values():
        assert str(rerun) in header


def test_korf50_matches_the_packaged_table() -> None:
    ds = D.load_dataset("25-korf50")
    g5 = grid(5)
    rows = []
    for line in files("harness").joinpath("data/korf50.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            n, tiles, length = line.split("\t")
            rows.append((int(n), tuple(map(int, tiles.split())), int(length)))
    assert len(ds.instances) == len(rows) == 50
    for inst, (n, tiles, length) in zip(ds.instances, rows, strict=True):
        assert inst.id == f"kf-{n:02d}" and inst.start == tiles and inst.solvable
        assert inst.optimal_length == length and inst.optimal_source == "published"
        assert inst.extra.get("korf_taylor_1996", False) == (n <= 10)
    assert ds.goal == tuple(range(25)) and ds.grid == g5
    # Korf & Taylor's ten (domslee.com, 2021, in this numbering) and the first
    # one's board
    assert [i.optimal_length for i in ds.instances[:10]] == [
        95, 96, 97, 98, 100, 101, 104, 108, 113, 114
    ]
    assert format_board(ds.instances[0].start) == (
        "14 5 9 2 18 8 23 19 12 17 15 x 10 20 4 6 11 21 1 7 24 3 16 22 13"
    )
    lengths = [i.optimal_length for i in ds.instances]
    assert (min(lengths), max(lengths)) == (81, 114)
    assert round(sum(lengths) / 50, 2) == 100.78


def test_random_walks_of_several_lengths_and_a_cross_check(monkeypatch) -> None:
    goal = goal_board("standard", G3)
    ds = D.generate("random_walk", G3, goal, name="t", seed=4, count=3,
                    length="6,12", cross_check="solver:bfs", cross_check_depth=8)
    assert ds.params["length"] == "6,12" and len(ds.instances) == 6
    assert len({i.start for i in ds.instances}) == 6
    for inst in ds.instances:
        assert inst.optimal_length == oracle.distance(inst.start, goal, G3)
        assert ("cross_checked_by" in inst.extra) == (inst.optimal_length <= 8)
    assert "--length 6,12" in ds.command and "--cross-check 'solver:bfs'" in ds.command
    again = D.regenerate(D.parse_dataset(D.dumps_dataset(ds)))
    assert D.dumps_dataset(again) == D.dumps_dataset(ds)
    # one length is stored as a number, as before lists existed
    one = D.generate("random_walk", G3, goal, name="t", seed=4, count=3, length="6")
    assert one.params["length"] == 6
    # a second solver that disagrees stops the dataset
    real = generators.make_labeller

    def detour(label, goal_, g):
        labeller, source = real(label, goal_, g)
        if label == "solver:bfs":
            return (lambda board: labeller(board) + 2), source
        return labeller, source

    monkeypatch.setattr(generators, "make_labeller", detour)
    with pytest.raises(D.DatasetError, match="cross-check: bfs finds"):
        D.generate("random_walk", G3, goal, name="t", seed=4, count=3, length=6,
                   cross_check="solver:bfs", cross_check_depth=8)


@pytest.mark.slow
def test_15_walks_labels_agree_with_an_independent_optimal_solver() -> None:
    from harness.solver import Counters, all_solvers

    bidir = all_solvers()["bidir_bfs"]
    ds = D.load_dataset("15-walks")
    assert {i.optimal_source for i in ds.instances} == {"solver:astar_dict[manhattan]"}
    for inst in ds.instances[:12]:
        moves = bidir.solve(inst.start, ds.goal, ds.grid, counters=Counters(),
                            heuristic=None)
        assert len(moves) == inst.optimal_length, inst.id
        assert inst.optimal_length <= ds.params["length"]


# --------------------------------------------------- search path, selections


def test_search_path_prefers_env_then_cwd_then_repo(tmp_path, monkeypatch) -> None:
    local = tmp_path / "work" / "datasets"
    local.mkdir(parents=True)
    mine = D.generate("uniform", G3, STANDARD3, name="8-uniform", seed=99, count=3)
    D.save_dataset(mine, local)
    monkeypatch.chdir(tmp_path / "work")
    assert D.find_dataset("8-uniform") == local / "8-uniform.jsonl"
    assert D.load_dataset("8-uniform").checksum == mine.checksum
    assert D.find_dataset("8-strata") == COMMITTED / "8-strata.jsonl"  # falls through
    env = tmp_path / "env"
    env.mkdir()
    other = D.generate("uniform", G3, STANDARD3, name="8-uniform", seed=98, count=2)
    D.save_dataset(other, env)
    monkeypatch.setenv("NPUZZLE_DATASETS", str(env))
    assert D.load_dataset("8-uniform").checksum == other.checksum
    names = [n for n, _ in D.list_datasets()]
    assert names.count("8-uniform") == 1 and "15-korf100" in names
    assert dict(D.list_datasets())["8-uniform"] == env / "8-uniform.jsonl"


def test_explicit_paths_and_unknown_names(tmp_path) -> None:
    ds = D.generate("uniform", G3, STANDARD3, name="mine", seed=1, count=2)
    path = D.save_dataset(ds, tmp_path)
    assert D.load_dataset(str(path)).checksum == ds.checksum
    assert D.load_dataset(path).name == "mine"
    with pytest.raises(D.DatasetError, match="unknown dataset 'nosuch'; known: .*8-"):
        D.load_dataset("nosuch")
    with pytest.raises(D.DatasetError, match="no such dataset file"):
        D.load_dataset(tmp_path / "missing.jsonl")


def test_committed_datasets_are_built_in_when_no_file_is_found(
    tmp_path, monkeypatch
) -> None:
    monkeypatch.setattr(catalogue, "repo_datasets_dir", lambda: None)  # a wheel install
    monkeypatch.delenv("NPUZZLE_DATASETS", raising=False)
    monkeypatch.chdir(tmp_path)
    assert D.list_datasets() == []
    assert set(D.dataset_names()) == set(catalogue.RECIPES)
    ds = D.load_dataset("8-mini")
    assert ds.path is None
    assert D.dumps_dataset(ds).encode() == (COMMITTED / "8-mini.jsonl").read_bytes()
    assert [d.name for d in D.select_datasets("default")] == list(
        D.SELECTIONS["default"])
    with pytest.raises(D.DatasetError, match="unknown dataset 'zzz'; known: 15-"):
        D.load_dataset("zzz")
    with pytest.raises(D.DatasetError, match="no such dataset file"):
        D.load_dataset("datasets/8-mini.jsonl")  # a path is never a recipe name


def test_selections() -> None:
    default = D.select_datasets("default")
    assert [d.name for d in default] == list(D.SELECTIONS["default"])
    assert sum(len(d.instances) for d in default) < 60  # keeps `harness run` quick
    assert {d.name for d in D.select_datasets("all")} == set(catalogue.RECIPES)
    picked = D.select_datasets("8-seeds, 8-mini,8-seeds")
    assert [d.name for d in picked] == ["8-seeds", "8-mini"]
    with pytest.raises(D.DatasetError, match="names no dataset"):
        D.select_datasets(" , ")


def test_save_refuses_to_overwrite_without_force(tmp_path) -> None:
    ds = D.generate("uniform", G3, STANDARD3, name="t", seed=1, count=2)
    D.save_dataset(ds, tmp_path)
    with pytest.raises(D.DatasetError, match="already exists"):
        D.save_dataset(ds, tmp_path)
    D.save_dataset(ds, tmp_path, force=True)


def test_cosmetic_reformatting_still_loads(tmp_path) -> None:
    ds = D.generate("uniform", G3, STANDARD3, name="t", seed=1, count=4)
    lines = D.dumps_dataset(ds).splitlines()
    pretty = [json.dumps(json.loads(line), indent=None, separators=(" ,", " :  "))
              for line in lines]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(pretty) + "\n\n")
    assert D.load_dataset(path).checksum == ds.checksum


# ---------------------------------------------------------- malformed files


def _records(ds: D.Dataset) -> list[dict]:
    return [json.loads(line) for line in D.dumps_dataset(ds).splitlines()]


def _write(tmp_path: Path, records: list, name: str = "t", *, rehash: bool = True
           ) -> Path:
    """Write records (dicts, or raw strings for broken lines) as a dataset file.

    With ``rehash`` the header's count and sha256 are recomputed the way the writer
    does (canonical line = ``json.dumps`` of the record), so the file carries exactly
    one fault: the one the test put there."""
    if rehash:
        body = [r for r in records[1:] if isinstance(r, dict)]
        digest = hashlib.sha256()
        for record in body:
            digest.update(json.dumps(record, ensure_ascii=False).encode() + b"\n")
        records[0] = {**records[0], "count": len(body), "sha256": digest.hexdigest()}
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def base3() -> D.Dataset:
    return D.generate("depth_strata", G3, STANDARD3, name="t", seed=1, count=1,
                      depths=[5, 10, 15], unsolvable=1)


def _mutate(records: list, line: int, **changes) -> list:
    records[line - 1] = {**records[line - 1], **changes}
    return records


MALFORMED = [
    # (case, mutation(records) -> records, rehash, expected message fragment)
    ("bad json", lambda r: r[:2] + ['{"id": "x", "board": '] + r[3:], False,
     r"t\.jsonl: line 3 bad JSON"),
    ("bad board", lambda r: _mutate(r, 2, board="1 2 3 4 5 6 7 y x"), True,
     r"line 2 \(id 'd05-0001'\) board: token 8 'y': not a tile"),
    ("wrong size", lambda r: _mutate(r, 3, board="1 2 3 4 x 5 6 7"), True,
     r"line 3 \(id 'd10-0001'\) board: expected 9 tokens for a 3x3 board, got 8"),
    ("duplicate tile", lambda r: _mutate(r, 3, board="1 1 3 4 x 5 6 7 8"), True,
     r"line 3 .*duplicate tile 1"),
    ("duplicate id", lambda r: _mutate(r, 3, id="d05-0001"), True,
     r"line 3 \(id 'd05-0001'\) duplicate id \(first at line 2\)"),
    ("checksum", lambda r: _mutate(r, 2, optimal_source=None, optimal_length=None),
     False, r"t\.jsonl: checksum mismatch"),
    ("count", lambda r: r[:-1], False, r"count mismatch: header says 4 .* has 3"),
    ("version", lambda r: _mutate(r, 1, version=2), True,
     r"line 1 unknown format version 2"),
    ("format", lambda r: _mutate(r, 1, format="csv"), True,
     r"line 1 not an npuzzle dataset"),
    ("goal name", lambda r: _mutate(r, 1, goal_name="spiral"), True,
     r"line 1 goal mismatch: goal_name 'spiral'"),
    ("instance goal", lambda r: _mutate(r, 2, goal="1 2 3 8 x 4 7 6 5"), True,
     r"line 2 \(id 'd05-0001'\) goal mismatch"),
    ("parity", lambda r: _mutate(r, 5, solvable=True), True,
     r"line 5 \(id 'unsolvable-0001'\) solvable is true but the parity says "
     r"unsolvable"),
    ("oracle", lambda r: _mutate(r, 3, optimal_length=12), True,
     r"line 3 \(id 'd10-0001'\) optimal_length 12 contradicts the oracle \(10 moves\)"),
    ("length on unsolvable", lambda r: _mutate(r, 5, optimal_length=3,
                                               optimal_source="oracle"), True,
     r"optimal_length 3 on an unsolvable board"),
    ("bad source", lambda r: _mutate(r, 2, optimal_source="guess"), True,
     r"optimal_source 'guess'"),
    ("negative length", lambda r: _mutate(r, 2, optimal_length=-1), True,
     r"optimal_length -1 must be at least 0 \(a count of moves\)"),
    # past int64 (issue 35 item 7): was taken, to overflow pandas later
    ("huge length", lambda r: _mutate(r, 2, optimal_length=2**63), True,
     r"optimal_length 9223372036854775808 must be at most 1000000"),
    ("float length", lambda r: _mutate(r, 2, optimal_length=5.0), True,
     r"optimal_length 5.0 is not a whole number"),
    # a path's cost goes through the one number reader too (harness.core.numbers)
    ("huge cost", lambda r: _mutate(r, 2, optimal_cost=10**400), True,
     r"line 2 \(id 'd05-0001'\) optimal_cost 1000000000.* is too large "
     r"\(a path's cost\)"),
    ("negative cost", lambda r: _mutate(r, 2, optimal_cost=-1.5), True,
     r"optimal_cost -1.5 must be at least 0 \(a path's cost\)"),
    ("text cost", lambda r: _mutate(r, 2, optimal_cost="7"), True,
     r"optimal_cost '7' is not a number \(a path's cost\)"),
    ("huge seed", lambda r: _mutate(r, 1, seed=2**64), True,
     r"line 1 header seed 18446744073709551616 must be at most"),
    ("missing key", lambda r: r[:1] + [{"id": "a", "board": r[1]["board"]}] + r[2:],
     True, r"line 2 \(id 'a'\) lacks 'solvable'"),
    ("unknown key", lambda r: _mutate(r, 2, depth=5), True,
     r"line 2 \(id 'd05-0001'\) unknown key\(s\) 'depth'"),
    ("bad id", lambda r: _mutate(r, 2, id=""), True, r"line 2 bad or missing"),
    ("header missing", lambda r: [{k: v for k, v in r[0].items() if k != "seed"},
                                  *r[1:]], True, r"line 1 header lacks 'seed'"),
    ("bad size", lambda r: _mutate(r, 1, size="3by3"), True, r"line 1 size:"),
    ("not object", lambda r: r[:1] + ["[1, 2]"] + r[2:], False,
     r"line 2 expected a JSON object"),
    ("name", lambda r: _mutate(r, 1, name="other"), True,
     r"name mismatch: header says 'other', file is t\.jsonl"),
]


@pytest.mark.parametrize(("case", "mutate", "rehash", "message"), MALFORMED,
                         ids=[m[0] for m in MALFORMED])
def test_each_malformed_file_gives_its_own_error(
    tmp_path, base3, case, mutate, rehash, message
) -> None:
    path = _write(tmp_path, mutate(_records(base3)), rehash=rehash)
    with pytest.raises(D.DatasetError, match=message) as info:
        D.load_dataset(path)
    text = str(info.value)
    assert "\n" not in text and str(path) in text


def test_the_unmodified_base_file_loads(tmp_path, base3) -> None:
    # Guards the table above: its errors come from the mutations, not the writer.
    assert D.load_dataset(_write(tmp_path, _records(base3))).checksum == base3.checksum


def test_empty_and_non_utf8_files(tmp_path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_text("")
    with pytest.raises(D.DatasetError, match="empty file"):
        D.load_dataset(empty)
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(D.DatasetError, match="not UTF-8"):
        D.load_dataset(binary)


def test_4x4_lengths_are_checked_against_manhattan_bound_and_parity(tmp_path) -> None:
    korf = D.load_dataset("15-korf100")
    for length, message in [(30, "below the Manhattan lower bound"),
                            (58, "wrong parity")]:
        records = _records(korf)
        records[1]["optimal_length"] = length
        path = _write(tmp_path, records, name="15-korf100")
        where = r"line 2 \(id 'korf-001'\)"
        with pytest.raises(D.DatasetError, match=rf"{where}.*{message}"):
            D.load_dataset(path)
