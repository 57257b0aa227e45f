"""``harness datasets import FILE --name NAME``: a board file becomes a dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli.common import fail, load_plugins
from harness.cli.datasets import datasets_app, depth_range, progress_bar


@datasets_app.command("import")
def import_command(
    file: Annotated[
        Path,
        typer.Argument(
            help="Boards, one per line: judge format (x or 0 the blank, # comments) "
            'or JSON lines ({"board": "...", "id": "..."}).'
        ),
    ],
    name: Annotated[str, typer.Option(help="Dataset name (file NAME.jsonl).")],
    size: Annotated[
        str | None,
        typer.Option(help="Board size ROWSxCOLS (default: from the first board)."),
    ] = None,
    goal: Annotated[
        str, typer.Option(help="standard, spiral, blank-first or board tokens.")
    ] = "standard",
    label: Annotated[
        str,
        typer.Option(
            help="Optimal lengths: auto (oracle up to 3x3), oracle, none or "
            "solver:NAME[HEURISTIC]."
        ),
    ] = "auto",
    plugin: Annotated[
        list[str] | None,
        typer.Option("--plugin", help="Load a solver for --label (repeatable)."),
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder to write NAME.jsonl in.")] = Path(
        "datasets"
    ),
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
) -> None:
    """Import your own boards as a dataset: every line validated, optimal lengths
    labelled, written as a normal dataset file."""
    from harness.datasets import DatasetError
    from harness.datasets.board_files import import_to_file
    from harness.puzzle import BoardError, parse_size

    g = None
    if size is not None:
        try:
            g = parse_size(size)
        except BoardError as err:
            raise fail(f"--size: {err}") from None
    load_plugins(plugin)
    path = out / f"{name}.jsonl"
    if path.exists() and not force:
        raise fail(f"{path} already exists (use --force to overwrite)")
    update, close = progress_bar()
    try:  # written as the boards are labelled: memory flat in the file's size
        written, s = import_to_file(
            file, out, name=name, g=g, goal=goal, label=label, progress=update,
            force=force,
        )  # fmt: skip
    except DatasetError as err:
        raise fail(str(err)) from None
    finally:
        close()
    typer.echo(
        f"wrote {written}: {s['instances']} instances ({s['unsolvable']} unsolvable), "
        f"depths {depth_range(s)}, sha256 {s['sha256'][:12]}"
    )
