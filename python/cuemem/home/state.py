"""The life-cycle state a home derives from its journal: versions, approvals, short-term, retired.

Like the indexes it is a cache of the journal: :mod:`cuemem.home.apply` feeds it every
life-cycle record (and every short-term ``remember``) in journal order, the same code
path a live write takes, so a rebuild yields the same state. It is saved beside the
index cache as ``lifecycle.json``.

It follows the ``version``, ``approval``, ``decision``, ``retire``, ``taint`` and
``forget`` and ``proposal`` records (their fields are in :mod:`cuemem.store.records`),
the short-term ``remember``s and the tombstones of erased records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..store.kinds import (
    ApprovalRecord, DecisionRecord, ErasedRecord, ForgetRecord, LifecycleRecord, ProposalRecord, RetireRecord, TaintRecord,
    VersionRecord,
)
from ..store.records import Op, owner_hash

__all__ = ["ACCEPTED", "ERASE", "FORGOTTEN", "REJECTED", "RETENTIONS", "RETIRE", "REVIEW_VERDICTS", "LifecycleState", "ShortItem", "VersionEntry"]

#: The verdicts on a quarantined record.
ACCEPTED, REJECTED = "accepted", "rejected"
REVIEW_VERDICTS = frozenset({ACCEPTED, REJECTED})

#: The retention classes of a forget: the content is gone from every file, or kept for audit only.
ERASE, RETIRE = "erase", "retire"
RETENTIONS = (ERASE, RETIRE)
#: Why a forgotten record left the live indexes.
FORGOTTEN = "forgotten"


class VersionEntry(NamedTuple):
    """One adopted version of a subject: its record, valid-from and adoption instant (ISO).
    (A named tuple: a home of facts holds one for each write, made again at each rebuild.)"""

    id: str
    valid_from: str
    adopted_at: str


@dataclass(frozen=True)
class ShortItem:
    """What TTL expiry needs of a live short-term record."""

    id: str
    recorded_at: str
    type: str
    kind: str


@dataclass
class LifecycleState:
    """Versions, pending approvals, live short-term records and retired records of a home."""

    #: Subject key -> its adopted versions, oldest first.
    versions: dict[str, list[VersionEntry]] = field(default_factory=dict)
    #: Record id -> the id of the version that replaced it.
    superseded_by: dict[str, str] = field(default_factory=dict)
    #: Approval id -> its ``approval`` record, while undecided.
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Approval id -> verdict, once decided.
    decided: dict[str, str] = field(default_factory=dict)
    #: Live short-term records, by id, in journal order.
    short: dict[str, ShortItem] = field(default_factory=dict)
    #: Record id -> why it left the live indexes.
    retired: dict[str, str] = field(default_factory=dict)
    #: Quarantined record id -> ``"accepted"`` or ``"rejected"``, once reviewed.
    reviewed: dict[str, str] = field(default_factory=dict)
    #: Session -> (the user it read for, where the external content it first read came from,
    #: or None): tainted for good. Keyed by the session alone: a session that writes for
    #: several users taints what it writes for each (over-tainting is the safe side).
    tainted_sessions: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    #: Erased record id -> its content hash (:func:`~cuemem.store.records.content_hash`).
    erased: dict[str, str] = field(default_factory=dict)
    #: Erased record id -> the :func:`~cuemem.store.records.owner_hash` of its user (receipts
    #: that carry ``owners``): whose forgotten record it is, for a scoped read.
    owners: dict[str, str] = field(default_factory=dict)
    #: Content hashes of every forgotten record (erased or retired): never ingested again.
    forgotten: set[str] = field(default_factory=set)
    #: The ids of the forget receipts applied, in order.
    receipts: list[str] = field(default_factory=list)
    #: Proposal id -> its ``proposal`` record, decided or not (D5).
    proposals: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Proposal id -> (verdict, when), once decided.
    proposal_verdicts: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Version id -> the subject keys whose chains it was adopted into, and record id -> the
    #: records it superseded: what a forget looks up (never the whole of ``versions`` or
    #: ``superseded_by``). Derived, kept as they change; an entry may outlive what it names.
    _chains_of: dict[str, set[str]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _replaced_by: dict[str, set[str]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for key, chain in self.versions.items():
            for v in chain:
                self._chains_of.setdefault(v.id, set()).add(key)
        for old, new in self.superseded_by.items():
            self._replaced_by.setdefault(new, set()).add(old)

    def pending_proposals(self) -> list[dict[str, Any]]:
        """The undecided proposals, in journal order."""
        return [p for pid, p in self.proposals.items() if pid not in self.proposal_verdicts]

    def note_remember(self, episode: Mapping[str, Any]) -> None:
        """Follows a ``remember`` record (only short-term ones matter here)."""
        if episode.get("tier") == "short":
            eid = str(episode["id"])
            self.short[eid] = ShortItem(eid, str(episode["recorded_at"]), str(episode["type"]), str(episode["kind"]))

    def apply(self, record: LifecycleRecord) -> list[str]:
        """Follows one life-cycle record; returns the ids it retires from the live indexes.

        Records are cuemem's own (built by :mod:`cuemem.store.records`, checked on
        replay by :mod:`cuemem.home.apply`); a record that names an unknown approval or
        an already retired id changes nothing.
        """
        match record:
            case VersionRecord():
                self.adopt(record.subject, record.id, record.supersedes, record.valid_from.isoformat(), record.at.isoformat())
            case ApprovalRecord():
                self.pending[record.id] = record.to_json()
            case ProposalRecord():
                self.proposals.setdefault(record.id, record.to_json())
            case DecisionRecord():
                aid, verdict = record.id, record.verdict
                if aid in self.proposals:
                    if verdict in REVIEW_VERDICTS:
                        self.proposal_verdicts.setdefault(aid, (verdict, record.at.isoformat()))
                elif self.pending.pop(aid, None) is not None:
                    self.decided[aid] = verdict
                elif verdict in REVIEW_VERDICTS and aid not in self.reviewed and aid not in self.retired:
                    self.reviewed[aid] = verdict  # a quarantined record: the applier checked it is one
                    if verdict == REJECTED:
                        self.retired[aid] = REJECTED
                        self.short.pop(aid, None)
                        return [aid]
            case TaintRecord():
                self.tainted_sessions.setdefault(record.session, (record.user, record.source))
            case RetireRecord():
                gone = [i for i in record.ids if i not in self.retired]
                for rid in gone:
                    self.retired[rid] = record.reason
                    self.short.pop(rid, None)
                return gone
            case ForgetRecord():
                return self._forget(record)
            case ErasedRecord(was=Op.REMEMBER.value, sha256=str() as digest):
                self.retired[record.id] = FORGOTTEN
                self.erased[record.id] = digest
                return [record.id]
        return []

    def adopt(self, subject: str, id: str, supersedes: str | None, valid_from: str, at: str) -> None:
        """Follows a ``version`` record: ``id`` becomes the current version of ``subject`` (a
        version key), valid from ``valid_from`` and adopted at ``at`` (ISO instants as
        ``isoformat`` writes them), replacing ``supersedes``."""
        self.versions.setdefault(subject, []).append(VersionEntry(id, valid_from, at))
        self._chains_of.setdefault(id, set()).add(subject)
        if supersedes is not None:
            self.superseded_by[supersedes] = id
            self._replaced_by.setdefault(id, set()).add(supersedes)

    def _forget(self, record: ForgetRecord) -> list[str]:
        """Follows a forget receipt: its records leave every version chain (the version
        before a forgotten current one is current again), the approval queue and the
        short-term list; erased ones are remembered by their hash alone."""
        ids = list(record.ids)
        gone = set(ids)
        erase = record.retention == ERASE
        for key in {k for i in gone for k in self._chains_of.pop(i, ())}:
            chain = self.versions.get(key, [])
            kept = [v for v in chain if v.id not in gone]
            if len(kept) == len(chain):
                continue
            if kept:
                self.versions[key] = kept
            else:
                del self.versions[key]
        for old in {*gone, *(o for i in gone for o in self._replaced_by.pop(i, ()))}:
            if old in self.superseded_by and (old in gone or self.superseded_by[old] in gone):
                del self.superseded_by[old]
        for aid in record.approvals:  # queued writes and maintenance proposals
            self.pending.pop(aid, None)
            self.proposals.pop(aid, None)
            self.proposal_verdicts.pop(aid, None)
            if erase:
                self.decided.pop(aid, None)
        out = []
        if erase:
            self.owners.update(zip(ids, record.owners))
        for rid, digest in zip(ids, record.hashes):
            if self.retired.get(rid) is None:
                out.append(rid)
            self.retired[rid] = FORGOTTEN
            self.short.pop(rid, None)
            if erase:
                self.erased[rid] = digest
                self.reviewed.pop(rid, None)
            self.forgotten.add(digest)
        self.forgotten.update(record.hashes[len(ids):])  # the queued writes' (after the records')
        self.receipts.append(record.id)
        return out

    def erased_for(self, id: str, user: str) -> bool:
        """Whether ``id`` is an erased record of ``user`` (False for a receipt without owners:
        a scoped read of it fails closed, as a record that does not exist)."""
        return id in self.erased and self.owners.get(id) == owner_hash(user)

    def current(self, key: str) -> VersionEntry | None:
        """The current (latest adopted) version of a subject key."""
        chain = self.versions.get(key)
        return chain[-1] if chain else None

    def live_versions(self, key: str) -> list[str]:
        """The adopted versions of a subject still in the live indexes, oldest first."""
        return [v.id for v in self.versions.get(key, []) if v.id not in self.retired]

    # -- the cache file -------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready image of the state (keys sorted by the writer)."""
        image: dict[str, Any] = {
            "versions": {k: [list(v) for v in chain] for k, chain in self.versions.items()},  # [id, valid_from, adopted_at]
            "superseded_by": self.superseded_by,
            "pending": self.pending,
            "decided": self.decided,
            "short": [[s.id, s.recorded_at, s.type, s.kind] for s in self.short.values()],
            "retired": self.retired,
            "reviewed": self.reviewed,
            "tainted_sessions": [[s, u, source] for s, (u, source) in self.tainted_sessions.items()],
            # Only a home with proposals has these keys: older caches keep their bytes.
            **({"proposals": self.proposals} if self.proposals else {}),
            **({"proposal_verdicts": {k: list(v) for k, v in self.proposal_verdicts.items()}} if self.proposal_verdicts else {}),
        }
        if self.receipts or self.erased:  # a home that never forgot keeps its bytes
            image |= {"erased": self.erased, "forgotten": sorted(self.forgotten), "receipts": self.receipts}
        if self.owners:  # only receipts that carry owners: older caches keep their bytes
            image["owners"] = self.owners
        return image

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LifecycleState:
        """The state :meth:`to_json` described.

        Raises:
            KeyError, TypeError, ValueError: ``data`` is not such an image.
        """
        return cls(
            versions={str(k): [VersionEntry(str(a), str(b), str(c)) for a, b, c in chain] for k, chain in data["versions"].items()},
            superseded_by={str(k): str(v) for k, v in data["superseded_by"].items()},
            pending={str(k): dict(v) for k, v in data["pending"].items()},
            decided={str(k): str(v) for k, v in data["decided"].items()},
            short={str(a): ShortItem(str(a), str(b), str(c), str(d)) for a, b, c, d in data["short"]},
            retired={str(k): str(v) for k, v in data["retired"].items()},
            reviewed={str(k): str(v) for k, v in data["reviewed"].items()},
            tainted_sessions={str(s): (str(u), None if v is None else str(v)) for s, u, v in data["tainted_sessions"]},
            erased={str(k): str(v) for k, v in data.get("erased", {}).items()},
            owners={str(k): str(v) for k, v in data.get("owners", {}).items()},
            forgotten={str(h) for h in data.get("forgotten", [])},
            receipts=[str(r) for r in data.get("receipts", [])],
            proposals={str(k): dict(v) for k, v in data.get("proposals", {}).items()},
            proposal_verdicts={str(k): (str(a), str(b)) for k, (a, b) in data.get("proposal_verdicts", {}).items()},
        )
