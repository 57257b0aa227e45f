"""Weighted additive pattern databases: lower bounds on the cheapest path's cost
under a tile cost model (:mod:`harness.core.costs`).

A pattern's weighted table gives, for every placement of its tiles, the cheapest
cost of bringing them home when a move of pattern tile t costs cost(t) and a move
of any other tile costs 0 (it is another pattern's, or nobody's). A real path
moves each tile in turn; splitting its cost by the moving tile's group, each
group's share is a path in that group's abstraction, so it costs at least the
group's table value, and the sum over a disjoint partition stays admissible.
It is not consistent: a table entry is the minimum over the blank's regions (as
the unit tables), so one move can lower it by more than the move's cost (a 3x3
heavy board: 59 to 41 by moving tile 8). The solvers that take it reopen
boards (A*, weighted A*) or do not keep them (IDA*), so their answers stay
optimal or within their bound.

Tables are built by a Dijkstra search over (placement, blank region)
(:func:`harness.kernels.pdb_costs.pdb_dijkstra`), stored as float32 rounded
down (never above the float64 cost), and cached per cost model beside the unit
tables (``cache_dir("pdb")``, one file per pattern and model, sha256-checked).
Two differences from the unit PDBs: no mirrored lookup (the transposed board's
tiles have other costs, so it would need tables of its own), and no sharing of
tables between symmetric groups (their tiles' costs differ).

Build figures: ``python tests/benchmarks/bench_pdb_costs.py`` (docs/costs.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import perm
from typing import Any

from harness.core.costs import tile_costs
from harness.puzzle import Board, Grid

#: Heap pops per call of the compiled search, between progress reports.
_SLICE = 1 << 21

_table_memo: dict[tuple, Any] = {}
_set_memo: dict[tuple, WeightedPDB] = {}


@dataclass(eq=False)
class WeightedPDB:
    """A partition's weighted tables bound to one goal and cost model, and the
    arrays the cost kernels read (``arrays``: tables, offsets, gtiles, gsize,
    gmult, popcnt)."""

    name: str
    grid: Grid
    goal: Board
    cost_model: str
    groups: tuple[tuple[int, ...], ...]  # tiles of each group
    arrays: dict[str, Any] = field(repr=False)
    sources: tuple[str, ...] = ()  # per table: "built", "cache" or "memory"
    build_seconds: float = 0.0  # the searches' time, summed (from the files if cached)
    seconds: float = 0.0  # wall time spent making this set here

    @property
    def nbytes(self) -> int:
        return int(self.arrays["tables"].nbytes)

    def summary(self) -> str:
        """One line for set-up reports: partition, model, size, build/load time."""
        parts = "-".join(str(len(g)) for g in self.groups)
        return (
            f"{self.name} weighted by {self.cost_model} costs: {parts} partition, "
            f"{self.nbytes / 2**20:.1f} MiB, {'/'.join(sorted(set(self.sources)))} "
            f"in {self.seconds:.2f} s (search time {self.build_seconds:.1f} s)"
        )

    def estimate(self, board: Board) -> float:
        """The bound of ``board`` in pure Python (the kernels' value, bit for bit:
        the same float32 entries summed in float64 in group order)."""
        pos = [0] * len(board)
        for square, tile in enumerate(board):
            pos[tile] = square
        view, offsets, mults = self._view, self._offsets, self._mults
        total = 0.0
        for grp, tiles in enumerate(self.groups):
            used = index = 0
            for tile, mult in zip(tiles, mults[grp], strict=True):
                p = pos[tile]
                index += (p - (used & ((1 << p) - 1)).bit_count()) * mult
                used |= 1 << p
            total += view[offsets[grp] + index]
        return total

    def __post_init__(self) -> None:
        a = self.arrays
        self._view = memoryview(a["tables"])
        self._offsets = a["offsets"].tolist()
        self._mults = [row[: len(t)] for row, t in zip(a["gmult"].tolist(),
                                                       self.groups, strict=True)]


def build_weighted_table(
    g: Grid, goal_squares: tuple[int, ...], goal_blank: int, costs: tuple[float, ...],
    tools: tuple, progress: Callable[[float], None] | None = None,
):  # fmt: skip
    """Run the Dijkstra search for one pattern whose slot j is homed on
    ``goal_squares[j]`` and costs ``costs[j]`` a move; returns the float32 table
    (rounded down). ``progress(fraction of placements reached)`` after each
    slice. ``tools``: the grid's blank-region tables (count, label, masks) and
    the 16-bit popcount and lowest-bit tables (:func:`harness.heuristics.pdb.
    build_tools`). Needs about 64 bytes per placement while it runs (8 regions of
    float64, and the heap)."""
    import numpy as np

    from harness import kernels
    from harness.kernels import pdb_costs

    n, k = g.squares, len(goal_squares)
    if n > 16:
        raise ValueError(f"pattern databases need at most 16 squares, not {n}")
    entries = perm(n, k)
    regions = pdb_costs.REGIONS
    dist = np.full(entries * regions, np.inf, dtype=np.float64)
    hd = np.empty(1 << 16, dtype=np.float64)
    hs = np.empty(1 << 16, dtype=np.int64)
    mult = np.array([perm(n - 1 - i, k - 1 - i) for i in range(k)], dtype=np.int64)
    count, label, masks, popcnt, lowbit = tools
    cost = np.array(costs, dtype=np.float64)
    size = pdb_costs.pdb_dijkstra_start(
        n, np.array(goal_squares, dtype=np.int64), goal_blank, mult, popcnt,
        label, dist, hd, hs,
    )  # fmt: skip
    nbr = kernels.neighbour_array(g)
    reached = 1
    while size > 0:
        size, hd, hs, _settled, new = pdb_costs.pdb_dijkstra(
            n, nbr, k, mult, lowbit, count, label, masks, cost, dist, hd, hs,
            size, _SLICE,
        )  # fmt: skip
        if size < 0:
            raise ValueError(f"pattern {goal_squares}: too many blank regions")
        reached += new
        if progress is not None:
            progress(reached / entries)
    best = dist.reshape(entries, regions).min(axis=1)
    del dist
    # Unreached placements (the other parity, when the pattern holds all tiles but
    # one) never occur on a solvable board: 0 keeps h admissible.
    best[best == np.inf] = 0.0
    table = best.astype(np.float32)
    over = table.astype(np.float64) > best
    table[over] = np.nextafter(table[over], np.float32(0))
    return table


def _cache_path(g: Grid, goal_squares, goal_blank: int, tiles, cost_model: str):
    """The cache file of one weighted table (None: no writable cache folder): the
    tiles are in its name, since their costs make the table."""
    from harness.core.cache import cache_dir

    folder = cache_dir("pdb")
    if folder is None:
        return None
    squares = ".".join(map(str, goal_squares))
    names = ".".join(map(str, tiles))
    return folder / (f"{g.label}-blank{goal_blank}-squares{squares}-tiles{names}-"
                     f"{cost_model}.f32.bin")  # fmt: skip


def _key(g: Grid, goal_squares, goal_blank: int, tiles, cost_model: str) -> tuple:
    costs = tile_costs(cost_model, g.squares)
    slot_costs = tuple(float(costs[t]) for t in tiles)
    return (g.rows, g.cols, goal_squares, goal_blank, cost_model, slot_costs)


def _stored(g: Grid, goal_squares, goal_blank: int, tiles, cost_model: str) -> bool:
    """Whether the table is in memory or has a cache file (not checked here)."""
    if _key(g, goal_squares, goal_blank, tiles, cost_model) in _table_memo:
        return True
    path = _cache_path(g, goal_squares, goal_blank, tiles, cost_model)
    return path is not None and path.exists()


def weighted_table(
    g: Grid, goal_squares: tuple[int, ...], goal_blank: int, tiles: tuple[int, ...],
    cost_model: str, tools: tuple, progress: Callable[[float], None] | None = None,
):  # fmt: skip
    """The weighted table of the pattern ``tiles`` (homed on ``goal_squares``)
    under ``cost_model``, from memory, the cache or a build (then cached);
    returns (float32 array, source, build seconds)."""
    import numpy as np

    from harness.heuristics.pdb_files import read_table, write_table

    key = _key(g, goal_squares, goal_blank, tiles, cost_model)
    slot_costs = key[-1]
    if key in _table_memo:
        table, build = _table_memo[key]
        return table, "memory", build
    more = {"cost_model": cost_model, "costs": list(slot_costs), "entry": "float32"}
    table = np.empty(perm(g.squares, len(goal_squares)), dtype=np.float32)
    path = _cache_path(g, goal_squares, goal_blank, tiles, cost_model)
    raw = table.view(np.uint8)
    build = None
    if path is not None:
        build = read_table(path, g, goal_squares, goal_blank, raw, more=more)
    source = "cache"
    if build is None:
        source = "built"
        t0 = time.perf_counter()
        table[:] = build_weighted_table(g, goal_squares, goal_blank, slot_costs,
                                        tools, progress)  # fmt: skip
        build = time.perf_counter() - t0
        if path is not None:
            write_table(path, g, goal_squares, goal_blank, raw, build, more=more)
    table.flags.writeable = False
    _table_memo[key] = (table, build)
    return table, source, build


def weighted_set(
    name: str, goal: Board, g: Grid, cost_model: str,
    square_groups: tuple[tuple[int, ...], ...], tools: tuple,
    say: Callable[[str], None] | None = None,
) -> WeightedPDB:  # fmt: skip
    """The partition ``name`` (its groups' goal squares for ``goal``:
    ``square_groups``) bound to ``goal``, weighted by ``cost_model``'s tile
    costs: tables loaded or built. Called through
    :func:`harness.heuristics.pdb.weighted` (which passes the groups and the
    ``tools`` of :func:`build_weighted_table`). ``say`` hears what is built (a
    line before each table not in memory or the cache, and how far every 5 s)."""
    key = (name, g.rows, g.cols, goal, cost_model)
    if key in _set_memo:
        return _set_memo[key]
    import numpy as np

    t0 = time.perf_counter()
    n = g.squares
    blank = goal.index(0)
    groups = tuple(tuple(goal[c] for c in grp) for grp in square_groups)
    sizes = [perm(n, len(grp)) for grp in groups]
    tables = np.empty(sum(sizes), dtype=np.float32)
    offsets = [sum(sizes[:i]) for i in range(len(sizes))]
    sources, build = [], 0.0
    for i, (squares, tiles) in enumerate(zip(square_groups, groups, strict=True)):
        report = None
        if say is not None and not _stored(g, squares, blank, tiles, cost_model):
            say(f"set-up: building the {name} table {i + 1}/{len(groups)} weighted "
                f"by {cost_model} costs ({sizes[i]:,} placements; once: cached after)")
            report = _every(5.0, lambda f, i=i: say(
                f"set-up: {name} table {i + 1}/{len(groups)}: {f:.0%} of placements "
                "reached"))  # fmt: skip
        table, source, seconds = weighted_table(g, squares, blank, tiles, cost_model,
                                                tools, report)  # fmt: skip
        tables[offsets[i] : offsets[i] + sizes[i]] = table
        sources.append(source)
        build += seconds
    tables.flags.writeable = False
    kmax = max(len(grp) for grp in groups)
    gtiles = np.zeros((len(groups), kmax), dtype=np.int64)
    gmult = np.zeros((len(groups), kmax), dtype=np.int64)
    for i, tiles in enumerate(groups):
        for j, tile in enumerate(tiles):
            gtiles[i, j] = tile
            gmult[i, j] = perm(n - 1 - j, len(tiles) - 1 - j)
    arrays = {
        "tables": tables,
        "offsets": np.array(offsets, dtype=np.int64),
        "gtiles": gtiles,
        "gsize": np.array([len(t) for t in groups], dtype=np.int64),
        "gmult": gmult,
        "popcnt": tools[3],
    }
    result = WeightedPDB(name, g, goal, cost_model, groups, arrays, tuple(sources),
                         build, time.perf_counter() - t0)  # fmt: skip
    _set_memo[key] = result
    return result


def _every(seconds: float, call: Callable[[float], None]) -> Callable[[float], None]:
    """``call`` at most once per ``seconds``."""
    last = [time.monotonic()]

    def report(fraction: float) -> None:
        now = time.monotonic()
        if now - last[0] >= seconds:
            last[0] = now
            call(fraction)

    return report


def clear_memory() -> None:
    """Forget weighted tables and sets loaded in this process."""
    _table_memo.clear()
    _set_memo.clear()
