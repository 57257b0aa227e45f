"""Datasets: reproducible sets of puzzle instances, stored as JSON Lines files.

A dataset file ``datasets/NAME.jsonl`` describes itself. Line 1 is a header::

    {"format": "npuzzle-dataset", "version": 1, "name": ..., "size": "3x3",
     "goal": "1 2 3 4 5 6 7 8 x", "goal_name": "standard", "generator": ...,
     "params": {...}, "seed": ..., "description": ..., "command": ..., "count": N,
     "sha256": ...}

(plus ``"cost_model": "heavy"`` when its tasks have tile costs,
:mod:`harness.core.costs`; absent: unit), and every further line is one instance::

    {"id": "d19-0001", "board": "2 3 4 1 5 x 7 6 8", "solvable": true,
     "optimal_length": 19, "optimal_source": "oracle", "extra": {...}}

(plus ``"optimal_cost": 73.0``, the cheapest path's cost, when known under a
cost model).

``sha256`` is the hash of the instance lines in their canonical form (the exact
bytes :func:`dumps_dataset` writes), so a cosmetic re-formatting still loads but any
change of content is caught. Loading validates everything and raises
:class:`DatasetError` with one line naming the file, the line or instance and why.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from harness.core.costs import COST_MODELS, costs_equal
from harness.core.files import write_atomic
from harness.core.jsontext import loads
from harness.core.numbers import NumberError, take_float, take_int
from harness.datasets.labels import oracle_labeller
from harness.datasets.model import (
    FORMAT,
    FORMAT_VERSION,
    HEADER_KEYS,
    ID_PATTERN,
    INSTANCE_KEYS,
    NAME_PATTERN,
    OPTIONAL_HEADER_KEYS,
    OPTIONAL_INSTANCE_KEYS,
    ORACLE_MAX_SQUARES,
    Dataset,
    DatasetError,
    Instance,
)
from harness.puzzle import (
    Board,
    BoardError,
    Grid,
    format_board,
    goal_name,
    is_solvable,
    parse_board,
    parse_size,
)


#: Longest optimal_length read (no board of the sizes here, up to 5x5, needs a
#: thousandth of it; a larger value is a typo or an overflow waiting in int64).
MAX_MOVES = 1_000_000


def make_dataset(
    name: str,
    g: Grid,
    goal: Board,
    *,
    generator: str,
    params: dict,
    seed: int | None,
    instances: Sequence[Instance],
    description: str = "",
    command: str = "",
    path: Path | None = None,
) -> Dataset:
    """Assemble a Dataset and compute its checksum."""
    instances = tuple(instances)
    return Dataset(
        name=name, grid=g, goal=goal, generator=generator, params=dict(params),
        seed=seed, instances=instances, checksum=_checksum(instances),
        path=path, description=description, command=command,
    )


# --------------------------------------------------------- text format


def _instance_record(inst: Instance) -> dict:
    record = {
        "id": inst.id,
        "board": format_board(inst.start),
        "solvable": inst.solvable,
        "optimal_length": inst.optimal_length,
        "optimal_source": inst.optimal_source,
    }
    if inst.extra:
        record["extra"] = inst.extra
    if inst.optimal_cost is not None:
        record["optimal_cost"] = inst.optimal_cost
    return record


def _instance_line(inst: Instance) -> str:
    """The canonical text of one instance (what is written and what is hashed)."""
    return json.dumps(_instance_record(inst), ensure_ascii=False, sort_keys=False)


def _checksum(instances: Iterable[Instance]) -> str:
    digest = hashlib.sha256()
    for inst in instances:
        digest.update(_instance_line(inst).encode() + b"\n")
    return digest.hexdigest()


def _header_line(ds: Dataset, count: int, checksum: str) -> str:
    """The header of a dataset file (``ds``'s instances are not looked at)."""
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "name": ds.name,
        "size": ds.grid.label,
        "goal": format_board(ds.goal),
        "goal_name": goal_name(ds.goal, ds.grid),
        "generator": ds.generator,
        "params": ds.params,
        "seed": ds.seed,
        "description": ds.description,
        "command": ds.command,
        "count": count,
        "sha256": checksum,
    }
    if ds.cost_model != "unit":  # unit files stay as they were
        header["cost_model"] = ds.cost_model
    return json.dumps(header, ensure_ascii=False)


