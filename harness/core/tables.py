"""The one terminal table style of the harness (rich, a rule under the header, no
frame): ``run``'s summary, ``report --format table``, ``compare`` and ``datasets``
all print through here, on a terminal and in a pipe alike. Cells are plain text
(``astar_dict[manhattan]`` is never read as markup); lines carry no trailing
blanks, and each row starts with its first cell, so the output greps well."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

#: Wide enough that a piped table is never wrapped or cut at 80 columns.
PIPE_WIDTH = 10_000


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
    import sys

    from rich.console import Console

    console = Console(stderr=err, highlight=False)
    if console.is_terminal:
        console.print(_table(columns, rows, right, title))
    else:
        stream = sys.stderr if err else sys.stdout
        stream.write(table_text(columns, rows, right=right, title=title) + "\n")
