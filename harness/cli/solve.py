"""``harness solve`` (the online-judge task) and ``harness solvers`` (what is there).

``solve`` reads whitespace-separated tokens from standard input until end of file,
groups them into boards and prints one line per board: the blank's moves, or
``unsolvable``. All input is validated before the first board is solved, so a typo
in the last board costs nothing. Every answer is replayed before it is printed.
The input is copied to an anonymous temporary file and read twice (checked, then
solved) in parts of CHUNK_LINES lines that end where a board ends: memory stays
flat in the input's size (10^6 boards take what 10^4 take).

Boards go in groups of 1, 2, 4, ... (doubling while a group takes under 50 ms, up
to 4096): a slow solver still answers board by board, while a batch of 3x3 boards
is solved through the solver's ``solve_many`` when it has one (one call per
group) and each group's answers are replayed together
(:func:`harness.core.judge.judge_many`, numpy). ``--stats`` solves and clocks
board by board.

Default solver: ``astar_dict[manhattan]`` on 3x3 and smaller (181,440 boards at
most; ~0.05 s on the hardest). On larger boards the first of
``ida_star_jit[pdb663]`` (4x4 only: a 6-6-3 pattern database, built once in ~10 s
of CPU and cached, after which even Korf's hardest 15-puzzles take well under a
second), ``ida_star_jit[linear_conflict]`` (compiled with numba; other sizes), and
``ida_star[linear_conflict]`` (pure Python, the fallback: on Korf's 15-puzzles it
needs ~10x fewer nodes than manhattan for ~5x the cost per node) that is installed
and takes the board size.

Only the standard library, typer and the harness core are imported here: no pandas,
matplotlib or numba on the 3x3 path.
"""

from __future__ import annotations

import io
import sys
import time
from dataclasses import dataclass
from typing import Annotated

import typer

from harness.cli.board_input import (
    check_input,
    infer_size,
    parts,
    read_boards,
    spool_input,
)
from harness.cli.common import app, fail, load_plugins, size_and_goal
from harness.cli.progress import setting_up, setup_lines
from harness.core.batch import LONG_INPUT, solvable_for
from harness.core.costs import (
    COST_MODELS,
    UNIT,
    check_cost_model,
    format_cost,
    path_cost,
)
from harness.core.judge import judge, judge_many
from harness.puzzle import (
    GOAL_NAMES,
    MAX_SIDE,
    MIN_SIDE,
    Board,
    Grid,
    goal_board,
    goal_name,
    is_solvable,
)

#: Used when --solver is not given, by board size (see the module docstring).
DEFAULT_SMALL = "astar_dict[manhattan]"
DEFAULT_LARGE = (
    "ida_star_jit[pdb663]",
    "ida_star_jit[linear_conflict]",
    "ida_star[linear_conflict]",
)


#: ... and under tile costs on larger boards (pattern databases bound moves only).
DEFAULT_LARGE_COSTS = ("ida_star_jit[manhattan]", "astar_dict[manhattan]")


def default_solver(grid: Grid, cost_model: str = UNIT) -> str:
    """The solver ``harness solve`` uses on ``grid`` (under ``cost_model``) when
    none is named."""
    if grid.squares <= 9:
        return DEFAULT_SMALL
    from harness.configs import parse_config
    from harness.heuristics import all_heuristics

    labels = DEFAULT_LARGE if cost_model == UNIT else DEFAULT_LARGE_COSTS
    for label in labels:
        try:
            config = parse_config(label)
        except KeyError:  # not registered here
            continue
        if all_heuristics()[config.heuristic].refuses(grid) or config.refuses(
            grid, None, cost_model=cost_model
        ):
            continue
        return label
    return labels[-1]


