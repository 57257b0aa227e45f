"""Compiled (numba, nopython) kernels for the fast solvers and the PDB builder.

Import this module lazily, inside ``prepare``/``solve`` bodies: importing it imports
numba (about half a second) and ``harness --help`` must not pay for that.

One module per family: :mod:`~harness.kernels.geometry` (the arrays kernels take),
:mod:`~harness.kernels.ida` (IDA* per heuristic), :mod:`~harness.kernels.batch` (many
boards per call), :mod:`~harness.kernels.cantor` (A* on Cantor ranks),
:mod:`~harness.kernels.pdb_bfs` (building pattern databases),
:mod:`~harness.kernels.costs` (best-first and IDA* searches with tile costs),
:mod:`~harness.kernels.necessary` (the necessary expansions of a 3x3 board); all
use the decorator of :mod:`~harness.kernels.base`, which also says where compiled
code is cached. Every public name is re-exported here (solvers look kernels up by name).
Compilation happens on a kernel's first call: solvers trigger it in ``prepare``,
outside the timed region (see :func:`warm_up`).

Board conventions match :mod:`harness.puzzle`: a board is a row-major int8 array,
0 is the blank; moves are indexed in MOVE_ORDER (0=u, 1=l, 2=r, 3=d), so the move
undoing move ``k`` is ``3 - k``. IDA* kernels count like Korf (1985): the undoing
move is never generated; ``generated`` is every child created (children then cut off
by the bound included), summed over iterations, plus one for the root (once: that
is what reproduces Korf's published counts); the last iteration stops at the
first goal. ``stats`` is int64[4]: expanded, generated, max_frontier
(deepest depth entered, i.e. the final bound, as ``solvers/ida_star.py``), iterations.
"""

from harness.kernels.base import CACHE_ENABLED, MAX_PATH, jit
from harness.kernels.batch import (
    ida_additive_many,
    ida_linear_conflict_many,
    ida_pdb_many,
    ida_walking_distance_many,
)
from harness.kernels.cantor import astar_cantor, cantor_rank, cantor_unrank, swap_rank
from harness.kernels.costs import best_first_costs, ida_costs
from harness.kernels.geometry import (
    conflict_arrays,
    lowbit16,
    manhattan_costs,
    moves_to_str,
    neighbour_array,
    popcount16,
)
from harness.kernels.ida import (
    ida_additive,
    ida_linear_conflict,
    ida_pdb,
    ida_walking_distance,
    lc_line_values,
    pattern_index,
    pdb_value,
    wida_additive,
    wida_linear_conflict,
    wida_pdb,
    wida_walking_distance,
)
from harness.kernels.necessary import bfs_distances
from harness.kernels.pdb_bfs import pdb_bfs, region_tables

__all__ = [
    "CACHE_ENABLED",
    "MAX_PATH",
    "astar_cantor",
    "best_first_costs",
    "bfs_distances",
    "cantor_rank",
    "cantor_unrank",
    "conflict_arrays",
    "ida_additive",
    "ida_costs",
    "ida_additive_many",
    "ida_linear_conflict",
    "ida_linear_conflict_many",
    "ida_pdb",
    "ida_pdb_many",
    "ida_walking_distance",
    "ida_walking_distance_many",
    "jit",
    "lc_line_values",
    "lowbit16",
    "manhattan_costs",
    "moves_to_str",
    "neighbour_array",
    "pattern_index",
    "pdb_bfs",
    "pdb_value",
    "popcount16",
    "region_tables",
    "swap_rank",
    "wida_additive",
    "wida_linear_conflict",
    "wida_pdb",
    "wida_walking_distance",
]