def dumps_dataset(ds: Dataset) -> str:
    """The complete file text: header line, then one canonical line per instance."""
    lines = [_header_line(ds, len(ds.instances), ds.checksum)]
    lines += [_instance_line(inst) for inst in ds.instances]
    return "\n".join(lines) + "\n"


def save_streamed(
    ds: Dataset, instances: Iterable[Instance], target: Path | str, *,
    force: bool = False,
) -> tuple[Path, int, str]:
    """Write a dataset whose instances come one at a time (``ds`` gives the
    header; its own instances are ignored): (path, count, sha256). The lines go to
    an anonymous temporary file as they come, so memory stays flat in the
    dataset's size; the file is then written whole (header first) or not at all.
    DatasetError as :func:`save_dataset`, and for whatever ``instances`` raises."""
    import shutil
    import tempfile

    target = Path(target)
    path = target if target.suffix == ".jsonl" else target / f"{ds.name}.jsonl"
    if path.exists() and not force:
        raise DatasetError(f"{path} already exists (use --force to overwrite)")
    digest, count = hashlib.sha256(), 0
    with tempfile.TemporaryFile() as lines:
        try:
            for inst in instances:
                line = _instance_line(inst).encode() + b"\n"
                digest.update(line)
                lines.write(line)
                count += 1
        except OSError as err:
            raise DatasetError(f"cannot write a temporary file for {path}: "
                               f"{err.strerror or err}") from None  # fmt: skip
        checksum = digest.hexdigest()

        def write(fh) -> None:
            fh.write(_header_line(ds, count, checksum).encode() + b"\n")
            lines.seek(0)
            shutil.copyfileobj(lines, fh, 1 << 20)

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, write)
        except OSError as err:
            raise DatasetError(f"cannot write {path}: {err.strerror or err}") from None
    return path, count, checksum


def save_dataset(ds: Dataset, target: Path | str, *, force: bool = False) -> Path:
    """Write ``ds`` to ``target`` (a ``.jsonl`` path, or a folder that gets
    ``NAME.jsonl``); DatasetError if the file exists and ``force`` is false."""
    target = Path(target)
    path = target if target.suffix == ".jsonl" else target / f"{ds.name}.jsonl"
    if path.exists() and not force:
        raise DatasetError(f"{path} already exists (use --force to overwrite)")
    try:  # never through a planted link; no temporary file left on a full disk
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, dumps_dataset(ds))
    except OSError as err:
        raise DatasetError(f"cannot write {path}: {err.strerror or err}") from None
    return path

