"""The one rule of each scalar argument kind: an integer, a real number, a bool.

A user of a numpy stack hands over numpy's scalars where Python's are asked: a numpy
integer is an integer, a numpy floating a real number and ``numpy.bool_`` a bool, each
returned as Python's own type. A bool is never a number (True is not a count) and a
float never an integer.

:func:`as_int`, :func:`as_real` and :func:`as_bool` are the rules: the value as Python's
type, or None. :func:`integer`, :func:`count`, :func:`real` and :func:`boolean` raise the
typed error naming the argument; a check that words its own error (a config's domain, a
schema field) asks the rule and raises its own. Checks of values decoded from the home's
own files (journal, index state, hints) keep to JSON's types and do not use these.

numpy is not imported here (a module that checks scalars need not load it): a value can
only be a numpy scalar once numpy is loaded, and numpy's integers and floatings register
as ``numbers.Integral`` and ``numbers.Real`` (as does ``numpy.timedelta64``, a subclass of
its integers: a duration, refused here).
"""

from __future__ import annotations

import math
import numbers
import sys

from . import _core
from .errors import CueTypeError, InvalidArgumentError

__all__ = ["as_bool", "as_int", "as_real", "boolean", "count", "integer", "real"]


def _numpy_bool(value: object) -> bool:
    """Whether ``value`` is a ``numpy.bool_`` (never, while numpy is not loaded)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.bool_)


def _numpy_duration(value: object) -> bool:
    """Whether ``value`` is a ``numpy.timedelta64``: numpy makes it one of its integers, but a
    duration is no number (its int is in its own unit, or none at all)."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.timedelta64)


def as_int(value: object) -> int | None:
    """``value`` as a Python int if it is an integer — an int or a numpy integer (any
    ``numbers.Integral``) — else None: a bool or ``numpy.bool_``, a float, a string, a
    ``numpy.timedelta64``."""
    if type(value) is int:  # the common case, without the ABC check
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or _numpy_duration(value):
        return None
    return int(value)


def as_real(value: object) -> float | None:
    """``value`` as a float if it is a real number — an int, a float, a numpy integer or
    floating (any ``numbers.Real``) — else None: a bool or ``numpy.bool_``, a string, a
    ``numpy.timedelta64``.
    NaN and the infinities are real here (and an int too large for a float is infinite);
    :func:`real` refuses them unless asked not to."""
    kind = type(value)
    if kind is float:  # the common case, without the ABC check
        return value  # type: ignore[return-value]
    if kind is not int and (isinstance(value, bool) or not isinstance(value, numbers.Real) or _numpy_duration(value)):
        return None
    try:
        return float(value)  # type: ignore[arg-type]
    except OverflowError:  # an int past float's range: as far as any bound is concerned, infinite
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]


def as_bool(value: object) -> bool | None:
    """``value`` as a bool if it is True or False (a bool or a ``numpy.bool_``), else None:
    ``0``, ``1`` and ``"true"`` are not bools."""
    if value is True or value is False:
        return value
    return bool(value) if _numpy_bool(value) else None


def integer(value: object, name: str) -> int:
    """``value`` as a Python int if it is an integer (:func:`as_int`).

    Raises:
        CueTypeError: it is not (a bool, a float, a string...).
    """
    number = as_int(value)
    if number is None:
        raise CueTypeError(f"{name} must be an int, got {type(value).__name__}")
    return number


def real(value: object, name: str, *, finite: bool = True) -> float:
    """``value`` as a float if it is a real number (:func:`as_real`), finite unless ``finite`` is false.

    Raises:
        CueTypeError: not a real number (a bool, a string...).
        InvalidArgumentError: NaN or infinite, where ``finite``.
    """
    number = as_real(value)
    if number is None:
        raise CueTypeError(f"{name} must be a number, got {type(value).__name__}")
    if finite and not math.isfinite(number):
        raise InvalidArgumentError(f"{name} must be finite, got {value!r}")
    return number


def boolean(value: object, name: str) -> bool:
    """``value`` as a bool if it is True or False (:func:`as_bool`).

    Raises:
        CueTypeError: it is not a bool.
    """
    flag = as_bool(value)
    if flag is None:
        raise CueTypeError(f"{name} must be a bool, got {type(value).__name__}")
    return flag


def count(value: object, name: str) -> int:
    """A positive integer (:func:`integer`), capped at 2**32 - 1 (more than any home holds):
    the core binding's rule for ``k``, ``pool`` and ``limit`` (:func:`cuemem._core.count`,
    its one implementation), which numpy integers pass here to reach it as Python ints.

    Raises:
        CueTypeError: not an integer.
        InvalidArgumentError: below 1.
    """
    return _core.count(integer(value, name), name)