def load_extensions(plugins: list[str] | None, execs: list[str] | None) -> list[str]:
    """Load ``--plugin`` targets, then ``--exec`` programs; return the names of the
    exec programs (or, without any, what the plugins registered). One-line error
    naming the option otherwise."""
    from harness.measure.external import load_plugin

    loaded = load_plugins(plugins)
    programs: list[str] = []
    for text in execs or ():
        try:
            programs += load_plugin(f"exec:{text}")
        except ImportError as err:  # its message names --exec already
            raise fail(str(err)) from None
    return programs or loaded


PLUGIN_OPTION = typer.Option(
    "--plugin",
    help="Load solvers from a module, a .py file, or a .toml file of [[external]] "
    "programs (repeatable).",
)
EXEC_OPTION = typer.Option(
    "--exec",
    metavar="NAME=COMMAND",
    help="Register an external solver program (judge format on stdin, moves or "
    "'unsolvable' on stdout; repeatable). Options: NAME:optimal,batch,sizes=3x3,"
    "goal=G,timeout=S=COMMAND.",
)


COST_OPTION = typer.Option(
    "--cost",
    help=f"Tile cost model: {' | '.join(COST_MODELS)}. A move costs the moved "
    "tile's cost (heavy: t, inverse: 1/t, sqrt: sqrt t, reverse: N - t, N = tiles "
    "+ 1); the path printed is then the cheapest (optimal solvers) or within the "
    "bound, by cost.",
)


@app.command()
def solve(
    boards_given: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="BOARD",
            help="Boards to solve, each in quotes (\"2 3 4 1 5 x 7 6 8\"), or one "
            "board's tokens unquoted. Default: read standard input.",
            show_default=False,
        ),
    ] = None,
    solver: Annotated[
        str | None,
        typer.Option(
            # Rich markup would eat "[manhattan]": escape the brackets.
            help=(
                "NAME or NAME[HEURISTIC] (see `harness solvers`). Default: "
                f"{DEFAULT_SMALL} up to 3x3; larger: the first of "
                f"{', '.join(DEFAULT_LARGE)} that takes the size."
            ).replace("[", "\\["),
        ),
    ] = None,
    goal: Annotated[
        str,
        typer.Option(help=f"{' | '.join(GOAL_NAMES)} | the goal's tokens in quotes."),
    ] = "standard",
    size: Annotated[
        str | None,
        typer.Option(
            help=f"Board size ROWSxCOLS, sides {MIN_SIDE} to {MAX_SIDE}. Default: "
            "NxN when every input line holds one NxN board, else 3x3.",
            show_default=False,
        ),
    ] = None,
    stats: Annotated[
        bool,
        typer.Option(
            "--stats", help="Per board: length, seconds and counters, on stderr."
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Run a solver even where it declines the size."),
    ] = False,
    cost: Annotated[str, COST_OPTION] = UNIT,
    plugin: Annotated[list[str] | None, PLUGIN_OPTION] = None,
    exec_: Annotated[list[str] | None, EXEC_OPTION] = None,
) -> None:
    """Solve boards given as arguments, or read from standard input (tokens until
    end of file): one line per board, the blank's moves (u d l r) or 'unsolvable'."""
    from harness.configs import parse_config
    from harness.heuristics import all_heuristics, build_tables, make_heuristic

    g, target = size_and_goal(size or "3x3", goal)  # bad options fail before stdin
    try:
        check_cost_model(cost)
    except ValueError as err:
        raise fail(f"--cost: {err}") from None
    programs = load_extensions(plugin, exec_)
    label = solver or (programs[0] if len(programs) == 1 else None)
    config = None
    if label is not None:
        try:
            config = parse_config(label)
        except (KeyError, ImportError) as err:
            raise fail(f"--solver: {err.args[0] if err.args else err}") from None
        if size is not None:
            _check_refusal(config, g, target, force, cost)

    where, source = "stdin", sys.stdin.buffer
    if boards_given:  # each quoted argument a line; unquoted tokens one board
        quoted = any(len(arg.split()) > 1 for arg in boards_given)
        text = ("\n" if quoted else " ").join(boards_given) + "\n"
        where, source = "argument", io.BytesIO(text.encode())
    elif sys.stdin.isatty():
        typer.echo("reading boards from standard input; end with Ctrl-D", err=True)
    spool, length = spool_input(source)
    with spool:
        if length >= LONG_INPUT:  # a batch: read and judged with numpy, imported
            import numpy  # noqa: F401  once, at start-up, not inside a board's time
        if size is None:  # every line of the first part holds one board of a size
            head = next(parts(spool, None), ("", 1))[0]
            inferred = infer_size(head)
            if inferred is not None:
                g, target = size_and_goal(inferred.label, goal)
        count = check_input(spool, g, size is None, where)
        if config is None:
            config = parse_config(default_solver(g, cost))
        _check_refusal(config, g, target, force, cost)
        spec = config.spec
        say = setup_lines()  # a long set-up says what it builds (on a terminal)
        try:
            h = None
            if config.heuristic:
                info = all_heuristics().get(config.heuristic)
                if info is not None and say is not None:  # minutes: % and ETA
                    build_tables(info, target, g, say)
                with setting_up(f"building the {config.heuristic} tables for "
                                f"{g.label} (once: cached after)", say):  # fmt: skip
                    h = make_heuristic(config.heuristic, target, g, cost)
            if spec.prepare is not None:
                with setting_up(f"preparing {config.label} (compiling its kernels "
                                "on a first run: cached after)", say):  # fmt: skip
                    spec.prepare(g, target, h)
        except (KeyError, ValueError) as err:
            raise fail(
                f"--solver {config.label}: {err.args[0] if err.args else err}"
            ) from None
        unsolvable = _Unsolvable(target, g)
        done, pace = 0, Pace()
        for text, first in parts(spool, g):
            boards = read_boards(text, g, first, done)
            if stats:
                _solve_with_stats(
                    boards, target, g, config, h, first=done, cost_model=cost
                )
            else:
                solve_boards(
                    boards, target, g, config, h, first=done, total=count, pace=pace,
                    cost_model=cost,
                )
            unsolvable.add(boards, done)
            done += len(boards)
    note = unsolvable.note()
    if note:
        typer.echo(f"note: {note}", err=True)


