"""Tile cost models: what a move costs when tiles weigh differently.

A cost model is part of a task, like its goal: the same board toward the same goal
has one optimal path under unit costs and another under heavy costs. A move costs
the cost of the tile that moves (the blank moves, the tile slides the other way):

- ``unit``: every tile 1 (path cost = path length; the classic puzzle);
- ``heavy``: tile t costs t;
- ``inverse``: tile t costs 1/t;
- ``sqrt``: tile t costs sqrt(t);
- ``reverse``: tile t costs N - t, N = the number of tiles + 1 (the cells: 9 on
  3x3, 16 on 4x4), so the costs run N-1 down to 1: heavy's costs, mirrored.

These are the models of the Ruml group's search code (eaburns/search,
``tiles/mdist.cc``, as issue 36 describes it: the snapshot we could read,
3f9b846, predates its cost models, so "reverse" follows heavy's range mirrored
as written there, N - t) and HOG2's ``MNPuzzle`` (unit, square root and more).

Costs are floats. Two costs are equal when they differ by at most
:data:`COST_TOLERANCE` relative to the larger (or absolutely below 1): a cost
summed along a path in another order (a solver forwards, the oracle backwards
from the goal) differs in its last bits under ``inverse`` and ``sqrt``. Standard
library only (workers and the judge import it).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from math import sqrt

from harness.core.names import did_you_mean
from harness.puzzle import Board, Grid, IllegalMoveError

#: The cost models, unit first (the default: every existing dataset and row).
COST_MODELS = ("unit", "heavy", "inverse", "sqrt", "reverse")
UNIT = "unit"
#: Relative tolerance of cost comparisons (absolute for costs below 1): 1e-9. A
#: path of 200 moves summed in two orders differs by ~1e-13 relative; a real
#: difference between two paths' costs is at least 1/(15*14) (two inverse tiles).
COST_TOLERANCE = 1e-9

_DESCRIPTIONS = {
    "unit": "every move costs 1",
    "heavy": "moving tile t costs t",
    "inverse": "moving tile t costs 1/t",
    "sqrt": "moving tile t costs sqrt(t)",
    "reverse": "moving tile t costs N - t (N: tiles + 1)",
}


def check_cost_model(name: str) -> str:
    """``name`` when it is a cost model; ValueError naming the valid ones otherwise."""
    if name not in COST_MODELS:
        raise ValueError(
            f"unknown cost model {name!r}{did_you_mean(name, COST_MODELS)}; valid: "
            f"{', '.join(COST_MODELS)}"
        )
    return name


def describe(name: str) -> str:
    """One line saying what a move costs under ``name``."""
    return _DESCRIPTIONS[check_cost_model(name)]


@cache
def tile_costs(name: str, cells: int) -> tuple[float, ...]:
    """The cost of moving each tile under model ``name`` on a board of ``cells``
    cells, indexed by tile (index 0, the blank, is 0.0)."""
    check_cost_model(name)
    of = {
        "unit": lambda t: 1.0,
        "heavy": float,
        "inverse": lambda t: 1.0 / t,
        "sqrt": sqrt,
        "reverse": lambda t: float(cells - t),
    }[name]
    return (0.0,) + tuple(of(t) for t in range(1, cells))


def is_unit(name: str | None) -> bool:
    """True for the unit model (or no model named): costs are lengths."""
    return name is None or name == UNIT


def path_cost(start: Board, moves: str, g: Grid, name: str) -> float:
    """The cost of ``moves`` from ``start`` under model ``name``: the sum of the
    moved tiles' costs. IllegalMoveError for a move off the board."""
    if is_unit(name):
        return float(len(moves))
    costs = tile_costs(name, g.squares)
    steps = {"u": -g.cols, "d": g.cols, "l": -1, "r": 1}
    cells = list(start)
    blank = cells.index(0)
    total = 0.0
    for i, move in enumerate(moves):
        target = blank + steps.get(move, 0)
        legal = [t for _, t in g.neighbours[blank]]
        if move not in steps or target not in legal:
            raise IllegalMoveError(i, move, "off the board" if move in steps
                                   else "not one of u d l r")  # fmt: skip
        total += costs[cells[target]]
        cells[blank], cells[target] = cells[target], 0
        blank = target
    return total


def costs_equal(a: float, b: float) -> bool:
    """True when costs ``a`` and ``b`` are equal within :data:`COST_TOLERANCE`."""
    return abs(a - b) <= COST_TOLERANCE * max(1.0, abs(a), abs(b))


def cost_at_most(a: float, b: float) -> bool:
    """True when ``a <= b`` within :data:`COST_TOLERANCE`."""
    return a <= b or costs_equal(a, b)


def format_cost(value: float) -> str:
    """A cost for people: an integer as such (``31``), else up to 6 significant
    digits (``4.71667``)."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"


def cheapest_tile(costs: Sequence[float]) -> float:
    """The smallest move cost of a table from :func:`tile_costs`."""
    return min(costs[1:])
