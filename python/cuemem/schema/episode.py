"""The episode (A1, A2, B6): one remembered event, validated, with its derived cues."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from typing import Any, NoReturn

from .._core import AXES
from ..errors import SchemaError
from . import fields as f
from .enums import Band, Kind, Level, Origin, Outcome, Tier, band_of
from .metadata import EMPTY, Metadata
from .metadata import metadata as metadata_of
from .spec import DERIVED_KEYS, FIELDS, IMPLIED, REQUIRED, TYPE_MAX

__all__ = ["Episode", "Salience"]

_TYPE = re.compile(rf"[a-z0-9_-]{{1,{TYPE_MAX}}}")
_DERIVED = DERIVED_KEYS
_REQUIRED = tuple(fl.name for fl in FIELDS if fl.default is REQUIRED)
_ALLOWED = (*(fl.name for fl in FIELDS), *DERIVED_KEYS)


class Salience(dict[str, float]):
    """A read-only mapping of the seven salience axes to values in [0, 1], in ``AXES`` order.

    It is a ``dict`` (``json.dumps`` and ``dict(...)`` work as usual) whose mutators raise
    ``TypeError``, so an episode's axes cannot drift from its ``importance`` and ``risk``.
    """

    __slots__ = ()

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("salience is read-only; create a new Episode instead")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self) -> tuple[type[Salience], tuple[dict[str, float]]]:
        return (Salience, (dict(self),))


@dataclass(frozen=True, slots=True)
class Episode:
    """One remembered event (A1) with its salience (A2) and both time axes (B6).

    Its fields are those :data:`cuemem.schema.spec.FIELDS` declares, in that order.

    Build one with :meth:`create`, which validates every field; the constructor itself
    trusts its arguments. ``salience`` always holds all seven axes of
    :data:`cuemem.AXES`, and its ``importance`` and ``risk`` axes equal the fields of
    the same names.

    Example:
        >>> from datetime import datetime, timezone
        >>> e = Episode.create("Signed the Acme renewal", id="ep-1", type="deal",
        ...                    recorded_at=datetime(2026, 6, 7, 9, 30, tzinfo=timezone.utc),
        ...                    importance=0.8, actors=["acme", "kim"], outcome="positive")
        >>> e.time_buckets, e.importance_band.value, e.salience["importance"]
        (('2026', '2026-06', '2026-06-07'), 'high', 0.8)
        >>> Episode.from_json(e.to_json()) == e
        True
    """

    id: str
    user_id: str
    type: str
    narrative: str
    outcome: Outcome | None
    actors: tuple[str, ...]
    occurred_at: date
    importance: float
    risk: float
    salience: Salience
    confidence: float
    subject: str | None
    tags: tuple[str, ...]
    recorded_at: datetime
    valid_from: datetime
    valid_to: datetime | None
    origin: Origin
    tier: Tier
    kind: Kind
    level: Level
    sources: tuple[str, ...]
    supersedes: str | None
    taint: bool
    reviewed: bool
    thread: str | None = None
    session: str | None = None
    source: str | None = None
    metadata: Metadata = EMPTY

    @classmethod
    def create(
        cls,
        narrative: str,
        *,
        id: str,
        recorded_at: datetime | str,
        user_id: str = "default",
        type: str = "note",
        outcome: Outcome | str | None = None,
        actors: Sequence[str] = (),
        occurred_at: date | str | None = None,
        importance: float = 0.0,
        risk: float = 0.0,
        salience: Mapping[str, float] | None = None,
        confidence: float = 1.0,
        subject: str | None = None,
        tags: Sequence[str] = (),
        valid_from: datetime | date | str | None = None,
        valid_to: datetime | date | str | None = None,
        origin: Origin | str = Origin.USER,
        tier: Tier | str = Tier.LONG,
        kind: Kind | str = Kind.EPISODIC,
        level: Level | str = Level.RAW,
        sources: Sequence[str] = (),
        supersedes: str | None = None,
        taint: bool = False,
        reviewed: bool = True,
        thread: str | None = None,
        session: str | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Episode:
        """A validated episode.

        Args:
            narrative: what happened; required, not blank; kept exactly as given.
            id: a stable id (see :func:`~cuemem.schema.fields.validate_id`).
            recorded_at: when it was recorded (UTC; naive is taken as UTC).
            user_id: whose memory it is, validated like an id.
            type: open vocabulary (note, meeting, decision, ...): ``[a-z0-9_-]``, 1-64 characters.
            outcome: an :class:`Outcome` or its value, or None (kept distinct from "none").
            actors: who took part; stripped, duplicates dropped.
            occurred_at: the date it happened; defaults to ``recorded_at``'s UTC date.
            importance: in [0, 1]; also the salience ``importance`` axis.
            risk: in [0, 1]; also the salience ``risk`` axis.
            salience: axis -> value in [0, 1]; missing axes are 0.0. ``importance`` and
                ``risk`` may appear only with the same values as the arguments.
            confidence: in [0, 1].
            subject: what it is about, stripped; None for no subject.
            tags: free labels; stripped, duplicates dropped.
            valid_from: start of valid time; defaults to ``occurred_at`` at 00:00 UTC.
            valid_to: end of valid time, later than ``valid_from``; None while still valid.
            origin: who wrote it (:class:`Origin`).
            tier: :class:`Tier`.
            kind: :class:`Kind`.
            level: :class:`Level` on the abstraction ladder.
            sources: ids of the records it was derived from.
            supersedes: id of the record it replaces (not its own id).
            taint: derived from external content.
            reviewed: a person or trusted process has accepted it.
            thread: the conversation, session or ticket it belongs to: 1-100 printable
                characters, stripped; None for none. Memories of one thread are ordered as written, so text
                recall can give a hit a share of its neighbours' scores.
            session: the agent session that wrote it (:meth:`cuemem.Memory.session`): 1-100
                printable characters; None for none. Recorded from the call, never from the content.
            source: where external content came from (a URL, a path, a sender): 1-2000
                printable characters; None for none.
            metadata: the caller's own JSON object (:mod:`cuemem.schema.metadata`), kept
                and returned as given; its scalar top-level values are ``meta`` cues.

        Raises:
            InvalidIdError: ``id``, ``user_id``, a source or ``supersedes`` is not a valid id.
            SchemaError: any other field breaks its rule; ``field`` names it.
        """
        rid = f.validate_id(id)
        recorded = f.to_datetime(recorded_at, "recorded_at")
        imp = f.unit(importance, "importance")
        rsk = f.unit(risk, "risk")
        occurred = recorded.date() if occurred_at is None else f.to_date(occurred_at, "occurred_at")
        start = datetime.combine(occurred, time(0), tzinfo=timezone.utc) if valid_from is None else f.to_datetime(valid_from, "valid_from")
        end = None if valid_to is None else f.to_datetime(valid_to, "valid_to")
        if end is not None and end <= start:
            raise SchemaError(f"valid_to ({end.isoformat()}) must be later than valid_from ({start.isoformat()})", "valid_to")
        supersedes_id = f.optional_id(supersedes, "supersedes")
        if supersedes_id == rid:
            raise SchemaError(f"supersedes must name another record, not the episode itself ({rid!r})", "supersedes")
        return cls(
            id=rid,
            user_id=f.validate_id(user_id, "user_id"),
            type=_type(type),
            narrative=f.text(narrative, "narrative"),
            outcome=None if outcome is None else f.choice(Outcome, outcome, "outcome"),
            actors=f.text_tuple(actors, "actors"),
            occurred_at=occurred,
            importance=imp,
            risk=rsk,
            salience=_salience(salience, imp, rsk),
            confidence=f.unit(confidence, "confidence"),
            subject=f.optional_text(subject, "subject"),
            tags=f.text_tuple(tags, "tags"),
            recorded_at=recorded,
            valid_from=start,
            valid_to=end,
            origin=f.choice(Origin, origin, "origin"),
            tier=f.choice(Tier, tier, "tier"),
            kind=f.choice(Kind, kind, "kind"),
            level=f.choice(Level, level, "level"),
            sources=f.id_tuple(sources, "sources"),
            supersedes=supersedes_id,
            taint=f.flag(taint, "taint"),
            reviewed=f.flag(reviewed, "reviewed"),
            thread=f.optional_label(thread, "thread"),
            session=f.optional_label(session, "session"),
            source=f.optional_label(source, "source", f.MAX_SOURCE),
            metadata=metadata_of(metadata),
        )

    @property
    def time_buckets(self) -> tuple[str, str, str]:
        """Year, month and day of ``occurred_at``: ``("2026", "2026-06", "2026-06-07")``."""
        day = self.occurred_at.isoformat()
        return (day[:-6], day[:-3], day)

    @property
    def importance_band(self) -> Band:
        """The band of ``importance`` (high >= 0.7, med >= 0.4, else low)."""
        return band_of(self.importance)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: ISO dates, enum values, lists; derived cues included.

        Keys follow the field order, with ``time_buckets`` after ``occurred_at`` and
        ``importance_band`` after ``importance``; ``thread``, ``session``, ``source`` and ``metadata`` are
        written only when set, so a record without them keeps the bytes it had before they existed. (Enum
        values are read as ``_value_``, the member's plain attribute: ``.value`` is a
        descriptor call, on every write.)
        """
        out: dict[str, Any] = {
            "id": self.id,
            "user_id": self.user_id,
            "type": self.type,
            "narrative": self.narrative,
            "outcome": None if self.outcome is None else self.outcome._value_,
            "actors": list(self.actors),
            "occurred_at": self.occurred_at.isoformat(),
            "time_buckets": list(self.time_buckets),
            "importance": self.importance,
            "importance_band": self.importance_band._value_,
            "risk": self.risk,
            "salience": dict(self.salience),
            "confidence": self.confidence,
            "subject": self.subject,
            "tags": list(self.tags),
            "recorded_at": _iso(self.recorded_at),
            "valid_from": _iso(self.valid_from),
            "valid_to": None if self.valid_to is None else _iso(self.valid_to),
            "origin": self.origin._value_,
            "tier": self.tier._value_,
            "kind": self.kind._value_,
            "level": self.level._value_,
            "sources": list(self.sources),
            "supersedes": self.supersedes,
            "taint": self.taint,
            "reviewed": self.reviewed,
        }
        if self.thread is not None:
            out["thread"] = self.thread
        if self.session is not None:
            out["session"] = self.session
        if self.source is not None:
            out["source"] = self.source
        if self.metadata:
            out["metadata"] = self.metadata.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Episode:
        """The episode a :meth:`to_json` dict describes; ``from_json(e.to_json()) == e``.

        Fields left out take :meth:`create`'s defaults; ``id``, ``narrative`` and
        ``recorded_at`` are required. The derived ``time_buckets`` and
        ``importance_band`` may be present and must then match.

        Args:
            data: decoded JSON.

        Raises:
            SchemaError: ``data`` is not a mapping, holds an unknown key, lacks a required
                one, has a derived key that disagrees, or breaks a field's rule.
        """
        record = f.check_keys(data, allowed=_ALLOWED, required=_REQUIRED, what="episode")
        episode = cls.create(**{k: v for k, v in record.items() if k not in _DERIVED})
        if "time_buckets" in record:
            given = record["time_buckets"]
            if not isinstance(given, (list, tuple)) or tuple(given) != episode.time_buckets:
                raise SchemaError(f"time_buckets {given!r} disagree with occurred_at {episode.occurred_at.isoformat()}", "time_buckets")
        if "importance_band" in record and record["importance_band"] != episode.importance_band.value:
            raise SchemaError(
                f"importance_band {record['importance_band']!r} disagrees with importance {episode.importance}", "importance_band"
            )
        return episode

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> Episode:
        """The episode a journal line holds: :meth:`from_json`, and what every stored episode
        holds whatever its writer said (:data:`~cuemem.schema.spec.IMPLIED`: the write gate
        taints every external write, so an external episode not tainted is a line cuemem
        never wrote).

        Raises:
            SchemaError: as :meth:`from_json`, or the episode breaks what every stored one holds.
        """
        episode = cls.from_json(data)
        for name, values, then, holds in IMPLIED:
            value = getattr(episode, name)
            value = getattr(value, "value", value)
            if value in values and getattr(episode, then) is not holds:
                raise SchemaError(f"a stored episode of {name} {value!r} holds {then} {holds}: cuemem writes no other", then)
        return episode


