"""Dataset generators: deterministic from (generator, params, seed) on every machine
and Python version. They draw from :class:`BitStream` (splitmix64, defined here),
never from ``random``'s sampling routines, whose algorithms may change between
versions."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass, field, replace

from harness.core.names import did_you_mean
from harness.core.registries import add, load_entry_points, registry, seal, source
from harness.datasets.jsonl import make_dataset
from harness.datasets.labels import make_labeller, resolve_label
from harness.datasets.model import (
    ORACLE_MAX_SQUARES,
    Dataset,
    DatasetError,
    Instance,
    check_name,
)
from harness.puzzle import (
    OPPOSITE,
    Board,
    Grid,
    goal_name,
    is_solvable,
    unrank,
)

#: Importers build fixed sets (the generators, below, draw boards).
IMPORTERS = ("seeds", "korf100", "korf50")
ENTRY_POINT_GROUP = "npuzzle_harness.generators"
_MASK64 = (1 << 64) - 1


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
    g: Grid, goal: Board, *, count: int, length: int, stream: BitStream,
    avoid: Container[Board] = (),
) -> list[Board]:
    """``count`` distinct boards, each ``length`` random blank moves from ``goal``,
    never undoing the previous move, none of them in ``avoid``. ``length`` bounds
    the optimum from above."""
    if length < 0:
        raise DatasetError(f"random_walk: length {length} must be >= 0")

    def draw() -> Board:
        squares = list(goal)
        blank = squares.index(0)
        previous = ""
        for _ in range(length):
            options = [
                (move, target)
                for move, target in g.neighbours[blank]
                if previous == "" or move != OPPOSITE[previous]
            ]
            move, target = options[stream.below(len(options))]
            squares[blank], squares[target] = squares[target], 0
            blank, previous = target, move
        return tuple(squares)

    return _distinct(draw, count, "random_walk", avoid)


def random_permutation(n: int, stream: BitStream) -> list[int]:
    """A uniformly random permutation of 0..n-1 (Fisher-Yates on ``stream``)."""
    squares = list(range(n))
    for i in range(n - 1, 0, -1):
        j = stream.below(i + 1)
        squares[i], squares[j] = squares[j], squares[i]
    return squares


def uniform_board(
    g: Grid, goal: Board, stream: BitStream, *, solvable: bool = True
) -> Board:
    """One board drawn uniformly from the solvable (or unsolvable) class of ``goal``."""
    squares = random_permutation(g.squares, stream)
    if is_solvable(tuple(squares), goal, g) != solvable:
        # Swapping the first two tiles flips the parity class and is its own inverse,
        # so every board of the wanted class has exactly two equally likely
        # preimages: the result stays uniform over that class.
        a, b = [square for square, tile in enumerate(squares) if tile != 0][:2]
        squares[a], squares[b] = squares[b], squares[a]
    return tuple(squares)


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
    if g.squares > ORACLE_MAX_SQUARES:
        raise DatasetError(
            f"depth_strata: needs the exact oracle, which covers boards of at most "
            f"{ORACLE_MAX_SQUARES} squares, not {g.label}"
        )
    import numpy as np

    from harness.core import oracle

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
        picked = sample(ranks, per_depth, stream)
        out += [(unrank(r, g.squares), depth) for r in picked]
    if unsolvable:
        ranks = np.flatnonzero(dist < 0).tolist()
        picked = sample(ranks, unsolvable, stream)
        out += [(unrank(r, g.squares), None) for r in picked]
    return out


def sample(pool: list[int], k: int, stream: BitStream) -> list[int]:
    """k items of ``pool`` without replacement (partial Fisher-Yates), in draw order."""
    k = min(k, len(pool))
    for i in range(k):
        j = i + stream.below(len(pool) - i)
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:k]


def _distinct(draw: Callable[[], Board], count: int, what: str,
              avoid: Container[Board] = ()) -> list[Board]:
    """``count`` distinct results of ``draw`` in first-seen order, none in
    ``avoid``; a duplicate is discarded and drawn again (a benchmark should not
    time one board twice)."""
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
        board = draw()
        if board not in avoid:
            seen.setdefault(board, None)
    return list(seen)



def parse_depths(text: str) -> list[int]:
    """``"0..31"``, ``"20,22,24"`` or ``"0..5,10,20..22"`` -> sorted distinct depths."""
    out: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        m = re.fullmatch(r"([0-9]+)(?:\s*(?:\.\.|-)\s*([0-9]+))?", part)  # ASCII
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


# ----------------------------------------------------------------- registry


@dataclass(frozen=True, slots=True)
class Drawn:
    """What a generator returns: its boards, the parameters that reproduce them
    (``count`` always; stored in the dataset's header) and, when the boards' exact
    lengths are known by construction, ``label="oracle"``."""

    boards: list[Board]
    params: dict = field(default_factory=dict)
    label: str | None = None


#: make(grid, goal, *, stream, count, length, depths, unsolvable) -> Drawn
MakeBoards = Callable[..., Drawn]


@dataclass(frozen=True, slots=True)
class GeneratorInfo:
    """A registered dataset generator."""

    name: str
    make: MakeBoards
    description: str


_REGISTRY: dict[str, GeneratorInfo] = registry()


def register_generator(
    name: str, description: str
) -> Callable[[MakeBoards], MakeBoards]:
    """Decorator: add a generator ``make(grid, goal, *, stream, count, length,
    depths, unsolvable) -> Drawn``. It draws only from ``stream`` (a
    :class:`BitStream` seeded from the generator's name and the seed), so the same
    arguments give the same boards everywhere."""
    check_name(name)

    def wrap(make: MakeBoards) -> MakeBoards:
        info = GeneratorInfo(name, make, description)
        add(_REGISTRY, "dataset generator", name, info, source(make.__module__))
        return make

    return wrap


def all_generators() -> dict[str, GeneratorInfo]:
    """Every registered generator in registration order (built-ins first), after
    loading installed packages' entry points (group ``npuzzle_harness.generators``)."""
    load_entry_points(ENTRY_POINT_GROUP)
    return dict(_REGISTRY)


def walk_lengths(length: int | str) -> list[int]:
    """``--length`` as a list of walk lengths: ``40``, ``"40"``, ``"30..90"`` or
    ``"30,40,50"`` (see :func:`parse_depths`)."""
    if isinstance(length, int):
        return [length]
    try:
        return parse_depths(length)
    except DatasetError:
        raise DatasetError(
            f"random_walk: length {length!r} is not a length, a list like 30,40 or a "
            "range like 30..90"
        ) from None


@register_generator(
    "random_walk",
    "random walks of --length blank moves from the goal (several lengths, e.g. "
    "30,40,50: --count walks of each)",
)
def _random_walk(g: Grid, goal: Board, *, stream: BitStream, count: int,
                 length: int | str | None, **_: object) -> Drawn:  # fmt: skip
    if length is None:
        raise DatasetError("random_walk: --length is required")
    lengths = walk_lengths(length)
    boards: list[Board] = []
    for n in lengths:
        boards += random_walk_boards(
            g, goal, count=count, length=n, stream=stream, avoid=set(boards)
        )
    # one length stays a number in the header, as files made before lists were
    stored: int | str = lengths[0] if len(lengths) == 1 else ",".join(map(str, lengths))
    return Drawn(boards, {"count": count, "length": stored})


@register_generator("uniform", "uniformly random solvable boards")
def _uniform(g: Grid, goal: Board, *, stream: BitStream, count: int,
             **_: object) -> Drawn:  # fmt: skip
    boards = uniform_boards(g, goal, count=count, stream=stream, solvable=True)
    return Drawn(boards, {"count": count})


@register_generator("unsolvable", "uniformly random unsolvable boards")
def _unsolvable(g: Grid, goal: Board, *, stream: BitStream, count: int,
                **_: object) -> Drawn:  # fmt: skip
    boards = uniform_boards(g, goal, count=count, stream=stream, solvable=False)
    return Drawn(boards, {"count": count})


@register_generator(
    "depth_strata", "--count boards at each exact depth (--depth), exact by oracle"
)
def _depth_strata(g: Grid, goal: Board, *, stream: BitStream, count: int,
                  depths: Sequence[int] | None, unsolvable: int,
                  **_: object) -> Drawn:  # fmt: skip
    if count < 1:
        raise DatasetError(f"depth_strata: count per depth {count} must be >= 1")
    labelled = depth_strata_boards(
        g, goal, per_depth=count, depths=depths, unsolvable=unsolvable, stream=stream,
    )
    params = {
        "count": count,
        "depths": format_depths(d for _, d in labelled if d is not None),
        "unsolvable": unsolvable,
    }
    return Drawn([b for b, _ in labelled], params, label="oracle")


# ----------------------------------------------------------------- generate


def generate(
    generator: str,
    g: Grid,
    goal: Board,
    *,
    name: str,
    seed: int,
    count: int | None = None,
    length: int | str | None = None,
    depths: Sequence[int] | None = None,
    unsolvable: int = 0,
    label: str = "auto",
    cross_check: str | None = None,
    cross_check_depth: int | None = None,
    description: str = "",
    progress: Callable[[int, int], None] | None = None,
) -> Dataset:
    """A new dataset from a random generator; the same arguments give the same bytes.

    ``count`` is the number of boards (for ``depth_strata``: per depth; for
    ``random_walk`` with several lengths: per length); ``length`` the walk
    length(s) of ``random_walk``; ``depths``/``unsolvable`` apply to
    ``depth_strata``. ``cross_check`` (``solver:NAME[HEURISTIC]``) solves again
    every board labelled at most ``cross_check_depth`` moves and fails on any
    other length; those boards say so in ``extra``. ``progress(done, total)`` is
    called while labelling.
    """
    check_name(name)
    if not isinstance(seed, int) or not 0 <= seed <= _MASK64:
        raise DatasetError(f"seed {seed!r}: must be an integer in 0..2**64-1")
    generators = all_generators()
    if generator not in generators:
        raise DatasetError(
            f"unknown generator {generator!r}{did_you_mean(generator, generators)}; "
            f"known: {', '.join(generators)}"
        )
    if count is None:
        raise DatasetError(f"{generator}: --count is required")
    if sorted(goal) != list(range(g.squares)):
        raise DatasetError(f"goal {goal} is not a {g.label} board")
    stream = BitStream.for_dataset(generator, seed)
    drawn = generators[generator].make(
        g, goal, stream=stream, count=count, length=length, depths=depths,
        unsolvable=unsolvable,
    )
    boards, params = list(drawn.boards), dict(drawn.params)
    if drawn.label is not None:
        label = drawn.label  # e.g. strata are exact by construction
    label = resolve_label(label, g)
    params["label"] = label
    labeller, source = make_labeller(label, goal, g)
    checker = _cross_checker(cross_check, cross_check_depth, labeller, goal, g)
    if checker is not None:
        params["cross_check"] = cross_check
        params["cross_check_depth"] = cross_check_depth

    lengths: list[int | None] = []
    extras: list[dict] = []
    solvable_flags = [is_solvable(b, goal, g) for b in boards]
    for done, (board, solvable) in enumerate(zip(boards, solvable_flags, strict=True)):
        lengths.append(labeller(board) if solvable and labeller else None)
        extras.append(checker(board, lengths[-1]) if checker else {})
        if progress:
            progress(done + 1, len(boards))
    instances = number_instances(
        [
            Instance("", b, goal, g, ok, n, source if n is not None else None, extra)
            for b, ok, n, extra in zip(
                boards, solvable_flags, lengths, extras, strict=True
            )
        ]
    )
    return make_dataset(
        name, g, goal, generator=generator, params=params, seed=seed,
        instances=instances, description=description,
        command=generate_command(generator, g, goal, name, seed, params),
    )



def _cross_checker(
    cross_check: str | None, depth: int | None, labeller, goal: Board, g: Grid
) -> Callable[[Board, int | None], dict] | None:
    """check(board, label) -> the board's ``extra``: solves again with a second
    solver where the label is at most ``depth`` and raises DatasetError when the
    two lengths differ; None without a cross-check."""
    if cross_check is None:
        return None
    if not cross_check.startswith("solver:"):
        raise DatasetError(
            f"cross-check {cross_check!r}: expected solver:NAME[HEURISTIC]"
        )
    if labeller is None:
        raise DatasetError("cross-check: the dataset has no labels to check")
    if depth is None:
        raise DatasetError("cross-check: give the deepest label it checks")
    second, _ = make_labeller(cross_check, goal, g)
    config = cross_check.removeprefix("solver:")

    def check(board: Board, label: int | None) -> dict:
        if label is None or label > depth:
            return {}
        again = second(board)
        if again != label:
            raise DatasetError(
                f"cross-check: {config} finds {again} moves where the label says "
                f"{label} on {' '.join(map(str, board))}"
            )
        return {"cross_checked_by": config}

    return check


def number_instances(instances: list[Instance]) -> list[Instance]:
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
    if "depths" in params:  # exact by construction: no --label
        parts.append(f"--depth {params['depths']}")
        if params.get("unsolvable"):
            parts.append(f"--unsolvable {params['unsolvable']}")
    elif params.get("label", "auto") != resolve_label("auto", g):
        parts.append(f"--label '{params['label']}'")
    if "cross_check" in params:
        parts.append(f"--cross-check '{params['cross_check']}'")
        parts.append(f"--cross-check-depth {params['cross_check_depth']}")
    parts.append(f"--name {name}")
    return " ".join(parts)


seal(_REGISTRY)  # the built-in generators above; plugins' are forgotten by scopes
#: The built-in random generators (``harness datasets generate``), in registration
#: order; plugins add more (:func:`all_generators`).
GENERATORS = tuple(_REGISTRY)
