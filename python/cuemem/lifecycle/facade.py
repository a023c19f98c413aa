"""The life-cycle methods of :class:`~cuemem.Memory`: observe, approvals, versions, tiers, workers.

Every decision is taken by a pure function of this package (:func:`~.extract.extract`,
:func:`~.gate.judge`, :func:`~.versions.as_of`, :func:`~.tiers.expire`); the methods
here gather their inputs from the home and journal their outcome. Each write is one
grouped journal append (the record, its ``version`` record, any ``retire``) applied to
the indexes by the same function replay uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from ..errors import ApprovalError, ApprovalExpiredError, CueTypeError, InvalidIdError, NotFoundError
from ..home.indexes import IndexRow, Indexes
from ..home.results import RecallResult
from ..home.replay import apply_lifecycle
from ..schema import Episode, Origin, Tier
from ..schema.fields import choice, to_datetime, validate_id
from ..schema.fields import text as text_field
from ..store.journal import Journal
from . import tiers, versions
from .approvals import Approval
from .extract import Candidate, extract, plain, subject_key
from .gate import Action, Current, judge
from .patterns import Category, Pattern
from .profiles import Profile
from .state import VersionEntry
from .tiers import ExpiryReport, WorkingItem, WorkingMemory
from .versions import Version
from .workers import Worker

__all__ = ["LifecycleMethods"]

TimeArg = datetime | date | None


class LifecycleMethods:
    """Mixed into :class:`~cuemem.Memory`; see the module docstring."""

    _indexes: Indexes
    _journal: Journal
    _profile: Profile
    _working: WorkingMemory
    _workers: dict[str, Worker]

    if TYPE_CHECKING:

        def _writable(self) -> None: ...

        def _now(self, now: TimeArg) -> datetime: ...

        def _new_id(self, episode_seed: str, pending: int = 0) -> str: ...

        def _id_taken(self, id: str) -> bool: ...

        def get(self, id: str) -> Episode: ...

        def recall(self, *args: Any, **kwargs: Any) -> RecallResult: ...

    # -- the write path -------------------------------------------------------------

    @property
    def profile(self) -> Profile:
        """The failure-cost profile this handle was opened with."""
        return self._profile

    def observe(
        self,
        text: str,
        *,
        now: TimeArg = None,
        session: str | None = None,
        origin: Origin | str = Origin.USER,
        user_id: str = "default",
        patterns: Sequence[Pattern] | None = None,
    ) -> list[str]:
        """Extracts ``text``, gates each candidate and writes it to its tier; returns the ids.

        Preferences, decisions and definitions go long-term (as versions of their
        subject), disambiguations short-term (tagged ``session:<session>``), other
        sentences into this turn's working memory (a sentence held twice in a turn is
        promoted to short-term), greetings nowhere. The gate may lower a write to
        short-term (origin trusted too little), queue it for approval (sensitive, under
        the high profile; or less confident than the current version) or find it
        repeats the current version (its id is returned, nothing is written).

        Returns:
            Per stored sentence: a record id (``ep-...``; for a queued write, the id it
            will get if approved) or a working-memory id (``wm-...``).

        Raises:
            CueTypeError, InvalidArgumentError: bad ``text``, ``session`` or ``patterns``.
            SchemaError: a bad ``origin`` or ``user_id``, or ``text`` that is not valid
                Unicode (a lone surrogate); nothing is written.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        at = self._now(now)
        if not isinstance(text, str):
            raise CueTypeError(f"text must be a string, got {type(text).__name__}")
        text_field(text, "text", allow_empty=True)  # every sentence is then valid text too
        source = choice(Origin, origin, "origin")
        user = validate_id(user_id, "user_id")
        ids: list[str] = []
        for candidate in extract(text, now=at, session=session, patterns=patterns):
            if candidate.tier is Tier.WORKING:
                held = self._working.hold(candidate)
                if held.count != 2:
                    ids.append(held.id)
                    continue
                candidate = _promoted(candidate)  # said twice this turn: worth keeping a while
            ids.append(self._gate_and_write(candidate, source, user, at))
        return ids

    def _gate_and_write(self, c: Candidate, origin: Origin, user: str, at: datetime) -> str:
        key = None if c.subject is None else _version_key(user, c.subject)
        entry = None if key is None else self._indexes.lifecycle.current(key)
        current = None
        if entry is not None:
            old = self.get(entry.id)
            current = Current(old.id, old.confidence, old.narrative)
        tags = [] if c.session is None else [f"session:{c.session}"]
        verdict = judge(
            tier=c.tier, kind=c.kind, tags=tags, origin=origin, confidence=c.confidence, subject=key, current=current,
            narrative=c.text, profile=self._profile,
        )
        if verdict.action is Action.REPEAT:
            assert verdict.supersedes is not None
            return verdict.supersedes
        episode = Episode.create(
            c.text, id=self._new_id(f"{at.isoformat()}|{c.text}"), recorded_at=at, user_id=user, type=c.category.value,
            importance=c.salience, confidence=verdict.confidence, subject=c.subject, tags=tags, origin=origin,
            tier=verdict.tier, kind=c.kind, valid_from=at, supersedes=verdict.supersedes,
            reviewed=verdict.action is not Action.QUEUE,
        )
        if verdict.action is Action.QUEUE:
            assert key is not None and verdict.reason is not None
            for aid, waiting in self._indexes.lifecycle.pending.items():
                live = at < datetime.fromisoformat(str(waiting["expires_at"]))
                if live and waiting["subject"] == key and plain(str(waiting["episode"]["narrative"])) == plain(c.text):
                    return aid  # already waiting for a decision (an expired wait gets a fresh request)
            self._commit([{
                "op": "approval", "id": episode.id, "reason": verdict.reason, "subject": key, "supersedes": verdict.supersedes,
                "episode": episode.to_json(), "requested_at": at.isoformat(), "expires_at": (at + self._profile.approval_ttl).isoformat(),
            }])
            return episode.id
        self._commit(self._adoption(episode, key if verdict.versioned else None, at))
        return episode.id

    def _adoption(self, episode: Episode, key: str | None, at: datetime) -> list[dict[str, Any]]:
        """The journal records that write ``episode`` (and make it the current version of ``key``)."""
        records: list[dict[str, Any]] = [{"op": "remember", "episode": episode.to_json()}]
        if key is None:
            return records
        state = self._indexes.lifecycle
        current = state.current(key)
        records.append({
            "op": "version", "subject": key, "id": episode.id, "supersedes": None if current is None else current.id,
            "valid_from": episode.valid_from.isoformat(), "at": at.isoformat(),
        })
        excess = versions.beyond_bound([*state.live_versions(key), episode.id], self._profile.max_live_versions)
        if excess:
            records.append({"op": "retire", "ids": excess, "reason": "versions", "at": at.isoformat()})
        return records

    def _commit(self, records: list[dict[str, Any]]) -> None:
        """Appends ``records`` as one grouped commit and applies them as replay would."""
        positions = self._journal.append(records, trusted=True)
        for record, position in zip(records, positions):
            if record["op"] == "remember":
                self._indexes.add([(IndexRow.of_json(record["episode"]), position)])
                self._indexes.lifecycle.note_remember(record["episode"])
            else:
                apply_lifecycle(self._indexes, record)
        self._indexes.head = self._journal.head()

    # -- the approval queue ---------------------------------------------------------

    def approvals(self, now: TimeArg = None) -> list[Approval]:
        """Writes waiting for a decision, oldest first; with ``now``, those not yet expired at it."""
        at = None if now is None else self._now(now)
        items = [Approval.of(r) for r in self._indexes.lifecycle.pending.values()]
        return sorted((a for a in items if at is None or at < a.expires_at), key=lambda a: (a.requested_at, a.id))

    def approve(self, id: str, *, now: TimeArg = None) -> str:
        """Writes a queued record, now reviewed, as the current version of its subject; returns its id.

        The record's valid time is kept; it is known (recorded) from ``now``.

        Raises:
            NotFoundError: no write with this id was ever queued.
            ApprovalError: it is already decided.
            ApprovalExpiredError: its approval window closed at or before ``now``.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        at = self._now(now)
        record = self._pending(id, at)
        queued = Episode.from_json(record["episode"])
        if queued.id in self._indexes.row_of:
            raise InvalidIdError(f"id {queued.id!r} already names a record; the queued write cannot take it", "id")
        key = str(record["subject"])
        current = self._indexes.lifecycle.current(key)
        fields = {name: getattr(queued, name) for name in queued.__dataclass_fields__}
        fields.update(recorded_at=at, reviewed=True, supersedes=None if current is None else current.id)
        narrative = fields.pop("narrative")
        episode = Episode.create(narrative, **fields)
        decision = {"op": "decision", "id": queued.id, "verdict": "approved", "at": at.isoformat()}
        self._commit([decision, *self._adoption(episode, key, at)])
        return episode.id

    def reject(self, id: str, *, now: TimeArg = None) -> None:
        """Drops a queued write (the journal keeps it, with the decision).

        Raises:
            NotFoundError, ApprovalError, ApprovalExpiredError, ReadOnlyError: as :meth:`approve`.
        """
        self._writable()
        at = self._now(now)
        self._pending(id, at)
        self._commit([{"op": "decision", "id": id, "verdict": "rejected", "at": at.isoformat()}])

    def _pending(self, id: object, at: datetime) -> dict[str, Any]:
        state = self._indexes.lifecycle
        if not isinstance(id, str):
            raise CueTypeError(f"an approval id is a string, got {type(id).__name__}")
        if id in state.decided:
            raise ApprovalError(f"the write {id!r} is already {state.decided[id]}")
        record = state.pending.get(id)
        if record is None:
            raise NotFoundError(f"no queued write with id {id!r}")
        if at >= datetime.fromisoformat(str(record["expires_at"])):
            raise ApprovalExpiredError(f"the approval of {id!r} expired at {record['expires_at']}")
        return record

    # -- versions -------------------------------------------------------------------

    def history(self, subject: str, *, user_id: str = "default") -> list[Version]:
        """Every adopted version of ``subject``, oldest first (retired ones included).

        Raises:
            CueTypeError: ``subject`` is not a string.
            SchemaError: ``subject`` is blank or ``user_id`` invalid.
        """
        chain = self._indexes.lifecycle.versions.get(_version_key(validate_id(user_id, "user_id"), _subject(subject)), [])
        return [self._version(v, start, end, nxt) for (v, start, end), nxt in zip(versions.validity(chain), [*chain[1:], None])]

    def as_of(self, subject: str, valid_at: datetime | date, known_at: datetime | date | None = None, *, user_id: str = "default") -> Version | None:
        """The version of ``subject`` true at ``valid_at``, as known at ``known_at`` (default: all known).

        True from its ``valid_from`` (inclusive) until the next version's (exclusive);
        known from its adoption (inclusive). None when nothing was true then, or not
        yet known.

        Raises:
            CueTypeError: ``subject`` is not a string.
            SchemaError: a time is not a date or datetime, or ``subject`` is blank.
        """
        key = _version_key(validate_id(user_id, "user_id"), _subject(subject))
        at = to_datetime(valid_at, "valid_at")
        known = None if known_at is None else to_datetime(known_at, "known_at")
        chain = self._indexes.lifecycle.versions.get(key, [])
        found = versions.as_of(chain, at, known)
        if found is None:
            return None
        spans = versions.validity(chain, known)
        for i, (v, start, end) in enumerate(spans):
            if v is found:
                nxt = spans[i + 1][0] if i + 1 < len(spans) else None
                return self._version(v, start, end, nxt)
        raise AssertionError("as_of found a version outside its own chain")  # pragma: no cover

    def _version(self, entry: VersionEntry, start: datetime, end: datetime | None, nxt: VersionEntry | None) -> Version:
        state = self._indexes.lifecycle
        return Version(
            episode=self.get(entry.id), valid_from=start, valid_to=end, adopted_at=datetime.fromisoformat(entry.adopted_at),
            superseded_by=None if nxt is None else nxt.id, current=nxt is None and state.superseded_by.get(entry.id) is None,
            live=entry.id not in state.retired,
        )

    # -- tiers and workers ----------------------------------------------------------

    def working(self) -> list[WorkingItem]:
        """What this handle holds in working memory this turn."""
        return self._working.items()

    def keep(self, id: str, *, now: TimeArg = None, origin: Origin | str = Origin.USER, user_id: str = "default") -> str:
        """Promotes a working-memory item to short-term memory (an explicit approval); returns the record id.

        Raises:
            NotFoundError: this turn holds no item with this id.
            SchemaError: a bad ``origin`` or ``user_id``.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        at = self._now(now)
        source = choice(Origin, origin, "origin")
        user = validate_id(user_id, "user_id")
        held = self._working.get(id) if isinstance(id, str) else None
        if held is None:
            raise NotFoundError(f"working memory holds no item {id!r} this turn")
        return self._gate_and_write(_promoted(held.candidate), source, user, at)

    def end_turn(self) -> int:
        """Ends the turn: working memory is dropped; returns how many items it held."""
        return self._working.clear()

    def worker(self, name: str) -> Worker:
        """The worker handle called ``name`` (the same one on every call).

        Raises:
            InvalidIdError: ``name`` is not a valid id.
        """
        key = validate_id(name, "name")
        if key not in self._workers:
            self._workers[key] = Worker(key, self)
        return self._workers[key]

    def expire(self, now: TimeArg = None) -> ExpiryReport:
        """Retires short-term records past their TTL and long-term ones beyond the capacity
        bound (least salient first), and lapses expired approvals; journals all of it.

        Raises:
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        at = self._now(now)
        state = self._indexes.lifecycle
        plan = tiers.expire(state.short.values(), state.pending, now=at, profile=self._profile)
        crowded = self._over_capacity(at, set(plan.short))
        stamp = at.isoformat()
        records: list[dict[str, Any]] = []
        if plan.short:
            records.append({"op": "retire", "ids": plan.short, "reason": "ttl", "at": stamp})
        records.extend({"op": "decision", "id": aid, "verdict": "expired", "at": stamp} for aid in plan.approvals)
        if crowded:
            records.append({"op": "retire", "ids": crowded, "reason": "capacity", "at": stamp})
        if records:
            self._commit(records)
        return ExpiryReport(expired=plan.short, approvals_expired=plan.approvals, over_capacity=crowded, at=at)

    def _over_capacity(self, at: datetime, leaving: set[str]) -> list[str]:
        cues, ids = self._indexes.cues, self._indexes.ids
        out: list[str] = []
        for user in cues.values("user"):
            rows = cues.prune({"user": user, "tier": "long"}).rows
            if len(rows) <= self._profile.long_term_capacity:
                continue
            scores = self._indexes.salience.composite(rows, at)
            out.extend(ids[r] for r in tiers.beyond_capacity(rows, scores, self._profile.long_term_capacity) if ids[r] not in leaving)
        return out


def _version_key(user: str, subject: str) -> str:
    """The key of a subject's version chain: per user, case and spacing aside."""
    return f"{user}/{subject_key(subject)}"


def _subject(subject: object) -> str:
    if not isinstance(subject, str):
        raise CueTypeError(f"subject must be a string, got {type(subject).__name__}")
    return text_field(subject, "subject").strip()


def _promoted(c: Candidate) -> Candidate:
    """A working-memory sentence worth keeping a while (repeated, or kept), as a short-term candidate."""
    return Candidate(
        text=c.text, category=Category.UTTERANCE, tier=Tier.SHORT, kind=c.kind, subject=c.subject, salience=c.salience,
        confidence=c.confidence, session=c.session, pattern=c.pattern, at=c.at,
    )


