"""The one rule of each scalar argument kind (cuemem._scalars): numpy's scalars taken as Python's, bools never numbers."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import _scalars
from cuemem.errors import CueTypeError, InvalidArgumentError

INTEGER_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
FLOATING_TYPES = (np.float16, np.float32, np.float64, np.longdouble)
NOT_INTEGERS: tuple[Any, ...] = (True, False, np.bool_(True), np.bool_(False), 3.0, np.float64(3.0), "3", None, [3], 3 + 0j)
NOT_REALS: tuple[Any, ...] = (True, False, np.bool_(True), np.bool_(False), "0.5", None, [0.5], 1j, np.complex128(1))
NOT_BOOLS: tuple[Any, ...] = (0, 1, np.int64(1), 1.0, "true", None, np.array([True]))


@given(st.sampled_from(INTEGER_TYPES), st.integers(min_value=0, max_value=127))
def test_a_numpy_integer_is_the_python_int(kind: type[np.integer[Any]], n: int) -> None:
    """Every numpy integer type is an integer, given back as a Python int of the same value."""
    got = _scalars.as_int(kind(n))
    assert type(got) is int and got == n
    assert type(_scalars.integer(kind(n), "n")) is int


@given(st.sampled_from(FLOATING_TYPES + INTEGER_TYPES), st.integers(min_value=0, max_value=127))
def test_a_numpy_number_is_the_python_float(kind: type[np.number[Any]], n: int) -> None:
    """Every numpy integer and floating type is a real number, given back as a Python float of the same value."""
    got = _scalars.as_real(kind(n))
    assert type(got) is float and got == n
    assert _scalars.real(kind(n), "x") == float(n)


@given(st.one_of(st.integers(), st.floats(allow_nan=False)))
def test_python_numbers_keep_their_value(x: int | float) -> None:
    """A Python int stays itself as an integer and a real (an int too large for a float is infinite)."""
    if isinstance(x, int):
        assert _scalars.as_int(x) == x
        assert _scalars.as_real(x) == (float(x) if abs(x) < 2**1023 else math.copysign(math.inf, x))
    else:
        assert _scalars.as_int(x) is None and _scalars.as_real(x) == x


@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
def test_bools_floats_and_strings_are_not_integers(value: Any) -> None:
    """True is not a count, 3.0 is not an int: each is refused as CueTypeError naming the argument."""
    assert _scalars.as_int(value) is None
    with pytest.raises(CueTypeError, match="^k must be an int, got "):
        _scalars.integer(value, "k")
    with pytest.raises(CueTypeError, match="^k must be an int"):
        _scalars.count(value, "k")


@pytest.mark.parametrize("value", NOT_REALS, ids=repr)
def test_bools_and_strings_are_not_real_numbers(value: Any) -> None:
    assert _scalars.as_real(value) is None
    with pytest.raises(CueTypeError, match="^w must be a number, got "):
        _scalars.real(value, "w")


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("inf"), 10**400])
def test_a_real_must_be_finite_unless_the_caller_allows_otherwise(value: Any) -> None:
    """NaN and the infinities (and an int too large for a float) are refused by default, kept when asked."""
    with pytest.raises(InvalidArgumentError, match="^w must be finite"):
        _scalars.real(value, "w")
    got = _scalars.real(value, "w", finite=False)
    assert math.isnan(got) or math.isinf(got)


def test_numpy_bools_are_bools_and_nothing_else_is() -> None:
    for value, expected in ((True, True), (False, False), (np.bool_(True), True), (np.bool_(False), False)):
        got = _scalars.boolean(value, "flag")
        assert type(got) is bool and got is expected
    for value in NOT_BOOLS:
        assert _scalars.as_bool(value) is None
        with pytest.raises(CueTypeError, match="^flag must be a bool, got "):
            _scalars.boolean(value, "flag")


@pytest.mark.parametrize("value", [np.timedelta64(5, unit) for unit in ("D", "s", "ms", "ns", "Y")] + [np.datetime64("2026-01-01")], ids=repr)
def test_a_numpy_duration_or_date_is_not_a_number(value: Any) -> None:
    """numpy's timedelta64 subclasses its integers, yet a duration is no count or number of seconds (its int is in its own
    unit, or no int at all): refused as any non-number, never a bare TypeError."""
    assert _scalars.as_int(value) is None and _scalars.as_real(value) is None
    with pytest.raises(CueTypeError, match="^k must be an int, got "):
        _scalars.count(value, "k")
    with pytest.raises(CueTypeError, match="^w must be a number, got "):
        _scalars.real(value, "w")


def test_a_count_is_at_least_one_and_capped() -> None:
    assert _scalars.count(np.uint64(2**64 - 1), "k") == 2**32 - 1
    assert _scalars.count(np.int8(1), "k") == 1
    for value in (0, -1, np.int64(0), np.int32(-5)):
        with pytest.raises(InvalidArgumentError, match="^k must be at least 1, got "):
            _scalars.count(value, "k")


def test_the_rules_do_not_load_numpy() -> None:
    """Checking scalars loads no numpy (the schema's validators use these rules): a value cannot be numpy's before numpy is loaded."""
    code = (
        "import sys, json\n"
        "from cuemem import _scalars\n"
        "from cuemem.schema import fields\n"
        "print(json.dumps(['numpy' in sys.modules, _scalars.as_bool(1), _scalars.as_int(2), fields.unit(1, 'x')]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(done.stdout) == [False, None, 2, 1.0]
