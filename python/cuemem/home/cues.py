"""The cue dimensions of a home, and how a record and a query map onto them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any, NamedTuple

from ..errors import CueTypeError, InvalidArgumentError, UnknownDimensionError
from ..schema.enums import band_of
from ..schema.fields import text
from ..schema.metadata import meta_cues, metadata
from ..timecues import is_bucket, resolve_time_cue

class Cue(NamedTuple):
    """How one cue dimension is derived from a stored episode's fields.

    ``derive`` is ``value`` (the field's value, if any), ``values`` (each of a list),
    ``buckets`` (a date's year, month and day), ``band`` (the importance band),
    ``trust`` (:data:`QUARANTINED` unless reviewed, :data:`TAINTED` unless untainted) or
    ``meta`` (``key=value`` of each scalar of the metadata).
    """

    dimension: str
    derive: str
    fields: tuple[str, ...]
    folded: bool = False


#: The ``trust`` cue of a memory nobody has reviewed yet: recall leaves it out unless asked.
QUARANTINED = "quarantined"
#: The ``trust`` cue of a memory derived from external content (for good: taint is provenance).
TAINTED = "tainted"

#: Every cue dimension of a home, in index order, and how it is derived: the one
#: declaration both :func:`cue_values_json` and the core's decoder (:mod:`.decoding`) run.
CUES: tuple[Cue, ...] = (
    Cue("actor", "values", ("actors",), folded=True),
    Cue("user", "value", ("user_id",)),
    Cue("type", "value", ("type",)),
    Cue("outcome", "value", ("outcome",)),
    Cue("time", "buckets", ("occurred_at",)),
    Cue("subject", "value", ("subject",), folded=True),
    Cue("tag", "values", ("tags",), folded=True),
    Cue("kind", "value", ("kind",)),
    Cue("tier", "value", ("tier",)),
    Cue("band", "band", ("importance",)),
    Cue("thread", "value", ("thread",)),
    Cue("trust", "trust", ("reviewed", "taint")),
    Cue("meta", "meta", ("metadata",)),
)
#: Every cue dimension of a home, in index order.
DIMENSIONS: tuple[str, ...] = tuple(c.dimension for c in CUES)
#: The dimensions whose values match without regard to case (and runs of spaces): the
#: index holds them folded (:func:`fold`), the records keep them as written.
FOLDED = frozenset(c.dimension for c in CUES if c.folded)
_KNOWN = frozenset(DIMENSIONS)


def cue_values_json(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """The cue values of an episode as stored in the journal (``Episode.to_json``), by :data:`CUES`.

    Reads the stored fields directly, without rebuilding the episode.

    Raises:
        KeyError, TypeError: the record lacks a field or holds the wrong type.
    """
    out: dict[str, list[str]] = {}
    for dimension, derive, names, folded in CUES:
        value = record.get(names[0])
        if derive == "value":
            values = [value] if value else []
        elif derive == "values":
            values = list(value)  # type: ignore[arg-type]
        elif derive == "buckets":
            values = [value[:4], value[:7], value]  # type: ignore[index]
        elif derive == "band":
            values = [band_of(value)._value_]  # type: ignore[arg-type]
        elif derive == "trust":
            values = [QUARANTINED] if value is not True else []
            if record[names[1]] is not False:
                values.append(TAINTED)
        else:
            values = meta_cues(value) if value else []
        if folded:
            values = list(dict.fromkeys(map(fold, values)))
        if values:
            out[dimension] = values
    return out


def fold(value: str) -> str:
    """A cue value as the index holds it in a :data:`FOLDED` dimension: case-folded, runs
    of whitespace one space, trimmed ("Acme  Corp" and "acme corp" are one actor)."""
    return " ".join(value.casefold().split()) or value


def _strings(dimension: str, value: Any) -> list[str]:
    if isinstance(value, str):
        values = [value]
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            if not isinstance(v, str):
                raise CueTypeError(f"cue {dimension!r} must be a string or a list of strings, got {type(value).__name__}")
        if not value:
            raise InvalidArgumentError(f"cue {dimension!r} has an empty list of values")
        values = sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    else:
        raise CueTypeError(f"cue {dimension!r} must be a string or a list of strings, got {type(value).__name__}")
    for v in values:
        if not v.isascii():
            text(v, f"cue {dimension!r}")  # a lone surrogate cannot reach the core: SchemaError
    return values


def normalize(cues: Mapping[str, Any] | None, *, now: datetime | date) -> dict[str, list[str]]:
    """Validates a cue mapping and resolves time phrases against ``now``.

    A ``time`` value may be a bucket ("2026", "2026-06", "2026-06-07") or a phrase
    ("June 2026", "last week", "yesterday", ...); phrases become the buckets they
    cover.

    Raises:
        UnknownDimensionError: a dimension that is not in :data:`DIMENSIONS`.
        CueTypeError: a value that is not a string or a list of strings.
        TimeCueError: a time value that is neither a bucket nor a known phrase.
    """
    if cues is None:
        return {}
    if type(cues) is not dict and not isinstance(cues, Mapping):
        raise CueTypeError(f"cues must be a mapping of dimension -> value(s), got {type(cues).__name__}")
    out: dict[str, list[str]] = {}
    for dimension, value in cues.items():
        if dimension not in _KNOWN:
            raise UnknownDimensionError(f"unknown cue dimension {dimension!r}; the dimensions are {list(DIMENSIONS)}")
        if type(value) is str and value.isascii():
            values = [value]  # one plain value, as _strings reads it (without its call)
        else:
            if dimension == "meta" and isinstance(value, Mapping):
                value = meta_cues(metadata(value))
                if not value:
                    raise InvalidArgumentError("cue 'meta' names no scalar key=value")
            values = _strings(dimension, value)
        if dimension in FOLDED:
            values = [fold(values[0])] if len(values) == 1 else list(dict.fromkeys(map(fold, values)))
        elif dimension == "time" and (len(values) != 1 or not is_bucket(values[0])):  # (one bucket stays as it is)
            resolved: list[str] = []
            for v in values:
                resolved.extend([v] if is_bucket(v) else resolve_time_cue(v, now=now))
            values = list(dict.fromkeys(resolved))
        out[dimension] = values
    return out


def parse_cue_args(pairs: Sequence[str]) -> dict[str, list[str]]:
    """``["actor=acme", "actor=globex", "time=2026-06"]`` -> ``{"actor": [...], "time": [...]}``.

    Raises:
        InvalidArgumentError: an item without ``=`` or with an empty side.
    """
    out: dict[str, list[str]] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise InvalidArgumentError(f"a cue is dimension=value, got {pair!r}")
        out.setdefault(name.strip(), []).append(value.strip())
    return out
