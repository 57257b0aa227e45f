"""``harness run``'s flags for the run options, made from their one declaration
(:data:`harness.core.options.OPTIONS`): the flag, help text, default shown and
the reading of the value typed all come from the table, so adding a run option
adds its flag with no edit here or in :mod:`harness.cli.run`.

``@with_run_options`` puts one typer parameter per flagged option in place of
the command's ``**options``; :func:`given_options` turns what typer passed back
into ``RunOptions`` keywords, None where the user gave nothing (so the
experiment file's value, else the default, applies). A number is read by
:mod:`harness.core.numbers` (ASCII digits, no ``_``, finite, int64), not by
click, which takes ``1_0`` as 10 and ``١٢`` as 12: a refusal is one line naming
the flag and the text, exit status 2.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from harness.cli.common import fail
from harness.core.numbers import NumberError, parse_int
from harness.core.options import OPTIONS, Option

F = TypeVar("F", bound=Callable[..., Any])

#: The options ``harness run`` spells as flags, in the table's order.
FLAGGED = tuple(o for o in OPTIONS if o.flag)
#: Where ``harness run --help`` lists them.
PANEL = "Run options (also keywords of harness.run(), stored in meta.json)"


def with_run_options(command: F) -> F:
    """Give ``command`` (which takes ``**options``) one typer parameter per
    flagged run option, where ``**options`` stands in its signature."""
    signature = inspect.signature(command, eval_str=True)
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            parameters += [_parameter(o) for o in FLAGGED]
        else:
            parameters.append(parameter)
    # typer reads inspect.signature(), which honours __signature__
    command.__signature__ = signature.replace(parameters=parameters)  # type: ignore
    return command


def given_options(ctx: typer.Context, typed: dict[str, Any]) -> dict[str, Any]:
    """The run options as ``RunOptions`` keywords from typer's values of the
    flags (``typed``: the command's ``**options``): None where the user gave
    nothing; a number that is not one exits with one line (``error: --repeats
    '1_0' is not a whole number (digits 0-9)``). Ranges are the session's."""
    out = {}
    for option in FLAGGED:
        source = ctx.get_parameter_source(option.name)
        given = source is not None and source.name != "DEFAULT"
        try:
            out[option.name] = _value(option, typed[option.name]) if given else None
        except NumberError as err:
            raise fail(str(err)) from None
    return out


def _value(option: Option, value: Any) -> Any:
    if "/" in option.flag:  # --adaptive/--no-adaptive: the default, or off
        return option.default if value else option.off
    if option.parse is not None:
        return option.read(value)
    if isinstance(option.default, bool):  # a one-way flag: not the default
        return not option.default
    return list(value)  # repeatable text (--plugin)


def _parameter(option: Option) -> inspect.Parameter:
    """The typer parameter of ``option``: a number is typed as text (read by
    harness.core.numbers), a yes/no option as a flag, a list as a repeatable
    flag; each in the help's panel of run options, and None (a one-way flag:
    False) when not given."""
    on_off = "/" in option.flag  # --adaptive/--no-adaptive
    default: Any = None
    if option.parse is not None and not on_off:
        kind: Any = str
        whole = option.parse is parse_int
        metavar = option.metavar or ("INTEGER" if whole else "NUMBER")
        if option.default is None:  # e.g. "(CPU cores)"
            info = typer.Option(option.flag, metavar=metavar, help=option.help,
                                show_default=option.none, rich_help_panel=PANEL)
            kind = str | None
        else:  # the default as the text that gives it
            default = _text(option.default)
            info = typer.Option(option.flag, metavar=metavar, help=option.help,
                                rich_help_panel=PANEL)
    elif on_off:
        kind, default = bool, True  # on: the table's default; --no-...: off
        info = typer.Option(option.flag, help=option.help, rich_help_panel=PANEL)
    elif isinstance(option.default, bool):
        kind, default = bool, False
        info = typer.Option(option.flag, help=option.help, rich_help_panel=PANEL)
    else:
        kind = list[str] | None
        info = typer.Option(option.flag, help=option.help, rich_help_panel=PANEL)
    return inspect.Parameter(
        option.name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[kind, info],
    )


def _text(value: Any) -> str:
    """A default as the command line would give it: 600.0 as 600."""
    return f"{value:g}" if isinstance(value, float) else str(value)
