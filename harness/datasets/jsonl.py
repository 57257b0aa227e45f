"""Datasets: reproducible sets of puzzle instances, stored as JSON Lines files.

A dataset file ``datasets/NAME.jsonl`` describes itself. Line 1 is a header::

    {"format": "npuzzle-dataset", "version": 1, "name": ..., "size": "3x3",
     "goal": "1 2 3 4 5 6 7 8 x", "goal_name": "standard", "generator": ...,
     "params": {...}, "seed": ..., "description": ..., "command": ..., "count": N,
     "sha256": ...}

and every further line is one instance::

    {"id": "d19-0001", "board": "2 3 4 1 5 x 7 6 8", "solvable": true,
     "optimal_length": 19, "optimal_source": "oracle", "extra": {...}}

``sha256`` is the hash of the instance lines in their canonical form (the exact
bytes :func:`dumps_dataset` writes), so a cosmetic re-formatting still loads but any
change of content is caught. Loading validates everything and raises
:class:`DatasetError` with one line naming the file, the line or instance and why.

Generators are deterministic from (generator, params, seed) on every machine and
Python version: they draw from :class:`BitStream` (splitmix64, defined here), never
from ``random``'s sampling routines, whose algorithms may change between versions.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from harness.puzzle import (
    OPPOSITE,
    Board,
    BoardError,
    Grid,
    apply_moves,
    format_board,
    goal_name,
    is_solvable,
    parse_board,
    parse_size,
    rank,
    unrank,
)

FORMAT = "npuzzle-dataset"
FORMAT_VERSION = 1  # bump on any change of the file layout; loaders reject others
# History:  1 - first version

#: Random generators (``harness datasets generate``); importers build fixed sets.
GENERATORS = ("random_walk", "uniform", "unsolvable", "depth_strata")
IMPORTERS = ("seeds", "korf100")

#: Named selections of datasets. ``default`` is what ``harness run`` measures when no
#: dataset is named: small enough that every solver finishes it in minutes.
SELECTIONS: dict[str, tuple[str, ...] | None] = {
    "default": ("8-seeds", "8-seeds-spiral", "8-mini"),
    "all": None,  # every dataset on the search path
}

ORACLE_MAX_CELLS = 9  # mirrors harness.oracle.MAX_CELLS without importing numpy
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
_HEADER_KEYS = (
    "format", "version", "name", "size", "goal", "goal_name", "generator", "params",
    "seed", "description", "command", "count", "sha256",
)
_INSTANCE_KEYS = ("id", "board", "solvable", "optimal_length", "optimal_source")
_OPTIONAL_INSTANCE_KEYS = ("extra", "goal")
_MASK64 = (1 << 64) - 1


class DatasetError(ValueError):
    """A dataset that cannot be generated, found, loaded or saved; one-line message."""


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
    command: str = ""  # the command that (re)generates this file


# ---------------------------------------------------------------- bit stream


class BitStream:
    """splitmix64 (Steele, Lea, Flood 2014): a fixed, documented bit stream, so a
    dataset is the same on every machine and Python version."""

    def __init__(self, state: int) -> None:
        self.state = state & _MASK64

    @classmethod
    def for_dataset(cls, generator: str, seed: int) -> BitStream:
        """The stream for ``generator`` with ``seed``: different generators with the
        same seed draw unrelated streams."""
        digest = hashlib.sha256(f"{generator}:{seed}".encode()).digest()
        return cls(int.from_bytes(digest[:8], "little"))

    def next_u64(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform integer in range(n): top bits of one draw, rejected until < n."""
        if n <= 0:
            raise ValueError(f"below({n}): n must be positive")
        bits = (n - 1).bit_length()
        if bits == 0:
            return 0
        while True:
            value = self.next_u64() >> (64 - bits)
            if value < n:
                return value


# ---------------------------------------------------------------- generators