def parse_dataset(
    text: str, path: Path | str = "<text>", *, check_optima: bool = True
) -> Dataset:
    """Parse and validate the text of a dataset file (see :func:`load_dataset`)."""
    where = str(path)

    def fail(reason: str, line: int | None = None, ident: str | None = None):
        at = f" line {line}" if line is not None else ""
        at += f" (id {ident!r})" if ident is not None else ""
        return DatasetError(f"{where}:{at} {reason}" if at else f"{where}: {reason}")

    lines = text.split("\n")
    if not text.strip():
        raise fail("empty file: expected a header line")
    header = _json_object(lines[0], 1, fail)
    if header.get("format") != FORMAT:
        raise fail(
            f"not an npuzzle dataset: format is {header.get('format')!r}, "
            f"expected {FORMAT!r}", 1,
        )
    if header.get("version") != FORMAT_VERSION:
        raise fail(
            f"unknown format version {header.get('version')!r} (this harness reads "
            f"version {FORMAT_VERSION})", 1,
        )
    missing = [k for k in HEADER_KEYS if k not in header]
    if missing:
        raise fail(f"header lacks {', '.join(map(repr, missing))}", 1)
    unknown = sorted(set(header) - set(HEADER_KEYS) - set(OPTIONAL_HEADER_KEYS))
    if unknown:
        raise fail(f"header has unknown key(s) {', '.join(map(repr, unknown))}", 1)
    name = header["name"]
    if not isinstance(name, str) or not NAME_PATTERN.fullmatch(name):
        raise fail(f"bad dataset name {name!r}", 1)
    stem = Path(where).name.removesuffix(".jsonl")
    if Path(where).suffix == ".jsonl" and stem != name:
        raise fail(f"name mismatch: header says {name!r}, file is {stem}.jsonl", 1)
    try:
        g = parse_size(str(header["size"]))
    except BoardError as err:
        raise fail(f"size: {err}", 1) from None
    try:
        goal = parse_board(str(header["goal"]), g)
    except BoardError as err:
        raise fail(f"goal: {err}", 1) from None
    if header["goal_name"] != goal_name(goal, g):
        raise fail(
            f"goal mismatch: goal_name {header['goal_name']!r} but the goal tokens "
            f"{header['goal']!r} are {goal_name(goal, g)!r}", 1,
        )
    for key, kind in (("params", dict), ("description", str), ("command", str),
                      ("generator", str), ("sha256", str)):
        if not isinstance(header[key], kind):
            raise fail(f"header {key!r} must be a {kind.__name__}", 1)
    seed = header["seed"]
    if seed is not None:
        try:
            take_int(seed, "seed")
        except NumberError as err:
            raise fail(f"header {err}; expected an integer or null", 1) from None
    cost_model = header.get("cost_model", "unit")
    if cost_model not in COST_MODELS:
        raise fail(f"header 'cost_model' {cost_model!r} is not one of "
                   f"{', '.join(COST_MODELS)}", 1)  # fmt: skip

    check = _optimum_checker(goal, g) if check_optima else None
    instances: list[Instance] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        record = _json_object(line, number, fail)
        inst = _parse_instance(record, number, g, goal, check, first_line, fail)
        instances.append(_check_cost(inst, record, number, cost_model, check_optima,
                                     fail))  # fmt: skip
    if header["count"] != len(instances):
        raise fail(
            f"count mismatch: header says {header['count']!r} instances, the file "
            f"has {len(instances)}"
        )
    checksum = _checksum(instances)
    if header["sha256"] != checksum:
        raise fail(
            f"checksum mismatch: header sha256 {header['sha256'][:12]}..., the "
            f"instances hash to {checksum[:12]}... (edited by hand? regenerate it)"
        )
    return Dataset(
        name=name, grid=g, goal=goal, generator=header["generator"],
        params=header["params"], seed=seed, instances=tuple(instances),
        checksum=checksum, path=Path(path) if where != "<text>" else None,
        description=header["description"], command=header["command"],
        cost_model=cost_model,
    )


def _check_cost(
    inst: Instance, record: dict, number: int, model: str, check: bool, fail
) -> Instance:
    """``inst`` with its ``optimal_cost`` from the record: a positive number on a
    solvable board, the oracle's on 3x3 when ``check`` (within the cost tolerance)."""
    if "optimal_cost" not in record:
        return inst
    try:  # the one reader of numbers (harness.core.numbers): finite, int64
        cost = take_float(record["optimal_cost"], "optimal_cost", minimum=0)
    except NumberError as err:
        raise fail(f"{err} (a path's cost)", number, inst.id) from None
    if not inst.solvable:
        raise fail(f"optimal_cost {cost} on an unsolvable board", number, inst.id)
    if check and inst.grid.squares <= ORACLE_MAX_SQUARES:
        from harness.core.cost_oracle import optimal_cost

        exact = optimal_cost(inst.start, inst.goal, inst.grid, model)
        if exact is None or not costs_equal(float(cost), exact):
            raise fail(f"optimal_cost {cost} but the oracle's {model} optimum is "
                       f"{exact}", number, inst.id)  # fmt: skip
    return replace(inst, optimal_cost=float(cost))


def _json_object(line: str, number: int, fail) -> dict:
    try:
        value = loads(line)
    except json.JSONDecodeError as err:
        raise fail(f"bad JSON: {err.msg} (column {err.colno})", number) from None
    if not isinstance(value, dict):
        raise fail(f"expected a JSON object, got {type(value).__name__}", number)
    return value


