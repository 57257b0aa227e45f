"""Your own boards: plain board files imported as datasets.

A board file holds one board per line, in the judge format (``2 3 4 1 5 x 7 6 8``;
``x``, ``X``, ``_`` or ``0`` is the blank; ``#`` starts a comment) or as JSON lines
(``{"board": "2 3 4 1 5 x 7 6 8", "id": "mine-1"}``, ``board`` also a list of
numbers). Every line is validated; the first bad one is a :class:`DatasetError`
naming the file and the line. :func:`import_boards` labels optimal lengths (the
exact oracle up to 3x3, or an optimal solver) and returns a normal
:class:`~harness.datasets.Dataset`, which :func:`~harness.datasets.save_dataset`
writes like any other; ``harness run --datasets boards.txt`` imports on the fly.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from harness.datasets.generators import number_instances
from harness.datasets.jsonl import make_dataset
from harness.datasets.labels import make_labeller, resolve_label
from harness.datasets.model import (
    FORMAT,
    ORACLE_MAX_CELLS,
    Dataset,
    DatasetError,
    Instance,
    check_name,
)
from harness.puzzle import (
    Board,
    BoardError,
    Grid,
    goal_board,
    goal_name,
    is_solvable,
    parse_board,
)

GENERATOR = "import"
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
_JSON_KEYS = {"board", "id"}


def read_boards(
    path: str | Path, g: Grid | None = None
) -> tuple[Grid, list[tuple[int, Board, str | None]]]:
    """``(grid, [(line number, board, id or None), ...])`` of a board file. The size
    is ``g``, else the first board's (a square token count). DatasetError naming
    the file and line for anything that is not a board of that size."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except UnicodeDecodeError as err:
        raise DatasetError(f"{path}: not UTF-8 text ({err.reason})") from None
    except OSError as err:
        raise DatasetError(f"{path}: cannot read: {err.strerror}") from None
    boards: list[tuple[int, Board, str | None]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path}: line {number}"
        ident = None
        if line.startswith("{"):
            tokens, ident = _json_board(line, where)
        else:
            tokens = line.split("#", 1)[0]
        try:
            board = parse_board(tokens, g)
        except BoardError as err:
            raise DatasetError(f"{where}: {err}") from None
        if g is None:
            g = _grid_of(board)
        boards.append((number, board, ident))
    if not boards or g is None:
        raise DatasetError(f"{path}: no board in the file")
    return g, boards


def _grid_of(board: Board) -> Grid:
    from harness.puzzle import grid

    return grid(round(len(board) ** 0.5))


def _json_board(line: str, where: str) -> tuple[str | list[str], str | None]:
    try:
        record = json.loads(line)
    except ValueError as err:
        raise DatasetError(f"{where}: not JSON ({err.msg})") from None
    if not isinstance(record, dict) or "board" not in record:
        raise DatasetError(f'{where}: a JSON line needs a "board"')
    unknown = set(record) - _JSON_KEYS
    if unknown:
        raise DatasetError(
            f"{where}: unknown key(s) {', '.join(sorted(unknown))} (board, id)"
        )
    board = record["board"]
    if isinstance(board, list):
        board = [str(v) for v in board]
    elif not isinstance(board, str):
        raise DatasetError(f'{where}: "board" must be a string or a list')
    ident = record.get("id")
    if ident is not None and (not isinstance(ident, str) or not _ID.fullmatch(ident)):
        raise DatasetError(f"{where}: id {ident!r}: letters, digits, . _ : -")
    return board, ident


def import_boards(
    path: str | Path,
    *,
    name: str,
    g: Grid | None = None,
    goal: str = "standard",
    label: str = "auto",
    progress: Callable[[int, int], None] | None = None,
) -> Dataset:
    """A dataset of the boards in ``path`` toward ``goal``, labelled by ``label``
    (``auto``: the oracle up to 3x3, else none; ``oracle``; ``none``;
    ``solver:NAME[HEURISTIC]``). DatasetError (one line) on bad input."""
    check_name(name)
    g, boards = read_boards(path, g)
    try:
        target = goal_board(goal, g)
    except BoardError as err:
        raise DatasetError(f"--goal: {err}") from None
    label = resolve_label(label, g)
    labeller, source = make_labeller(label, target, g)
    instances = []
    for done, (_, board, ident) in enumerate(boards, start=1):
        solvable = is_solvable(board, target, g)
        length = labeller(board) if solvable and labeller else None
        instances.append(
            Instance(
                ident or "",
                board,
                target,
                g,
                solvable,
                length,
                source if length is not None else None,
            )  # fmt: skip
        )
        if progress:
            progress(done, len(boards))
    numbered = number_instances(instances)
    # Ids given in the file win over the numbering; they must stay unique.
    instances = [
        replace(n, id=inst.id) if inst.id else n
        for inst, n in zip(instances, numbered, strict=True)
    ]
    seen: dict[str, int] = {}
    for (number, _, _), inst in zip(boards, instances, strict=True):
        if inst.id in seen:
            raise DatasetError(
                f"{path}: line {number}: id {inst.id!r} already used on line "
                f"{seen[inst.id]}"
            )
        seen[inst.id] = number
    raw = Path(path).read_bytes()
    params = {
        "source": Path(path).name,
        "source_sha256": hashlib.sha256(raw).hexdigest(),
        "label": label,
    }
    gname = goal_name(target, g)
    command = (
        f"harness datasets import {Path(path).name} --name {name} --size {g.label}"
        + (f" --goal {gname!r}" if gname != "standard" else "")
        + (f" --label '{label}'" if label != resolve_label("auto", g) else "")
    )
    return make_dataset(
        name, g, target, generator=GENERATOR, params=params, seed=None,
        instances=instances, command=command,
        description=f"imported from {Path(path).name}",
    )  # fmt: skip


def is_board_file(token: str) -> bool:
    """True for an existing file that is not a dataset file (its first line is not
    a dataset header): ``harness run --datasets`` imports it on the fly."""
    path = Path(token)
    if not path.is_file():
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.strip() and not line.lstrip().startswith("#"):
                    try:
                        header = json.loads(line)
                    except ValueError:
                        return True
                    return not (
                        isinstance(header, dict) and header.get("format") == FORMAT
                    )
    except OSError:
        return False
    return True


def on_the_fly(token: str) -> Dataset:
    """The dataset ``harness run --datasets FILE`` makes of a plain board file:
    named after the file, standard goal, labelled by the oracle up to 3x3 only."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(token).stem).strip("-._") or "boards"
    g, _ = read_boards(token)
    label = "oracle" if g.cells <= ORACLE_MAX_CELLS else "none"
    ds = import_boards(token, name=stem, g=g, label=label)
    return replace(ds, path=Path(token).resolve())
