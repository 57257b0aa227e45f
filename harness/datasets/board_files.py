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
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

from harness.core.jsontext import loads
from harness.datasets.generators import number_instances
from harness.datasets.jsonl import make_dataset, save_streamed
from harness.datasets.labels import make_labeller, resolve_label
from harness.datasets.model import (
    FORMAT,
    ORACLE_MAX_SQUARES,
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


#: A longer line is refused (a board line is at most ~100 bytes).
MAX_LINE_BYTES = 1 << 20


def iter_boards(
    path: str | Path, g: Grid | None = None
) -> Iterator[tuple[Grid, int, Board, str | None]]:
    """``(grid, line number, board, id or None)`` for each board of a board file,
    read line by line (memory flat in the file's size). The size is ``g``, else
    the first board's (a token count n * n). DatasetError naming the file and
    line for anything that is not a board of that size."""
    path = Path(path)
    try:
        fh = open(path, "rb")  # noqa: SIM115  closed below, also on errors
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except OSError as err:
        raise DatasetError(f"{path}: cannot read: {err.strerror}") from None
    with fh:
        number = 0
        while True:
            try:
                raw = fh.readline(MAX_LINE_BYTES + 1)
            except OSError as err:
                raise DatasetError(f"{path}: cannot read: {err.strerror}") from None
            if not raw:
                break
            number += 1
            where = f"{path}: line {number}"
            if len(raw) > MAX_LINE_BYTES:
                raise DatasetError(f"{where}: longer than {MAX_LINE_BYTES:,} bytes")
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError as err:
                raise DatasetError(f"{where}: not UTF-8 text ({err.reason})") from None
            if not line or line.startswith("#"):
                continue
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
            yield g, number, board, ident
    if number == 0 or g is None:
        raise DatasetError(f"{path}: no board in the file")


def read_boards(
    path: str | Path, g: Grid | None = None
) -> tuple[Grid, list[tuple[int, Board, str | None]]]:
    """``(grid, [(line number, board, id or None), ...])`` of a board file: every
    board of :func:`iter_boards`, in a list."""
    boards = [(n, board, ident) for g, n, board, ident in iter_boards(path, g)]
    return g if g is not None else _grid_of(boards[0][1]), boards


def _scan(path: Path, g: Grid | None) -> tuple[Grid, int, str]:
    """A first pass over a board file: (its grid, how many boards, the sha256 of
    its bytes); every line checked. Memory flat in the file's size."""
    count, grid_of = 0, g
    for grid_of, _, _, _ in iter_boards(path, g):
        count += 1
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    assert grid_of is not None  # iter_boards raised for a file without boards
    return grid_of, count, digest.hexdigest()


def _grid_of(board: Board) -> Grid:
    from harness.puzzle import grid

    return grid(round(len(board) ** 0.5))


def _json_board(line: str, where: str) -> tuple[str | list[str], str | None]:
    try:
        record = loads(line)
    except ValueError as err:
        raise DatasetError(f"{where}: not JSON ({err.msg})") from None
    except RecursionError:
        raise DatasetError(f"{where}: not JSON (nested too deeply)") from None
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
    shell, instances = _importer(path, name, g, goal, label, progress)
    return make_dataset(
        shell.name, shell.grid, shell.goal, generator=GENERATOR, seed=None,
        params=shell.params, instances=list(instances), command=shell.command,
        description=shell.description,
    )  # fmt: skip


def import_to_file(
    path: str | Path,
    out: Path | str,
    *,
    name: str,
    g: Grid | None = None,
    goal: str = "standard",
    label: str = "auto",
    progress: Callable[[int, int], None] | None = None,
    force: bool = False,
) -> tuple[Path, dict]:
    """:func:`import_boards` written to ``out`` (a folder, or a ``.jsonl`` path) as
    the boards are labelled, never held whole: memory stays flat in the file's
    size. (path written, summary: instances, unsolvable, min_depth, max_depth,
    sha256)."""
    shell, instances = _importer(path, name, g, goal, label, progress)
    summary = {"instances": 0, "unsolvable": 0, "min_depth": None, "max_depth": None}

    def counted() -> Iterator[Instance]:
        for inst in instances:
            summary["instances"] += 1
            summary["unsolvable"] += not inst.solvable
            depth = inst.optimal_length
            if depth is not None:
                low, high = summary["min_depth"], summary["max_depth"]
                summary["min_depth"] = depth if low is None else min(low, depth)
                summary["max_depth"] = depth if high is None else max(high, depth)
            yield inst

    written, _, checksum = save_streamed(shell, counted(), out, force=force)
    return written, summary | {"sha256": checksum}


def _importer(
    path: str | Path, name: str, g: Grid | None, goal: str, label: str,
    progress: Callable[[int, int], None] | None,
) -> tuple[Dataset, Iterator[Instance]]:
    """(the dataset without instances, its instances one at a time): the file is
    checked whole first (a bad last line costs no labelling), then read again."""
    check_name(name)
    path = Path(path)
    g, total, sha256 = _scan(path, g)
    try:
        target = goal_board(goal, g)
    except BoardError as err:
        raise DatasetError(f"--goal: {err}") from None
    label = resolve_label(label, g)
    labeller, source = make_labeller(label, target, g)
    gname = goal_name(target, g)
    command = (
        f"harness datasets import {path.name} --name {name} --size {g.label}"
        + (f" --goal {gname!r}" if gname != "standard" else "")
        + (f" --label '{label}'" if label != resolve_label("auto", g) else "")
    )
    shell = make_dataset(
        name, g, target, generator=GENERATOR, seed=None, instances=(),
        params={"source": path.name, "source_sha256": sha256, "label": label},
        command=command, description=f"imported from {path.name}",
    )  # fmt: skip

    def instances() -> Iterator[Instance]:
        ids = _Ids(path)
        for done, (_, number, board, ident) in enumerate(iter_boards(path, g), 1):
            solvable = is_solvable(board, target, g)
            length = labeller(board) if solvable and labeller else None
            inst = Instance("", board, target, g, solvable, length,
                            source if length is not None else None)  # fmt: skip
            yield replace(inst, id=ids.take(inst, ident, number))
            if progress:
                progress(done, total)

    return shell, instances()


class _Ids:
    """Instance ids as :func:`number_instances` gives them (``dNN-KKKK``,
    ``unsolvable-KKKK``, ``i-KKKK``, counted in file order), ids given in the file
    winning; DatasetError naming the line when an id is taken twice. Only the
    given ids are remembered (numbered ones are known from the counters), so
    memory stays flat in a file that gives none."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.counters: dict[str, int] = {}
        self.given: dict[str, int] = {}  # id given in the file -> its line
        self.replaced: set[tuple[str, int]] = set()  # numbers a given id took

    def take(self, inst: Instance, ident: str | None, number: int) -> str:
        prefix = number_instances([inst])[0].id.rsplit("-", 1)[0]
        k = self.counters[prefix] = self.counters.get(prefix, 0) + 1
        numbered = f"{prefix}-{k:04d}"
        if ident is None:
            if numbered in self.given:
                self._clash(number, numbered, f"on line {self.given[numbered]}")
            return numbered
        if ident in self.given:
            self._clash(number, ident, f"on line {self.given[ident]}")
        self.replaced.add((prefix, k))
        head, _, tail = ident.rpartition("-")
        if tail.isascii() and tail.isdigit() and ident != numbered:
            j = int(tail)
            taken = j <= self.counters.get(head, 0) and (head, j) not in self.replaced
            if taken and f"{head}-{j:04d}" == ident:
                self._clash(number, ident, "by an earlier board's numbering")
        self.given[ident] = number
        return ident

    def _clash(self, number: int, ident: str, where: str) -> None:
        raise DatasetError(f"{self.path}: line {number}: id {ident!r} already used "
                           f"{where}")  # fmt: skip


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
                        header = loads(line)
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
    label = "oracle" if g.squares <= ORACLE_MAX_SQUARES else "none"
    ds = import_boards(token, name=stem, g=g, label=label)
    return replace(ds, path=Path(token).resolve())