def _parse_instance(
    record: dict,
    number: int,
    g: Grid,
    goal: Board,
    check: Callable[[Board, int], str | None] | None,
    first_line: dict[str, int],
    fail,
) -> Instance:
    ident = record.get("id")
    if not isinstance(ident, str) or not ID_PATTERN.fullmatch(ident):
        raise fail(f"bad or missing instance id {ident!r}", number)
    missing = [k for k in INSTANCE_KEYS if k not in record]
    if missing:
        raise fail(f"lacks {', '.join(map(repr, missing))}", number, ident)
    unknown = sorted(set(record) - set(INSTANCE_KEYS) - set(OPTIONAL_INSTANCE_KEYS))
    if unknown:
        raise fail(f"unknown key(s) {', '.join(map(repr, unknown))}", number, ident)
    if ident in first_line:
        raise fail(f"duplicate id (first at line {first_line[ident]})", number, ident)
    first_line[ident] = number
    if not isinstance(record["board"], str):
        raise fail("board must be a string of tokens", number, ident)
    try:
        board = parse_board(record["board"], g)
    except BoardError as err:
        raise fail(f"board: {err}", number, ident) from None
    if "goal" in record:
        try:
            own_goal = parse_board(str(record["goal"]), g)
        except BoardError as err:
            raise fail(f"goal: {err}", number, ident) from None
        if own_goal != goal:
            raise fail(
                f"goal mismatch: instance goal {record['goal']!r} differs from the "
                f"header goal {format_board(goal)!r}", number, ident,
            )
    solvable = record["solvable"]
    if not isinstance(solvable, bool):
        raise fail(f"solvable must be true or false, not {solvable!r}", number, ident)
    if solvable != is_solvable(board, goal, g):
        raise fail(
            f"solvable is {str(solvable).lower()} but the parity says "
            f"{'solvable' if not solvable else 'unsolvable'}", number, ident,
        )
    length, source = record["optimal_length"], record["optimal_source"]
    if length is not None:
        try:
            take_int(length, "optimal_length", minimum=0, maximum=MAX_MOVES)
        except NumberError as err:
            raise fail(f"{err} (a count of moves)", number, ident) from None
        if not solvable:
            raise fail(f"optimal_length {length} on an unsolvable board", number, ident)
        if not isinstance(source, str) or not _valid_source(source):
            raise fail(
                f"optimal_source {source!r}: expected oracle, published or "
                "solver:NAME[HEURISTIC]", number, ident,
            )
        if check:
            reason = check(board, length)
            if reason:
                raise fail(reason, number, ident)
    elif source is not None:
        raise fail(f"optimal_source {source!r} without an optimal_length", number,
                   ident)
    extra = record.get("extra", {})
    if not isinstance(extra, dict):
        raise fail("extra must be a JSON object", number, ident)
    return Instance(ident, board, goal, g, solvable, length, source, extra)


def _valid_source(source: str) -> bool:
    return source in ("oracle", "published") or bool(
        re.fullmatch(r"solver:[A-Za-z_][A-Za-z0-9_]*(\[[A-Za-z0-9_\-]+\])?", source)
    )


def _optimum_checker(goal: Board, g: Grid) -> Callable[[Board, int], str | None]:
    """check(board, length) -> why the claimed optimum is wrong, or None.

    Exact on oracle grids; elsewhere it can only catch lengths below the Manhattan
    bound or of the wrong parity (every move changes one tile's distance by one)."""
    if g.squares <= ORACLE_MAX_SQUARES:
        labeller = oracle_labeller(goal, g)

        def exact(board: Board, length: int) -> str | None:
            true = labeller(board)
            if true != length:
                return f"optimal_length {length} contradicts the oracle ({true} moves)"
            return None

        return exact
    where = {tile: divmod(square, g.cols) for square, tile in enumerate(goal)}

    def bounds(board: Board, length: int) -> str | None:
        manhattan = 0
        for square, tile in enumerate(board):
            if tile:
                r, c = divmod(square, g.cols)
                gr, gc = where[tile]
                manhattan += abs(r - gr) + abs(c - gc)
        if length < manhattan:
            return (f"optimal_length {length} is below the Manhattan lower bound "
                    f"{manhattan}")
        if (length - manhattan) % 2:
            return (f"optimal_length {length} has the wrong parity (Manhattan "
                    f"distance is {manhattan})")
        return None

    return bounds