def random_walk_boards(
    g: Grid, goal: Board, *, count: int, length: int, stream: BitStream
) -> list[Board]:
    """``count`` distinct boards, each ``length`` random blank moves from ``goal``,
    never undoing the previous move. ``length`` bounds the optimum from above."""
    if length < 0:
        raise DatasetError(f"random_walk: length {length} must be >= 0")

    def draw() -> Board:
        cells = list(goal)
        blank = cells.index(0)
        previous = ""
        for _ in range(length):
            options = [
                (move, target)
                for move, target in g.neighbours[blank]
                if previous == "" or move != OPPOSITE[previous]
            ]
            move, target = options[stream.below(len(options))]
            cells[blank], cells[target] = cells[target], 0
            blank, previous = target, move
        return tuple(cells)

    return _distinct(draw, count, "random_walk")


def random_permutation(n: int, stream: BitStream) -> list[int]:
    """A uniformly random permutation of 0..n-1 (Fisher-Yates on ``stream``)."""
    cells = list(range(n))
    for i in range(n - 1, 0, -1):
        j = stream.below(i + 1)
        cells[i], cells[j] = cells[j], cells[i]
    return cells


def uniform_board(
    g: Grid, goal: Board, stream: BitStream, *, solvable: bool = True
) -> Board:
    """One board drawn uniformly from the solvable (or unsolvable) class of ``goal``."""
    cells = random_permutation(g.cells, stream)
    if is_solvable(tuple(cells), goal, g) != solvable:
        # Swapping the first two tiles flips the parity class and is its own inverse,
        # so every board of the wanted class has exactly two equally likely
        # preimages: the result stays uniform over that class.
        a, b = [cell for cell, tile in enumerate(cells) if tile != 0][:2]
        cells[a], cells[b] = cells[b], cells[a]
    return tuple(cells)


def uniform_boards(
    g: Grid, goal: Board, *, count: int, stream: BitStream, solvable: bool = True
) -> list[Board]:
    """``count`` distinct boards drawn uniformly from the solvable (or, with
    ``solvable=False``, the unsolvable) half of all boards toward ``goal``."""
    return _distinct(
        lambda: uniform_board(g, goal, stream, solvable=solvable),
        count,
        "uniform" if solvable else "unsolvable",
    )


def depth_strata_boards(
    g: Grid,
    goal: Board,
    *,
    per_depth: int,
    depths: Sequence[int] | None,
    unsolvable: int,
    stream: BitStream,
) -> list[tuple[Board, int | None]]:
    """``per_depth`` boards (all of them if fewer exist) at each exact optimal depth,
    drawn without replacement from the oracle, then ``unsolvable`` unreachable ones.
    Returns ``(board, depth or None)`` in depth order."""
    if g.cells > ORACLE_MAX_CELLS:
        raise DatasetError(
            f"depth_strata: needs the exact oracle, which covers boards of at most "
            f"{ORACLE_MAX_CELLS} cells, not {g.label}"
        )
    import numpy as np

    from harness import oracle

    dist = oracle.distances(goal, g)
    deepest = int(dist.max())
    chosen = list(range(deepest + 1)) if depths is None else list(depths)
    for depth in chosen:
        if not 0 <= depth <= deepest:
            raise DatasetError(
                f"depth_strata: no {g.label} board is at depth {depth} from this goal "
                f"(depths run 0..{deepest})"
            )
    out: list[tuple[Board, int | None]] = []
    for depth in chosen:
        ranks = np.flatnonzero(dist == depth).tolist()  # ascending: deterministic pool
        out += [(unrank(r, g.cells), depth) for r in _sample(ranks, per_depth, stream)]
    if unsolvable:
        ranks = np.flatnonzero(dist < 0).tolist()
        out += [(unrank(r, g.cells), None) for r in _sample(ranks, unsolvable, stream)]
    return out


