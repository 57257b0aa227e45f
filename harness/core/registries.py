"""The registries plugins add to, and a scope that forgets what was added in it.

Solvers, heuristics, dataset generators and report plots each keep a dict made by
:func:`registry` and add to it with :func:`add`, which refuses a name another
module registered already (a plugin named like a built-in is an error naming both,
never a silent replacement). A module whose import registers built-ins calls
:func:`seal` after them. :func:`scope` (through
:func:`harness.solver.scoped_registry`) gives every registry back what it held when
the scope began, or, for one first imported inside the scope, its sealed built-ins:
a plugin one caller loaded is not seen by the next (tests, long-lived processes).
Standard library only.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

_ALL: list[dict[str, Any]] = []
_SEALED: dict[int, dict[str, Any]] = {}
_LOADED: set[str] = set()  # entry point groups imported so far


class NameClash(ValueError):
    """Two sources register one name in one registry; the message names both."""


def registry() -> dict[str, Any]:
    """A new, empty registry (name -> entry) that :func:`scope` restores."""
    made: dict[str, Any] = {}
    _ALL.append(made)
    return made


#: (id of a registry, name) -> where the entry came from (see :func:`source`);
#: itself a registry, so a scope forgets the sources of what it forgets.
_SOURCES: dict[tuple[int, str], str] = registry()  # type: ignore[assignment]


def source(module: str) -> str:
    """Where code of ``module`` comes from, for people: ``built-in solvers.greedy``
    for the harness's own modules, else the plugin's file (or module name)."""
    if module.split(".")[0] in ("harness", "solvers"):
        return f"built-in {module}"
    path = getattr(sys.modules.get(module), "__file__", None)
    if not path:
        return f"module {module}"
    try:
        return f"plugin {Path(path).resolve().relative_to(Path.cwd())}"
    except ValueError:  # outside the working directory: the whole path
        return f"plugin {path}"


def add(made: dict[str, Any], kind: str, name: str, entry: Any, origin: str) -> None:
    """``made[name] = entry``, registered from ``origin`` (:func:`source`);
    NameClash when another origin registered ``name`` there already. The same
    origin may register it again (a module imported twice replaces its own)."""
    key = (id(made), name)
    before = _SOURCES.get(key)
    if name in made and before is not None and before != origin:
        raise NameClash(
            f"{kind} {name!r} is registered twice: by {before} and by {origin}; "
            "rename one (a name means one piece of code in every stored result)"
        )
    made[name] = entry
    _SOURCES[key] = origin


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
