"""The life-cycle against a home: remember, observe, approvals, versions, tiers, workers.

Every decision is taken by a pure function of this package (:func:`~.extract.extract`,
:func:`~.gate.judge` through :class:`~.writes.Admission`, :func:`~.versions.as_of`,
:func:`~.tiers.expire`); :class:`Lifecycle` gathers their inputs from the home and
commits their outcome as one :meth:`Home.commit <cuemem.home.Home.commit>` per call.
The methods ``Memory`` hands a call to check the caller's
arguments (``now`` read at the edge: :func:`cuemem.home.clock.edge_now`) in the order the call names them.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import _arrays, _scalars
from ..errors import (
    ApprovalError, ApprovalExpiredError, CueTypeError, InvalidArgumentError, InvalidIdError, NotFoundError, ProposalConflictError,
)
from ..schema import Episode, Note, Origin, Tier
from ..store import kinds
from ..store import records as rec
from . import tiers, versions
from .approvals import Approval
from .extract import Candidate, extract
from ..home.clock import TimeArg, edge_now, edge_now_or_none
from ..home.cues import QUARANTINED
from ..home.scope import Reach
from ..schema.fields import MAX_SOURCE, optional_label, to_datetime, validate_id
from ..schema.fields import text as text_field
from .patterns import Category, Pattern
from .profiles import Profile
from . import proposals as props
from ..store import proposals as stored
from ..store.proposals import JobRegret, Proposal
from .review import Provenance, ReviewItem, ReviewKind, ordered, provenance_chain
from ..home.state import ACCEPTED, REJECTED, VersionEntry
from .tiers import ExpiryReport, WorkingItem, WorkingMemory
from .versions import Version
from .workers import Supervisor, Worker
from .notewrites import note_write
from .writes import Admission, caller_origin, changes_of, new_episode, session_label

if TYPE_CHECKING:
    from ..home.home import Home
    from ..home.results import HomeStats

__all__ = ["Lifecycle"]

def _EVERYONE(user: str) -> bool:
    """The scope of an unscoped handle: every user's items."""
    return True


