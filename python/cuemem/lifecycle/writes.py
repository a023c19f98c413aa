"""The write gate applied: every episode any write makes is admitted here.

``remember``, the imports, ``observe`` and ``keep``, and the jobs all hand their new
episodes to one :class:`Admission` of a batch, which asks the pure
:func:`~.gate.judge` what to do with each and returns the journal records that do
it: a plain write; a new version of its subject (with the ``version`` record and the
``retire`` of versions beyond the live bound); a request in the approval queue; or
nothing, for a repetition of the current live version (one retired by expiry or
capacity no longer counts: saying it again writes it again, citing it).

Every write first gets its provenance, from the call and never from its content
(:meth:`Admission.provenance`): it is tainted when it says so, when its origin is
external, when its session has read external content (a ``taint`` record, written
here when an external write first taints its session: :meth:`Admission.session_taint`)
or when any record it derives from is tainted — the records it cites, and the record it
supersedes (an update's successor carries the least trust of what it came from: the
successor of a quarantined record is quarantined); taint is never lifted. A tainted
write lands unreviewed — quarantined — unless it is a job's derivative of records that
are all reviewed; a job's
derivative of a quarantined record is quarantined too. Then it meets the gate's trust
rule (confidence at most the origin's trust; an origin trusted below the profile's
``long_term_trust`` writes short-term; a quarantined write as external content does).

Versions are of facts, not events: a long-term, raw (not abstracted) record with a
subject whose kind is not episodic — a semantic fact, a preference, a procedure, a
policy — is a version of its subject. Episodes are things that happened; two
incidents about one subject are both true, and neither supersedes the other. Every
other write passes as given.

An admission remembers what its own batch adopted or queued, so the tenth import line
about a subject supersedes the ninth, not the home's older version.
"""

from __future__ import annotations

import dataclasses
from datetime import date, datetime
from collections.abc import Sequence
from typing import Any, Protocol, cast

import orjson

from .. import _core
from ..errors import CueTypeError, InvalidArgumentError, InvalidIdError, NotFoundError, ReingestError, SchemaError
from ..schema import Episode, Kind, Level, Origin, Tier
from ..schema.fields import choice, optional_label, validate_id
from ..schema.spec import DERIVED, FIELDS, REQUIRED
from ..schema.fields import text as text_field
from ..store import kinds
from ..store import records as rec
from ..home.cues import QUARANTINED, TAINTED
from ..home.decoding import DECODER
from .extract import plain, subject_key
from .gate import Action, Current, Verdict, judge, trusted
from .profiles import Profile
from ..home.state import FORGOTTEN, LifecycleState
from .versions import beyond_bound

__all__ = ["Admission", "Admitted", "HomeState", "is_versioned", "new_episode", "version_key"]


class HomeState(Protocol):
    """What admitting a write reads of a home."""

    @property
    def lifecycle(self) -> LifecycleState: ...

    def get(self, id: object) -> Episode: ...

    def said(self, id: str) -> tuple[float, str]: ...

    def keep_said(self, id: str, confidence: float, narrative: str) -> tuple[float, str]: ...

    def new_id(self, stamp: str, text: str, pending: int = 0) -> str: ...

    def id_taken(self, id: str) -> bool: ...

    def ids_taken(self, ids: set[str]) -> bool: ...

    def __len__(self) -> int: ...

    def marked(self, mark: str) -> frozenset[str]: ...


_WRITE = Action.WRITE
_REMEMBER = rec.Op.REMEMBER

# Looked up once (an enum member's class attribute is a descriptor call).
_LONG, _RAW, _EPISODIC = Tier.LONG, Level.RAW, Kind.EPISODIC
_EXTERNAL, _JOB = Origin.EXTERNAL, Origin.JOB


def is_versioned(episode: Episode) -> bool:
    """Whether writing ``episode`` makes a version of its subject (see the module docstring)."""
    return versioned(episode.subject, episode.tier, episode.level, episode.kind)


def versioned(subject: object, tier: object, level: object, kind: object) -> bool:
    """Whether a write of these (valid) fields makes a version of its subject: an enum
    member or its value alike (the one rule :func:`is_versioned` asks)."""
    return subject is not None and tier == _LONG and level == _RAW and kind != _EPISODIC