@functools.lru_cache(maxsize=4096)
def _iso(moment: datetime) -> str:
    """``moment.isoformat()``, remembered: imports repeat the same instants (the
    recording time, midnights of valid-from) across many episodes."""
    return moment.isoformat()


def _type(value: object) -> str:
    if not isinstance(value, str) or _TYPE.fullmatch(value) is None:
        raise SchemaError(f"type must be 1-64 characters of [a-z0-9_-], got {value!r}", "type")
    return value


def _salience(values: object, importance: float, risk: float) -> Salience:
    given: Mapping[str, object]
    if values is None:
        given = {}
    elif isinstance(values, Mapping):
        given = values
    else:
        raise SchemaError(f"salience must be a mapping of axis to value, got {type(values).__name__}", "salience")
    unknown = [str(axis) for axis in given if axis not in AXES]
    if unknown:
        raise SchemaError(f"salience has unknown axes {sorted(unknown)}; the axes are {list(AXES)}", "salience")
    axes = {axis: f.unit(given.get(axis, 0.0), "salience") for axis in AXES}
    for axis, value in (("importance", importance), ("risk", risk)):
        if axis in given and axes[axis] != value:
            raise SchemaError(f"salience[{axis!r}] = {axes[axis]} disagrees with {axis} = {value}", "salience")
        axes[axis] = value
    return Salience(axes)
