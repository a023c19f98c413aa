"""The journal's records: one kind per line, one constructor per kind.

Every line of a home's journal is a JSON object whose ``op`` names its kind. Nothing
outside this module builds one; :class:`~cuemem.home.Home` commits what these
constructors return, and every reader reads them back through :func:`cuemem.store.kinds.parse`
(one frozen class per kind, each shape checked there and only there).

The kinds and their fields:

- ``remember``: ``{"op", "episode"}`` — an episode as :meth:`Episode.to_json
  <cuemem.schema.Episode.to_json>` stores it; it becomes the home's next row.
- ``note``: ``{"op", "id", "version", "sha256", "markdown"}`` — a note version; the
  file ``notes/<id>.md`` holds ``markdown`` (``sha256`` is of its UTF-8 bytes).
- ``version``: ``{"op", "subject", "id", "supersedes", "valid_from", "at"}`` — record
  ``id`` becomes the current version of ``subject`` at ``at``; the previous current
  version (``supersedes``) ends where the new one starts.
- ``approval``: ``{"op", "id", "reason", "subject", "supersedes", "episode",
  "requested_at", "expires_at"}`` — a write waiting for a decision (``reason``
  ``"sensitive"`` or ``"conflict"``).
- ``decision``: ``{"op", "id", "verdict", "at"}`` — on a queued write, ``verdict``
  ``"approved"``, ``"rejected"`` or ``"expired"``; on a quarantined record (one the
  home holds, unreviewed), ``"accepted"`` (it is reviewed from now on) or ``"rejected"``
  (it leaves the live indexes).
- ``taint``: ``{"op", "user", "session", "source", "at"}`` — the user's session read
  external content (from ``source``, or null) at ``at``; everything it writes from then
  on is tainted.
- ``retire``: ``{"op", "ids", "reason", "at"}`` — records leave the live indexes (TTL
  expiry, the live-version bound, the capacity bound); the journal keeps them.
- ``job``: ``{"op", "job", "ran_at", "report"}`` — a maintenance job ran; the last one
  of each name is when it last ran.
- ``forget``: ``{"op", "id", "retention", "target", "ids", "notes", "approvals", "hashes",
  "owners", "at"}`` — the receipt of a forget: the records (``ids``), notes and queued writes it
  took out of the home, by ``retention`` ``"erase"`` (their lines are tombstones now) or
  ``"retire"`` (kept for audit, out of every recall path); ``target`` names what was
  asked for by kind and the SHA-256 of its value; ``hashes`` are the
  :func:`content_hash` of every forgotten record (in the order of ``ids``), then of every
  queued write (in the order of ``approvals``), so none is ever ingested again;
  ``owners`` (absent from older receipts and from one that forgets no record), the :func:`owner_hash` of
  each record's user (in the order of ``ids``), so a handle scoped to that user is told
  its own record was forgotten and any other is told it does not exist.
- ``erased``: ``{"op", "id", "was", "sha256"}`` followed by spaces — the tombstone a forget
  writes over a line it erases, of exactly that line's length (so no position in the
  journal moves); ``was`` is the erased line's kind; ``sha256``, the :func:`content_hash`
  of an erased record, only where ``was`` is ``remember``.
- ``proposal``: ``{"op", "id", "job", "action", "user", "summary", "why", "evidence",
  "sources", "records", "at"}`` — a maintenance job proposes a change (D5) instead of
  making it: ``sources`` are ``{"id", "sha256"}`` of the records it was made from (the
  digest of each one's journal record), ``records`` what accepting it commits (retire,
  remember, version and note records, built here too). A ``decision`` on its id
  (``"accepted"``, ``"rejected"``) settles it; until then nothing of it is applied.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import orjson

from .. import _core
from ..schema import Note

__all__ = [
    "LIFECYCLE_OPS",
    "Op",
    "PROPOSABLE_OPS",
    "Record",
    "approval",
    "content_hash",
    "owner_hash",
    "decision",
    "erased",
    "forget",
    "job",
    "marker",
    "note",
    "note_bytes",
    "note_version",
    "op_of",
    "proposal",
    "remember",
    "retire",
    "taint",
    "tombstone",
    "version",
]

#: A journal record, as appended and as read back.
Record = dict[str, Any]


class Op(str, enum.Enum):
    """The kinds of journal record."""

    REMEMBER = "remember"
    NOTE = "note"
    VERSION = "version"
    APPROVAL = "approval"
    DECISION = "decision"
    RETIRE = "retire"
    JOB = "job"
    TAINT = "taint"
    FORGET = "forget"
    ERASING = "erasing"
    ERASED = "erased"
    PROPOSAL = "proposal"

    def __str__(self) -> str:
        return str(self.value)


#: The kinds the life-cycle state follows (:mod:`cuemem.home.state`).
LIFECYCLE_OPS = frozenset({Op.VERSION, Op.APPROVAL, Op.DECISION, Op.RETIRE, Op.TAINT, Op.FORGET, Op.PROPOSAL})

_BY_VALUE = {op.value: op for op in Op}


def op_of(record: Mapping[str, Any]) -> Op | None:
    """The kind of a record read from the journal; None for a line cuemem never writes."""
    value = record.get("op")
    return _BY_VALUE.get(value) if isinstance(value, str) else None


def marker(op: Op) -> bytes:
    """The bytes every journal line of kind ``op`` holds (``"op":"note"``: lines are encoded
    with sorted keys and no spaces), for a byte search that decodes only the lines it needs.
    A line that holds them may be of another kind (``op`` inside a proposal's records)."""
    return f'"op":"{op.value}"'.encode()


_REMEMBER = Op.REMEMBER.value


def remember(episode: Mapping[str, Any]) -> Record:
    """A new row: ``episode`` as :meth:`Episode.to_json <cuemem.schema.Episode.to_json>` made it."""
    return {"op": _REMEMBER, "episode": episode}


class Encoded(dict[str, Any]):
    """A ``remember`` record the core encoded (:meth:`cuemem._core.Decoder.encode_decoded`),
    with its journal line: the record is that line read back, so the journal writes the
    line; and with what the core's decoder reads of the line (``decoded``), so the indexes
    take its row without reading the line again."""

    __slots__ = ("line", "decoded")

    line: bytes
    decoded: _core.Decoded | None


def encoded(line: bytes, decoded: _core.Decoded | None = None) -> Record:
    """The ``remember`` record of ``line``, a journal line the core encoded from a write's
    fields (the bytes :func:`remember` of the same episode encodes to), and ``decoded``, the
    decoder's reading of it if the core worked it out."""
    record = Encoded(orjson.loads(line))
    record.line = line
    record.decoded = decoded
    return record


def note_bytes(note: Note) -> bytes:
    """The file bytes of ``note`` (:meth:`Note.to_file <cuemem.schema.Note.to_file>`).

    Raises:
        SchemaError: the note is larger than a note file may be.
    """
    return note.to_file()


def note(note: Note) -> Record:
    """A note version; committing it writes ``notes/<id>.md`` first."""
    data = note_bytes(note)
    return note_version(note.id, note.version, hashlib.sha256(data).hexdigest(), data.decode("utf-8"))


def note_version(id: str, version: int, sha256: str, markdown: str) -> Record:
    """A note record from its fields (:func:`note` takes them from a note; a record read
    back is built again from its own)."""
    return {"op": Op.NOTE.value, "id": id, "version": version, "sha256": sha256, "markdown": markdown}


def version(subject: str, id: str, supersedes: str | None, valid_from: datetime, at: datetime) -> Record:
    """Record ``id`` becomes the current version of ``subject`` (a version key) at ``at``."""
    return {
        "op": Op.VERSION.value, "subject": subject, "id": id, "supersedes": supersedes, "valid_from": valid_from.isoformat(),
        "at": at.isoformat(),
    }


def approval(
    id: str, *, reason: str, subject: str, supersedes: str | None, episode: Mapping[str, Any], requested_at: datetime,
    expires_at: datetime,
) -> Record:
    """A write of ``episode`` waiting for a decision until ``expires_at``."""
    return {
        "op": Op.APPROVAL.value, "id": id, "reason": str(reason), "subject": subject, "supersedes": supersedes, "episode": episode,
        "requested_at": requested_at.isoformat(), "expires_at": expires_at.isoformat(),
    }


def decision(id: str, verdict: str, at: datetime) -> Record:
    """The decision on a queued write (``"approved"``, ``"rejected"``, ``"expired"``) or on a
    quarantined record (``"accepted"``, ``"rejected"``)."""
    return {"op": Op.DECISION.value, "id": id, "verdict": verdict, "at": at.isoformat()}


def retire(ids: Sequence[str], reason: str, at: datetime) -> Record:
    """Records ``ids`` leave the live indexes, for ``reason``."""
    return {"op": Op.RETIRE.value, "ids": list(ids), "reason": reason, "at": at.isoformat()}


def taint(user: str, session: str, source: str | None, at: datetime) -> Record:
    """``user``'s session ``session`` read external content (from ``source``) at ``at``: tainted for good."""
    return {"op": Op.TAINT.value, "user": user, "session": session, "source": source, "at": at.isoformat()}


def erasing(receipt: str, intent_sha256: str) -> Record:
    """The forget ``receipt`` is about to be carried out by the intent whose body (less its
    journal mark) has this digest: the journal's word for the intent file (:mod:`.erasure`)."""
    return {"op": Op.ERASING.value, "receipt": receipt, "intent": intent_sha256}


def job(name: str, ran_at: datetime, report: Mapping[str, Any]) -> Record:
    """Job ``name`` ran at ``ran_at`` and did what ``report`` counts."""
    return {"op": Op.JOB.value, "job": name, "ran_at": ran_at.isoformat(), "report": dict(report)}


def content_hash(user: str, narrative: str) -> str:
    """What identifies a memory's content across ids: the SHA-256 of its user and narrative.

    Anyone holding a candidate text can check it against a forgotten record's hash (that
    is what refuses its re-ingestion); the hash reveals nothing else.
    """
    return _core.content_hash(user.encode("utf-8", "surrogatepass"), narrative.encode("utf-8", "surrogatepass"))


def owner_hash(user: str) -> str:
    """What a forget receipt keeps of a forgotten record's user: the SHA-256 of the user id
    (as much as its ``target`` keeps of a user it names), never the id itself."""
    return hashlib.sha256(f"cuemem-owner\0{user}".encode("utf-8", "surrogatepass")).hexdigest()


def forget(
    id: str, *, retention: str, target: Mapping[str, str], ids: Sequence[str], notes: Sequence[str], approvals: Sequence[str],
    hashes: Sequence[str], at: datetime, owners: Sequence[str] = (),
) -> Record:
    """The receipt of forget ``id``: what left the home, and how (see the module docstring)."""
    return {
        "op": Op.FORGET.value, "id": id, "retention": retention, "target": dict(target), "ids": list(ids), "notes": list(notes),
        "approvals": list(approvals), "hashes": list(hashes), **({"owners": list(owners)} if owners else {}), "at": at.isoformat(),
    }


def erased(id: str, was: str, sha256: str | None, length: int) -> bytes:
    """The tombstone line (``\\n`` included) standing for an erased line of ``length`` bytes;
    ``sha256`` (an erased record's content hash) only for a ``remember`` line.

    Raises:
        ValueError: the tombstone does not fit (a line shorter than any record cuemem writes).
    """
    body = orjson.dumps(tombstone(id, was, sha256), option=orjson.OPT_SORT_KEYS)
    if len(body) + 1 > length:
        raise ValueError(f"a tombstone of {len(body) + 1} bytes does not fit a line of {length}")
    return body + b" " * (length - len(body) - 1) + b"\n"


def tombstone(id: str, was: str, sha256: str | None) -> Record:
    """The fields of the tombstone :func:`erased` writes (less its padding)."""
    return {"op": Op.ERASED.value, "id": id, "was": was, **({} if sha256 is None else {"sha256": sha256})}


#: The kinds a proposal may hold as what accepting it commits.
PROPOSABLE_OPS = frozenset({Op.REMEMBER, Op.NOTE, Op.VERSION, Op.RETIRE})


def proposal(
    id: str, *, job: str, action: str, user: str, summary: str, why: str, evidence: Sequence[str],
    sources: Sequence[tuple[str, str]], records: Sequence[Record], at: datetime,
) -> Record:
    """Job ``job`` proposes ``records`` (what accepting commits), made at ``at`` from
    ``sources`` (``(id, sha256 of its journal record)``), for a person to decide."""
    return {
        "op": Op.PROPOSAL.value, "id": id, "job": job, "action": action, "user": user, "summary": summary, "why": why,
        "evidence": list(evidence), "sources": [{"id": i, "sha256": d} for i, d in sources], "records": [dict(r) for r in records],
        "at": at.isoformat(),
    }