def _sample(pool: list[int], k: int, stream: BitStream) -> list[int]:
    """k items of ``pool`` without replacement (partial Fisher-Yates), in draw order."""
    k = min(k, len(pool))
    for i in range(k):
        j = i + stream.below(len(pool) - i)
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def _distinct(draw: Callable[[], Board], count: int, what: str) -> list[Board]:
    """``count`` distinct results of ``draw`` in first-seen order; a duplicate is
    discarded and drawn again (a benchmark should not time one board twice)."""
    if count < 0:
        raise DatasetError(f"{what}: count {count} must be >= 0")
    seen: dict[Board, None] = {}
    attempts = 0
    while len(seen) < count:
        attempts += 1
        if attempts > 20 * count + 1000:
            raise DatasetError(
                f"{what}: found only {len(seen)} distinct boards of the {count} asked "
                f"after {attempts - 1} draws (too few such boards exist?)"
            )
        seen.setdefault(draw(), None)
    return list(seen)



def parse_depths(text: str) -> list[int]:
    """``"0..31"``, ``"20,22,24"`` or ``"0..5,10,20..22"`` -> sorted distinct depths."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:\s*(?:\.\.|-)\s*(\d+))?", part)
        if not m:
            raise DatasetError(
                f"depths {text!r}: {part!r} is not a depth or a range like 20..25"
            )
        low = int(m.group(1))
        high = int(m.group(2)) if m.group(2) is not None else low
        if high < low:
            raise DatasetError(f"depths {text!r}: range {part!r} runs backwards")
        out.update(range(low, high + 1))
    return sorted(out)


def format_depths(depths: Iterable[int]) -> str:
    """Compact form of a depth list: ``[0, 1, 2, 5]`` -> ``"0..2,5"``."""
    values = sorted(set(depths))
    parts: list[str] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(str(values[i]) if i == j else f"{values[i]}..{values[j]}")
        i = j + 1
    return ",".join(parts)


# ------------------------------------------------------------------ labelling

#: label(board) -> optimal length, or None when unknown
Labeller = Callable[[Board], "int | None"]


def oracle_labeller(goal: Board, g: Grid) -> Labeller:
    """Exact depths from :mod:`harness.oracle` (grids of at most 9 cells)."""
    from harness import oracle

    dist = oracle.distances(goal, g)

    def label(board: Board) -> int | None:
        value = int(dist[rank(board)])
        return None if value < 0 else value

    return label


def solver_labeller(config: str, goal: Board, g: Grid) -> Labeller:
    """Optimal lengths from a registered optimal solver ``NAME[HEURISTIC]``; the
    returned path is replayed before its length is trusted."""
    from harness.heuristics import make_heuristic
    from harness.solver import Counters, parse_config

    try:
        cfg = parse_config(config)
    except KeyError as err:
        raise DatasetError(f"label solver: {err.args[0]}") from None
    if not cfg.spec.optimal:
        raise DatasetError(f"label solver {cfg.label!r} is not optimal")
    try:
        h = make_heuristic(cfg.heuristic, goal, g) if cfg.heuristic else None
    except (KeyError, ValueError) as err:
        raise DatasetError(f"label solver {cfg.label!r}: {err}") from None

    def label(board: Board) -> int | None:
        moves = cfg.spec.solve(board, goal, g, counters=Counters(), heuristic=h)
        if moves is None:
            raise DatasetError(
                f"label solver {cfg.label!r} says {format_board(board)} is unsolvable, "
                "but its parity says it is solvable"
            )
        if apply_moves(board, moves, g) != goal:
            raise DatasetError(
                f"label solver {cfg.label!r}: its path for {format_board(board)} does "
                "not reach the goal"
            )
        return len(moves)

    return label


def resolve_label(label: str, g: Grid) -> str:
    """``auto`` means the oracle where it exists, else no labels."""
    if label == "auto":
        return "oracle" if g.cells <= ORACLE_MAX_CELLS else "none"
    return label


def make_labeller(
    label: str, goal: Board, g: Grid
) -> tuple[Labeller | None, str | None]:
    """``auto`` | ``oracle`` | ``none`` | ``solver:NAME[HEURISTIC]`` -> (labeller,
    the ``optimal_source`` it writes); ``auto`` is the oracle where it exists."""
    label = resolve_label(label, g)
    if label == "none":
        return None, None
    if label == "oracle":
        if g.cells > ORACLE_MAX_CELLS:
            raise DatasetError(
                f"label oracle: only boards of at most {ORACLE_MAX_CELLS} cells, "
                f"not {g.label}; use solver:NAME[HEURISTIC]"
            )
        return oracle_labeller(goal, g), "oracle"
    if label.startswith("solver:"):
        config = label.removeprefix("solver:")
        return solver_labeller(config, goal, g), label
    raise DatasetError(
        f"label {label!r}: expected auto, oracle, none or solver:NAME[HEURISTIC]"
    )


# ----------------------------------------------------------------- generate


def generate(
    generator: str,
    g: Grid,
    goal: Board,
    *,
    name: str,
    seed: int,
    count: int | None = None,
    length: int | None = None,
    depths: Sequence[int] | None = None,
    unsolvable: int = 0,
    label: str = "auto",
    description: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> Dataset:
    """A new dataset from a random generator; the same arguments give the same bytes.

    ``count`` is the number of boards (for ``depth_strata``: per depth); ``length``
    the walk length of ``random_walk``; ``depths``/``unsolvable`` apply to
    ``depth_strata``. ``progress(done, total)`` is called while labelling.
    """
    _check_name(name)
    if not isinstance(seed, int) or not 0 <= seed <= _MASK64:
        raise DatasetError(f"seed {seed!r}: must be an integer in 0..2**64-1")
    if generator not in GENERATORS:
        raise DatasetError(
            f"unknown generator {generator!r}; known: {', '.join(GENERATORS)}"
        )
    if count is None:
        raise DatasetError(f"{generator}: --count is required")
    if sorted(goal) != list(range(g.cells)):
        raise DatasetError(f"goal {goal} is not a {g.label} board")
    stream = BitStream.for_dataset(generator, seed)
    params: dict = {}
    labelled: list[tuple[Board, int | None]] | None = None
    if generator == "random_walk":
        if length is None:
            raise DatasetError("random_walk: --length is required")
        params = {"count": count, "length": length}
        boards = random_walk_boards(g, goal, count=count, length=length, stream=stream)
    elif generator in ("uniform", "unsolvable"):
        params = {"count": count}
        boards = uniform_boards(
            g, goal, count=count, stream=stream, solvable=generator == "uniform"
        )
    else:
        if count < 1:
            raise DatasetError(f"depth_strata: count per depth {count} must be >= 1")
        labelled = depth_strata_boards(
            g, goal, per_depth=count, depths=depths, unsolvable=unsolvable,
            stream=stream,
        )
        params = {
            "count": count,
            "depths": format_depths(d for _, d in labelled if d is not None),
            "unsolvable": unsolvable,
        }
        boards = [b for b, _ in labelled]
        label = "oracle"  # strata are exact by construction
    label = resolve_label(label, g)
    params["label"] = label
    labeller, source = make_labeller(label, goal, g)

    lengths: list[int | None] = []
    solvable_flags = [is_solvable(b, goal, g) for b in boards]
    for done, (board, solvable) in enumerate(zip(boards, solvable_flags, strict=True)):
        lengths.append(labeller(board) if solvable and labeller else None)
        if progress:
            progress(done + 1, len(boards))
    instances = _number(
        [
            Instance("", b, goal, g, ok, n, source if n is not None else None)
            for b, ok, n in zip(boards, solvable_flags, lengths, strict=True)
        ]
    )
    return make_dataset(
        name, g, goal, generator=generator, params=params, seed=seed,
        instances=instances, description=description,
        command=generate_command(generator, g, goal, name, seed, params),
    )


def regenerate(ds: Dataset, *, progress: Callable[[int, int], None] | None = None
               ) -> Dataset:
    """Rebuild a dataset from what its header records (generator, params, seed,
    goal); for a faithful file the result has the same checksum and bytes."""
    params = ds.params
    if ds.generator in IMPORTERS:
        from harness import committed

        if ds.generator == "seeds":
            return committed.seeds_dataset(ds.name, str(params.get("goal")))
        return committed.korf100_dataset(ds.name)
    if ds.generator not in GENERATORS or ds.seed is None:
        raise DatasetError(f"{ds.name}: generator {ds.generator!r} cannot be rerun")
    try:
        return generate(
            ds.generator, ds.grid, ds.goal, name=ds.name, seed=ds.seed,
            count=params["count"], length=params.get("length"),
            depths=parse_depths(params["depths"]) if "depths" in params else None,
            unsolvable=params.get("unsolvable", 0), label=params.get("label", "auto"),
            description=ds.description, progress=progress,
        )
    except KeyError as err:
        raise DatasetError(f"{ds.name}: params lack {err.args[0]!r}") from None


def _number(instances: list[Instance]) -> list[Instance]:
    """Give ids ``dNN-KKKK`` (known depth NN, K-th such board), ``unsolvable-KKKK``
    or ``i-KKKK`` (depth unknown), counting from 1 in dataset order."""
    counters: dict[str, int] = {}
    out = []
    for inst in instances:
        if not inst.solvable:
            prefix = "unsolvable"
        elif inst.optimal_length is not None:
            prefix = f"d{inst.optimal_length:02d}"
        else:
            prefix = "i"
        counters[prefix] = counters.get(prefix, 0) + 1
        out.append(replace(inst, id=f"{prefix}-{counters[prefix]:04d}"))
    return out


def generate_command(
    generator: str, g: Grid, goal: Board, name: str, seed: int, params: dict
) -> str:
    """The ``harness datasets generate`` command line that reproduces a dataset."""
    parts = [f"harness datasets generate {generator} --size {g.label}"]
    parts.append(f"--count {params['count']}")
    parts.append(f"--seed {seed}")
    gname = goal_name(goal, g)
    if gname != "standard":
        parts.append(f"--goal {gname!r}" if " " in gname else f"--goal {gname}")
    if "length" in params:
        parts.append(f"--length {params['length']}")
    if generator == "depth_strata":
        parts.append(f"--depth {params['depths']}")
        if params.get("unsolvable"):
            parts.append(f"--unsolvable {params['unsolvable']}")
    elif params.get("label", "auto") != resolve_label("auto", g):
        parts.append(f"--label '{params['label']}'")
    parts.append(f"--name {name}")
    return " ".join(parts)


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
    return record


def _instance_line(inst: Instance) -> str:
    """The canonical text of one instance (what is written and what is hashed)."""
    return json.dumps(_instance_record(inst), ensure_ascii=False, sort_keys=False)


def _checksum(instances: Iterable[Instance]) -> str:
    digest = hashlib.sha256()
    for inst in instances:
        digest.update(_instance_line(inst).encode() + b"\n")
    return digest.hexdigest()


def dumps_dataset(ds: Dataset) -> str:
    """The complete file text: header line, then one canonical line per instance."""
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
        "count": len(ds.instances),
        "sha256": ds.checksum,
    }
    lines = [json.dumps(header, ensure_ascii=False)]
    lines += [_instance_line(inst) for inst in ds.instances]
    return "\n".join(lines) + "\n"


def save_dataset(ds: Dataset, target: Path | str, *, force: bool = False) -> Path:
    """Write ``ds`` to ``target`` (a ``.jsonl`` path, or a folder that gets
    ``NAME.jsonl``); DatasetError if the file exists and ``force`` is false."""
    target = Path(target)
    path = target if target.suffix == ".jsonl" else target / f"{ds.name}.jsonl"
    if path.exists() and not force:
        raise DatasetError(f"{path} already exists (use --force to overwrite)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(dumps_dataset(ds).encode())
        os.replace(tmp, path)
    except OSError as err:
        raise DatasetError(f"cannot write {path}: {err.strerror or err}") from None
    return path


def load_dataset(name_or_path: str | Path, *, check_optima: bool = True) -> Dataset:
    """Find (see :func:`find_dataset`), read and fully validate a dataset; a
    committed dataset with no file on the search path is built from its recipe.

    ``check_optima`` compares 3x3 optimal lengths with the oracle (and bigger boards'
    with the parity and Manhattan bounds). DatasetError names file, line and reason.
    """
    try:
        path = find_dataset(name_or_path)
    except DatasetError:
        # No file anywhere (e.g. an installed wheel): a committed dataset is rebuilt
        # from its recipe, byte-identical to the file it would have been.
        built = _builtin(name_or_path)
        if built is None:
            raise
        return built
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as err:
        raise DatasetError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise DatasetError(f"{path}: not UTF-8 text ({err.reason} at byte "
                           f"{err.start})") from None
    return parse_dataset(text, path, check_optima=check_optima)


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
    missing = [k for k in _HEADER_KEYS if k not in header]
    if missing:
        raise fail(f"header lacks {', '.join(map(repr, missing))}", 1)
    unknown = sorted(set(header) - set(_HEADER_KEYS))
    if unknown:
        raise fail(f"header has unknown key(s) {', '.join(map(repr, unknown))}", 1)
    name = header["name"]
    if not isinstance(name, str) or not _NAME.fullmatch(name):
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
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise fail(f"header 'seed' must be an integer or null, not {seed!r}", 1)

    check = _optimum_checker(goal, g) if check_optima else None
    instances: list[Instance] = []
    first_line: dict[str, int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        record = _json_object(line, number, fail)
        instances.append(_parse_instance(record, number, g, goal, check, first_line,
                                         fail))
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
    )


def _json_object(line: str, number: int, fail) -> dict:
    try:
        value = json.loads(line)
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
    if not isinstance(ident, str) or not _ID.fullmatch(ident):
        raise fail(f"bad or missing instance id {ident!r}", number)
    missing = [k for k in _INSTANCE_KEYS if k not in record]
    if missing:
        raise fail(f"lacks {', '.join(map(repr, missing))}", number, ident)
    unknown = sorted(set(record) - set(_INSTANCE_KEYS) - set(_OPTIONAL_INSTANCE_KEYS))
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
        if not isinstance(length, int) or isinstance(length, bool) or length < 0:
            raise fail(f"optimal_length {length!r} is not a count of moves", number,
                       ident)
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
    if g.cells <= ORACLE_MAX_CELLS:
        labeller = oracle_labeller(goal, g)

        def exact(board: Board, length: int) -> str | None:
            true = labeller(board)
            if true != length:
                return f"optimal_length {length} contradicts the oracle ({true} moves)"
            return None

        return exact
    where = {tile: divmod(cell, g.cols) for cell, tile in enumerate(goal)}

    def bounds(board: Board, length: int) -> str | None:
        manhattan = 0
        for cell, tile in enumerate(board):
            if tile:
                r, c = divmod(cell, g.cols)
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


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name) or name in SELECTIONS:
        raise DatasetError(
            f"dataset name {name!r}: use letters, digits, '.', '_', '-' (not "
            f"{' or '.join(map(repr, SELECTIONS))})"
        )


# ------------------------------------------------------------ search path


def repo_datasets_dir() -> Path | None:
    """The checkout's ``datasets/`` (source or editable install), else None: an
    installed wheel has no such folder and uses the built-in recipes instead."""
    root = Path(__file__).resolve().parent.parent
    return root / "datasets" if (root / "pyproject.toml").is_file() else None


def dataset_dirs() -> list[Path]:
    """Folders searched for ``NAME.jsonl``, first match wins: ``$NPUZZLE_DATASETS``
    (os.pathsep-separated), ``./datasets``, then the repository's ``datasets/``."""
    dirs = [Path(p) for p in os.environ.get("NPUZZLE_DATASETS", "").split(os.pathsep)
            if p]
    dirs.append(Path.cwd() / "datasets")
    repo = repo_datasets_dir()
    if repo is not None:
        dirs.append(repo)
    out: list[Path] = []
    for d in dirs:
        if d.is_dir() and all(d.resolve() != o.resolve() for o in out):
            out.append(d)
    return out


