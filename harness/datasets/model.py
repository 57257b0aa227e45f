"""The dataset model: :class:`Instance`, :class:`Dataset`, :class:`DatasetError`,
the names a dataset may take, and the plain-data summary ``harness datasets`` shows."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.puzzle import (
    Board,
    Grid,
    goal_name,
)

FORMAT = "npuzzle-dataset"
FORMAT_VERSION = 1  # bump on any change of the file layout; loaders reject others
# History:  1 - first version

#: Named selections of datasets. ``default`` is what ``harness run`` measures when no
#: dataset is named: small enough that every solver finishes it in minutes.
SELECTIONS: dict[str, tuple[str, ...] | None] = {
    "default": ("8-seeds", "8-seeds-spiral", "8-mini"),
    "all": None,  # every dataset on the search path
}

ORACLE_MAX_SQUARES = 9  # mirrors harness.core.oracle.MAX_CELLS without importing numpy
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
HEADER_KEYS = (
    "format", "version", "name", "size", "goal", "goal_name", "generator", "params",
    "seed", "description", "command", "count", "sha256",
)
#: Header keys a file may leave out: ``cost_model`` (absent: unit costs).
OPTIONAL_HEADER_KEYS = ("cost_model",)
INSTANCE_KEYS = ("id", "board", "solvable", "optimal_length", "optimal_source")
#: ``optimal_cost``: the cheapest path's cost under the dataset's cost model
#: (absent: unknown, or unit costs, where it is the optimal length).
OPTIONAL_INSTANCE_KEYS = ("extra", "goal", "optimal_cost")
#: ``NAME@MODEL`` names dataset NAME under tile cost model MODEL.
COST_SEPARATOR = "@"


class DatasetError(ValueError):
    """A dataset that cannot be generated, found, loaded or saved; one-line message."""


@dataclass(frozen=True, slots=True)
class Instance:
    """One start board toward one goal, with what is known of its optimum."""

    id: str  # e.g. "d22-0007" or "korf-001"; unique within its dataset
    start: Board
    goal: Board
    grid: Grid
    solvable: bool
    optimal_length: int | None  # None when unknown or unsolvable
    optimal_source: str | None = None  # "oracle" | "published" | "solver:<config>"
    extra: dict = field(default_factory=dict, compare=False)  # e.g. published nodes
    #: the cheapest path's cost under the dataset's cost model (unit: the optimal
    #: length); None when unknown or unsolvable
    optimal_cost: float | None = None


@dataclass(frozen=True, slots=True)
class Dataset:
    """A named, self-describing set of instances (all one grid and one goal)."""

    name: str
    grid: Grid
    goal: Board
    generator: str
    params: dict
    seed: int | None
    instances: tuple[Instance, ...]
    checksum: str  # sha256 of the canonical instance lines
    path: Path | None = None
    description: str = ""
    command: str = ""  # the command that (re)generates this file
    #: the tile cost model of its tasks (harness.core.costs), like its goal
    cost_model: str = "unit"


def check_name(name: str) -> None:
    if not NAME_PATTERN.fullmatch(name) or name in SELECTIONS:
        raise DatasetError(
            f"dataset name {name!r}: use letters, digits, '.', '_', '-' (not "
            f"{' or '.join(map(repr, SELECTIONS))})"
        )


# ---------------------------------------------------------------- summary


def summarize(ds: Dataset) -> dict:
    """Plain-data summary for ``harness datasets list/show``."""
    depths = [i.optimal_length for i in ds.instances if i.optimal_length is not None]
    histogram: dict[int, int] = {}
    for d in sorted(depths):
        histogram[d] = histogram.get(d, 0) + 1
    sources = sorted({i.optimal_source for i in ds.instances if i.optimal_source})
    checked: dict[str, int] = {}  # labels solved again by a second solver
    for inst in ds.instances:
        by = inst.extra.get("cross_checked_by")
        if isinstance(by, str):
            checked[by] = checked.get(by, 0) + 1
    solvable = sum(i.solvable for i in ds.instances)
    return {
        "name": ds.name,
        "size": ds.grid.label,
        "goal": goal_name(ds.goal, ds.grid),
        "instances": len(ds.instances),
        "solvable": solvable,
        "unsolvable": len(ds.instances) - solvable,
        "unknown_depth": solvable - len(depths),
        "min_depth": min(depths) if depths else None,
        "max_depth": max(depths) if depths else None,
        "mean_depth": round(sum(depths) / len(depths), 2) if depths else None,
        "optimal_sources": sources,
        "cross_checked": checked,
        "generator": ds.generator,
        "params": ds.params,
        "seed": ds.seed,
        "description": ds.description,
        "command": ds.command,
        "sha256": ds.checksum,
        "path": str(ds.path) if ds.path else None,
        "histogram": histogram,
    }
