"""The one number parser: ASCII digits only, ranges, int64, finite floats, and one
message shape (where: field 'text' problem)."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core.numbers import (
    INT64_MAX,
    INT64_MIN,
    NumberError,
    parse_float,
    parse_fraction,
    parse_int,
    place,
    take_float,
    take_int,
)


@given(st.integers(INT64_MIN, INT64_MAX))
def test_every_int64_reads_back(value: int) -> None:
    assert parse_int(str(value), "n") == value


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_reads_back(value: float) -> None:
    assert parse_float(repr(value), "x") == value


@given(st.text(max_size=12))
def test_int_takes_exactly_ascii_digits_with_an_optional_minus(text: str) -> None:
    body = text.strip(" \t")
    digits = body[1:] if body.startswith("-") else body
    plain = bool(digits) and all(c in "0123456789" for c in digits)
    try:
        value = parse_int(text, "n")
    except NumberError:
        assert not plain
    else:
        assert plain and value == int(body)


@pytest.mark.parametrize(
    "text",
    ["1_5", "١٢", "１２", "+3", "0x10", "1e3", "1.0", "", " ", "- 1", "9" * 65,
     "²"],  # fmt: skip
)
def test_not_whole_numbers(text: str) -> None:
    with pytest.raises(NumberError):
        parse_int(text, "n")


@pytest.mark.parametrize(
    "text", ["1_0", "١٢", "nan", "inf", "-Infinity", "1e999", "0x1p3", "1,5", "e3"]
)
def test_not_floats(text: str) -> None:
    with pytest.raises(NumberError):
        parse_float(text, "seconds")


def test_int64_bounds() -> None:
    assert parse_int(str(INT64_MAX), "n") == INT64_MAX
    with pytest.raises(NumberError, match="must be at most 9223372036854775807"):
        parse_int(str(INT64_MAX + 1), "expanded")
    with pytest.raises(NumberError, match="must be at least"):
        parse_int(str(INT64_MIN - 1), "expanded")
    assert parse_int("10" * 20, "n", maximum=None) == int("10" * 20)


def test_one_message_shape() -> None:
    with pytest.raises(NumberError) as err:
        parse_float("1_0", "seconds", where=place("runs/r/rows.csv", 7))
    assert str(err.value) == (
        "runs/r/rows.csv: line 7: seconds '1_0' is not a number (e.g. 1.5 or 2e-3)"
    )
    with pytest.raises(NumberError) as err:
        parse_int("0", "--repeats", minimum=1)
    assert str(err.value) == "--repeats '0' must be at least 1"
    with pytest.raises(NumberError) as err:  # non-ASCII shown escaped, long text cut
        parse_int("١٢", "n", where="f")
    assert str(err.value) == "f: n '\\u0661\\u0662' is not a whole number (digits 0-9)"
    assert "\n" not in str(NumberError("w", "f", "a\nb" * 100, "bad"))
    assert len(str(NumberError("", "f", "9" * 1000, "bad"))) < 80
    moved = NumberError("", "", "x", "is bad").at(where="file: line 2", field="w")
    assert str(moved) == "file: line 2: w 'x' is bad"


def test_fractions() -> None:
    assert parse_fraction("3/2", "w") == Fraction(3, 2) == parse_fraction("1.5", "w")
    assert parse_fraction(" 2 ", "w") == 2
    for text in ("1_5", "3/0", "3/-2", "1.5/2", "nan", "١", "3 / 2"):
        with pytest.raises(NumberError):
            parse_fraction(text, "w")
    with pytest.raises(NumberError, match="too fine"):
        parse_fraction("1.234", "w", max_denominator=100)
    with pytest.raises(NumberError, match="must be at most 100"):
        parse_fraction("101", "w", maximum=100)


def test_typed_values() -> None:
    assert take_int(5, "repeats", minimum=1) == 5
    assert take_float(2, "timeout") == 2.0
    for bad in (True, 1.0, "5", None, [1], 2**63):
        with pytest.raises(NumberError):
            take_int(bad, "repeats")
    for bad in (False, "1.5", None, float("nan"), float("inf"), 2**70):
        with pytest.raises(NumberError):
            take_float(bad, "timeout")
    with pytest.raises(NumberError, match="must be at least 0"):
        take_float(-1, "timeout", minimum=0)
