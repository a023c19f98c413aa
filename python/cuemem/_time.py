"""Conversion of user-facing times to the core's seconds since the Unix epoch."""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Union

from . import _scalars
from .errors import CueTypeError, InvalidArgumentError
from .schema.fields import to_datetime

TimeLike = Union[datetime, date, str, float, int]


def to_seconds(value: TimeLike, name: str = "now") -> float:
    """Seconds since the Unix epoch for a datetime, a date (midnight UTC), a written time
    (:func:`~cuemem.schema.fields.parse_instant`'s forms, as every time argument) or a number.

    Naive datetimes are taken as UTC.

    Raises:
        CueTypeError: ``value`` is not a time.
        SchemaError: a string in none of the instant forms (names the argument).
        InvalidArgumentError: ``value`` is a non-finite number.

    >>> to_seconds("1970-01-02"), to_seconds("1970/01/02")
    (86400.0, 86400.0)
    """
    if isinstance(value, (date, str)):  # a datetime is a date too
        return to_datetime(value, name).timestamp()
    seconds = _scalars.as_real(value)
    if seconds is None:
        raise CueTypeError(f"{name} must be a datetime, a date or seconds since the epoch, got {type(value).__name__}")
    if not math.isfinite(seconds):
        raise InvalidArgumentError(f"{name} must be finite, got {value!r}")
    return seconds
