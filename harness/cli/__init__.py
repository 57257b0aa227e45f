"""The ``harness`` command line: a thin typer layer over the library.

Each command lives in its own module here, converts its arguments and calls one
library function. Heavy libraries (pandas, matplotlib, numba) are imported inside
commands, never at start-up, so ``harness --help`` and ``harness solve`` stay fast.
"""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from harness.cli.common import (  # noqa: F401
    UserError,
    app,
    fail,
    size_and_goal,
    stdout_failed,
)

# Command modules register themselves on ``app`` when imported (in this order in
# --help). They import only typer and the standard library at module level.
# isort: off
from harness.cli import solve, solvers, run, report, compare, merge  # noqa: F401
from harness.cli import gate, datasets, board_import, history  # noqa: F401
# isort: on


def main() -> None:
    """Console entry point: no Python traceback ever reaches the terminal."""
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except SystemExit as done:
        # typer turns Ctrl-C into a silent exit 130 before it reaches us
        if done.code == 130 and _interrupted(done):
            typer.echo("interrupted", err=True)
        raise
    except BrokenPipeError:
        sys.exit(1)
    except UserError as err:
        typer.echo(f"error: {err}", err=True)
        sys.exit(2)
    except OSError as err:
        if not stdout_failed(err):
            _internal_error(err)
        typer.echo(f"error: cannot write the output: {err.strerror}", err=True)
        _drop_stdout()
        sys.exit(1)
    except Exception as err:
        _internal_error(err)


def _internal_error(err: Exception) -> None:
    """The last resort: one line, non-zero."""
    typer.echo(f"internal error: {type(err).__name__}: {err}", err=True)
    if isinstance(err, ImportError):  # e.g. pandas after numpy was downgraded
        from harness.core.requirements import requirement_problems

        for cause in requirement_problems():
            typer.echo(f"likely cause: {cause}", err=True)
    sys.exit(1)


def _interrupted(done: BaseException) -> bool:
    """Whether a KeyboardInterrupt led to ``done`` (its causes and contexts, as a
    traceback would show them)."""
    seen: BaseException | None = done
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__cause__ or (
            None if seen.__suppress_context__ else seen.__context__
        )
    return False


def _drop_stdout() -> None:
    """Point file descriptor 1 at /dev/null: what is left in the buffer of a
    stdout that cannot be written must not fail again at exit."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass
