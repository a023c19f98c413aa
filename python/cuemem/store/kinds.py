"""The journal's records read back: one frozen class per kind, and the one :func:`parse`.

:mod:`.records` builds every record, and its constructors are the definition of each
kind's fields. This module reads a record back. :func:`parse` checks a record read from
the journal (or from a file a person may have edited: a proposal, a forget's intent)
against what those constructors write, and returns the record's class: ids and labels
as ``str``, instants as aware ``datetime``, lists as tuples. What it refuses raises
:class:`~cuemem.errors.MalformedRecordError`, whose ``kind`` and ``field`` name the
kind and the field. A module that reads a record's fields dispatches on the class
:func:`parse` returns, never on its ``op`` string.

``parse(record, trusted=True)`` reads a record this process has just built, and checks
nothing. A field that is missing there raises ``KeyError``, since that is a bug and not a
bad line. :func:`checked` goes one step further for a record that is about to be committed
again (a proposal's records, a forget's intent): it is built again by its constructor, so
that only what cuemem writes is committed.

``parse`` checks the record's shape and nothing that depends on the rest of the journal.
Whether a version names rows the journal holds is the applier's business
(:mod:`cuemem.home.apply`). An episode inside a ``remember`` or an ``approval`` is
validated in full by :meth:`Episode.from_json <cuemem.schema.Episode.from_json>`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, TypeVar, Union, overload

from ..errors import MalformedRecordError
from ..schema import Episode, Note
from ..schema.fields import MAX_SOURCE
from . import records as rec
from .records import Op, Record

__all__ = [
    "APPROVAL_REASONS",
    "CHECKED_OPS",
    "KINDS",
    "LifecycleRecord",
    "RETENTIONS",
    "TypedRecord",
    "VERDICTS",
    "ApprovalRecord",
    "DecisionRecord",
    "ErasedRecord",
    "ErasingRecord",
    "ForgetRecord",
    "JobRecord",
    "NoteRecord",
    "ProposalRecord",
    "RememberRecord",
    "RetireRecord",
    "TaintRecord",
    "VersionRecord",
    "checked",
    "parse",
]

#: Why a write waits in the approval queue (:class:`cuemem.lifecycle.gate.ApprovalReason`).
APPROVAL_REASONS = frozenset({"sensitive", "conflict", "untrusted"})
#: The verdicts of a ``decision``: on a queued write, and on a quarantined record or a proposal.
VERDICTS = frozenset({"approved", "rejected", "expired", "accepted"})
#: The retentions of a forget (:data:`cuemem.home.state.RETENTIONS`).
RETENTIONS = ("erase", "retire")


# -- one class per kind ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RememberRecord:
    """``remember``: a new row. ``episode`` is as :meth:`Episode.to_json <cuemem.schema.Episode.to_json>` made it.

    ``checked``: whether that is known of it — this process built it, or it was read and its
    episode checked in full; False for a record read without (:func:`parse`'s ``episodes``),
    which only the applier's reading of its line may be taken for (a line another process put
    in a shared log may be anything)."""

    op: ClassVar[Op] = Op.REMEMBER
    episode: Mapping[str, Any]
    checked: bool = True

    def to_json(self) -> Record:
        """The record as :func:`.records.remember` builds it."""
        return rec.remember(self.episode)


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """``note``: version ``version`` of note ``id``. ``sha256`` is the digest of ``markdown``'s UTF-8 bytes."""

    op: ClassVar[Op] = Op.NOTE
    id: str
    version: int
    sha256: str
    markdown: str

    def to_json(self) -> Record:
        """The record as :func:`.records.note` builds it."""
        return rec.note_version(self.id, self.version, self.sha256, self.markdown)


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """``version``: record ``id`` becomes the current version of ``subject`` at ``at``."""

    op: ClassVar[Op] = Op.VERSION
    subject: str
    id: str
    supersedes: str | None
    valid_from: datetime
    at: datetime

    def to_json(self) -> Record:
        """The record as :func:`.records.version` builds it."""
        return rec.version(self.subject, self.id, self.supersedes, self.valid_from, self.at)


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """``approval``: a write of ``episode`` waiting for a decision until ``expires_at``."""

    op: ClassVar[Op] = Op.APPROVAL
    id: str
    reason: str
    subject: str
    supersedes: str | None
    episode: Mapping[str, Any]
    requested_at: datetime
    expires_at: datetime

    def to_json(self) -> Record:
        """The record as :func:`.records.approval` builds it."""
        return rec.approval(
            self.id, reason=self.reason, subject=self.subject, supersedes=self.supersedes, episode=self.episode,
            requested_at=self.requested_at, expires_at=self.expires_at,
        )


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """``decision``: the ``verdict`` on a queued write, a quarantined record or a proposal."""

    op: ClassVar[Op] = Op.DECISION
    id: str
    verdict: str
    at: datetime

    def to_json(self) -> Record:
        """The record as :func:`.records.decision` builds it."""
        return rec.decision(self.id, self.verdict, self.at)


@dataclass(frozen=True, slots=True)
class RetireRecord:
    """``retire``: records ``ids`` leave the live indexes for ``reason``."""

    op: ClassVar[Op] = Op.RETIRE
    ids: tuple[str, ...]
    reason: str
    at: datetime

    def to_json(self) -> Record:
        """The record as :func:`.records.retire` builds it."""
        return rec.retire(self.ids, self.reason, self.at)


@dataclass(frozen=True, slots=True)
class JobRecord:
    """``job``: job ``job`` ran at ``ran_at`` and did what ``report`` counts."""

    op: ClassVar[Op] = Op.JOB
    job: str
    ran_at: datetime
    report: Mapping[str, Any]

    def to_json(self) -> Record:
        """The record as :func:`.records.job` builds it."""
        return rec.job(self.job, self.ran_at, self.report)


@dataclass(frozen=True, slots=True)
class TaintRecord:
    """``taint``: ``user``'s session ``session`` read external content (from ``source``) at ``at``."""

    op: ClassVar[Op] = Op.TAINT
    user: str
    session: str
    source: str | None
    at: datetime

    def to_json(self) -> Record:
        """The record as :func:`.records.taint` builds it."""
        return rec.taint(self.user, self.session, self.source, self.at)


@dataclass(frozen=True, slots=True)
class ForgetRecord:
    """``forget``: the receipt of a forget. ``owners`` is empty when the receipt has none."""

    op: ClassVar[Op] = Op.FORGET
    id: str
    retention: str
    target: Mapping[str, str]
    ids: tuple[str, ...]
    notes: tuple[str, ...]
    approvals: tuple[str, ...]
    hashes: tuple[str, ...]
    owners: tuple[str, ...]
    at: datetime

    def to_json(self) -> Record:
        """The record as :func:`.records.forget` builds it."""
        return rec.forget(
            self.id, retention=self.retention, target=self.target, ids=self.ids, notes=self.notes, approvals=self.approvals,
            hashes=self.hashes, owners=self.owners, at=self.at,
        )


@dataclass(frozen=True, slots=True)
class ErasingRecord:
    """``erasing``: the forget ``receipt`` is about to be carried out by the intent whose body has digest ``intent``."""

    op: ClassVar[Op] = Op.ERASING
    receipt: str
    intent: str

    def to_json(self) -> Record:
        """The record as :func:`.records.erasing` builds it."""
        return rec.erasing(self.receipt, self.intent)


@dataclass(frozen=True, slots=True)
class ErasedRecord:
    """``erased``: the tombstone of an erased line of kind ``was``. ``sha256`` is the erased
    record's content hash, and there is one only where ``was`` is ``remember``."""

    op: ClassVar[Op] = Op.ERASED
    id: str
    was: str
    sha256: str | None

    def to_json(self) -> Record:
        """The tombstone's fields, as :func:`.records.erased` writes them (less its padding)."""
        return rec.tombstone(self.id, self.was, self.sha256)


@dataclass(frozen=True, slots=True)
class ProposalRecord:
    """``proposal``: job ``job`` proposes ``records``. ``sources`` are ``(id, sha256)`` pairs.

    ``records`` are kept as read. :func:`checked` builds each one again when someone accepts.
    """

    op: ClassVar[Op] = Op.PROPOSAL
    id: str
    job: str
    action: str
    user: str
    summary: str
    why: str
    evidence: tuple[str, ...]
    sources: tuple[tuple[str, str], ...]
    records: tuple[Record, ...]
    at: datetime

    def to_json(self) -> Record:
        """The record as :func:`.records.proposal` builds it."""
        return rec.proposal(
            self.id, job=self.job, action=self.action, user=self.user, summary=self.summary, why=self.why, evidence=self.evidence,
            sources=self.sources, records=self.records, at=self.at,
        )


#: Any journal record, as :func:`parse` returns it.
TypedRecord = Union[
    RememberRecord, NoteRecord, VersionRecord, ApprovalRecord, DecisionRecord, RetireRecord, JobRecord, TaintRecord,
    ForgetRecord, ErasingRecord, ErasedRecord, ProposalRecord,
]
#: The records the life-cycle state follows (:meth:`cuemem.home.state.LifecycleState.apply`).
LifecycleRecord = Union[VersionRecord, ApprovalRecord, DecisionRecord, RetireRecord, TaintRecord, ForgetRecord, ProposalRecord, ErasedRecord]

#: The class of each kind.
KINDS: Mapping[Op, type[TypedRecord]] = {
    Op.REMEMBER: RememberRecord, Op.NOTE: NoteRecord, Op.VERSION: VersionRecord, Op.APPROVAL: ApprovalRecord,
    Op.DECISION: DecisionRecord, Op.RETIRE: RetireRecord, Op.JOB: JobRecord, Op.TAINT: TaintRecord, Op.FORGET: ForgetRecord,
    Op.ERASING: ErasingRecord, Op.ERASED: ErasedRecord, Op.PROPOSAL: ProposalRecord,
}

_R = TypeVar("_R", RememberRecord, NoteRecord, VersionRecord, ApprovalRecord, DecisionRecord, RetireRecord, JobRecord,
             TaintRecord, ForgetRecord, ErasingRecord, ErasedRecord, ProposalRecord)


# -- parse -----------------------------------------------------------------------------


@overload
def parse(raw: Mapping[str, Any], *, trusted: bool = False, episodes: bool = True) -> TypedRecord: ...


@overload
def parse(raw: Mapping[str, Any], kind: type[_R], *, trusted: bool = False, episodes: bool = True) -> _R: ...


def parse(raw: Mapping[str, Any], kind: type[Any] | None = None, *, trusted: bool = False, episodes: bool = True) -> Any:
    """The typed record ``raw`` is: checked against what :mod:`.records` writes, unless
    ``trusted`` (a record this process just built: its fields are read, not checked).

    Args:
        raw: A record as read back from the journal (decoded JSON) or as a constructor built it.
        kind: The class the record must be (any kind if None).
        trusted: Read the fields without checking them.
        episodes: Check an episode against the schema in full (False: only that it is an
            object — for a reader that looks at records the applier checks, such as a view
            told what a catch-up brought).

    Raises:
        MalformedRecordError: it is not a record cuemem writes, or not one of ``kind``
            (``kind`` and ``field`` name the kind and the offending field).
        KeyError: a trusted record lacks a field.
    """
    if not trusted and not isinstance(raw, Mapping):
        raise MalformedRecordError(f"not a record cuemem writes: {_shown(raw)}", None, "op")
    value = raw.get("op")
    op = _OPS.get(value) if isinstance(value, str) else None
    if op is None:
        raise MalformedRecordError(f"not a record cuemem writes: its op is {_shown(value)}", value if isinstance(value, str) else None, "op")
    if kind is not None and op is not kind.op:
        raise MalformedRecordError(f"{_a(op)} record where {_a(kind.op)} record belongs", op.value, "op")
    return _PARSERS[op](_Fields(raw, op, not trusted, episodes))


def checked(raw: Mapping[str, Any], allowed: Collection[Op] | None = None) -> TypedRecord:
    """``raw`` (read back from a file a person may have edited: a proposal, a forget's
    intent) parsed and built again by its constructor, so that only what cuemem writes is
    committed: an episode as :meth:`Episode.from_json <cuemem.schema.Episode.from_json>`
    reads it, a note record whose markdown is its note, a retire that names records.
    ``.to_json()`` of what it returns is the record to commit.

    Args:
        raw: The record.
        allowed: The kinds that may be committed here (:data:`CHECKED_OPS` if None).

    Raises:
        MalformedRecordError: it is not such a record.
    """
    record = parse(raw)
    if record.op not in (CHECKED_OPS if allowed is None else allowed):
        raise MalformedRecordError(f"{_a(record.op)} record is not committed here", record.op.value, "op")
    if isinstance(record, (RememberRecord, ApprovalRecord)):
        return dataclasses.replace(record, episode=_episode(record.op, record.episode).to_json())
    if isinstance(record, RetireRecord) and not record.ids:
        raise MalformedRecordError("a retire record names no ids", record.op.value, "ids")
    if isinstance(record, NoteRecord):
        try:
            built = rec.note(Note.from_markdown(record.markdown))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise MalformedRecordError(f"a note record's markdown is not a note: {exc}", record.op.value, "markdown") from None
        if (built["id"], built["version"], built["sha256"]) != (record.id, record.version, record.sha256):
            raise MalformedRecordError("a note record's markdown is not its note", record.op.value, "markdown")
        return parse(built, NoteRecord, trusted=True)
    return record


#: The kinds :func:`checked` builds again by default: those a forget's intent may commit.
CHECKED_OPS = frozenset({Op.REMEMBER, Op.RETIRE, Op.VERSION, Op.NOTE, Op.APPROVAL, Op.FORGET})


# -- the fields of one record ------------------------------------------------------------


def _a(op: Op) -> str:
    """``op`` with its article (``an approval``, ``a note``)."""
    return f"{'an' if op.value[:1] in 'aeiou' else 'a'} {op.value}"


def _nonempty(value: object) -> bool:
    return value != ""


def _digest(value: object) -> bool:
    """Whether ``value`` is a SHA-256 in lowercase hex."""
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _plain_label(value: object) -> bool:
    """Whether a stored label (a user, a session) is as ``Episode.create`` leaves it."""
    return type(value) is str and 0 < len(value) <= 100 and value == value.strip() and value.isprintable()


def _plain_source(value: object) -> bool:
    """Whether a stored ``source`` is absent or as ``Episode.create`` leaves it."""
    return value is None or (type(value) is str and 0 < len(value) <= MAX_SOURCE and value == value.strip() and value.isprintable())


def _episode(op: Op, value: Mapping[str, Any]) -> Episode:
    """The episode a record holds, validated in full."""
    try:
        return Episode.from_json(value)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as exc:
        inner = getattr(exc, "field", None)
        raise MalformedRecordError(
            f"{_a(op)} record's episode breaks the schema: {exc}", op.value, "episode" if inner is None else f"episode.{inner}",
        ) from None


class _Fields:
    """The fields of one record of kind ``op``, each checked (unless ``check`` is False)
    as it is read; what is wrong raises naming the kind and the field."""

    __slots__ = ("raw", "op", "check", "episodes")

    def __init__(self, raw: Mapping[str, Any], op: Op, check: bool, episodes: bool = True) -> None:
        self.raw = raw
        self.op = op
        self.check = check
        #: Whether an episode is checked against the schema (see :func:`parse`).
        self.episodes = check and episodes

    def bad(self, name: str, problem: str) -> MalformedRecordError:
        return MalformedRecordError(f"{_a(self.op)} record's {name} {problem}", self.op.value, name)

    def value(self, name: str) -> Any:
        if self.check and name not in self.raw:
            raise self.bad(name, "is missing")
        return self.raw[name]

    def text(self, name: str, rule: Callable[[object], bool] | None = None, what: str = "a string") -> str:
        if not self.check:
            return self.raw[name]  # type: ignore[no-any-return]
        value = self.value(name)
        if not isinstance(value, str) or (rule is not None and not rule(value)):
            raise self.bad(name, f"is not {what}: {_shown(value)}")
        return value

    def optional_text(self, name: str) -> str | None:
        value = self.value(name)
        if self.check and value is not None and not isinstance(value, str):
            raise self.bad(name, f"is not an id or null: {_shown(value)}")
        return value  # type: ignore[no-any-return]

    def one_of(self, name: str, allowed: Collection[str]) -> str:
        value = self.value(name)
        if self.check and (not isinstance(value, str) or value not in allowed):
            raise self.bad(name, f"is not one of {sorted(allowed)}: {_shown(value)}")
        return value  # type: ignore[no-any-return]

    def integer(self, name: str) -> int:
        value = self.value(name)
        if self.check and (isinstance(value, bool) or not isinstance(value, int)):
            raise self.bad(name, f"is not an integer: {_shown(value)}")
        return value  # type: ignore[no-any-return]

    def instant(self, name: str) -> datetime:
        if not self.check:
            return datetime.fromisoformat(self.raw[name])
        value = self.value(name)
        if not isinstance(value, str):
            raise self.bad(name, f"is not an ISO 8601 string: {_shown(value)}")
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            raise self.bad(name, f"is not an ISO 8601 instant: {_shown(value)}") from None
        if moment.tzinfo is None:
            raise self.bad(name, f"has no time zone: {_shown(value)}")
        return moment

    def strings(self, name: str, rule: Callable[[object], bool] | None = None, what: str = "a list of strings") -> tuple[str, ...]:
        value = self.value(name)
        if self.check and (not isinstance(value, list) or not all(isinstance(v, str) and (rule is None or rule(v)) for v in value)):
            raise self.bad(name, f"is not {what}")
        return tuple(value)

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.value(name)
        if self.check and not isinstance(value, dict):
            raise self.bad(name, f"is not an object: {_shown(value)}")
        return value  # type: ignore[no-any-return]


def _shown(value: object) -> str:
    """``value`` for a message, cut short (a hostile line may hold anything)."""
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _remember(f: _Fields) -> RememberRecord:
    episode = f.mapping("episode")
    if f.episodes:
        _episode(f.op, episode)
    return RememberRecord(episode, f.episodes or not f.check)


def _note(f: _Fields) -> NoteRecord:
    return NoteRecord(f.text("id"), f.integer("version"), f.text("sha256"), f.text("markdown"))


def _version(f: _Fields) -> VersionRecord:
    return VersionRecord(f.text("subject"), f.text("id"), f.optional_text("supersedes"), f.instant("valid_from"), f.instant("at"))


def _approval(f: _Fields) -> ApprovalRecord:
    record = ApprovalRecord(
        f.text("id"), f.one_of("reason", APPROVAL_REASONS), f.text("subject"), f.optional_text("supersedes"), f.mapping("episode"),
        f.instant("requested_at"), f.instant("expires_at"),
    )
    if f.episodes and _episode(f.op, record.episode).id != record.id:
        raise f.bad("episode", f"is not the episode of its own id {record.id!r}")
    return record


def _decision(f: _Fields) -> DecisionRecord:
    return DecisionRecord(f.text("id"), f.one_of("verdict", VERDICTS), f.instant("at"))


def _retire(f: _Fields) -> RetireRecord:
    return RetireRecord(f.strings("ids"), f.text("reason"), f.instant("at"))


def _job(f: _Fields) -> JobRecord:
    return JobRecord(f.text("job"), f.instant("ran_at"), f.mapping("report"))


def _taint(f: _Fields) -> TaintRecord:
    user = f.text("user", _plain_label, "a plain label")
    session = f.text("session", _plain_label, "a plain label")
    source = f.value("source")
    if f.check and not _plain_source(source):
        raise f.bad("source", f"is not a source or null: {_shown(source)}")
    return TaintRecord(user, session, source, f.instant("at"))


def _forget(f: _Fields) -> ForgetRecord:
    target = f.mapping("target")
    if f.check and not all(isinstance(k, str) and isinstance(v, str) for k, v in target.items()):
        raise f.bad("target", "is not an object of strings")
    ids, approvals = f.strings("ids"), f.strings("approvals")
    hashes = f.strings("hashes", _digest, "a list of SHA-256 digests")
    if f.check and len(hashes) != len(ids) + len(approvals):
        raise f.bad("hashes", "do not hold one content hash per record and queued write")
    owners = f.strings("owners", _digest, "a list of SHA-256 digests") if "owners" in f.raw else ()
    if f.check and len(owners) not in (0, len(ids)):
        raise f.bad("owners", "do not hold one owner hash per record, or none")
    return ForgetRecord(
        f.text("id"), f.one_of("retention", RETENTIONS), target, ids, f.strings("notes"), approvals, hashes, owners, f.instant("at"),
    )


def _erasing(f: _Fields) -> ErasingRecord:
    return ErasingRecord(f.text("receipt"), f.text("intent", _digest, "a SHA-256 digest"))


_KIND_VALUES = frozenset(op.value for op in Op)
_TOMBSTONE_FIELDS = frozenset({"op", "id", "was", "sha256"})


def _erased(f: _Fields) -> ErasedRecord:
    if f.check:
        extra = sorted(str(k) for k in set(f.raw) - _TOMBSTONE_FIELDS)
        if extra:
            raise f.bad(extra[0], "is not a field of a tombstone")
    eid = f.text("id", _nonempty, "an id")
    was = f.one_of("was", _KIND_VALUES)
    sha = f.text("sha256", _digest, "a SHA-256 digest") if was == Op.REMEMBER.value or "sha256" in f.raw else None
    return ErasedRecord(eid, was, sha)


def _proposal(f: _Fields) -> ProposalRecord:
    head = [f.text(name) for name in ("id", "job", "action", "user", "summary", "why")]
    evidence = f.strings("evidence")
    sources = f.value("sources")
    if f.check and not (isinstance(sources, list) and all(
        isinstance(s, dict) and isinstance(s.get("id"), str) and isinstance(s.get("sha256"), str) for s in sources
    )):
        raise f.bad("sources", "are not {id, sha256} objects")
    records = f.value("records")
    if f.check and not (isinstance(records, list) and all(isinstance(r, dict) and rec.op_of(r) in rec.PROPOSABLE_OPS for r in records)):
        raise f.bad("records", f"are not only {sorted(o.value for o in rec.PROPOSABLE_OPS)} records")
    pid, job, action, user, summary, why = head
    return ProposalRecord(
        pid, job, action, user, summary, why, evidence, tuple((s["id"], s["sha256"]) for s in sources), tuple(records), f.instant("at"),
    )


_OPS = {op.value: op for op in Op}
_PARSERS: dict[Op, Callable[[_Fields], TypedRecord]] = {
    Op.REMEMBER: _remember, Op.NOTE: _note, Op.VERSION: _version, Op.APPROVAL: _approval, Op.DECISION: _decision,
    Op.RETIRE: _retire, Op.JOB: _job, Op.TAINT: _taint, Op.FORGET: _forget, Op.ERASING: _erasing, Op.ERASED: _erased,
    Op.PROPOSAL: _proposal,
}
