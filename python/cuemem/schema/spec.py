"""The episode's fields, declared once (A1, A2, B6).

:data:`FIELDS` is the one list of what an episode holds: each field's name, the rule its
value follows (a validator of :mod:`.fields`), its default, and who may give it. What
takes an episode's fields is derived from it or checked against it by a test:
:meth:`Episode.create <cuemem.schema.Episode.create>` and :meth:`~cuemem.schema.Episode.from_json`,
``Memory.remember``/``update``, ``Session``, ``AsyncMemory``, the import keys, the MCP tools,
and the core's decoder (:func:`core_fields` compiles this list for it), so a new field is
one edit here plus the code that gives it meaning.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import orjson

from .enums import Kind, Level, Origin, Outcome, Tier
from .fields import ID_MAX_LEN, MAX_LABEL, MAX_SOURCE

__all__ = ["API", "CALL", "DERIVED_KEYS", "FIELDS", "Field", "HOME", "IMPORT_KEYS", "REQUIRED", "TYPE_MAX", "by_name", "core_fields"]

#: The longest episode type.
TYPE_MAX = 64


class _Marker(enum.Enum):
    REQUIRED = "required"
    DERIVED = "derived"


#: The default of a field every episode must give.
REQUIRED = _Marker.REQUIRED
#: The default of a field derived from others when left out (``occurred_at``, ``valid_from``).
DERIVED = _Marker.DERIVED

#: Who gives a field: the caller, in the content of a memory (``remember``'s keywords and an
#: imported item's keys) ...
API = "api"
#: ... the call itself, never the content (``remember`` takes it; an imported item may not) ...
CALL = "call"
#: ... or the home alone (the recording time, the version a write supersedes, the review).
HOME = "home"


@dataclass(frozen=True, slots=True)
class Field:
    """One field of an episode.

    Attributes:
        name: the key in the journal and the keyword of ``create``.
        rule: the rule its value follows: ``id``, ``slug``, ``text``, ``label``, ``unit``,
            ``flag``, ``choice``, ``date``, ``instant``, ``texts``, ``ids``, ``salience``,
            ``metadata`` (the validators of :mod:`cuemem.schema.fields`).
        default: the value an absent field takes (as the journal writes it), or
            :data:`REQUIRED` / :data:`DERIVED`.
        optional: ``None`` is a value of it.
        limit: the longest value, in characters, for the rules that have one.
        choices: the enum whose values it takes (rule ``choice``).
        given_by: :data:`API`, :data:`CALL` or :data:`HOME`.
        when_set: written to the journal only when set (a record without it keeps the bytes
            it had before the field existed).
    """

    name: str
    rule: str
    default: Any
    optional: bool = False
    limit: int | None = None
    choices: type[enum.Enum] | None = None
    given_by: str = API
    when_set: bool = False


FIELDS: tuple[Field, ...] = (
    Field("id", "id", REQUIRED, limit=ID_MAX_LEN),
    Field("user_id", "id", "default", limit=ID_MAX_LEN),
    Field("type", "slug", "note", limit=TYPE_MAX),
    Field("narrative", "text", REQUIRED),
    Field("outcome", "choice", None, optional=True, choices=Outcome),
    Field("actors", "texts", ()),
    Field("occurred_at", "date", DERIVED),
    Field("importance", "unit", 0.0),
    Field("risk", "unit", 0.0),
    Field("salience", "salience", None, optional=True),
    Field("confidence", "unit", 1.0),
    Field("subject", "text", None, optional=True),
    Field("tags", "texts", ()),
    Field("recorded_at", "instant", REQUIRED, given_by=HOME),
    Field("valid_from", "instant", DERIVED),
    Field("valid_to", "instant", None, optional=True),
    Field("origin", "choice", Origin.USER.value, choices=Origin),
    Field("tier", "choice", Tier.LONG.value, choices=Tier),
    Field("kind", "choice", Kind.EPISODIC.value, choices=Kind),
    Field("level", "choice", Level.RAW.value, choices=Level),
    Field("sources", "ids", (), limit=ID_MAX_LEN),
    Field("supersedes", "id", None, optional=True, limit=ID_MAX_LEN, given_by=HOME),
    Field("taint", "flag", False),
    Field("reviewed", "flag", True, given_by=HOME),
    Field("thread", "label", None, optional=True, limit=MAX_LABEL, when_set=True),
    Field("session", "label", None, optional=True, limit=MAX_LABEL, given_by=CALL, when_set=True),
    Field("source", "label", None, optional=True, limit=MAX_SOURCE, given_by=CALL, when_set=True),
    Field("metadata", "metadata", None, optional=True, when_set=True),
)

#: The keys a stored episode may hold besides its fields: derived, checked when present.
DERIVED_KEYS = ("time_buckets", "importance_band")

#: What a stored episode holds whatever its line says: ``(field, values, other field, value)``
#: — an episode whose field has one of the values holds the other field's value. The write
#: gate taints every external write (taint is provenance), so a stored external episode
#: that is not tainted is one cuemem never wrote: a hand-forged line, refused on replay
#: (by :meth:`Episode.from_stored <cuemem.schema.Episode.from_stored>` and by the core's decoder).
IMPLIED: tuple[tuple[str, tuple[str, ...], str, bool], ...] = (("origin", (Origin.EXTERNAL.value,), "taint", True),)

#: The keys an imported item may hold: ``narrative`` and the caller's fields.
IMPORT_KEYS = frozenset(f.name for f in FIELDS if f.given_by == API)

_BY_NAME = {f.name: f for f in FIELDS}


def by_name(name: str) -> Field:
    """The field called ``name``.

    Raises:
        KeyError: there is none.
    """
    return _BY_NAME[name]


def core_fields() -> list[tuple[str, str, bool, int | None, list[str] | None, bool, str | None]]:
    """:data:`FIELDS` as the core's decoder takes them: ``(name, rule, optional, limit,
    choices, required, default as JSON or None when derived)``."""
    out = []
    for f in FIELDS:
        choices = None if f.choices is None else [str(m.value) for m in f.choices]
        required = f.default is REQUIRED
        default = None if f.default is REQUIRED or f.default is DERIVED else orjson.dumps(f.default).decode()
        out.append((f.name, f.rule, f.optional, f.limit, choices, required, default))
    return out