class Lifecycle:
    """The life-cycle of one open home under one failure-cost profile."""

    def __init__(self, home: Home, profile: Profile) -> None:
        self._home = home
        self.profile = profile
        self._working = WorkingMemory()
        self._workers: dict[tuple[str | None, str], Worker] = {}  # (scope, name): a worker reads through its supervisor's scope

    # -- writes ---------------------------------------------------------------------

    def admission(self, at: datetime, *, allow_forgotten: bool = False) -> Admission:
        """The write gate of one batch written at ``at`` (an import's: :func:`cuemem.home.imports.import_items`)."""
        return Admission(self._home, self.profile, at, allow_forgotten=allow_forgotten)

    def remember(
        self, narrative: object, fields: dict[str, Any], *, user_id: str | None, origin: object, now: TimeArg, allow_forgotten: object,
        reach: Reach,
    ) -> str:
        """Writes one episode of ``remember``'s keywords (``fields``, a dict of the call's own,
        which it completes) through the gate (whose user ``reach`` says, of the caller's
        ``origin``) at ``now`` read at the edge; returns its id (for a repetition, the
        current version's; for a queued write, the id it will get)."""
        self._home.check_writable()
        allow_forgotten = _scalars.boolean(allow_forgotten, "allow_forgotten")
        fields["user_id"], fields["origin"] = reach.writer(user_id), caller_origin(origin)
        at = edge_now(now)
        admission = Admission(self._home, self.profile, at, allow_forgotten=allow_forgotten)
        admitted = admission.write(narrative, fields)
        # The call's last commit, unless the call is inside another (a job's run): the shared
        # log's lock passes on only as the outermost call ends.
        self._home.commit(admitted.records, last=self._home.guard.outermost())
        admission.committed()
        return admitted.id

    def observe(
        self, text: object, *, now: TimeArg, session: str | None, origin: object, user_id: str | None, patterns: Sequence[Pattern] | None,
        reach: Reach,
    ) -> list[str]:
        """Extracts ``text`` and writes each candidate to its tier; see :meth:`cuemem.Memory.observe`.

        Raises:
            CueTypeError: ``text`` is not a string. SchemaError: not valid Unicode, a bad origin or user.
            ReadOnlyError: the handle is read-only.
        """
        self._home.check_writable()
        at = edge_now(now)
        if not isinstance(text, str):
            raise CueTypeError(f"text must be a string, got {type(text).__name__}")
        text_field(text, "text", allow_empty=True)  # every sentence is then valid text too
        return self._observe(text, at=at, session=session, origin=caller_origin(origin), user=reach.writer(user_id), patterns=patterns)

    def _observe(
        self, text: str, *, at: datetime, session: str | None, origin: Origin, user: str, patterns: Sequence[Pattern] | None,
    ) -> list[str]:
        admission = Admission(self._home, self.profile, at)
        ids: list[str] = []
        records: list[rec.Record] = []
        rows = 0  # rows this call writes before the next one: they count toward its id, as committed rows do
        for candidate in extract(text, now=at, session=session, patterns=patterns):
            if admission.was_forgotten(user, candidate.text):
                continue  # a forget took it out: hearing it again does not bring it back
            taint = False
            if candidate.tier is Tier.WORKING:
                # Held, not written, yet read all the same: external text taints the session as any external write does.
                tainted, marked = admission.session_taint(session, user, None, origin is Origin.EXTERNAL)
                records.extend(marked)
                held = self._working.hold(candidate, origin, tainted, user)
                if held.count != 2:
                    ids.append(held.id)
                    continue
                candidate, taint = _promoted(candidate), held.taint  # said twice this turn: worth keeping a while, as tainted as it was held
            admitted = admission.admit(self._candidate_episode(candidate, origin, user, at, rows, taint=taint))
            ids.append(admitted.id)
            records.extend(admitted.records)
            rows += sum(isinstance(kinds.parse(r, trusted=True), kinds.RememberRecord) for r in admitted.records)
        self._home.commit(records)
        return ids

    def write_note(self, fields: dict[str, Any], session: object, now: TimeArg, reach: Reach) -> Note:
        """Writes ``fields`` (``Note.create``'s keywords) as the next version of its note, or —
        a tainted version over a reviewed note — proposes it (:mod:`.notewrites`); one commit.
        Notes belong to the home, not to one user: a scoped ``reach`` may not write one.

        Raises:
            ScopeError: ``reach`` is scoped to one user.
            SchemaError, InvalidIdError: a field breaks the note schema (nothing is written).
            ReadOnlyError: the handle is read-only.
        """
        reach.home_wide("write_note")
        session = optional_label(session, "session")
        at = edge_now(now)
        self._home.check_writable()
        written = note_write(self._home, Admission(self._home, self.profile, at), fields, session)
        self._home.commit(written.records)
        return written.note

    def tainted(self, session: object) -> bool:
        """Whether the session ``session`` has read external content (in any handle, ever).

        Raises:
            SchemaError: ``session`` is not a label.
        """
        return session_label(session) in self._home.lifecycle.tainted_sessions

    def taint_session(self, session: object, user_id: str | None, source: object, now: TimeArg, reach: Reach) -> None:
        """Taints ``session`` for good (a ``taint`` record, unless it is tainted already): it read
        content no person reviewed (:meth:`cuemem.Memory.taint_session`).

        Raises:
            ReadOnlyError: the handle is read-only. SchemaError: a bad session or source.
        """
        self._home.check_writable()
        session = session_label(session)
        user, source, at = reach.writer(user_id), optional_label(source, "source", MAX_SOURCE), edge_now(now)
        _, records = Admission(self._home, self.profile, at).session_taint(session, user, source, True)
        self._home.commit(records)

    def keep(self, id: object, *, now: TimeArg, origin: object, user_id: str | None, reach: Reach) -> str:
        """Promotes a working-memory item to short-term memory; returns the record id.

        Raises:
            NotFoundError: this turn holds no item with this id.
            SchemaError: a bad ``origin`` or ``user_id``. ReadOnlyError: the handle is read-only.
        """
        self._home.check_writable()
        at = edge_now(now)
        origin, user = caller_origin(origin), reach.writer(user_id)
        held = self._working.get(id) if isinstance(id, str) else None
        if held is None or held.user != user:
            raise NotFoundError(f"working memory holds no item {id!r} this turn")
        episode = self._candidate_episode(_promoted(held.candidate), origin, user, at, taint=held.taint)
        admitted = Admission(self._home, self.profile, at).admit(episode)
        self._home.commit(admitted.records)
        return admitted.id

    def update(self, id: object, given: dict[str, Any], now: TimeArg, origin: object, reach: Reach) -> str:
        """Writes ``changes`` to record ``id`` as a new record that supersedes it (never an
        edit in place); returns the new id. A version of a subject becomes the subject's
        next version through the gate (which may queue it); any other record is retired
        in the same commit, its successor naming it in ``supersedes``.

        Raises:
            NotFoundError: no such record this handle sees. ForgottenError: it was erased.
            InvalidArgumentError: it is retired, or a superseded version (update the current one).
            SchemaError: a change breaks the schema (nothing is written).
            ReadOnlyError: the handle is read-only.
        """
        home = self._home
        home.check_writable()
        changes = changes_of(given)
        id = _arrays.string(id, "id")
        at, written_by = edge_now(now), caller_origin(origin)
        old = home.get(id, reach.scope.user)
        home.clock.not_before(at, old.recorded_at, f"update of {old.id!r}")
        state = home.lifecycle
        if old.id in state.superseded_by:
            raise InvalidArgumentError(f"{old.id!r} is a superseded version; update the current one ({state.superseded_by[old.id]!r})")
        if old.id in state.retired:
            raise InvalidArgumentError(f"{old.id!r} is retired ({state.retired[old.id]}); only a live record can be updated")
        fields = {name: getattr(old, name) for name in old.__dataclass_fields__}
        for name in ("id", "recorded_at", "taint", "reviewed", "session", "source"):
            fields.pop(name)
        if ("importance" in changes or "risk" in changes) and "salience" not in changes:
            fields["salience"] = {a: v for a, v in old.salience.items() if a not in changes}
        fields.update(changes, origin=written_by, supersedes=old.id)
        narrative = fields.pop("narrative")
        episode = new_episode(home, narrative, fields, at)
        admitted = Admission(home, self.profile, at).admit(episode)
        records = list(admitted.records)
        written = [kinds.parse(r, trusted=True) for r in records]
        if any(isinstance(r, kinds.RememberRecord) for r in written) and not any(isinstance(r, kinds.VersionRecord) for r in written):
            records.append(rec.retire([old.id], "updated", at))
        home.commit(records)
        return admitted.id

    def _candidate_episode(
        self, c: Candidate, origin: Origin, user: str, at: datetime, pending: int = 0, taint: bool = False,
    ) -> Episode:
        tags = [] if c.session is None else [f"session:{c.session}"]
        return Episode.create(
            c.text, id=self._home.new_id(at.isoformat(), c.text, pending), recorded_at=at, user_id=user,
            type=c.category.value, importance=c.salience, confidence=c.confidence, subject=c.subject, tags=tags,
            origin=origin, tier=c.tier, kind=c.kind, valid_from=at, thread=c.session, session=c.session, taint=taint,
        )

    # -- the approval queue ---------------------------------------------------------

    def approvals(self, at: datetime | None) -> list[Approval]:
        """Writes waiting for a decision, oldest first; with ``at``, those not yet expired then."""
        items = [Approval.of(r) for r in self._home.lifecycle.pending.values()]
        return sorted((a for a in items if at is None or at < a.expires_at), key=lambda a: (a.requested_at, a.id))

    def waiting(self, now: TimeArg, reach: Reach) -> list[Approval]:
        """:meth:`approvals` a handle of ``reach`` sees (ScopeError: as :meth:`Reach.single`)."""
        sees = reach.single()
        return [a for a in self.approvals(edge_now_or_none(now)) if sees(a.episode.user_id)]

    def approve(self, id: object, now: TimeArg, reach: Reach) -> str:
        """Writes a queued record (one ``reach`` sees), now reviewed, as the current version of
        its subject, at ``now`` read at the edge.

        Raises:
            ReadOnlyError: the handle is read-only. CueTypeError: ``id`` is not a string.
            NotFoundError: no such queued write this handle sees.
        """
        self._home.check_writable()
        self.pending_in(_arrays.string(id, "an approval id"), reach.scope.sees)
        return self._approve(id, edge_now(now))

    def _approve(self, id: object, at: datetime) -> str:
        """Writes a queued record, now reviewed, as the current version of its subject."""
        record = self._pending(id, at)
        queued = Episode.from_json(record["episode"])
        if queued.id in self._home:
            raise InvalidIdError(f"id {queued.id!r} already names a record; the queued write cannot take it", "id")
        key = str(record["subject"])
        current = self._home.lifecycle.current(key)
        fields = {name: getattr(queued, name) for name in queued.__dataclass_fields__}
        fields.update(recorded_at=at, reviewed=True, supersedes=None if current is None else current.id)
        narrative = fields.pop("narrative")
        episode = Episode.create(narrative, **fields)
        adoption = Admission(self._home, self.profile, at).adopt(episode, key)
        self._home.commit([rec.decision(queued.id, "approved", at), *adoption])
        return episode.id

    def reject(self, id: object, now: TimeArg, reach: Reach) -> None:
        """Drops a queued write or a proposal, or retires a quarantined record (the journal
        keeps each, with the decision).

        Raises:
            ReadOnlyError: the handle is read-only. CueTypeError: ``id`` is not a string.
        """
        self._home.check_writable()
        id = _arrays.string(id, "a review id")
        at, sees = edge_now(now), reach.scope.sees
        if isinstance(id, str) and id in self._home.lifecycle.proposals:
            self._undecided(id, at, sees)
            self._home.commit([rec.decision(id, REJECTED, at)])
            return
        if isinstance(id, str) and self._home.quarantined(id):
            self._quarantined(id, sees)
            self._home.commit([rec.decision(id, REJECTED, at)])
            return
        record = self._pending(id, at)
        if not sees(str(record["episode"]["user_id"])):
            raise NotFoundError(f"no queued write with id {id!r}")
        assert isinstance(id, str)
        self._home.commit([rec.decision(id, "rejected", at)])

    # -- the review queue -----------------------------------------------------------

    def review(self, now: TimeArg, reach: Reach) -> list[ReviewItem]:
        """Quarantined records and queued writes (not expired at ``now``, when given) that
        ``reach`` sees, oldest first, each with its provenance chain.

        Raises:
            ScopeError: an unscoped reach on a home of several users.
        """
        sees = reach.single()
        at = edge_now_or_none(now)
        home = self._home
        items: list[ReviewItem] = []

        def lookup(id: str) -> Episode | None:  # a source of another user is, to this scope, not there
            found = self._lookup(id)
            return found if found is not None and sees(found.user_id) else None

        for row in home.select({"trust": [QUARANTINED]}).tolist():
            e = home.episode(row)
            if sees(e.user_id):
                items.append(ReviewItem(
                    e.id, ReviewKind.QUARANTINED, ReviewKind.QUARANTINED.value, e.narrative, e.user_id, e.recorded_at, None,
                    provenance_chain(e, lookup),
                ))
        for a in self.approvals(at):
            if sees(a.episode.user_id):
                items.append(ReviewItem(
                    a.id, ReviewKind.APPROVAL, str(a.reason), a.episode.narrative, a.episode.user_id, a.requested_at, a.expires_at,
                    provenance_chain(a.episode, lookup),
                ))
        for p in self.proposals(sees, pending_only=True):
            found = [lookup(s.id) for s in p.sources]
            chain = tuple(Provenance.of(f) for f in found if f is not None)
            items.append(ReviewItem(p.id, ReviewKind.PROPOSAL, f"{p.job}: {p.action}", p.summary, p.user, p.made_at, None, chain))
        return ordered(items)

    def accept(self, id: object, now: TimeArg, reach: Reach) -> str:
        """Accepts a quarantined record (reviewed from now on; it stays tainted), approves
        a queued write or accepts a proposal; returns the record (or proposal) id.

        Raises:
            ReadOnlyError: the handle is read-only. CueTypeError: ``id`` is not a string.
        """
        self._home.check_writable()
        id = _arrays.string(id, "a review id")
        at, sees = edge_now(now), reach.scope.sees
        if isinstance(id, str) and id in self._home.lifecycle.proposals:
            return self.accept_proposal(id, at, sees)
        if isinstance(id, str) and self._home.quarantined(id):
            self._quarantined(id, sees)
            self._home.commit([rec.decision(id, ACCEPTED, at)])
            return id
        record = self._pending(id, at)
        if not sees(str(record["episode"]["user_id"])):
            raise NotFoundError(f"no queued write with id {id!r}")
        return self._approve(id, at)

    # -- maintenance proposals ------------------------------------------------------

    def proposals(self, sees: Callable[[str], bool] = _EVERYONE, *, pending_only: object = False) -> list[Proposal]:
        """The maintenance proposals about users ``sees`` admits, oldest first (decided ones too, unless ``pending_only``)."""
        state = self._home.lifecycle
        records = state.pending_proposals() if _scalars.boolean(pending_only, "pending_only") else list(state.proposals.values())
        return stored.ordered([
            Proposal.of(r, state.proposal_verdicts.get(str(r["id"]))) for r in records if sees(str(r["user"]))
        ])

    def accept_proposal(self, id: str, at: datetime, sees: Callable[[str], bool] = _EVERYONE) -> str:
        """Commits what proposal ``id`` proposes, with the decision, if its sources are as
        they were; returns its id.

        Raises:
            NotFoundError: no such proposal (in scope). ApprovalError: it is decided.
            ProposalConflictError: its sources changed since it was made; nothing is written.
            CorruptRecordError: the proposal holds records cuemem did not write.
        """
        proposal = self._undecided(id, at, sees)
        reasons = props.conflicts(proposal, self._home)
        if reasons:
            raise ProposalConflictError(f"proposal {id} no longer applies: " + "; ".join(reasons))
        self._home.commit([rec.decision(id, ACCEPTED, at), *stored.checked_records(proposal)])
        return id

    def _undecided(self, id: str, at: datetime, sees: Callable[[str], bool]) -> Proposal:
        state = self._home.lifecycle
        record = state.proposals[id]
        if not sees(str(record["user"])):
            raise NotFoundError(f"no proposal with id {id!r}")
        if id in state.proposal_verdicts:
            raise ApprovalError(f"the proposal {id!r} is already {state.proposal_verdicts[id][0]}")
        proposal = Proposal.of(record, None)
        self._home.clock.not_before(at, proposal.made_at, f"proposal {id}")
        return proposal

    def stats(self) -> HomeStats:
        """The home's counts and sizes, with each job's proposals and regret rate."""
        return dataclasses.replace(self._home.stats(), proposals=tuple(self.regret()))

    def regret(self) -> list[JobRegret]:
        """Per job, its proposals by status and how many accepted ones were regretted (:func:`.proposals.regret`)."""
        return props.regret(self._home.lifecycle, self._came_back)

    def _came_back(self, id: str, after: datetime) -> bool:
        """Whether record ``id``'s content was written again after ``after``: a live record of
        the same user, recorded later, whose narrative is the same (found by the text index)."""
        home = self._home
        if id not in home:
            return False
        gone = home.get(id)
        same = _plain(gone.narrative)
        for row in home.similar(gone.narrative, {"user": [gone.user_id]}, 8):
            other = home.episode(row)
            if other.id != id and other.recorded_at > after and _plain(other.narrative) == same:
                return True
        return False

    def pending_in(self, id: str, sees: Callable[[str], bool]) -> None:
        """Refuses a queued write ``sees`` does not admit, as if it did not exist.

        Raises:
            NotFoundError: it belongs to a user out of scope.
        """
        record = self._home.lifecycle.pending.get(id)
        if record is not None and not sees(str(record["episode"]["user_id"])):
            raise NotFoundError(f"no queued write with id {id!r}")

    def _quarantined(self, id: str, sees: Callable[[str], bool]) -> None:
        if not sees(self._home.get(id).user_id):
            raise NotFoundError(f"no record waits for review with id {id!r}")

    def _lookup(self, id: str) -> Episode | None:
        return self._home.get(id) if id in self._home else None

    def _pending(self, id: object, at: datetime) -> dict[str, Any]:
        state = self._home.lifecycle
        if isinstance(id, str) and id in state.decided:
            raise ApprovalError(f"the write {id!r} is already {state.decided[id]}")
        if isinstance(id, str) and id in state.reviewed:
            raise ApprovalError(f"the record {id!r} is already {state.reviewed[id]}")
        record = state.pending.get(id) if isinstance(id, str) else None
        if record is None:
            raise NotFoundError(f"no queued write with id {id!r}")
        if at >= datetime.fromisoformat(str(record["expires_at"])):
            raise ApprovalExpiredError(f"the approval of {id!r} expired at {record['expires_at']}")
        self._home.clock.not_before(at, datetime.fromisoformat(str(record["requested_at"])), f"the approval of {id!r}")
        return record

    # -- versions -------------------------------------------------------------------

    def history(self, key: str) -> list[Version]:
        """Every adopted version of the subject ``key``, oldest first (retired ones included)."""
        chain = self._home.lifecycle.versions.get(key, [])
        return [self._version(v, start, end, nxt) for (v, start, end), nxt in zip(versions.validity(chain), [*chain[1:], None])]

    def as_of(self, key: str, valid_at: object, known_at: object) -> Version | None:
        """The version of ``key`` true at ``valid_at`` as known at ``known_at``."""
        known = None if known_at is None else to_datetime(known_at, "known_at")
        chain = self._home.lifecycle.versions.get(key, [])
        found = versions.as_of(chain, to_datetime(valid_at, "valid_at"), known)
        if found is None:
            return None
        spans = versions.validity(chain, known)
        for i, (v, start, end) in enumerate(spans):
            if v is found:
                nxt = spans[i + 1][0] if i + 1 < len(spans) else None
                return self._version(v, start, end, nxt)
        raise AssertionError("as_of found a version outside its own chain")  # pragma: no cover

    def _version(self, entry: VersionEntry, start: datetime, end: datetime | None, nxt: VersionEntry | None) -> Version:
        state = self._home.lifecycle
        return Version(
            episode=self._home.get(entry.id), valid_from=start, valid_to=end, adopted_at=datetime.fromisoformat(entry.adopted_at),
            superseded_by=None if nxt is None else nxt.id, current=nxt is None and state.superseded_by.get(entry.id) is None,
            live=entry.id not in state.retired,
        )

    # -- tiers and workers ----------------------------------------------------------

    def working(self, sees: Callable[[str], bool] = _EVERYONE) -> list[WorkingItem]:
        """What this handle holds in working memory this turn (of the users ``sees`` admits)."""
        return [w for w in self._working.items() if sees(w.user)]

    def end_turn(self, sees: Callable[[str], bool] = _EVERYONE) -> int:
        """Drops working memory (of the users ``sees`` admits); returns how many items it held."""
        return self._working.clear(sees)

    def worker(self, name: object, supervisor: Supervisor, scope: str | None) -> Worker:
        """The worker handle called ``name`` of the scope ``scope`` (the same one on every call).

        Raises:
            InvalidIdError: ``name`` is not a valid id.
        """
        key = (scope, validate_id(name, "name"))
        if key not in self._workers:
            self._workers[key] = Worker(key[1], supervisor)
        return self._workers[key]

    def expire(self, now: TimeArg, allow_clock_jump: object, reach: Reach) -> ExpiryReport:
        """Retires short-term records past their TTL and long-term ones beyond the capacity
        bound, and lapses expired approvals, at ``now`` read at the edge; one commit.

        Raises:
            ReadOnlyError: the handle is read-only. ScopeError: a scoped reach (home-wide work).
            ClockError: ``now`` leaps past the home's clock unacknowledged.
        """
        self._home.check_writable()
        reach.home_wide("expire")
        return self._expire(self._home.clock.edge(now, allow_clock_jump, "expire"))

    def _expire(self, at: datetime) -> ExpiryReport:
        state = self._home.lifecycle
        plan = tiers.expire(state.short.values(), state.pending, now=at, profile=self.profile)
        crowded = self._over_capacity(at, set(plan.short))
        records: list[rec.Record] = []
        if plan.short:
            records.append(rec.retire(plan.short, "ttl", at))
        records.extend(rec.decision(aid, "expired", at) for aid in plan.approvals)
        if crowded:
            records.append(rec.retire(crowded, "capacity", at))
        self._home.commit(records)
        return ExpiryReport(expired=plan.short, approvals_expired=plan.approvals, over_capacity=crowded, at=at)

    def _over_capacity(self, at: datetime, leaving: set[str]) -> list[str]:
        home = self._home
        out: list[str] = []
        for user in home.values("user"):
            rows = home.select({"user": [user], "tier": ["long"]})
            if len(rows) <= self.profile.long_term_capacity:
                continue
            scores = home.salience.composite(rows, at)
            out.extend(
                home.id_at(r) for r in tiers.beyond_capacity(rows, scores, self.profile.long_term_capacity) if home.id_at(r) not in leaving
            )
        return out


_WORD = re.compile(r"[^\W_]+")


def _plain(text: str) -> list[str]:
    """A narrative's words, case-folded, in order: what "the same text" compares (punctuation and spacing aside)."""
    return _WORD.findall(text.casefold())


def _promoted(c: Candidate) -> Candidate:
    """A working-memory sentence worth keeping a while (repeated, or kept), as a short-term candidate."""
    return Candidate(
        text=c.text, category=Category.UTTERANCE, tier=Tier.SHORT, kind=c.kind, subject=c.subject, salience=c.salience,
        confidence=c.confidence, session=c.session, pattern=c.pattern, at=c.at,
    )
