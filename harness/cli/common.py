"""What every command module shares: the typer ``app`` and one-line errors."""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from harness.core.numbers import NumberError, parse_float, parse_int

app = typer.Typer(
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


def version_text() -> str:
    """``harness X.Y.Z (Python A.B.C)``: the installed distribution's version."""
    from importlib.metadata import PackageNotFoundError, version

    from harness import __version__

    try:
        number = version("npuzzle-harness")
    except PackageNotFoundError:  # run from a source tree that is not installed
        number = __version__
    return f"harness {number} (Python {sys.version.split()[0]})"


def _show_version(value: bool) -> None:
    if value:
        typer.echo(version_text())
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Benchmark sliding-tile puzzle (8- and 15-puzzle) solvers.

    Start with `harness run` (the main job: every solver on the default datasets,
    71.8-77.4 s measured on a quiet 2-core machine, minutes when other jobs share
    the cores) and `harness solve` (boards on standard input)."""


_flag_type = getattr(getattr(typer, "core", None), "TyperOption", None)
if _flag_type is not None and hasattr(_flag_type, "display_type_rich"):
    # typer >= 0.24 prints "<bool>" beside every on/off flag (--help included),
    # which reads as if the flag took a value. Flags take none: print nothing.
    _display_type = _flag_type.display_type_rich

    def _no_bool_type(self, ctx):
        if getattr(self, "is_flag", False) and not getattr(self, "count", False):
            return None
        return _display_type(self, ctx)

    _flag_type.display_type_rich = _no_bool_type


class UserError(Exception):
    """Bad input or a failed precondition: printed as one line, exit status 2."""


def stdout_failed(err: OSError) -> bool:
    """Whether ``err`` is the standard output failing (a full disk or device, an
    I/O error): no file named, and file descriptor 1 fails too: a write of
    nothing to it fails (a device such as /dev/full), or it is a file on a full
    file system. (A failed write drops what was buffered, so flushing again tells
    nothing.) The caller then says so in one line, instead of naming no file."""
    if err.filename is not None or err.errno not in _OUTPUT_ERRNOS:
        return False
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return False  # not a real file (a test's capture)
    try:
        os.write(fd, b"")
        full = os.fstatvfs(fd)
    except OSError:
        return True
    return full.f_bavail == 0 or full.f_favail == 0


_OUTPUT_ERRNOS = (errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT, errno.EPIPE)


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


def run_dir(token: str, results_dir: Path) -> Path:
    """A stored run named by its path or by its run id under ``--results-dir``;
    a one-line error naming both places otherwise."""
    from harness.results import ResultsError, find_run_dir

    try:
        return find_run_dir(token, results_dir)
    except ResultsError as err:
        raise fail(f"{err} (see --results-dir)") from None


def load_plugins(targets: list[str] | None) -> list[str]:
    """Load ``--plugin`` targets (a module, a ``.py`` file or a ``.toml`` file of
    external programs) in order; return the names of the solvers they registered.
    A target that fails is a one-line error naming it."""
    from harness.measure.external import load_plugin

    loaded: list[str] = []
    for target in targets or ():
        try:
            loaded += load_plugin(target)
        except ImportError as err:
            raise fail(f"--plugin {target}: {err}") from None
    return loaded


def number(
    flag: str, *, whole: bool = False, minimum: float | None = None,
    maximum: float | None = None,
) -> Callable[[Any], Any]:
    """The reader of a number typed after ``flag`` (``typer.Option(parser=...)``),
    by the one number parser (:mod:`harness.core.numbers`: ASCII digits, no
    ``_``, finite, int64) rather than click's int()/float(), which take ``1_5``
    as 15 and ``١٢`` as 12. A refusal, the range included, is one ``error:``
    line naming the flag and the text, exit status 2 (:class:`UserError`).
    ``harness run``'s run options are read from their table
    (:mod:`harness.cli.run_options`); this reads the other commands' numbers."""
    parse = parse_int if whole else parse_float
    bounds = {k: v for k, v in (("minimum", minimum), ("maximum", maximum))
              if v is not None}  # fmt: skip

    def read(value: Any) -> Any:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value  # the default, not typed
        try:
            return parse(value, flag, **bounds)
        except NumberError as err:
            raise UserError(str(err)) from None

    return read
