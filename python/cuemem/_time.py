"""Conversion of user-facing times to the core's seconds since the Unix epoch."""

from __future__ import annotations

import math
from datetime import date, datetime
from typing import Union

from .errors import CueTypeError, InvalidArgumentError
from .schema.fields import to_datetime

TimeLike = Union[datetime, date, float, int]


def to_seconds(value: TimeLike, name: str = "now") -> float:
    """Seconds since the Unix epoch for a datetime, a date (midnight UTC) or a number.

    Naive datetimes are taken as UTC.

    Raises:
        CueTypeError: ``value`` is not a time.
        InvalidArgumentError: ``value`` is a non-finite number.
    """
    if isinstance(value, date):  # a datetime is a date too
        return to_datetime(value, name).timestamp()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CueTypeError(f"{name} must be a datetime, a date or seconds since the epoch, got {type(value).__name__}")
    seconds = float(value)
    if not math.isfinite(seconds):
        raise InvalidArgumentError(f"{name} must be finite, got {value!r}")
    return seconds
