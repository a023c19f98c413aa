"""Field validators shared by every record: ids, unit numbers, times, text lists, enums.

Each validator takes the raw value and the name of the field it fills, returns the
normalized value, and raises :class:`~cuemem.errors.SchemaError` (or its subclass
:class:`~cuemem.errors.InvalidIdError`) naming that field when the value does not fit.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime, time, timedelta, timezone
from enum import Enum
from typing import Any, TypeVar

from .. import _scalars
from ..errors import InvalidIdError, SchemaError

__all__ = [
    "ID_MAX_LEN",
    "INSTANT_FORMATS",
    "check_keys",
    "choice",
    "flag",
    "id_tuple",
    "optional_id",
    "optional_text",
    "parse_instant",
    "text",
    "text_tuple",
    "to_date",
    "to_datetime",
    "unit",
    "utc_offset",
    "validate_id",
]

#: The longest id accepted, in characters.
ID_MAX_LEN = 128

_ID = re.compile(r"[A-Za-z0-9_:-][A-Za-z0-9._:-]*")

E = TypeVar("E", bound=Enum)


def validate_id(value: object, field: str = "id") -> str:
    """An id that is safe as a file name: ``[A-Za-z0-9._:-]``, 1-128 characters, no leading dot.

    The alphabet leaves out path separators, whitespace and control characters, and the
    leading-dot rule rules out ``.``, ``..`` and hidden files, so an id can never leave
    the directory it names a file in.

    Args:
        value: the candidate id.
        field: the field it fills, named in the error.

    Returns:
        The id, unchanged.

    Raises:
        InvalidIdError: ``value`` is not a string, is empty or too long, starts with a
            dot, or holds a character outside the alphabet.
    """
    if not isinstance(value, str):
        raise InvalidIdError(f"{field} must be a string, got {type(value).__name__}", field)
    if not value:
        raise InvalidIdError(f"{field} must not be empty", field)
    if len(value) > ID_MAX_LEN:
        raise InvalidIdError(f"{field} is {len(value)} characters long; the limit is {ID_MAX_LEN}", field)
    if value.startswith("."):
        raise InvalidIdError(f"{field} must not start with '.': {value!r}", field)
    if _ID.fullmatch(value) is None:
        raise InvalidIdError(f"{field} may hold only letters, digits and '._:-': {value!r}", field)
    return value


def optional_id(value: object, field: str) -> str | None:
    """``None``, or an id checked by :func:`validate_id`.

    Args:
        value: ``None`` or the candidate id.
        field: the field it fills, named in the error.

    Raises:
        InvalidIdError: ``value`` is neither ``None`` nor a valid id.
    """
    return None if value is None else validate_id(value, field)


def unit(value: object, field: str) -> float:
    """A finite real number in ``[0, 1]``, as a float.

    Args:
        value: a real number (:func:`cuemem._scalars.as_real`: an ``int``, a ``float``, a
            numpy scalar of either); not a bool or a string.
        field: the field it fills, named in the error.

    Raises:
        SchemaError: ``value`` is not a real number, is NaN or infinite, or lies outside [0, 1].
    """
    number = _scalars.as_real(value)
    if number is None:
        raise SchemaError(f"{field} must be a number in [0, 1], got {type(value).__name__}", field)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise SchemaError(f"{field} must be a finite number in [0, 1], got {value!r}", field)
    return number


def flag(value: object, field: str) -> bool:
    """A bool (or ``numpy.bool_``, :func:`cuemem._scalars.as_bool`), as a bool; ``0``, ``1``
    and ``"true"`` are refused.

    Args:
        value: the candidate flag.
        field: the field it fills, named in the error.

    Raises:
        SchemaError: ``value`` is not a bool.
    """
    flag = _scalars.as_bool(value)
    if flag is None:
        raise SchemaError(f"{field} must be true or false, got {type(value).__name__}", field)
    return flag


def text(value: object, field: str, *, allow_empty: bool = False) -> str:
    """A string of valid Unicode text (no lone surrogates), kept exactly as given.

    Args:
        value: the candidate text.
        field: the field it fills, named in the error.
        allow_empty: accept a string that is empty or only whitespace.

    Raises:
        SchemaError: ``value`` is not a string, holds a lone surrogate, or is blank
            while ``allow_empty`` is false.
    """
    if not isinstance(value, str):
        raise SchemaError(f"{field} must be a string, got {type(value).__name__}", field)
    if not allow_empty and not value.strip():
        raise SchemaError(f"{field} must not be empty", field)
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise SchemaError(f"{field} is not valid Unicode text: {exc.reason}", field) from None
    return value


def optional_text(value: object, field: str) -> str | None:
    """``None``, or a non-blank string with surrounding whitespace stripped (a subject, a label).

    Args:
        value: ``None`` or the candidate string.
        field: the field it fills, named in the error.

    Raises:
        SchemaError: ``value`` is neither ``None`` nor a non-blank string of valid text.
    """
    return None if value is None else text(value, field).strip()


#: The longest label (a thread, a session).
MAX_LABEL = 100
#: The longest ``source`` (where external content came from: a URL, a path, a sender).
MAX_SOURCE = 2000


def optional_label(value: object, field: str, limit: int = MAX_LABEL) -> str | None:
    """``None``, or a label: 1 to ``limit`` printable characters once stripped (a thread, a
    session; with ``limit=MAX_SOURCE``, a source).

    Raises:
        SchemaError: anything else.
    """
    if value is None:
        return None
    label = text(value, field).strip()
    if not label or len(label) > limit or not label.isprintable():
        raise SchemaError(f"{field} must be 1-{limit} printable characters, got {str(value)[:120]!r}", field)
    return label


#: The instant formats every time argument takes (``now``, ``occurred_at``, ``valid_from``,
#: ``valid_to``, ``valid_at``, ``known_at``, the CLI's ``--now`` and ``--occurred-at``), as
#: the errors name them.
INSTANT_FORMATS = "an ISO date or date-time (ISO 8601: 2026-06-01, 2026-06-01T09:30, 2026-06-01T09:30Z, 2026-06-01T09:30+02:00) or YYYY/MM/DD"
_SLASHED_DATE = re.compile(r"([0-9]{4})/([0-9]{2})/([0-9]{2})")
_ISO_START = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ].*)?", re.DOTALL)


def parse_instant(value: str, field: str) -> datetime:
    """The one reading of a time written as text: an aware ``datetime``, kept in its own
    offset when it names one (naive: UTC; a bare date: its midnight UTC).

    Accepts :data:`INSTANT_FORMATS`: an ISO 8601 date or date-time (a trailing ``Z`` is
    UTC), or a calendar date ``YYYY/MM/DD`` as the time cues write it.

    Args:
        value: the text.
        field: the argument it fills, named in the error.

    Raises:
        SchemaError: not one of those formats, or not a real date.

    >>> parse_instant("2026/06/01", "now").isoformat()
    '2026-06-01T00:00:00+00:00'
    >>> parse_instant("2026-06-01T09:30+02:00", "now").isoformat()
    '2026-06-01T09:30:00+02:00'
    """
    slashed = _SLASHED_DATE.fullmatch(value)
    iso = f"{slashed[1]}-{slashed[2]}-{slashed[3]}" if slashed else value
    if not slashed and _ISO_START.fullmatch(iso) is None:
        raise SchemaError(f"{field} must be {INSTANT_FORMATS}; got {value!r}", field)
    iso = iso[:-1] + "+00:00" if iso.endswith(("Z", "z")) else iso
    try:
        parsed = datetime.fromisoformat(iso)
    except ValueError as exc:
        raise SchemaError(f"{field}: {value!r} is not a real date or time ({exc}); expected {INSTANT_FORMATS}", field) from None
    return parsed if parsed.tzinfo is not None and parsed.utcoffset() is not None else parsed.replace(tzinfo=timezone.utc)


def to_date(value: object, field: str) -> date:
    """A calendar date from a ``date``, a ``datetime`` (its UTC date) or a string
    :func:`parse_instant` reads (a date-time's UTC date).

    Args:
        value: the candidate date; a naive ``datetime`` is taken as UTC.
        field: the field it fills, named in the error.

    Raises:
        SchemaError: ``value`` is none of those, or the string is not a real date.
    """
    if isinstance(value, datetime):
        return _utc(value, field).date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        return _utc(parse_instant(value, field), field).date()
    raise SchemaError(f"{field} must be a date or {INSTANT_FORMATS}, got {type(value).__name__}", field)


def to_datetime(value: object, field: str) -> datetime:
    """A timezone-aware UTC ``datetime`` from a ``datetime``, a ``date`` or a string
    :func:`parse_instant` reads.

    Naive datetimes (and strings without an offset) are taken as UTC; a ``date`` means
    its midnight UTC; a trailing ``Z`` is read as UTC.

    Args:
        value: the candidate time.
        field: the field it fills, named in the error.

    Raises:
        SchemaError: ``value`` is none of those, the string is not one of
            :data:`INSTANT_FORMATS`, or the time cannot be expressed in UTC (it falls
            outside the ``datetime`` range).
    """
    if isinstance(value, datetime):
        return _utc(value, field)
    if isinstance(value, date):
        return datetime.combine(value, time(0), tzinfo=timezone.utc)
    if isinstance(value, str):
        return _utc(parse_instant(value, field), field)
    raise SchemaError(f"{field} must be a date-time, a date or {INSTANT_FORMATS}, got {type(value).__name__}", field)


def utc_offset(value: datetime, field: str) -> timedelta | None:
    """``value``'s offset from UTC as its ``tzinfo`` gives it (None: naive, which Python also
    reads a ``tzinfo`` answering None as); a ``tzinfo`` of the caller's that fails or gives
    no valid offset is the field's error, not its own.

    Raises:
        SchemaError: the ``tzinfo`` raised, or gave what is no offset (24 hours or more, not a timedelta).
    """
    if value.tzinfo is None:
        return None
    try:
        return value.utcoffset()
    except Exception as exc:  # the caller's tzinfo: any failure of it is a bad value
        raise SchemaError(f"{field}: its time zone gives no valid offset from UTC ({type(exc).__name__}: {exc})", field) from None


def _utc(value: datetime, field: str) -> datetime:
    if value.tzinfo is timezone.utc:
        return value  # the usual zone: nothing to ask of it
    offset = utc_offset(value, field)
    if offset is None:
        return value.replace(tzinfo=timezone.utc)
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:
        raise SchemaError(
            f"{field}: {value.replace(tzinfo=None).isoformat()} at UTC offset {offset} falls outside the range of UTC date-times", field,
        ) from None
    except Exception as exc:  # the caller's tzinfo, failing when asked again
        raise SchemaError(f"{field}: its time zone gives no valid offset from UTC ({type(exc).__name__}: {exc})", field) from None


def text_tuple(value: object, field: str) -> tuple[str, ...]:
    """A tuple of non-empty strings from a list or tuple: stripped, order kept, duplicates dropped.

    Args:
        value: a list or tuple of strings; a bare string is refused rather than split.
        field: the field it fills, named in the error.

    Raises:
        SchemaError: ``value`` is not a list or tuple, or an item is not a string, is
            blank, or holds a lone surrogate.
    """
    items = _sequence(value, field)
    out: dict[str, None] = {}
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise SchemaError(f"{field}[{i}] must be a string, got {type(item).__name__}", field)
        stripped = text(item, field).strip()
        out.setdefault(stripped, None)
    return tuple(out)


def id_tuple(value: object, field: str) -> tuple[str, ...]:
    """A tuple of ids from a list or tuple, each checked by :func:`validate_id`; duplicates dropped.

    Args:
        value: a list or tuple of ids.
        field: the field it fills, named in the error.

    Raises:
        InvalidIdError: an item is not a valid id.
        SchemaError: ``value`` is not a list or tuple.
    """
    items = _sequence(value, field)
    return tuple(dict.fromkeys(validate_id(item, field) for item in items))


def _sequence(value: object, field: str) -> Iterable[object]:
    if isinstance(value, (list, tuple)):
        return value
    if isinstance(value, str):
        raise SchemaError(f"{field} must be a list of strings, not one string", field)
    raise SchemaError(f"{field} must be a list, got {type(value).__name__}", field)


def choice(enum: type[E], value: object, field: str) -> E:
    """A member of a str-valued enum, given as the member or its string value.

    Args:
        enum: the enum class.
        value: a member of ``enum`` or one of its values.
        field: the field it fills, named in the error.

    Raises:
        SchemaError: ``value`` is not one of the enum's values.
    """
    if isinstance(value, enum):
        return value
    if isinstance(value, str):
        try:
            return enum(value)
        except ValueError:
            pass
    allowed = ", ".join(str(m.value) for m in enum)
    raise SchemaError(f"{field} must be one of {allowed}; got {value!r}", field)


def check_keys(data: object, *, allowed: Iterable[str], required: Iterable[str], what: str) -> Mapping[str, Any]:
    """A mapping whose keys are all ``allowed`` and include every ``required`` key.

    Args:
        data: the candidate mapping (decoded JSON or YAML).
        allowed: every key the record may hold.
        required: the keys it must hold.
        what: the record's name, for messages.

    Returns:
        ``data``, typed as a mapping.

    Raises:
        SchemaError: ``data`` is not a mapping (``field`` is None), holds a key outside
            ``allowed`` or lacks a required key (``field`` names that key).
    """
    if not isinstance(data, Mapping):
        raise SchemaError(f"{what} must be a mapping of field names to values, got {type(data).__name__}")
    known = set(allowed)
    for key in data:
        if key not in known:
            raise SchemaError(f"{what} has an unknown field {key!r}", str(key))
    for key in required:
        if key not in data:
            raise SchemaError(f"{what} lacks the required field {key!r}", key)
    return data
