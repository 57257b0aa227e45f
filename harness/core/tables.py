"""The one terminal table style of the harness (rich, a rule under the header, no
frame): ``run``'s summary, ``report --format table``, ``compare`` and ``datasets``
all print through here, on a terminal and in a pipe alike. Cells are plain text
(``astar_dict[manhattan]`` is never read as markup); lines carry no trailing
blanks, and each row starts with its first cell, so the output greps well."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable, Sequence

#: Wide enough that a piped table is never wrapped or cut at 80 columns.
PIPE_WIDTH = 10_000


def output_width() -> int:
    """Columns to fit standard output into: the terminal's width; in a pipe,
    ``$COLUMNS`` when set, else unlimited (:data:`PIPE_WIDTH`)."""
    import os
    import shutil

    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH


def _table(
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    right: Iterable[int],
    title: str | None,
):
    from rich import box
    from rich.table import Table
    from rich.text import Text

    right = set(right)
    table = Table(
        title=Text(title) if title else None,
        title_justify="left",
        title_style="bold",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        header_style="bold",
    )
    for i, col in enumerate(columns):
        table.add_column(Text(str(col)), justify="right" if i in right else "left",
                         no_wrap=True)  # fmt: skip
    for row in rows:
        table.add_row(*(Text(str(v)) for v in row))
    return table


def table_text(
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    right: Iterable[int] = (),
    title: str | None = None,
) -> str:
    """The table as plain text (no colour), one line per row."""
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, width=PIPE_WIDTH, color_system=None,
                      force_terminal=False, highlight=False)  # fmt: skip
    console.print(_table(columns, rows, right, title))
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def print_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    right: Iterable[int] = (),
    title: str | None = None,
    err: bool = False,
) -> None:
    """Print the table to stdout (stderr with ``err``): bold header on a terminal,
    plain text in a pipe."""
    from rich.console import Console

    console = Console(stderr=err, highlight=False)
    if console.is_terminal:
        console.print(_table(columns, rows, right, title))
    else:
        stream = sys.stderr if err else sys.stdout
        stream.write(table_text(columns, rows, right=right, title=title) + "\n")


def fitted_text(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    width: int,
    right: Iterable[int] = (),
    title: str | None = None,
) -> tuple[str, list[str]]:
    """The table as text no wider than ``width``: whole columns are left out from
    the right (never the first) until it fits, never cut mid-word; returns the text
    and the headers left out, for a note."""
    keep, right = list(range(len(columns))), set(right)
    while True:
        text = table_text([columns[i] for i in keep],
                          [[row[i] for i in keep] for row in rows],
                          right=[n for n, i in enumerate(keep) if i in right],
                          title=title)  # fmt: skip
        if len(keep) == 1 or max(map(len, text.splitlines()), default=0) <= width:
            return text, [columns[i] for i in range(len(columns)) if i not in keep]
        keep.pop()