class _Unsolvable:
    """The boards toward no goal of ours, counted as the parts go by: the first
    one is kept for :meth:`note`, the rest only counted."""

    def __init__(self, target: Board, g: Grid) -> None:
        self.target, self.g = target, g
        self.solvable = solvable_for(target, g)
        self.first: tuple[int, Board] | None = None
        self.more = 0

    def add(self, boards: list[Board], done: int) -> None:
        for i, board in enumerate(boards):
            if not self.solvable(board):
                if self.first is None:
                    self.first = (done + i, board)
                else:
                    self.more += 1

    def note(self) -> str | None:
        if self.first is None:
            return None
        return unsolvable_note(self.first, self.more, self.target, self.g)


def unsolvable_note(first: tuple[int, Board], more: int, target: Board, g: Grid) -> str:
    """Why the first unsolvable board (its index, the board) is (the other parity
    class) and which of the built-in goals it can reach; ``more``: how many
    other boards are unsolvable."""
    index, board = first
    name = goal_name(target, g)
    goal = f"the {name} goal" if name in GOAL_NAMES else "this goal"
    others = [n for n in GOAL_NAMES if n != name
              and is_solvable(board, goal_board(n, g), g)]  # fmt: skip
    text = (
        f"board {index + 1} is unsolvable toward {goal}: its tiles are in the other "
        f"parity class (half of all {g.label} boards cannot reach a given goal)"
    )
    if others:
        text += "; it can reach " + " and ".join(
            f"--goal {n}" + (" (Korf's convention)" if n == "blank-first" else "")
            for n in others
        )
    return text + (f" ({more} more board{'s' * (more > 1)} unsolvable)" if more else "")


#: Boards solved and judged together grow from 1 by doubling, up to this many, while
#: a group takes less than CHUNK_SECONDS: slow solvers still answer board by board,
#: and a batch of 3x3 boards is judged (replayed) in groups of thousands at once.
MAX_CHUNK = 4096
CHUNK_SECONDS = 0.05
#: Groups smaller than this are solved and judged board by board (no numpy import,
#: no batch entry point).
MIN_BATCH = 64


@dataclass(slots=True)
class Pace:
    """What one part of the input leaves for the next: the group size reached
    (doubling while a group takes under CHUNK_SECONDS), and whether the batch
    entry point is still used (it is dropped, with a warning, when it raises)."""

    size: int = 1
    batch: bool = True


def solve_boards(
    boards: list[Board], target: Board, g: Grid, config, h, *, first: int = 0,
    total: int | None = None, pace: Pace | None = None, cost_model: str = UNIT,
) -> None:
    """Solve every board, judge every answer, print one line per board (the answers
    before a wrong one, then a one-line error). Boards go in growing groups: the
    solver's ``solve_many`` (one call per group) when it has one, else ``solve``
    per board; a group's answers are replayed together (:func:`judge_many`).
    ``first``: boards of the input before these (errors number boards in the
    whole input); ``total``: the input's boards (the batch set-up is done once,
    before the first part, when there are enough of them); ``pace``: carried from
    the part before. Under tile costs (``cost_model``) board by board: the batch
    entry points search by moves."""
    pace = pace or Pace()
    # Answers go out through sys.stdout (block-buffered when piped, line-buffered
    # on a terminal): typer.echo per line costs more than a 3x3 solve.
    write = sys.stdout.write
    clock = time.perf_counter
    solvable = solvable_for(target, g)
    # a batch entry point takes no parameters: a config with some solves per board
    batch = pace.batch and not config.params and cost_model == UNIT
    many = config.spec.solve_many if batch else None
    if first == 0 and (total or len(boards)) >= MIN_BATCH:  # set-up, once:
        from harness.core.batch import board_array

        goal = board_array([target], g)  # imports numpy, for judge_many
        if many is not None:  # the batch entry point's code compiled or loaded,
            with setting_up(f"compiling {config.label}'s batch entry point (first "
                            "run: cached after)", setup_lines()):  # fmt: skip
                many(goal, target, g, heuristic=h)  # on the goal (no search)
    done = 0
    while done < len(boards):
        part = boards[done : done + pace.size]
        began = clock()
        answers = arrays = error = None
        if many is not None and len(part) >= MIN_BATCH:
            answers, arrays = _solve_many(part, target, g, config, h)
            if answers is None:
                many = None  # (warned) board by board from here on
                pace.batch = False
        if answers is None:
            answers, error = _solve_each(
                part, first + done, target, g, config, h, cost_model
            )
        if len(answers) < MIN_BATCH or cost_model != UNIT:
            verdicts = [
                judge(a, b, target, g, solvable=lambda b=b: solvable(b),
                      cost_model=cost_model)  # fmt: skip
                for a, b in zip(answers, part)
            ]
        else:
            verdicts = judge_many(answers, part, target, g, boards=arrays)
        for j, verdict in enumerate(verdicts):
            if not verdict.ok:
                _write(write, answers[:j])
                sys.stdout.flush()  # the answers before it are out, in order
                number = first + done + j + 1
                raise fail(f"board {number}: {config.label}: {verdict.message}", 1)
        _write(write, answers)
        if error is not None:
            sys.stdout.flush()
            raise fail(error, code=1)
        done += len(part)
        if clock() - began < CHUNK_SECONDS:
            pace.size = min(2 * pace.size, MAX_CHUNK)


def _write(write, answers: list) -> None:
    if answers:
        write("\n".join(["unsolvable" if a is None else a for a in answers]) + "\n")


