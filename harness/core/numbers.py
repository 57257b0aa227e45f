"""The one parser of numbers that enter the harness: command-line values, a
label's parameters, experiment files, meta.json, rows.csv and dataset files.

Python's own ``int()`` and ``float()`` are too generous for input: they take
``1_5`` as 15, Arabic-Indic ``١٢`` as 12, ``nan``, ``inf`` and integers of any
size, which later break pandas (int64) or a comparison. Here a number is plain
ASCII text, checked for range, and every refusal is one line of the same shape::

    <where>: <field> <text> <problem>

``where`` names the file and line (``results/r1/rows.csv: line 7``), or a flag
(``--repeats``); it is left out when empty. Standard library only: workers,
the judge and the readers of stored runs all import it.

- :func:`parse_int`, :func:`parse_float`, :func:`parse_fraction` read text;
- :func:`take_int`, :func:`take_float` check a value a JSON or TOML parser
  already typed (a bool is not a number; a float is not an integer);
- :func:`place` writes the ``where`` of a file and line.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

#: The range of a stored integer (pandas reads counters as int64).
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
#: Longest number text read; longer text is refused before any conversion (a
#: 10^5-digit integer costs Python quadratic time).
MAX_CHARS = 64

# ASCII only: ``\d`` would match any Unicode digit; no ``_``, no ``+`` sign.
_INT = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
_RATIO = re.compile(r"(-?[0-9]+)/([0-9]+)")
_BLANKS = " \t"


class NumberError(ValueError):
    """A number that cannot be taken; ``str()`` is the one-line message."""

    def __init__(self, where: str, field: str, text: object, problem: str) -> None:
        self.where, self.field, self.problem = where, field, problem
        self.text = text
        shown = _shown(text)
        head = f"{where}: " if where else ""
        name = f"{field} " if field else ""
        super().__init__(f"{head}{name}{shown} {problem}")

    def at(self, where: str | None = None, field: str | None = None) -> NumberError:
        """The same refusal placed elsewhere: a caller that knows the file, line
        or field a lower parser did not."""
        return NumberError(
            self.where if where is None else where,
            self.field if field is None else field,
            self.text, self.problem,
        )  # fmt: skip


def place(path: object, line: int | None = None) -> str:
    """The ``where`` of a message: ``path`` or ``path: line N``."""
    return f"{path}: line {line}" if line is not None else str(path)


def parse_int(
    text: str,
    field: str,
    *,
    where: str = "",
    minimum: int | None = INT64_MIN,
    maximum: int | None = INT64_MAX,
) -> int:
    """A whole number written in ASCII digits with an optional leading ``-``
    (blanks around it are ignored), within ``[minimum, maximum]`` (int64 unless
    narrower; None: unbounded on that side, still at most MAX_CHARS long).
    NumberError otherwise."""
    body = _body(text, field, where)
    if not _INT.fullmatch(body):
        raise NumberError(where, field, text, "is not a whole number (digits 0-9)")
    return _in_range(int(body), text, field, where, minimum, maximum)


def parse_float(
    text: str,
    field: str,
    *,
    where: str = "",
    minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    """A finite decimal number (``12``, ``-0.5``, ``.5``, ``1e-3``) in ASCII,
    within the limits; ``nan``, ``inf`` and anything that overflows are refused.
    NumberError otherwise."""
    body = _body(text, field, where)
    if not _FLOAT.fullmatch(body):
        raise NumberError(where, field, text, "is not a number (e.g. 1.5 or 2e-3)")
    value = float(body)
    if not math.isfinite(value):
        raise NumberError(where, field, text, "is too large (not finite)")
    return _in_range(value, text, field, where, minimum, maximum)


def parse_fraction(
    text: str,
    field: str,
    *,
    where: str = "",
    minimum: Fraction | int | None = None,
    maximum: Fraction | int | None = None,
    max_denominator: int | None = None,
) -> Fraction:
    """An exact number: a decimal (``1.5``, ``2``) or a ratio of whole numbers
    (``3/2``), within the limits; ``max_denominator`` refuses finer values.
    NumberError otherwise."""
    body = _body(text, field, where)
    ratio = _RATIO.fullmatch(body)
    if ratio:
        if int(ratio.group(2)) == 0:
            raise NumberError(where, field, text, "divides by zero")
        value = Fraction(int(ratio.group(1)), int(ratio.group(2)))
    elif _FLOAT.fullmatch(body):
        value = Fraction(body)
    else:
        raise NumberError(where, field, text, "is not a number (e.g. 1.5 or 3/2)")
    if max_denominator is not None and value.denominator > max_denominator:
        raise NumberError(
            where, field, text,
            f"is too fine (denominator at most {max_denominator}; e.g. two decimals)",
        )  # fmt: skip
    return _in_range(value, text, field, where, minimum, maximum)


def take_int(
    value: object,
    field: str,
    *,
    where: str = "",
    minimum: int | None = INT64_MIN,
    maximum: int | None = INT64_MAX,
) -> int:
    """A whole number a JSON or TOML parser produced (``int``, not ``bool`` and
    not ``float``), within the limits. NumberError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise NumberError(where, field, value, "is not a whole number")
    return _in_range(value, value, field, where, minimum, maximum)


def take_float(
    value: object,
    field: str,
    *,
    where: str = "",
    minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    """A finite number a JSON or TOML parser produced (``int`` or ``float``, not
    ``bool``), within the limits, as a float. NumberError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NumberError(where, field, value, "is not a number")
    if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
        raise NumberError(where, field, value, "is too large")
    if not math.isfinite(value):
        raise NumberError(where, field, value, "is not finite")
    return _in_range(float(value), value, field, where, minimum, maximum)


def _body(text: object, field: str, where: str) -> str:
    if not isinstance(text, str):
        raise NumberError(where, field, text, "is not text")
    if len(text) > MAX_CHARS:
        raise NumberError(where, field, text, f"is longer than {MAX_CHARS} characters")
    return text.strip(_BLANKS)


def _in_range(value, text, field, where, minimum, maximum):
    if minimum is not None and value < minimum:
        raise NumberError(where, field, text, f"must be at least {_plain(minimum)}")
    if maximum is not None and value > maximum:
        raise NumberError(where, field, text, f"must be at most {_plain(maximum)}")
    return value


def _plain(bound: object) -> str:
    if isinstance(bound, Fraction) and bound.denominator == 1:
        return str(bound.numerator)
    if isinstance(bound, Fraction):
        return str(float(bound)) if 1000 % bound.denominator == 0 else str(bound)
    if isinstance(bound, float) and bound.is_integer():
        return str(int(bound))
    return str(bound)


def _shown(text: object) -> str:
    """The offending value as the message shows it: quoted, cut at 40 characters
    (a runaway value must not make the line long), non-ASCII escaped."""
    if isinstance(text, str):
        cut = text if len(text) <= 40 else text[:40] + "..."
        return ascii(cut)
    shown = repr(text)
    return shown if len(shown) <= 40 else shown[:40] + "..."