def _is_plain_name(name_or_path: str | Path) -> bool:
    text = str(name_or_path)
    return not (isinstance(name_or_path, Path) or text.endswith(".jsonl")
                or os.sep in text or "/" in text)


def find_dataset(name_or_path: str | Path) -> Path:
    """A path to an existing file, or the first ``NAME.jsonl`` on the search path."""
    text = str(name_or_path)
    path = Path(text)
    if not _is_plain_name(name_or_path):
        if not path.is_file():
            raise DatasetError(f"{path}: no such dataset file")
        return path
    for folder in dataset_dirs():
        candidate = folder / f"{text}.jsonl"
        if candidate.is_file():
            return candidate
    known = ", ".join(dataset_names()) or "none"
    raise DatasetError(f"unknown dataset {text!r}; known: {known}")


def list_datasets() -> list[tuple[str, Path]]:
    """``(name, path)`` of every dataset file on the search path, by name; a name
    found in two folders is listed once, from the folder searched first."""
    found: dict[str, Path] = {}
    for folder in dataset_dirs():
        for path in sorted(folder.glob("*.jsonl")):
            found.setdefault(path.name.removesuffix(".jsonl"), path)
    return sorted(found.items())


def dataset_names() -> list[str]:
    """Every loadable name: the files on the search path plus the built-in recipes
    of the committed datasets (built in memory when no file is found)."""
    from harness.committed import RECIPES

    return sorted({name for name, _ in list_datasets()} | set(RECIPES))


