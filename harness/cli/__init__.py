"""The ``harness`` command line: a thin typer layer over the library.

Each command lives in its own module here, converts its arguments and calls one
library function. Heavy libraries (pandas, matplotlib, numba) are imported inside
commands, never at start-up, so ``harness --help`` and ``harness solve`` stay fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from harness.cli.common import UserError, app, fail, size_and_goal  # noqa: F401

# Command modules register themselves on ``app`` when imported (in this order in
# --help). They import only typer and the standard library at module level.
# isort: off
from harness.cli import solve, run, report, compare, merge, gate, datasets  # noqa: F401
from harness.cli import board_import, history  # noqa: F401
# isort: on


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
        if isinstance(err, ImportError):  # e.g. pandas after numpy was downgraded
            from harness.core.requirements import requirement_problems

            for cause in requirement_problems():
                typer.echo(f"likely cause: {cause}", err=True)
        sys.exit(1)