def _solve_each(part, done, target, g, config, h, cost_model=UNIT):
    """(answers, error): ``solve`` per board, up to the first that raises (a solver
    bug must not become a traceback: the error names it)."""
    from harness.solver import Counters

    solve_one = config.solve_for(cost_model)
    answers: list = []
    try:
        for board in part:
            answers.append(
                solve_one(board, target, g, counters=Counters(), heuristic=h)
            )
    except Exception as err:
        return answers, (
            f"board {done + len(answers) + 1}: {config.label} failed: "
            f"{type(err).__name__}: {err}"
        )
    return answers, None


def _solve_many(part, target, g, config, h):
    """(answers, the boards as an array) from the solver's ``solve_many``, or
    (None, None) when it raises, with a warning naming the solver and the error:
    the rest is then solved board by board, which names a board that fails, and
    is slower; a user timing the batch must know."""
    from harness.core.batch import board_array

    arrays = board_array(part, g)
    try:
        answers, _counts = config.spec.solve_many(arrays, target, g, heuristic=h)
    except Exception as exc:
        said = " ".join(str(exc).split())[:200]  # one line, whatever it raised
        typer.echo(
            f"warning: {config.label}: its batch entry point (solve_many) raised "
            f"{type(exc).__name__}: {said}; solving board by board instead",
            err=True,
        )
        return None, None
    return list(answers), arrays


def _solve_with_stats(
    boards, target, g, config, h, *, first: int = 0, cost_model: str = UNIT
) -> None:
    """Board by board, each clocked, with its counters on stderr (``--stats``);
    ``first``: boards of the input before these."""
    from harness.solver import Counters

    spec = config.spec
    write = sys.stdout.write
    solve_one = config.solve_for(cost_model)
    clock = time.perf_counter
    name = config.label
    solvable = solvable_for(target, g)
    for number, board in enumerate(boards, start=first + 1):
        counters = Counters()
        started = clock()
        try:
            moves = solve_one(board, target, g, counters=counters, heuristic=h)
        except Exception as err:  # a solver bug must not become a traceback
            sys.stdout.flush()
            raise fail(
                f"board {number}: {name} failed: {type(err).__name__}: {err}",
                code=1,
            ) from None
        seconds = clock() - started
        _check(moves, board, target, g, number, name, solvable, cost_model)
        write("unsolvable\n" if moves is None else moves + "\n")
        sys.stdout.flush()
        length = "unsolvable" if moves is None else f"{len(moves)} moves"
        if moves is not None and cost_model != UNIT:
            cost = format_cost(path_cost(board, moves, g, cost_model))
            length += f", {cost_model} cost {cost}"
        counts = " ".join(f"{k}={v}" for k, v in counters.as_dict().items())
        if spec.external is not None:  # a program reports no counters
            counts = "counters: none (external program)"
        typer.echo(
            f"board {number}: {length}, {seconds:.4f} s, {name}, {counts}",
            err=True,
        )


def _check_refusal(
    config, g: Grid, target: Board, force: bool, cost_model: str = UNIT
) -> None:
    spec = config.spec
    reason = config.refuses(g, None, target, cost_model)
    if reason and not force:
        raise fail(
            f"{config.label} declines {g.label} boards toward the "
            f"{goal_name(target, g)} goal: {reason} (--force runs it)"
        )
    if spec.external is not None and spec.external.refuses_goal(target, g):
        raise fail(f"--goal: {spec.external.refuses_goal(target, g)}")


def _check(
    moves: str | None, board: Board, goal: Board, g: Grid, number: int, label: str,
    solvable, cost_model: str = UNIT,
) -> None:
    """Replay the answer: a wrong one is reported, never printed as a solution.
    ``solvable(board)`` is asked only when the answer needs it."""
    verdict = judge(moves, board, goal, g, solvable=lambda: solvable(board),
                    cost_model=cost_model)  # fmt: skip
    if not verdict.ok:
        sys.stdout.flush()  # the answers before it are out, in order
        raise fail(f"board {number}: {label}: {verdict.message}", 1)