def version_key(user: str, subject: str) -> str:
    """The key of a subject's version chain: per user, case and spacing aside."""
    return f"{user}/{subject_key(subject)}"


def subject_version_key(subject: object, user_id: object) -> str:
    """The version key of a caller's ``subject`` for ``user_id``.

    Raises:
        CueTypeError: ``subject`` is not a string. SchemaError: blank subject or bad user id.
    """
    if not isinstance(subject, str):
        raise CueTypeError(f"subject must be a string, got {type(subject).__name__}")
    return version_key(validate_id(user_id, "user_id"), text_field(subject, "subject").strip())


def caller_origin(origin: object) -> Origin:
    """The origin a caller may give a write: any but ``job`` (the jobs' own); None, unknown, is external.

    Raises:
        SchemaError: not an origin. InvalidArgumentError: ``job``.
    """
    if origin is None:
        return Origin.EXTERNAL
    chosen = choice(Origin, origin, "origin")
    if chosen is Origin.JOB:
        raise InvalidArgumentError("origin 'job' is the maintenance jobs' own; a caller writes as user, agent or external")
    return chosen


def session_label(session: object) -> str:
    """A session's name, as a caller gives it.

    Raises:
        SchemaError: not 1-100 printable characters.
    """
    label = optional_label(session, "session")
    if label is None:
        raise SchemaError("session must be 1-100 printable characters, got None", "session")
    return label


def as_session(fields: dict[str, Any], session: str, origin: Origin | None = None) -> dict[str, Any]:
    """The keywords of a write a session makes: ``session`` is its own and, when given, ``origin``
    is the default.

    Raises:
        InvalidArgumentError: ``session`` among ``fields`` (a session writes as itself).
    """
    if "session" in fields:
        raise InvalidArgumentError("a Session writes as itself: session= is not a keyword of its methods")
    return {"origin": origin, **fields, "session": session} if origin is not None else {**fields, "session": session}


class Keep:
    """The type of :data:`KEEP`: an argument left out of ``Memory.update``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "KEEP"


#: "Leave this field as it is" (for ``Memory.update``'s fields where None is a value).
KEEP = Keep()
#: The fields of an update where None is a value (left out: :data:`KEEP`); for the others, None keeps.
NULLABLE = frozenset({"outcome", "subject", "valid_to", "metadata"})


def changes_of(given: dict[str, Any]) -> dict[str, Any]:
    """The changes an update's arguments name: each field but those left as they are."""
    return {k: v for k, v in given.items() if v is not (KEEP if k in NULLABLE else None)}


def source_trust(home: HomeState, sources: Sequence[str], user: str | None) -> tuple[bool, bool]:
    """(any tainted, all reviewed) of the records ``sources`` names, as the journal stores
    them (retired ones included, an accepted one reviewed). A source the home does not
    hold is of unknown origin: tainted. With ``user``, citing another user's record is refused.

    Raises:
        SchemaError: a source belongs to another user.
    """
    tainted, reviewed = False, True
    for sid in sources:
        try:
            source = home.get(sid)
        except NotFoundError:
            tainted, reviewed = True, False
            continue
        if user is not None and source.user_id != user:
            raise SchemaError(f"source {sid!r} is not one of user {user!r}'s memories", "sources")
        tainted = tainted or source.taint
        reviewed = reviewed and source.reviewed
    return tainted, reviewed


def new_episode(home: HomeState, narrative: object, fields: dict[str, Any], recorded_at: datetime, taken: set[str] | None = None) -> Episode:
    """A validated episode of ``remember``'s keywords, with a fresh id unless one is given.

    ``taken`` holds the ids a batch has used so far (an import's), which count as taken.

    Raises:
        SchemaError: a field breaks the schema.
        InvalidIdError: the given id is malformed or already taken.
    """
    eid = episode_id(home, narrative, fields.pop("id", None), recorded_at.isoformat(), taken)
    return Episode.create(narrative, id=eid, recorded_at=recorded_at, **fields)  # type: ignore[arg-type]


