"""Weighted IDA* compiled with numba: IDA* bounded on f = g + w*h, w x optimal.

The depth-first iterations of ``ida_star_jit``, bounded on f = g + w*h instead of
g + h.

Data structures and counting: exactly ``ida_star_jit``'s (one int8 board changed
in place, an explicit move stack, h kept incrementally per heuristic: tile costs,
the two lines a move changes, walking-distance state steps, the moved tile's
pattern-database groups), through the same kernels of :mod:`harness.kernels`
with a weight: f is kept in integers, q*g + p*h for w = p/q, so bounds are exact.
Each iteration's bound is the smallest f that exceeded the last one.

Bounded: with an admissible h every path is at most w times the optimum. Every
board of an optimal path has f <= w * optimum (g + w*h <= w*(g + h*)), so the
bound never passes w * optimum before the iteration that finds a goal, and the
goal found has f = its length within that bound. The judge checks the claim
(``bounded_by="w"``). At w = 1 it is IDA* itself: the same counters as
``ida_star_jit``. Larger w finds paths in far fewer nodes, but a depth-first
search with a loose bound can also wander: paths often come out longer than
weighted A*'s at the same w.

Tile costs (``cost_model``): the float-threshold kernel of ``ida_star_jit``
with f = g + w*h, whose branch and bound keeps the path within w times the
cheapest (:mod:`harness.kernels.costs`).

Counters: Korf's, as ``ida_star_jit``: expanded, generated (cut-off children and
the root included, summed over iterations), max_frontier = the deepest depth
entered, iterations = bounds tried. Unsolvable boards return None at once.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from harness.heuristics import Heuristic, all_heuristics, kernel, make_heuristic
from harness.puzzle import Board, Grid, Moves, apply_moves, is_solvable
from harness.solver import Counters, register, weight_param
from solvers._costs import ida as cost_ida
from solvers._costs import prepare as cost_prepare

#: Deepest optimum taken over 3x3 below w = 1.25, per heuristic (IDA*'s rates:
#: ``ida_star_jit`` takes the same); at w >= 1.25 every depth.
_MAX_DEPTH_LARGE = {"misplaced": 40, "manhattan": 58, "linear_conflict": 60,
                    "walking_distance": 80}  # fmt: skip


def _refuses(
    g: Grid, depth: int | None, heuristic: str | None, *, w: Fraction
) -> str | None:
    """Decline pattern databases on grids they are not built for, and deep boards
    with weak heuristics on larger grids when w is close to 1 (IDA*'s cost)."""
    heuristic = heuristic or "manhattan"
    info = all_heuristics().get(heuristic)
    if info is not None and info.refuses(g):
        return info.refuses(g)
    if heuristic.startswith("pdb") or g.squares <= 9 or depth is None or w >= 1.25:
        return None
    limit = _MAX_DEPTH_LARGE.get(heuristic, 58)
    if depth > limit:
        return (
            f"depth {depth} on {g.label} with {heuristic} at w < 1.25: IDA* may need "
            f"billions of nodes (takes depth <= {limit}; use a pdb heuristic)"
        )
    return None


#: (heuristic name, goal, rows, cols) -> (heuristic data it was built from, kernel)
_memo: dict[tuple, tuple[Any, Any]] = {}


def _kernel(goal: Board, g: Grid, h: Heuristic) -> tuple[str, Any]:
    """(the weighted kernel's name, the heuristic's ida Kernel), once per goal."""
    key = (h.name, goal, g.rows, g.cols)
    if key not in _memo or _memo[key][0] is not h.data:
        own = all_heuristics()[h.name].kernel("ida", h)
        _memo[key] = (h.data, own)
    own = _memo[key][1]
    name = "w" + own.function  # ida_pdb -> wida_pdb: the weighted twin
    return name, own


def _run(start: Board, goal: Board, g: Grid, h: Heuristic, w: Fraction, stats) -> Moves:
    import numpy as np

    from harness import kernels

    name, k = _kernel(goal, g, h)
    function = getattr(kernels, name, None)
    if function is None:
        raise ValueError(f"heuristic {h.name!r}: its compiled IDA* kernel "
                         f"{k.function!r} has no weighted twin")  # fmt: skip
    args = (*k.start_args(start), *k.args) if k.start_args else k.args
    path = np.zeros(kernels.MAX_PATH + 1, dtype=np.int8)
    w = Fraction(w)
    length = function(
        np.array(start, dtype=np.int8), np.array(goal, dtype=np.int8),
        kernels.neighbour_array(g), w.denominator, w.numerator, *args, stats, path,
    )  # fmt: skip
    if length < 0:
        raise RuntimeError(f"wida_star: no path within {kernels.MAX_PATH} moves")
    return kernels.moves_to_str(path, length)


def _prepare(g: Grid, goal: Board, heuristic: Heuristic | None) -> None:
    """Compile (or load from numba's cache) the weighted kernel of this heuristic
    with a one-move solve; PDB tables are already in ``heuristic.data``."""
    import numpy as np

    if heuristic is not None and heuristic.cost_model != "unit":
        return cost_prepare(g, goal, heuristic, heuristic.cost_model)
    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, g)
    near = apply_moves(goal, g.neighbours[goal.index(0)][0][0], g)
    _run(near, goal, g, h, Fraction(2), np.zeros(4, dtype=np.int64))


@register(
    "wida_star",
    optimal=False,
    bounded_by="w",
    params=(weight_param(2),),
    needs=(kernel("ida"),),  # any heuristic with a compiled IDA* kernel
    default_heuristic="manhattan",
    in_all="default",  # --solvers all: manhattan only; name the others
    refuses=_refuses,
    prepare=_prepare,
    costs=True,
    sizes="any (pdb78/pdb663/pdb555: 4x4, pdb44: 3x3, walking_distance: sides <= 4)",
)
def solve(
    start: Board,
    goal: Board,
    grid: Grid,
    *,
    counters: Counters,
    heuristic: Heuristic | None = None,
    w: Fraction = Fraction(2),
    cost_model: str = "unit",
) -> Moves | None:
    """Weighted IDA* compiled with numba: IDA* bounded on f = g + w*h, w x optimal.

    A path at most ``w`` times the shortest (with tile costs: the cheapest); None
    when unsolvable.
    """
    if cost_model != "unit":
        return cost_ida(start, goal, grid, counters, heuristic, cost_model, w=w)
    if not is_solvable(start, goal, grid):
        return None
    import numpy as np

    h = heuristic if heuristic is not None else make_heuristic("manhattan", goal, grid)
    stats = np.zeros(4, dtype=np.int64)
    try:
        return _run(start, goal, grid, h, w, stats)
    finally:
        counters.expanded += int(stats[0])
        counters.generated += int(stats[1])
        counters.max_frontier = max(counters.max_frontier, int(stats[2]))
        counters.iterations += int(stats[3])
