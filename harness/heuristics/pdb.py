"""Additive disjoint pattern databases (Korf & Felner 2002): built, cached, looked up.

A pattern is a group of tiles; its table gives, for every placement of those tiles,
the fewest moves *of those tiles* that bring them home, wherever the other tiles and
the blank are (the blank is not counted). Groups are disjoint, so the sum over a
partition (6-6-3, 7-8, ...) is a lower bound. With the *mirrored* lookup the board
is also transposed about the main diagonal and relabelled, the same tables are read
again for what amounts to the transposed partition, and the larger sum is used
(Felner, Korf & Hanan 2004). That needs the goal's blank on the diagonal (true for
``blank-first`` and ``standard``); for other goals the mirror is switched off.

Tables are built by a compiled breadth-first search (:func:`harness.kernels.pdb_bfs`)
over pattern placements plus the blank's region, stored one file per table under
``cache_dir("pdb")`` with a sha256 checksum (:mod:`harness.heuristics.pdb_files`),
and rebuilt when missing or corrupt.
Making a PDB heuristic (``make_heuristic("pdb663", goal, grid)``) therefore costs the
build (6-6-3: about 5 s of CPU; 7-8: minutes, see below) or a load (well under a
second for 6-6-3) the first time in a process: that is set-up work, which the runner
does outside the timed region. The heuristic's ``data`` is the :class:`PDBSet` the
compiled solvers read; ``PDBSet.summary()`` gives size and build/load time.

Module import is standard library only; numpy and numba load when a table is made.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from math import perm
from typing import Any

from harness.heuristics.pdb_files import read_table, table_file, write_table
from harness.heuristics.pdb_symmetry import share_tables, symmetries
from harness.heuristics.registry import Heuristic, Kernel, register_heuristic
from harness.puzzle import Board, Grid

#: Partitions as goal *squares* of the blank-first goal (blank on square 0), by grid.
#: 7-8 is Korf & Felner's (2002) top/bottom split; 6-6-3 is the shape common public
#: implementations use for the blank-last goal, turned 180 degrees (not checked
#: against the paper's figure). 6-6-6-6 is the 24-puzzle partition of the issue
#: (and of Sewell & Jacobson's public DIBBS code): an L of six around the blank's
#: corner and three 2x3 blocks, which are rotations of one block (two tables).
#: Its transpose, {1,2,5,6,7,12} {3,4,8,9,13,14} {10,11,15,16,20,21}
#: {17,18,19,22,23,24}, is the partition of Korf's own 24-puzzle program; the
#: mirrored lookup reads both.
PARTITIONS: dict[str, tuple[tuple[int, int], tuple[tuple[int, ...], ...]]] = {
    "pdb44": ((3, 3), ((1, 2, 4, 5), (3, 6, 7, 8))),
    "pdb555": ((4, 4), ((1, 2, 3, 6, 7), (4, 5, 8, 9, 12), (10, 11, 13, 14, 15))),
    "pdb663": ((4, 4), ((1, 2, 4, 5, 8, 9), (3, 6, 7, 10, 11, 15), (12, 13, 14))),
    "pdb78": ((4, 4), ((1, 2, 3, 4, 5, 6, 7), (8, 9, 10, 11, 12, 13, 14, 15))),
    "pdb6666": ((5, 5), (
        (1, 5, 6, 10, 11, 12), (2, 3, 4, 7, 8, 9), (13, 14, 18, 19, 23, 24),
        (15, 16, 17, 20, 21, 22),
    )),
}

#: Partitions stored at 4 bits per entry ((value - MD) / 2) and built by the
#: parallel builder of :mod:`harness.heuristics.pdb_build`; the others keep one
#: byte per entry.
PACKED = frozenset({"pdb78", "pdb6666"})


@dataclass(frozen=True, slots=True)
class TableInfo:
    """Where one pattern table came from and what it cost."""

    goal_squares: tuple[int, ...]
    entries: int
    source: str  # "built", "cache" or "memory" (already loaded in this process)
    seconds: float  # build or load time
    build_seconds: float  # the BFS time when it was built (from the file if loaded)
    max_value: int


@dataclass(eq=False)
class PDBSet:
    """A partition's tables bound to one goal, plus the arrays the kernels read.

    ``tables`` holds every distinct table back to back (uint8); group ``i``
    reads from ``offsets[i]`` at its squares mapped through ``gsquaremap[i]`` (groups
    that are rotations or reflections of one another share a table, see
    :mod:`harness.heuristics.pdb_symmetry`). Mirrored lookups read group ``i``
    through ``mtiles[i]`` (the tiles whose goal squares are the transposes of group
    i's) at the squares ``msquaremap[i]`` (the transpose, then ``gsquaremap[i]``).
    ``infos`` has one entry per distinct table.
    """

    name: str
    grid: Grid
    goal: Board
    groups: tuple[tuple[int, ...], ...]  # tiles of each group
    mirror: bool
    tables: Any = field(repr=False)  # numpy uint8, all tables concatenated
    arrays: dict[str, Any] = field(repr=False)
    infos: tuple[TableInfo, ...] = ()
    seconds: float = 0.0  # wall time spent making this set (build or load)

    @property
    def nbytes(self) -> int:
        return int(self.tables.nbytes)

    def summary(self) -> str:
        """One line for set-up reports: partition, size, build/load time."""
        parts = "-".join(str(len(g)) for g in self.groups)
        sources = sorted({i.source for i in self.infos})
        build = sum(i.build_seconds for i in self.infos)
        return (
            f"{self.name}: {parts} partition, {self.nbytes / 2**20:.1f} MiB, "
            f"{'mirrored' if self.mirror else 'no mirror'}, {'/'.join(sources)} "
            f"in {self.seconds:.2f} s (BFS build time {build:.1f} s)"
        )

    def estimate(self, board: Board) -> int:
        """The PDB bound of ``board`` in pure Python (same value as the kernels)."""
        pos = [0] * len(board)
        for square, tile in enumerate(board):
            pos[tile] = square
        view = self._view
        a = self.arrays
        mults = a["gmult_py"]

        def value(grp: int, offset: int, squares: list[int]) -> int:
            at = offset + _index(squares, mults[grp])
            if not a["packed"]:
                return view[at]
            cost = a["gcost_py"][grp]
            md = sum(cost[j][c] for j, c in enumerate(squares))
            return md + 2 * ((view[at >> 1] >> ((at & 1) * 4)) & 0xF)

        total = 0
        for grp, tiles in enumerate(self.groups):
            squaremap = a["gsquaremap_py"][grp]
            squares = [squaremap[pos[t]] for t in tiles]
            total += value(grp, a["offsets_py"][grp], squares)
        if self.mirror:
            other = 0
            for grp, tiles in enumerate(a["mtiles_py"]):
                squaremap = a["msquaremap_py"][grp]
                squares = [squaremap[pos[t]] for t in tiles]
                other += value(grp, a["moffsets_py"][grp], squares)
            total = max(total, other)
        return total

    @property
    def _view(self) -> memoryview:
        return self.arrays["view"]


def _index(squares: list[int], mult: list[int]) -> int:
    """Dense rank of a partial permutation of squares (as kernels.pattern_index);
    ``mult[i]`` is perm(n - 1 - i, k - 1 - i)."""
    used = 0
    index = 0
    for p, m in zip(squares, mult, strict=False):
        index += (p - (used & ((1 << p) - 1)).bit_count()) * m
        used |= 1 << p
    return index


# ------------------------------------------------------------ partitions


def partition_squares(name: str, goal: Board, g: Grid) -> tuple[tuple[int, ...], ...]:
    """The partition's goal-square groups for a goal whose blank is anywhere: a symmetry
    of the board carrying square 0 onto the blank when the blank is in a corner,
    otherwise the blank's square swapped for square 0 in the group holding it."""
    (rows, cols), groups = PARTITIONS[name]
    if (g.rows, g.cols) != (rows, cols):
        raise ValueError(f"{name} is defined for {rows}x{cols}, not {g.label}")
    blank = goal.index(0)
    if blank == 0:
        return groups
    for sym in symmetries(rows, cols):
        if sym[0] == blank:
            return tuple(tuple(sym[c] for c in grp) for grp in groups)
    return tuple(tuple(0 if c == blank else c for c in grp) for grp in groups)


# ------------------------------------------------------------ one table


_table_memo: dict[tuple, Any] = {}


def _table_key(g: Grid, goal_squares: tuple[int, ...], goal_blank: int,
               packed: bool = False) -> tuple:
    return (g.rows, g.cols, goal_squares, goal_blank, packed)


def build_table(g: Grid, goal_squares: tuple[int, ...], goal_blank: int, out=None):
    """Run the BFS for one pattern; returns the uint8 table (written into ``out``
    when given). Needs about 4 bytes per table entry while it runs. Raises
    ValueError for grids over 16 squares."""
    import numpy as np

    from harness import kernels

    n, k = g.squares, len(goal_squares)
    if n > 16:
        raise ValueError(f"pattern databases need at most 16 squares, not {n}")
    entries = perm(n, k)
    state = np.full(entries, 255 << 24, dtype=np.uint32)
    blocks = (entries >> 12) + 1
    flags_a = np.zeros(blocks, dtype=np.uint8)
    flags_b = np.zeros(blocks, dtype=np.uint8)
    mult = np.array([perm(n - 1 - i, k - 1 - i) for i in range(k)], dtype=np.int64)
    count, label, masks = _regions(g)
    depth, _states, _ = kernels.pdb_bfs(
        n, kernels.neighbour_array(g), np.array(goal_squares, dtype=np.int64),
        goal_blank, mult, _popcount(), _lowbit(), count, label, masks, state,
        flags_a, flags_b,
    )
    if depth < 0:
        raise ValueError(f"pattern {goal_squares}: too many blank regions")
    dist = np.empty(entries, dtype=np.uint8) if out is None else out
    dist[:] = state.view(np.uint8)[3::4] if np.little_endian else state >> 24
    del state
    # Only when the pattern holds all tiles but one do unreachable placements exist
    # (the other parity); they never occur on a solvable board, 0 keeps h admissible.
    dist[dist == 255] = 0
    return dist


def _regions(g: Grid):
    key = f"regions-{g.label}"
    if key not in _tables_small:
        from harness import kernels

        _tables_small[key] = kernels.region_tables(g.squares, g.cols)
    return _tables_small[key]


def load_table(g: Grid, goal_squares: tuple[int, ...], goal_blank: int, out=None,
               packed: bool = False, progress=None):
    """The table for one pattern, from memory, the cache or a fresh build (then
    cached); returns (array, TableInfo). ``packed``: 4 bits per entry, built by
    :func:`harness.heuristics.pdb_build.build_packed` (``progress`` is passed on
    to it)."""
    import numpy as np

    key = _table_key(g, goal_squares, goal_blank, packed)
    entries = perm(g.squares, len(goal_squares))
    size = (entries + 1) // 2 if packed else entries
    t0 = time.perf_counter()
    if key in _table_memo:
        table, build = _table_memo[key]
        if out is not None:
            out[:] = table
            table = out
        return table, TableInfo(
            goal_squares, entries, "memory", time.perf_counter() - t0, build,
            -1 if packed else int(table.max()),
        )
    table = np.empty(size, dtype=np.uint8) if out is None else out
    path = table_file(g, goal_squares, goal_blank, packed)
    build = None
    if path is not None:
        build = read_table(path, g, goal_squares, goal_blank, table, packed)
    source = "cache"
    if build is None:
        source = "built"
        if packed:
            from harness.heuristics import pdb_build

            pdb_build.build_packed(g, goal_squares, goal_blank, table, progress)
        else:
            build_table(g, goal_squares, goal_blank, out=table)
        build = time.perf_counter() - t0
        if path is not None:
            write_table(path, g, goal_squares, goal_blank, table, build, packed)
    table.flags.writeable = False
    _table_memo[key] = (table, build)
    return table, TableInfo(
        goal_squares, entries, source, time.perf_counter() - t0, build,
        -1 if packed else int(table.max()),
    )


# ------------------------------------------------------------ a partition


_set_memo: dict[tuple, PDBSet] = {}


def pdb_set(name: str, goal: Board, g: Grid, *, mirror: bool = True,
            progress=None, packed: bool | None = None) -> PDBSet:
    """The partition ``name`` bound to ``goal``: tables loaded or built, kernel
    arrays ready. ``mirror`` is honoured only when the goal's blank is on the main
    diagonal of an n x n board. ``progress(table, layer, done, total)`` is called
    during builds of packed tables (see
    :func:`harness.heuristics.pdb_build.build_packed`).
    ``packed`` overrides the partition's storage (tests compare the two)."""
    packed = name in PACKED if packed is None else packed
    key = (name, g.rows, g.cols, goal, mirror, packed)
    if key in _set_memo:
        return _set_memo[key]
    import numpy as np

    t0 = time.perf_counter()
    n = g.squares
    blank = goal.index(0)
    table_squares, shares = share_tables(g, partition_squares(name, goal, g), blank)
    # each group's goal squares in the slot order of the table it reads
    square_groups = [share.slots for share in shares]
    groups = tuple(tuple(goal[c] for c in grp) for grp in square_groups)
    transpose = [(c % g.cols) * g.rows + c // g.cols for c in range(n)]
    mirror = mirror and g.rows == g.cols and transpose[blank] == blank

    sizes = [perm(n, len(squares)) for squares in table_squares]
    if packed:  # offsets count entries; every table starts on a whole byte
        sizes = [size + (size & 1) for size in sizes]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    per_byte = 2 if packed else 1
    tables = np.empty(sum(sizes) // per_byte, dtype=np.uint8)
    infos = []
    layout = zip(table_squares, starts, sizes, strict=True)
    for i, (squares, off, size) in enumerate(layout):
        def report(layer, done, total, i=i):
            progress(i, layer, done, total)

        _, info = load_table(
            g, squares, blank, out=tables[off // per_byte : (off + size) // per_byte],
            packed=packed, progress=report if progress is not None else None,
        )
        infos.append(info)
    tables.flags.writeable = False
    offsets = [starts[share.table] for share in shares]

    kmax = max(len(grp) for grp in groups)
    gtiles = np.zeros((len(groups), kmax), dtype=np.int8)
    mtiles = np.zeros((len(groups), kmax), dtype=np.int8)
    gmult = np.zeros((len(groups), kmax), dtype=np.int64)
    # board square -> the square of the group's table, plainly and through the transpose
    gsquaremap = np.array([share.squaremap for share in shares], dtype=np.int8)
    msquaremap = np.array(
        [[share.squaremap[transpose[c]] for c in range(n)] for share in shares],
        dtype=np.int8,
    )
    # Manhattan distance of each table slot's home from each square of the table's
    # frame (packed tables add it back)
    gcost = np.zeros((len(groups), kmax, n), dtype=np.int32)
    for i, share in enumerate(shares):
        for j, home in enumerate(table_squares[share.table]):
            for c in range(n):
                gcost[i, j, c] = (abs(c // g.cols - home // g.cols)
                                  + abs(c % g.cols - home % g.cols))
    tile_group = np.full(n, -1, dtype=np.int8)
    mtile_group = np.full(n, -1, dtype=np.int8)
    mtiles_py = []
    for i, (tiles, squares) in enumerate(zip(groups, square_groups, strict=True)):
        k = len(tiles)
        # The mirrored board is transposed and relabelled so that its goal is the
        # goal again: the tile read for slot j is the one homed on the transpose
        # of the slot's goal square.
        mirrored = tuple(goal[transpose[c]] for c in squares)
        mtiles_py.append(mirrored)
        for j in range(k):
            gtiles[i, j] = tiles[j]
            mtiles[i, j] = mirrored[j]
            gmult[i, j] = perm(n - 1 - j, k - 1 - j)
            tile_group[tiles[j]] = i
            mtile_group[mirrored[j]] = i
    arrays = {
        "tables": tables,
        "offsets": np.array(offsets, dtype=np.int64),
        "gtiles": gtiles,
        "gsize": np.array([len(t) for t in groups], dtype=np.int64),
        "gmult": gmult,
        "tile_group": tile_group,
        "mirror": mirror,
        "moffsets": np.array(offsets, dtype=np.int64),
        "mtiles": mtiles,
        "mtile_group": mtile_group,
        "gsquaremap": gsquaremap,
        "msquaremap": msquaremap,
        "packed": packed,
        "gcost": gcost,
        # pure-Python views for PDBSet.estimate
        "gcost_py": gcost.tolist(),
        "view": memoryview(tables),
        "offsets_py": offsets,
        "moffsets_py": offsets,
        "mtiles_py": tuple(mtiles_py),
        "gmult_py": [
            [perm(n - 1 - j, len(t) - 1 - j) for j in range(len(t))] for t in groups
        ],
        "gsquaremap_py": gsquaremap.tolist(),
        "msquaremap_py": msquaremap.tolist(),
    }
    result = PDBSet(
        name, g, goal, groups, mirror, tables, arrays, tuple(infos),
        time.perf_counter() - t0,
    )
    _set_memo[key] = result
    return result


_tables_small: dict[str, Any] = {}


def _popcount():
    if "popcnt" not in _tables_small:
        from harness import kernels

        _tables_small["popcnt"] = kernels.popcount16()
    return _tables_small["popcnt"]


def _lowbit():
    if "lowbit" not in _tables_small:
        from harness import kernels

        _tables_small["lowbit"] = kernels.lowbit16()
    return _tables_small["lowbit"]


# ------------------------------------------------------------ heuristics


def refusal(name: str, g: Grid) -> str | None:
    """Why PDB heuristic ``name`` does not apply to ``g`` (None when it does)."""
    if name not in PARTITIONS:
        return f"unknown pattern database {name!r}"
    (rows, cols), _ = PARTITIONS[name]
    if (g.rows, g.cols) != (rows, cols):
        return f"the {name} partition is defined for {rows}x{cols} boards"
    return None


def _refuser(name: str):
    def refuses(g: Grid) -> str | None:
        return refusal(name, g)

    return refuses


def _ida_kernel(h: Heuristic) -> Kernel:
    a = h.data.arrays
    return Kernel("ida_pdb", (
        a["tables"], a["offsets"], a["gtiles"], a["gsize"], a["gmult"],
        a["tile_group"], a["mirror"], a["moffsets"], a["mtiles"], a["mtile_group"],
        a["gsquaremap"], a["msquaremap"], a["packed"], a["gcost"],
    ))  # fmt: skip


def _best_first_kernel(h: Heuristic) -> Kernel:
    return replace(_ida_kernel(h), function="best_first_pdb")


def weighted(name: str, goal: Board, g: Grid, cost_model: str, say=None):
    """Partition ``name``'s weighted tables for ``cost_model``
    (:func:`harness.heuristics.pdb_costs.weighted_set`: a WeightedPDB)."""
    from harness.heuristics.pdb_costs import weighted_set

    count, label, masks = _regions(g)
    tools = (count, label, masks, _popcount(), _lowbit())
    squares = partition_squares(name, goal, g)
    return weighted_set(name, goal, g, cost_model, squares, tools, say)


def _register(name: str, text: str, costs: bool = False, **slow) -> None:
    """Register partition ``name``; ``costs``: it also has weighted tables for tile
    costs (:mod:`harness.heuristics.pdb_costs`, read by the cost kernels)."""

    @register_heuristic(
        name, text, refuses=_refuser(name), tables=True,
        kernels={"ida": _ida_kernel, "best_first": _best_first_kernel}, costs=costs,
        **slow,
    )  # fmt: skip
    def make(goal: Board, g: Grid, cost_model: str = "unit") -> Heuristic:
        if cost_model != "unit":
            tables = weighted(name, goal, g, cost_model)
            return Heuristic(name, goal, g, tables.estimate, data=tables,
                             cost_model=cost_model)  # fmt: skip
        pdbs = pdb_set(name, goal, g)
        return Heuristic(name, goal, g, pdbs.estimate, data=pdbs)


#: CPU seconds of a pdb78 build (both tables, compilation included) measured on the
#: 2-core development machine under load (240 s at load average 8-14, CHANGELOG.md);
#: scaled by the machine's cores and load average for the runner's set-up estimate.
BUILD_CPU_SECONDS = {"pdb78": 240.0, "pdb6666": 290.0}


def distinct_tables(name: str, goal: Board, g: Grid) -> list[tuple[int, ...]]:
    """The goal squares of the tables partition ``name`` builds for ``goal`` (groups
    that are rotations or reflections of an earlier one read its table)."""
    return share_tables(g, partition_squares(name, goal, g), goal.index(0))[0]


def cached(name: str, goal: Board, g: Grid) -> bool:
    """Whether every table of the partition is in memory or has a cache file (not
    checksummed here: a corrupt file costs a rebuild later)."""
    blank = goal.index(0)
    packed = name in PACKED
    for squares in distinct_tables(name, goal, g):
        if _table_key(g, squares, blank, packed) in _table_memo:
            continue
        path = table_file(g, squares, blank, packed)
        if path is None or not path.exists():
            return False
    return True


def setup_estimate(name: str, goal: Board, g: Grid) -> float | None:
    """Rough wall seconds to build ``name`` here, or None when it is cached (or
    quick to build): CPU seconds over the cores free of the current load."""
    cpu = BUILD_CPU_SECONDS.get(name)
    if cpu is None or refusal(name, g) or cached(name, goal, g):
        return None
    cores = min(2, os.cpu_count() or 1)
    busy = os.getloadavg()[0] / (os.cpu_count() or 1)
    return cpu / cores * max(1.0, busy + 0.5)


def prebuild(name: str, goal: Board, g: Grid, report) -> None:
    """Build and cache ``name``'s tables, calling ``report(fraction, seconds_left)``
    after each BFS layer; the tables are dropped from memory afterwards (workers
    load them from the cache)."""
    tables = distinct_tables(name, goal, g)
    weights = [perm(g.squares, len(squares)) for squares in tables]
    before = [sum(weights[:i]) / sum(weights) for i in range(len(weights))]
    t0 = time.perf_counter()

    def progress(table: int, _layer: int, done: int, total: int) -> None:
        fraction = before[table] + weights[table] / sum(weights) * done / total
        elapsed = time.perf_counter() - t0
        left = elapsed / fraction * (1 - fraction) if fraction > 0.02 else None
        report(fraction, left)

    pdb_set(name, goal, g, progress=progress)
    clear_memory()


_register(
    "pdb44", "additive 4-4 pattern databases, mirrored max (3x3; 6 KiB; weighted "
    "tables for tile costs)", costs=True,
)  # fmt: skip
_register(
    "pdb555", "additive 5-5-5 pattern databases, mirrored max (4x4; 1.5 MiB, <1 s; "
    "weighted tables for tile costs: 6 MiB, ~4 s CPU per model)", costs=True,
)  # fmt: skip
_register(
    "pdb663",
    "additive 6-6-3 pattern databases, mirrored max (4x4; 11 MiB, built once in "
    "~5 s CPU, cached; weighted tables for tile costs: 44 MiB, ~45 s CPU per "
    "model)", costs=True,
)  # fmt: skip
_register(
    "pdb78",
    "additive 7-8 pattern databases, mirrored max (4x4; 275 MiB at 4 bits per "
    "entry, built once on both cores in minutes, cached)",
    setup_estimate=lambda goal, g: setup_estimate("pdb78", goal, g),
    prebuild=lambda goal, g, report: prebuild("pdb78", goal, g, report),
)
_register(
    "pdb6666",
    "additive 6-6-6-6 pattern databases, mirrored max (5x5; two distinct tables, "
    "122 MiB at 4 bits per entry, built once on both cores in minutes, cached)",
    setup_estimate=lambda goal, g: setup_estimate("pdb6666", goal, g),
    prebuild=lambda goal, g, report: prebuild("pdb6666", goal, g, report),
)


def clear_memory() -> None:
    """Forget tables and sets loaded in this process (tests use it to exercise the
    disk cache)."""
    _table_memo.clear()
    _set_memo.clear()
    from harness.heuristics import pdb_costs, walking_distance

    walking_distance._wd_memo.clear()
    pdb_costs.clear_memory()