def episode_id(home: HomeState, narrative: object, given: object, stamp: str, taken: set[str] | None = None) -> Any:
    """The id of a new episode written at ``stamp`` (its recording time, ISO): ``given`` (its
    shape is the episode's to check), unless it was forgotten or is taken; else a fresh one
    (``taken`` as in :func:`new_episode`).

    Raises:
        ReingestError: the given id was forgotten. InvalidIdError: it is already taken.
    """
    if given is None:
        # The counter (rows so far, plus this batch's) keeps ids of equal narratives apart.
        text = f"{narrative}"
        pending = len(taken) if taken is not None else 0
        eid = home.new_id(stamp, text, pending)
        while taken is not None and eid in taken:
            pending += 1
            eid = home.new_id(stamp, text, pending)
        return eid
    if isinstance(given, str) and home.lifecycle.retired.get(given) == FORGOTTEN:
        raise ReingestError(f"id {given!r} was forgotten; its tombstone keeps the id", "id")
    if isinstance(given, str) and (home.id_taken(given) or (taken is not None and given in taken)):
        raise InvalidIdError(f"id {given!r} already exists in this home", "id")
    return given


#: Each episode field's value when a write leaves it out (None: required or derived), in
#: the order :data:`~cuemem.schema.spec.FIELDS` declares them: what the core encodes.
_NAMES = tuple(f.name for f in FIELDS)
_LEFT_OUT = tuple(None if f.default is REQUIRED or f.default is DERIVED else f.default for f in FIELDS)
_SLOT = {name: i for i, name in enumerate(_NAMES)}
_ID, _NARRATIVE, _RECORDED, _USER = _SLOT["id"], _SLOT["narrative"], _SLOT["recorded_at"], _SLOT["user_id"]
_OCCURRED, _VALID_FROM, _VALID_TO = _SLOT["occurred_at"], _SLOT["valid_from"], _SLOT["valid_to"]
_TIER, _LEVEL, _KIND, _SUBJECT = _SLOT["tier"], _SLOT["level"], _SLOT["kind"], _SLOT["subject"]
_CONFIDENCE, _TAINT, _REVIEWED, _SESSION, _ORIGIN, _SOURCES = (
    _SLOT["confidence"], _SLOT["taint"], _SLOT["reviewed"], _SLOT["session"], _SLOT["origin"], _SLOT["sources"],
)
_TAGS, _SUPERSEDES = _SLOT["tags"], _SLOT["supersedes"]


#: A proven origin's or tier's member, by its value or the member itself (a str enum's member is equal to its value).
_ORIGIN_OF: dict[object, Origin] = {m.value: m for m in Origin}
_TIER_OF: dict[object, Tier] = {m.value: m for m in Tier}


def field_values(narrative: object, eid: object, fields: dict[str, Any], stamp: str) -> list[object] | None:
    """The values the core encodes a write of ``fields`` recorded at ``stamp`` (ISO) from
    (:meth:`cuemem._core.Decoder.encode`), or None when a time is given as an object the core does not read (a datetime: it is
    validated in full)."""
    values: list[object] = [*map(fields.get, _NAMES, _LEFT_OUT)]
    values[_ID], values[_NARRATIVE], values[_RECORDED] = eid, narrative, stamp
    occurred = values[_OCCURRED]
    if type(occurred) is date:
        values[_OCCURRED] = occurred.isoformat()
    elif occurred is not None and type(occurred) is not str:
        return None
    if (values[_VALID_FROM] is not None and type(values[_VALID_FROM]) is not str) or (
        values[_VALID_TO] is not None and type(values[_VALID_TO]) is not str
    ):
        return None
    return values


class Admitted:
    """What the gate made of one write: the id to report, its records and the action.

    A write the core encoded has the core's journal line of its episode (``line``) after
    its first records, and what the core's decoder reads of that line (``decoded``: the row
    the indexes take), then the records that follow it (``after``: a version's); its record
    (that line read back, :func:`~cuemem.store.records.encoded`) is made only when
    :attr:`records` is read: an import, which needs only the lines (:meth:`parts`), reads
    nothing back.
    """

    __slots__ = ("id", "action", "_records", "_line", "_decoded", "_after")

    def __init__(
        self, id: str, records: list[rec.Record], action: Action, line: bytes | None = None, decoded: _core.Decoded | None = None,
        after: list[rec.Record] | None = None,
    ) -> None:
        self.id = id
        self.action = action
        self._records = records
        self._line = line
        self._decoded = decoded
        self._after = after  # (None: none, the usual case, with no list made)

    @property
    def records(self) -> list[rec.Record]:
        """The journal records that write it, in order."""
        if self._line is not None:
            self._records = [*self._records, rec.encoded(self._line, self._decoded), *(self._after or ())]
            self._line = self._decoded = self._after = None
        return self._records

    def parts(self) -> tuple[list[rec.Record], bytes | None, Sequence[rec.Record]]:
        """The records, the core's journal line of the ``remember`` record that follows them
        (None when :attr:`records` holds it, or there is none) and the records after that
        line: what is written, in order, without the line read back."""
        return self._records, self._line, self._after or ()