def _builtin(name_or_path: str | Path) -> Dataset | None:
    from harness.committed import RECIPES, build

    name = str(name_or_path)
    return build(name) if _is_plain_name(name_or_path) and name in RECIPES else None


def select_datasets(spec: str, *, check_optima: bool = True) -> list[Dataset]:
    """``default``, ``all``, or a comma list of names/paths -> loaded datasets."""
    names: list[str] = []
    for token in (t.strip() for t in spec.split(",")):
        if not token:
            continue
        if token in SELECTIONS:
            chosen = SELECTIONS[token]
            names += dataset_names() if chosen is None else chosen
        else:
            names.append(token)
    if not names:
        raise DatasetError(f"dataset selection {spec!r} names no dataset")
    out: list[Dataset] = []
    for name in dict.fromkeys(names):
        out.append(load_dataset(name, check_optima=check_optima))
    return out


# ---------------------------------------------------------------- summary


def summarize(ds: Dataset) -> dict:
    """Plain-data summary for ``harness datasets list/show``."""
    depths = [i.optimal_length for i in ds.instances if i.optimal_length is not None]
    histogram: dict[int, int] = {}
    for d in sorted(depths):
        histogram[d] = histogram.get(d, 0) + 1
    sources = sorted({i.optimal_source for i in ds.instances if i.optimal_source})
    solvable = sum(i.solvable for i in ds.instances)
    return {
        "name": ds.name,
        "size": ds.grid.label,
        "goal": goal_name(ds.goal, ds.grid),
        "instances": len(ds.instances),
        "solvable": solvable,
        "unsolvable": len(ds.instances) - solvable,
        "unknown_depth": solvable - len(depths),
        "min_depth": min(depths) if depths else None,
        "max_depth": max(depths) if depths else None,
        "mean_depth": round(sum(depths) / len(depths), 2) if depths else None,
        "optimal_sources": sources,
        "generator": ds.generator,
        "params": ds.params,
        "seed": ds.seed,
        "description": ds.description,
        "command": ds.command,
        "sha256": ds.checksum,
        "path": str(ds.path) if ds.path else None,
        "histogram": histogram,
    }
