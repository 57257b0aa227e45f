"""What every command module shares: the typer ``app`` and one-line errors."""

from __future__ import annotations

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