class Admission:
    """Admits the writes of one batch (one call, one import, one job run) to a home.

    Args:
        home: The home's state before the batch.
        profile: The failure-cost profile: trust, approvals, the live-version bound.
        at: When the batch is written (adoption and request times).
        allow_forgotten: Admit what a forget took out (the same user and narrative);
            by default it is refused (``ReingestError``).
    """

    __slots__ = (
        "home", "profile", "at", "allow_forgotten", "_stamp", "_current", "_live", "_queued", "_tainted", "_own", "_marks", "_plan",
    )

    def __init__(self, home: HomeState, profile: Profile, at: datetime, *, allow_forgotten: bool = False) -> None:
        self.home = home
        self.profile = profile
        self.at = at
        self._stamp = at.isoformat()  # read once a batch: each write's id and line name it
        self.allow_forgotten = allow_forgotten
        # This batch's own adoptions and requests, ahead of the home's state.
        self._current: dict[str, Current] = {}
        self._live: dict[str, list[str]] = {}
        self._queued: dict[tuple[str, str], str] = {}
        self._tainted: dict[str, str | None] = {}  # sessions this batch taints
        self._own: dict[str, tuple[bool, bool]] = {}  # this batch's records: (tainted, reviewed)
        self._marks: tuple[frozenset[str], frozenset[str]] | None = None
        self._plan: tuple[tuple[str | None, bool], _core.ItemPlan] | None = None  # an import's, by (session, tainted)

    def provenance(self, episode: Episode) -> tuple[Episode, list[rec.Record]]:
        """``episode`` with its taint and review state as the module docstring says, and
        the ``taint`` record of its session if this write is the one that taints it.

        Raises:
            SchemaError: it cites another user's record.
        """
        taint, reviewed, records = self._trust(
            episode.session, episode.user_id, episode.taint, episode.origin, episode.reviewed, episode.sources, episode.supersedes,
        )
        if taint != episode.taint or reviewed != episode.reviewed:
            episode = dataclasses.replace(episode, taint=taint, reviewed=reviewed)
        return episode, records

    def _trust(
        self, session: str | None, user: str, taint: bool, origin: Origin, reviewed: bool, sources: Sequence[str], supersedes: str | None,
        mark: bool = True,
    ) -> tuple[bool, bool, list[rec.Record]]:
        """(taint, reviewed, the session's ``taint`` record if any) of a write of these fields:
        the one rule of :meth:`provenance` (without ``mark``, the batch does not learn that the session is tainted)."""
        # The session's taint record names no source: the record that taints it holds its
        # source, so a forget that erases that record leaves no trace of where it came from.
        taint, records = self.session_taint(session, user, None, taint or origin is _EXTERNAL, mark)
        derived = origin is _JOB and bool(sources)  # a job's derivative of the records it cites
        if sources:
            tainted, clean = self._job_sources(tuple(sources)) if derived else source_trust(self.home, sources, user)
            taint = taint or tainted
            if derived:
                reviewed = reviewed and clean
        if supersedes is not None:  # a successor (an update) is no more trusted than what it replaces
            tainted, clean = source_trust(self.home, (supersedes,), user)
            taint = taint or tainted
            reviewed = reviewed and clean
        if taint and not derived:
            reviewed = False
        return taint, reviewed, records

    def admit(self, episode: Episode) -> Admitted:
        """The records that write ``episode`` as the gate decides (see the module docstring).

        Raises:
            ReingestError: a forget took this memory out (and the batch does not allow it).
            SchemaError: it cites another user's record.
        """
        self._check_forgotten(episode.user_id, episode.narrative)
        episode, marked = self.provenance(episode)
        admitted = self._admit(episode)
        for record in admitted.records:
            if rec.op_of(record) is _REMEMBER:  # (the others are not parsed to be passed over)
                stored = kinds.parse(record, kinds.RememberRecord, trusted=True).episode
                self._own[stored["id"]] = (stored["taint"], stored["reviewed"])
        if marked:
            return Admitted(admitted.id, [*marked, *admitted.records], admitted.action)
        return admitted

    def write(self, narrative: object, fields: dict[str, Any], taken: set[str] | None = None) -> Admitted:
        """Admits one write of ``remember``'s keywords (``fields``, its user and origin among
        them) as :meth:`admit` admits its episode. ``taken`` holds the ids a batch (an import)
        has used so far (they count as taken, as in :func:`new_episode`); the write's own is added to it.

        A write that cites no record is encoded by the core (:meth:`cuemem._core.Decoder.encode`:
        its line, when the core proves every field), and passes the same rules of trust
        (:meth:`_trust`, :func:`~.gate.trusted`) and, a version of a subject, the same version
        rules (:meth:`_verdict`) without an :class:`Episode` being built; any other, one the
        core does not prove, or a version the approval queue takes (its request holds the
        episode), is validated in full (:meth:`Episode.create <cuemem.schema.Episode.create>`,
        whose errors name the field).

        Raises:
            SchemaError: a field breaks the schema. InvalidIdError: the id is malformed or taken.
            ReingestError: it was forgotten (see :meth:`admit`).
        """
        eid = episode_id(self.home, narrative, fields.pop("id", None), self._stamp, taken)
        admitted = self._write(eid, narrative, fields)
        if taken is not None:
            taken.add(eid)
        return admitted

    def write_run(
        self, items: _core.Items, start: int, owners: _core.Owners, session: str | None, taken: set[str],
    ) -> tuple[bytes, _core.Decoded | None, list[str], int, list[str], int]:
        """Admits the items of an import's chunk from line ``start`` on, in order, as long as
        each is a *plain* write — no id, subject or sources of its own, not forgotten, its
        fields proven by the core — admitted as :meth:`write` admits it: written as ``owners``
        says whose (by the user it names, None: none; a user mapped to None was refused), in ``session``, with the id
        :meth:`write` gives it and the trust :meth:`_trust` and :func:`~.gate.trusted` decide,
        looked up by the core in a plan made of them (:meth:`_item_plan`). Returns the items'
        journal lines end to end, what the core's decoder reads of them (None: read them
        again), their ids (added to ``taken``), the first line not admitted,
        which the caller admits with :meth:`write` (whose errors name the field), the users
        that line's block names whom ``owners`` does not answer for (then ask again, answered),
        and how many lines after it no plan makes plain (the caller admits them too).
        The batch does not record these writes' trust for a job's sources (an import writes no job's).
        """
        lines, decoded, ids, end, missing, unplain = items.admit(start, len(self.home) + len(taken), self._item_plan(session), owners)
        read: _core.Decoded | None = decoded
        # The core knows neither the home's ids nor the batch's (nor checks its own): a taken
        # one ends the run (never in practice: 64 bits), and :meth:`write` steps past it.
        fresh = set(ids)
        if len(fresh) < len(ids) or not taken.isdisjoint(fresh) or self.home.ids_taken(fresh):
            fresh = set()
            for eid in ids:
                if eid in fresh or eid in taken or self.home.id_taken(eid):
                    break
                fresh.add(eid)
            keep = len(fresh)
            lines = b"".join(line + b"\n" for line in lines.split(b"\n")[:keep])  # a record a line
            ids, end, missing, unplain, read = ids[:keep], start + keep, [], 0, None
        taken |= fresh
        return lines, read, ids, end, missing, unplain

    def _item_plan(self, session: str | None) -> _core.ItemPlan:
        """The core's plan of this batch's plain writes in ``session`` (:meth:`write_run`):
        for each origin a caller may give, tier and taint claim, the verdict of :meth:`_trust`
        and :func:`~.gate.trusted` — left out where the write would taint its session, whose
        ``taint`` record the full path writes — and the content hashes a forget took out."""
        key = (session, session is not None and self.session_tainted(session))
        if self._plan is None or self._plan[0] != key:
            verdicts: dict[tuple[str, str, bool], tuple[bool, bool, str, float]] = {}
            for origin in Origin:
                if origin is _JOB:
                    continue  # a caller's write may not claim it
                for tier in Tier:
                    for claim in (False, True):
                        taint, reviewed, marked = self._trust(session, "", claim, origin, True, (), None, mark=False)
                        if not marked:
                            tier_now, cap = trusted(tier, origin, 1.0, self.profile, not reviewed)
                            verdicts[(origin.value, tier.value, claim)] = (taint, reviewed, tier_now.value, cap)
            forgotten = () if self.allow_forgotten else self.home.lifecycle.forgotten
            self._plan = key, _core.ItemPlan(self._stamp, session, verdicts, set(forgotten))
        return self._plan[1]

    def _write(self, eid: object, narrative: object, fields: dict[str, Any]) -> Admitted:
        """:meth:`write` of the episode ``eid``."""
        values = field_values(narrative, eid, fields, self._stamp)
        # (``supersedes`` and ``reviewed`` are no keywords of ``remember``: given, the trust rule reads them in full.)
        encoded = (
            None if values is None or values[_SOURCES] or values[_SUPERSEDES] is not None or values[_REVIEWED] is not True
            else DECODER.encode_decoded(values)
        )
        if values is None or encoded is None:
            return self.admit(Episode.create(narrative, id=eid, recorded_at=self.at, **fields))  # type: ignore[arg-type]
        # Proven: each value is of its field's type, as the episode would hold it.
        user, origin, confidence = cast(str, values[_USER]), _ORIGIN_OF[values[_ORIGIN]], cast(float, values[_CONFIDENCE])
        self._check_forgotten(user, cast(str, narrative))
        taint, reviewed, marked = self._trust(cast("str | None", values[_SESSION]), user, values[_TAINT] is True, origin, True, (), None)
        tier = _TIER_OF[values[_TIER]]
        if versioned(values[_SUBJECT], tier, values[_LEVEL], values[_KIND]):
            return self._version(cast(str, eid), narrative, fields, values, encoded, taint, reviewed, marked)
        tier_now, confidence_now = trusted(tier, origin, confidence, self.profile, not reviewed)
        if taint or not reviewed or tier_now is not tier or confidence_now != confidence:
            values[_TAINT], values[_REVIEWED], values[_TIER], values[_CONFIDENCE] = taint, reviewed, tier_now, confidence_now
            encoded = DECODER.encode_decoded(values)
            if encoded is None:  # not proven after all (a confidence the core does not write): in full
                return self._in_full(eid, narrative, fields, marked)
        self._own[cast(str, eid)] = (taint, reviewed)
        return Admitted(cast(str, eid), marked, _WRITE, *encoded)

    def _in_full(self, eid: object, narrative: object, fields: dict[str, Any], marked: list[rec.Record]) -> Admitted:
        """:meth:`write` of the episode ``eid`` validated in full, after its trust was decided
        (``marked``: its session's ``taint`` record, which the batch now knows: it stays)."""
        full = self.admit(Episode.create(narrative, id=eid, recorded_at=self.at, **fields))  # type: ignore[arg-type]
        return Admitted(full.id, [*marked, *full.records], full.action)

    def _version(
        self, eid: str, narrative: object, fields: dict[str, Any], values: list[object], encoded: tuple[bytes, _core.Decoded],
        taint: bool, reviewed: bool, marked: list[rec.Record],
    ) -> Admitted:
        """:meth:`write` of a version of a subject whose fields the core proved (``encoded``: as
        given), of that trust: :meth:`_admit`'s rule on the proven values, without an
        :class:`Episode` (a write the approval queue takes is validated in full: its request
        holds the episode)."""
        key = version_key(cast(str, values[_USER]), cast(str, values[_SUBJECT]))
        tier, confidence = _TIER_OF[values[_TIER]], float(cast(float, values[_CONFIDENCE]))  # (an int is proven: the gate keeps a float)
        verdict, latest = self._verdict(
            key, tier, Kind(values[_KIND]), cast("Sequence[str]", values[_TAGS]), _ORIGIN_OF[values[_ORIGIN]], confidence, cast(str, narrative),
            not reviewed,
        )
        if verdict.action is Action.REPEAT:
            assert verdict.supersedes is not None
            return Admitted(verdict.supersedes, marked, Action.REPEAT)
        if verdict.action is Action.QUEUE:
            return self._in_full(eid, narrative, fields, marked)
        supersedes = latest if verdict.versioned else None  # (none given: see _write)
        if taint or not reviewed or verdict.tier is not tier or verdict.confidence != confidence or supersedes is not None:
            values[_TAINT], values[_REVIEWED], values[_TIER], values[_CONFIDENCE] = taint, reviewed, verdict.tier, verdict.confidence
            values[_SUPERSEDES] = supersedes
            made = DECODER.encode_decoded(values)
            if made is None:  # not proven after all: in full
                return self._in_full(eid, narrative, fields, marked)
            encoded = made
        self._own[eid] = (taint, reviewed)
        if not verdict.versioned:  # the trust rule made it short-term
            return Admitted(eid, marked, verdict.action, *encoded)
        line, decoded = encoded
        valid_from = datetime.fromisoformat(orjson.loads(line)["episode"]["valid_from"])  # (as the line holds it)
        after = self._adopted(key, eid, verdict.confidence, cast(str, narrative), valid_from)
        return Admitted(eid, marked, verdict.action, line, decoded, after)

    def _check_forgotten(self, user: str, narrative: str) -> None:
        """Raises unless this batch may write ``user``'s memory ``narrative`` (see :meth:`was_forgotten`).

        Raises:
            ReingestError: a forget took it out.
        """
        if self.was_forgotten(user, narrative):
            raise ReingestError(f"this memory of user {user!r} was forgotten; write it with allow_forgotten=True to keep it again", "narrative")

    def was_forgotten(self, user: str, narrative: str) -> bool:
        """Whether a forget took out ``user``'s memory ``narrative`` (and this batch does not allow it back)."""
        forgotten = self.home.lifecycle.forgotten
        return bool(forgotten) and not self.allow_forgotten and rec.content_hash(user, narrative) in forgotten

    def session_taint(
        self, session: str | None, user: str, source: str | None, taint: bool, mark: bool = True,
    ) -> tuple[bool, list[rec.Record]]:
        """Whether a write (or a read) of ``taint`` by ``session`` is tainted, and the ``taint``
        record of its session if it is the one that taints it: a tainted session taints all
        it writes; a tainted write taints its session for good (unless ``mark`` is false: only asked).
        The one rule of session taint.
        """
        if session is None:
            return taint, []
        if self.session_tainted(session):
            return True, []
        if not taint:
            return False, []
        if mark:
            self._tainted[session] = source
        return True, [rec.taint(user, session, source, self.at)]

    def session_tainted(self, session: str) -> bool:
        """Whether ``session`` is tainted: in the home, or by this batch (for any user:
        over-tainting is the safe side)."""
        return session in self._tainted or session in self.home.lifecycle.tainted_sessions

    def _job_sources(self, sources: tuple[str, ...]) -> tuple[bool, bool]:
        """(any tainted, all reviewed) of a job's sources: live records it chose (their
        ``trust`` cues, read once a batch) or records of this batch."""
        if self._marks is None:
            self._marks = (self.home.marked(TAINTED), self.home.marked(QUARANTINED))
        tainted, quarantined = self._marks
        own = self._own
        return (
            any(own.get(s, (s in tainted, True))[0] for s in sources),
            all(own.get(s, (False, s not in quarantined))[1] for s in sources),
        )

    def _admit(self, episode: Episode) -> Admitted:
        quarantined = not episode.reviewed
        if not is_versioned(episode) or episode.subject is None:
            tier, confidence = trusted(episode.tier, episode.origin, episode.confidence, self.profile, quarantined)
            if tier is not episode.tier or confidence != episode.confidence:
                episode = dataclasses.replace(episode, tier=tier, confidence=confidence)
            return Admitted(episode.id, [rec.remember(episode.to_json())], _WRITE)
        key = version_key(episode.user_id, episode.subject)
        verdict, latest = self._verdict(
            key, episode.tier, episode.kind, episode.tags, episode.origin, episode.confidence, episode.narrative, quarantined,
        )
        if verdict.action is Action.REPEAT:
            assert verdict.supersedes is not None
            return Admitted(verdict.supersedes, [], Action.REPEAT)
        queued = verdict.action is Action.QUEUE
        supersedes = latest if verdict.versioned else episode.supersedes
        if (verdict.tier is not episode.tier or verdict.confidence != episode.confidence or supersedes != episode.supersedes
                or (queued and episode.reviewed)):
            episode = dataclasses.replace(
                episode, tier=verdict.tier, confidence=verdict.confidence, supersedes=supersedes, reviewed=episode.reviewed and not queued,
            )
        if not verdict.versioned:  # the trust rule made it short-term
            return Admitted(episode.id, [rec.remember(episode.to_json())], verdict.action)
        if verdict.action is Action.QUEUE:
            assert verdict.reason is not None
            waiting = self._waiting(key, episode.narrative)
            if waiting is not None:
                return Admitted(waiting, [], Action.QUEUE)  # already waiting for a decision
            self._queued[(key, plain(episode.narrative))] = episode.id
            request = rec.approval(
                episode.id, reason=verdict.reason, subject=key, supersedes=supersedes, episode=episode.to_json(),
                requested_at=self.at, expires_at=self.at + self.profile.approval_ttl,
            )
            return Admitted(episode.id, [request], Action.QUEUE)
        return Admitted(episode.id, self.adopt(episode, key), verdict.action)

    def _verdict(
        self, key: str, tier: Tier, kind: Kind, tags: Sequence[str], origin: Origin, confidence: float, narrative: str, quarantined: bool,
    ) -> tuple[Verdict, str | None]:
        """The gate's verdict on a write of a version of ``key`` (:func:`~.gate.judge`), and the
        version it would supersede, the latest (None: none)."""
        latest = self._current_of(key)
        # Expired or crowded out: saying it again writes it again (still citing it).
        current = None if latest is not None and latest.id in self.home.lifecycle.retired else latest
        verdict = judge(
            tier=tier, kind=kind, tags=tags, origin=origin, confidence=confidence, subject=key, current=current, narrative=narrative,
            profile=self.profile, quarantined=quarantined,
        )
        return verdict, None if latest is None else latest.id

    def adopt(self, episode: Episode, key: str) -> list[rec.Record]:
        """The records that write ``episode`` as the current version of ``key`` (an
        approved write comes here directly: the decision was the gate)."""
        return [rec.remember(episode.to_json()), *self._adopted(key, episode.id, episode.confidence, episode.narrative, episode.valid_from)]

    def _adopted(self, key: str, id: str, confidence: float, narrative: str, valid_from: datetime) -> list[rec.Record]:
        """The records after a version's own (``id``, of ``confidence`` and ``narrative``, valid
        from ``valid_from``) that make it the current version of ``key``: its ``version``
        record, and the ``retire`` of the versions past the live bound."""
        current = self._current_of(key)
        live = [*self._live_of(key), id]
        excess = beyond_bound(live, self.profile.max_live_versions)
        records = [rec.version(key, id, None if current is None else current.id, valid_from, self.at)]
        if excess:
            records.append(rec.retire(excess, "versions", self.at))
        self._current[key] = Current(id, confidence, narrative)
        self._live[key] = [i for i in live if i not in excess]
        return records

    def committed(self) -> None:
        """Tells the home, once the batch's records are committed, what the current versions
        it adopted or read say (:meth:`Home.said <cuemem.home.Home.said>`): the next write of
        each subject reads none of them again."""
        for current in self._current.values():
            self.home.keep_said(current.id, current.confidence, current.narrative)

    def _current_of(self, key: str) -> Current | None:
        """The current version of ``key``: this batch's, else the home's (read once a batch)."""
        if key in self._current:
            return self._current[key]
        entry = self.home.lifecycle.current(key)
        if entry is None:
            return None
        confidence, narrative = self.home.said(entry.id)
        found = self._current[key] = Current(entry.id, confidence, narrative)
        return found

    def _live_of(self, key: str) -> list[str]:
        if key in self._live:
            return self._live[key]
        return self.home.lifecycle.live_versions(key)

    def _waiting(self, key: str, narrative: str) -> str | None:
        """A live request in the queue that writes the same about ``key``."""
        said = plain(narrative)
        if (key, said) in self._queued:
            return self._queued[(key, said)]
        for aid, waiting in self.home.lifecycle.pending.items():
            live = self.at < datetime.fromisoformat(str(waiting["expires_at"]))
            if live and waiting["subject"] == key and plain(str(waiting["episode"]["narrative"])) == said:
                return aid
        return None
