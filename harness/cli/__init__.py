"""The ``harness`` command line: a thin typer layer over the library.

Each command lives in its own module here, converts its arguments and calls one
library function. Heavy libraries (pandas, matplotlib, numba) are imported inside
commands, never at start-up, so ``harness --help`` and ``harness solve`` stay fast.
"""

from __future__ import annotations

import sys

import typer

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    help="Benchmark sliding-tile puzzle (8- and 15-puzzle) solvers.",
)


class UserError(Exception):
    """Bad input or a failed precondition: printed as one line, exit status 2."""


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` to stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def size_and_goal(size: str, goal: str):
    """``--size`` and ``--goal`` as a (Grid, goal board); one-line errors naming
    the option otherwise."""
    from harness.puzzle import BoardError, goal_board, parse_size

    try:
        g = parse_size(size)
    except BoardError as err:
        raise fail(f"--size: {err}") from None
    try:
        return g, goal_board(goal, g)
    except BoardError as err:
        raise fail(f"--goal: {err}") from None


# Command modules register themselves on ``app`` when imported (in this order in
# --help). They import only typer and the standard library at module level.
from harness.cli import solve, run, report, compare, merge, gate, datasets  # noqa: E402,F401,I001


def main() -> None:
    """Console entry point: no Python traceback ever reaches the terminal."""
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(1)
    except UserError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    except Exception as err:  # last resort: one line, non-zero
        typer.echo(f"internal error: {type(err).__name__}: {err}", err=True)
        sys.exit(1)
