"""The registries plugins add to, and a scope that forgets what was added in it.

Solvers, heuristics, dataset generators and report plots each keep a dict made by
:func:`registry`. A module whose import registers built-ins calls :func:`seal`
after them. :func:`scope` (through :func:`harness.solver.scoped_registry`) gives
every registry back what it held when the scope began, or, for one first imported
inside the scope, its sealed built-ins: a plugin one caller loaded is not seen by
the next (tests, long-lived processes). Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points
from typing import Any

_ALL: list[dict[str, Any]] = []
_SEALED: dict[int, dict[str, Any]] = {}
_LOADED: set[str] = set()  # entry point groups imported so far


def registry() -> dict[str, Any]:
    """A new, empty registry (name -> entry) that :func:`scope` restores."""
    made: dict[str, Any] = {}
    _ALL.append(made)
    return made


def seal(made: dict[str, Any]) -> None:
    """Record what ``made`` holds now as its built-ins."""
    _SEALED[id(made)] = dict(made)


def load_entry_points(group: str) -> None:
    """Import what installed packages offer under the entry point ``group``
    (``npuzzle_harness.heuristics``, ``.generators``, ``.plots``), once."""
    if group not in _LOADED:
        _LOADED.add(group)
        for ep in entry_points(group=group):
            ep.load()


@contextmanager
def scope() -> Iterator[None]:
    """Entries registered inside the block are forgotten when it ends."""
    saved = {id(made): dict(made) for made in _ALL}
    try:
        yield
    finally:
        for made in _ALL:
            keep = saved.get(id(made), _SEALED.get(id(made)))
            if keep is not None:
                made.clear()
                made.update(keep)
