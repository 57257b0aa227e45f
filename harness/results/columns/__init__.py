"""The columns of ``rows.csv``, each declared once: the registry of columns.

Two kinds of column, one record (:class:`Column`) for both:

- **core columns** are the fields of :class:`~harness.results.schema.ResultRow`
  (identity, status, counters, times, memory). Their kind comes from the field's
  type, their schema version from :data:`~harness.results.schema.FIRST_OF_VERSION`.
  The code that fills them (the runner's rows, the analysis tables) names them;
- **registered columns** (a measured or derived value: instructions, a path's
  cost, the necessary expansions...) are one module each: the module makes a
  :class:`Column` with how a row's value is computed, how an instance's repeats
  and a config's instances aggregate and how the summary shows it, and passes it
  to :func:`register_column`. The built-in ones are the modules of this package;
  a plugin (``--plugin file.py``, or the entry point group
  ``npuzzle_harness.columns``) registers its own the same way.

Every writer, reader, ``--repair``, merge, reuse, the analysis tables and the
summary (run's end, ``harness report``) take the columns from :func:`columns`,
so a new column needs no edit anywhere else. How to add one: docs/architecture.md.
Standard library only.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any

from harness.core.registries import load_entry_points, registry, seal
from harness.results.schema import (
    FIRST_OF_VERSION,
    READABLE_VERSIONS,
    SCHEMA_VERSION,
    ResultRow,
)

#: What a column may hold in rows.csv: a whole number, a number, True/False, text.
KINDS = ("int", "float", "bool", "text")
ENTRY_POINT_GROUP = "npuzzle_harness.columns"


@dataclass(frozen=True, slots=True)
class RowContext:
    """What a registered column's ``compute`` is given for one row.

    ``row``: the row's core fields by name (status, path_length, expanded...);
    ``attempt``: the pass that made it (:class:`harness.measure.tasks.Attempt`:
    its ``measured`` dict holds what the worker measured for registered columns),
    None for a row of a refused (skipped) cell; ``result``: the cell's
    :class:`~harness.measure.tasks.TaskResult` (every pass of the cell: the
    cell's rows), None for a refused cell; ``cell``: the
    :class:`~harness.measure.plan.Cell` (config, instance, dataset);
    ``optimum``: the board's optimal length, None when unknown."""

    row: dict[str, Any]
    attempt: Any
    result: Any
    cell: Any
    optimum: int | None


def _no_value(context: RowContext) -> Any:
    return None


@dataclass(frozen=True, slots=True)
class Column:
    """One column of rows.csv, declared once.

    ``name``: the column's header (a Python identifier); ``kind``: one of
    :data:`KINDS`; ``doc``: one line, what a value means (with its unit);
    ``since``: the schema version that added it (rows of older runs read as
    ``empty``), None for a plugin's column, which no schema version lists;
    ``empty``: the value of a row without one (older runs, refused cells).
    ``compute``: the row's value from a :class:`RowContext` (registered columns);
    ``per_instance``: how the answered timed repeats of one instance combine
    (a pandas aggregation: "median", "max", "min", "first"), None: not in the
    per-instance table; ``per_config``: how a config's instances combine in its
    summary line (over the instances every config answered, as time and nodes
    are); ``over_config``: instead, the config's value from those instances'
    table (a pandas DataFrame of the per-instance columns: a ratio of two sums,
    say), with ``per_config`` then naming it; ``header``: the summary table's
    header ("" : not shown there); ``render``: a summary value as text (default:
    three significant figures)."""

    name: str
    kind: str
    doc: str
    since: int | None = None
    empty: Any = None
    compute: Callable[[RowContext], Any] = _no_value
    per_instance: str | None = "median"
    per_config: str = "median"
    header: str = ""
    render: Callable[[float], str] | None = None
    over_config: Callable[[Any], float] | None = None

    @property
    def summary_key(self) -> str:
        """The column of the analysis summary that holds its per-config value."""
        return f"common_{self.per_config}_{self.name}"


_REGISTERED: dict[str, Column] = registry()
_BUILTIN: frozenset[str] = frozenset()  # set once this package's modules ran


def register_column(column: Column) -> Column:
    """Add a column to every run's rows from now on; returns it. ValueError when
    the name is a core or built-in column's or not an identifier, the kind
    unknown, or ``since`` newer than this harness's schema version (bump
    :data:`SCHEMA_VERSION` with it). A plugin's column registered again (the
    plugin imported again, as an in-process worker does) replaces the first."""
    problem = _declaration_problem(column)
    if problem:
        raise ValueError(f"column {column.name!r}: {problem}")
    _REGISTERED[column.name] = column
    return column


def _declaration_problem(column: Column) -> str | None:
    if not column.name.isidentifier():
        return "a column name is a Python identifier"
    if column.name in _core_by_name() or column.name in _BUILTIN:
        return "a column of that name is already declared"
    if column.kind not in KINDS:
        return f"kind {column.kind!r} is not one of {', '.join(KINDS)}"
    if column.since is not None and not 1 <= column.since <= SCHEMA_VERSION:
        return (
            f"since {column.since}: this harness writes schema {SCHEMA_VERSION} "
            "(a new built-in column bumps SCHEMA_VERSION, with a migration)"
        )
    return None


def _kind_of(annotation: str) -> str:
    """A ResultRow field's kind from its annotation (``int | None`` -> int)."""
    base = annotation.replace(" | None", "").strip()
    return {"int": "int", "float": "float", "bool": "bool", "str": "text"}[base]


def _since(names: list[str]) -> list[int]:
    """The schema version of each core column, in order (FIRST_OF_VERSION marks
    where each version's columns begin)."""
    starts = {name: version for version, name in FIRST_OF_VERSION.items()}
    out, version = [], 1
    for name in names:
        version = starts.get(name, version)
        out.append(version)
    return out


def _core() -> tuple[Column, ...]:
    made = [f for f in fields(ResultRow) if f.name != "more"]
    since = _since([f.name for f in made])
    return tuple(
        Column(
            f.name,
            _kind_of(str(f.type)),
            "",
            since=v,
            empty=None if f.default is MISSING else f.default,
            per_instance=None,
        )
        for f, v in zip(made, since, strict=True)
    )


_CORE = _core()


def _core_by_name() -> dict[str, Column]:
    return {c.name: c for c in _CORE}


def core_columns() -> tuple[Column, ...]:
    """The ResultRow fields as columns, in their order."""
    return _CORE


def registered_columns() -> tuple[Column, ...]:
    """The registered columns in rows.csv order: built-in ones by the schema
    version that added them (then as registered), plugin ones last."""
    load_entry_points(ENTRY_POINT_GROUP)
    ordered = sorted(
        enumerate(_REGISTERED.values()),
        key=lambda ic: (ic[1].since is None, ic[1].since or 0, ic[0]),
    )
    return tuple(c for _, c in ordered)


def columns() -> tuple[Column, ...]:
    """Every column of a row written now, in rows.csv order."""
    return _CORE + registered_columns()


def column_names() -> tuple[str, ...]:
    """The header of a rows.csv written now."""
    return tuple(c.name for c in columns())


def names_of(kind: str) -> tuple[str, ...]:
    """The columns of one kind (``int``, ``float``, ``bool``, ``text``)."""
    return tuple(c.name for c in columns() if c.kind == kind)


def schema_columns(version: int) -> tuple[str, ...]:
    """The header a run of schema ``version`` wrote (before any plugin column)."""
    return tuple(
        c.name for c in columns() if c.since is not None and c.since <= version
    )


def header_problem(header: tuple[str, ...] | list[str]) -> str | None:
    """Why a rows.csv header cannot be read (None: it can): it must be the
    columns of a readable schema version, then plugin columns that are loaded."""
    header = tuple(header)
    for version in sorted(READABLE_VERSIONS, reverse=True):
        versioned = schema_columns(version)
        if header[: len(versioned)] != versioned:
            continue
        rest = header[len(versioned) :]
        plugin = {c.name for c in registered_columns() if c.since is None}
        unknown = [name for name in rest if name not in plugin]
        if not unknown:
            return None
        return (
            f"column {', '.join(unknown)} is not declared by this harness or a "
            "loaded plugin (load the plugin that declares it with --plugin)"
        )
    current = column_names()
    missing = [c for c in current if c not in header]
    unknown = [c for c in header if c not in current]
    return (
        f"columns do not match schema {SCHEMA_VERSION}"
        + (f" (missing: {', '.join(missing)})" if missing else "")
        + (f" (unknown: {', '.join(unknown)})" if unknown else "")
    )


def empty_text(name: str) -> str:
    """How a row without a value in column ``name`` stores it (old runs)."""
    column = next((c for c in columns() if c.name == name), None)
    value = None if column is None else column.empty
    return "" if value is None else str(value)


def shown_in_summary() -> tuple[Column, ...]:
    """The registered columns the summary table shows, in order."""
    return tuple(c for c in registered_columns() if c.header)


def per_instance_columns() -> tuple[Column, ...]:
    """The registered columns the per-instance table carries."""
    return tuple(c for c in registered_columns() if c.per_instance)


def _load_builtins() -> None:
    """Import this package's modules: each registers its column."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")


_load_builtins()
seal(_REGISTERED)
_BUILTIN = frozenset(_REGISTERED)
