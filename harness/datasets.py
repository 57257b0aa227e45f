"""Datasets: reproducible sets of puzzle instances, stored as JSON Lines files.

(Skeleton: the types below are the contract other modules code against. The
generators, loading, saving and validation are filled in by the datasets issue.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.puzzle import Board, Grid


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
