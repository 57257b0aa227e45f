"""Exact parameter values: solver parameters such as a weight ``w`` are parsed
into Fractions (``1.5``, ``3/2``) so a bound ``w * optimum`` compares exactly, and
written back the one way labels, rows and messages show them. Standard library
only (the judge and workers import it)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from harness.core.numbers import parse_fraction


def number(
    minimum: Fraction | int = 0,
    maximum: Fraction | int | None = None,
    max_denominator: int = 100,
) -> Callable[[str], Fraction]:
    """A parser of exact numbers (``1.5``, ``3/2``, ``2``) within the limits: the
    value is a Fraction, so ``w * optimum`` compares exactly and ``1.50`` and
    ``3/2`` are the same config. Denominators above ``max_denominator`` are
    refused (by default: at most two decimals), which keeps the integer keys of
    weighted searches small. The text is read by
    :func:`harness.core.numbers.parse_fraction` (ASCII digits, no ``1_5``); a
    refusal is a NumberError without a field, which the caller names."""
    low, high = Fraction(minimum), None if maximum is None else Fraction(maximum)

    def parse(text: str) -> Fraction:
        return parse_fraction(
            str(text), "", minimum=low, maximum=high, max_denominator=max_denominator
        )

    return parse


def format_value(value: Any) -> str:
    """A parameter value as labels show it: ``1.5``, ``2``, ``4/3``, text as is.
    Fractions with a finite decimal expansion are written as decimals."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Fraction):
        if value.denominator == 1:
            return str(value.numerator)
        q = value.denominator
        for p in (2, 5):
            while q % p == 0:
                q //= p
        if q == 1:  # a finite decimal: shortest exact digits
            digits = 1
            while (value * 10**digits).denominator != 1:
                digits += 1
            return f"{float(value):.{digits}f}"
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
