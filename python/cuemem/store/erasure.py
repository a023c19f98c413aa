"""The intent of an erasure: what a forget is about to do to the files, written first.

An erasure changes files in place (tombstones over journal lines, note files deleted)
and then commits its receipt, and no single rename makes that atomic. So a forget
writes its intent first, atomically and durably: the tombstones and their positions,
the notes to delete and the records to commit. From the moment the intent is on
disk the forget *has happened*: every writable open that finds the file carries it
out again (each step is idempotent) before anything reads the journal, then deletes
it. A crash before the intent is durable leaves the home as it was.

The intent holds no erased content: tombstones carry ids and hashes, and the records
to commit are what the forget writes anyway (a receipt, re-derived records). It is
checked on load as any file is: an intent whose edits are not tombstones is refused.

**It is carried out only as far as the journal proves it** (:meth:`Intent.check`). Before
the file is written, the journal is given an ``erasing`` record naming the receipt and
the digest of the intent's body (:meth:`Intent.digest`), synced; the intent then records
what the journal looked like (:class:`Mark`: the head, and the sha256 of that last
line). An open carries it out only when the journal still holds that line there, it is
the ``erasing`` record of this very intent, and what follows the head is a prefix of the
intent's own records, receipt first. A stale intent, one copied from another home or one
written by hand — even one that quotes the journal's last line — vouches for nothing and
is refused: only an append to the journal, the truth itself, makes an intent.

What an intent may commit is what a forget writes (:func:`_check_records`): its
receipt, first and once; the re-derivation of an abstraction that kept sources (a
job's ``remember``, or its ``approval``, citing sources the receipt does not forget,
the ``version`` of that episode and the ``retire`` of versions beyond the bound); and
versions of notes (generated, or a person's pending edit kept first), each of a note the receipt forgets (a policy mined again) or of a
rung it re-derives. The notes whose files it deletes are notes its receipt forgets.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..errors import CorruptRecordError, CuememError, InvalidArgumentError, StorageError
from ..schema import Origin
from ..schema.fields import validate_id
from .fsync import FsyncPolicy, sync_directory, write_atomic
from .journal import Journal, Position
from .kinds import (
    ApprovalRecord, ErasedRecord, ForgetRecord, NoteRecord, RememberRecord, RetireRecord, TypedRecord, VersionRecord, checked, parse,
)
from .records import Record, erasing
from .regular import open_regular

__all__ = ["Intent", "Mark"]

#: The largest intent file read (a forget of very many records stays far below it).
_MAX_BYTES = 1 << 30


@dataclass(frozen=True)
class Mark:
    """What the journal looked like as an intent was written.

    Attributes:
        head: The journal's head.
        last: Where the last line before the head starts (None: the journal was empty).
        sha256: The sha256 of that line, ``\\n`` included.
    """

    head: Position
    last: Position | None
    sha256: str

    @classmethod
    def of(cls, journal: Journal) -> Mark:
        """The mark of ``journal`` as it is now."""
        head, line = journal.last_line()
        last = Position(head.segment, head.offset - len(line)) if line else None
        return cls(head, last, hashlib.sha256(line).hexdigest())

    def to_json(self) -> dict[str, object]:
        last = None if self.last is None else [self.last.segment, self.last.offset]
        return {"head": [self.head.segment, self.head.offset], "last": last, "sha256": self.sha256}

    @classmethod
    def from_json(cls, value: object) -> Mark:
        if not isinstance(value, dict) or set(value) != {"head", "last", "sha256"}:
            raise ValueError("its journal mark is not a head, a last line and a sha256")
        digest = value["sha256"]
        if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError("its journal mark's sha256 is not a digest")
        last = None if value["last"] is None else _position(value["last"])
        return cls(_position(value["head"]), last, digest)


@dataclass(frozen=True)
class Intent:
    """What one forget does to the files.

    Attributes:
        receipt: The id of its ``forget`` record.
        edits: ``(position, tombstone line)``: the journal lines it overwrites.
        notes: The notes whose files it deletes.
        records: What it commits, the ``forget`` receipt first.
        proposals: The maintenance proposals whose files it deletes.
        mark: The journal as the intent was written (None: a shared log's forget row
            written before marks, which its log's transaction vouches for instead).
    """

    receipt: str
    edits: tuple[tuple[Position, bytes], ...]
    notes: tuple[str, ...]
    records: tuple[Record, ...]
    proposals: tuple[str, ...] = ()
    mark: Mark | None = None

    def digest(self) -> str:
        """The sha256 of the intent's body less its journal mark: what its ``erasing`` record names."""
        return hashlib.sha256(dataclasses.replace(self, mark=None).to_bytes()).hexdigest()

    def write(self, path: Path) -> None:
        """Writes the intent atomically and durably (always synced: the forget starts here)."""
        write_atomic(path, self.to_bytes(), FsyncPolicy.ALWAYS)

    def to_bytes(self) -> bytes:
        """The intent as its file (and a shared home's ``forgets`` row) holds it."""
        body: dict[str, object] = {
            "receipt": self.receipt,
            "edits": [[p.segment, p.offset, line.decode("ascii")] for p, line in self.edits],
            "notes": list(self.notes),
            "records": list(self.records),
            "proposals": list(self.proposals),
        }
        if self.mark is not None:
            body["journal"] = self.mark.to_json()
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)

    @classmethod
    def load(cls, path: Path) -> Intent | None:
        """The intent at ``path``, or None when there is none.

        Raises:
            CorruptRecordError: the file is not an intent cuemem wrote (nothing of it is done).
        """
        try:
            handle, _ = open_regular(path)  # a FIFO there is refused, never waited on
            with handle:
                raw = handle.read(_MAX_BYTES + 1)
        except FileNotFoundError:
            return None
        except (OSError, InvalidArgumentError) as exc:
            raise CorruptRecordError(f"cannot read the forget intent {path}: {exc}") from None
        if len(raw) > _MAX_BYTES:
            raise CorruptRecordError(f"the forget intent {path} is larger than {_MAX_BYTES} bytes: not one cuemem wrote")
        return cls.from_bytes(raw, str(path))

    @classmethod
    def from_bytes(cls, raw: bytes, where: str) -> Intent:
        """The intent ``raw`` holds (read from ``where``).

        Raises:
            CorruptRecordError: it is not an intent cuemem wrote (nothing of it is done).
        """
        try:
            body = json.loads(raw)
            stones = [(_position([s, o]), *_tombstone(line)) for s, o, line in body["edits"]]
            edits = tuple((position, data) for position, data, _ in stones)
            notes = tuple(validate_id(n, "note") for n in body["notes"])
            typed = tuple(checked(r) for r in body["records"])
            records = tuple(r.to_json() for r in typed)
            proposals = tuple(validate_id(p, "proposal") for p in body.get("proposals", []))
            mark = Mark.from_json(body["journal"]) if "journal" in body else None
            receipt = body["receipt"]
            first = typed[0] if typed else None
            if not isinstance(receipt, str) or not isinstance(first, ForgetRecord) or first.id != receipt:
                raise ValueError("the intent does not start with its receipt")
            # A tombstone may only stand for what the receipt forgets.
            named = {*first.ids, *first.notes, *first.approvals}
            stray = [stone.id for _, _, stone in stones if stone.id not in named]
            if stray:
                raise ValueError(f"tombstones of {stray[:3]} that its receipt does not forget")
            if not set(notes) <= set(first.notes):
                raise ValueError("it deletes note files its receipt does not forget")
            _check_records(first, typed[1:])
        except (CuememError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise CorruptRecordError(f"{where} is not a forget intent cuemem wrote: {exc}") from None
        return cls(receipt, edits, notes, records, proposals, mark)

    def check(self, journal: Journal) -> None:
        """Raises unless ``journal`` vouches for this intent: it holds the line the intent
        was written after, at its head (or the intent's own tombstone of it), and what
        follows the head is a prefix of the intent's records, receipt first. Checks the
        tombstones too: each replaces a line of its length that is about what it stands for.

        Raises:
            CorruptRecordError: the journal does not vouch for it (nothing of it is done).
            StorageError: the journal cannot be read.
        """
        mark = self.mark
        if mark is None:
            raise CorruptRecordError("it records no journal head, so the journal cannot vouch for it")
        try:
            if mark.last is None:
                if mark.head != Position.start():
                    raise ValueError("its journal mark has a head and no last line")
            else:
                line = journal.lines([mark.last])[0]
                if mark.last.segment != mark.head.segment or mark.last.offset + len(line) != mark.head.offset:
                    raise ValueError(f"the journal's line at {mark.last} does not end at the head {mark.head} it was written at")
                if hashlib.sha256(line).hexdigest() != mark.sha256:
                    raise ValueError(f"the journal's line at {mark.last} is not the one it was written after")
            if mark.last is None or json.loads(line) != erasing(self.receipt, self.digest()):
                raise ValueError("the journal holds no erasing record of this intent before its head")
            own = [_canonical(r) for r in self.records]
            for n, entry in enumerate(journal.read(mark.head)):
                if n >= len(own) or _canonical(entry.record) != own[n]:
                    raise ValueError(f"the journal holds a record at {entry.position} that is not one of its own")
            lines = journal.lines([p for p, _ in self.edits])
        except StorageError:
            raise
        except (ValueError, CuememError) as exc:
            raise CorruptRecordError(f"the journal does not vouch for it: {exc}") from None
        for (position, stone), line in zip(self.edits, lines):
            named = b'"id":' + orjson.dumps(orjson.loads(stone)["id"])
            if len(line) != len(stone) or (line != stone and named not in line):
                raise CorruptRecordError(f"it would erase a line at {position} that is not about what it forgets")

    def missing(self, journal: Journal) -> list[Record]:
        """The intent's records the journal does not hold past its mark (all of them without
        a mark): what carrying it out still commits. A crash may have committed a prefix.

        Raises:
            StorageError: the journal cannot be read.
        """
        if self.mark is None:
            return list(self.records)
        held = {_canonical(entry.record) for entry in journal.read(self.mark.head)}
        return [r for r in self.records if _canonical(r) not in held]

    @staticmethod
    def clear(path: Path) -> None:
        """Deletes the intent (the forget is complete)."""
        try:
            path.unlink()
        except FileNotFoundError:
            return
        sync_directory(path.parent, FsyncPolicy.ALWAYS)


def _tombstone(line: object) -> tuple[bytes, ErasedRecord]:
    if not isinstance(line, str) or not line.endswith("\n"):
        raise ValueError("an edit is one line")
    data = line.encode("ascii")
    return data, parse(json.loads(data), ErasedRecord)


def _position(value: object) -> Position:
    if not isinstance(value, list) or len(value) != 2 or not all(type(v) is int for v in value):
        raise ValueError("a position is two integers")
    return Position(value[0], value[1])


def _canonical(record: Record) -> bytes:
    return orjson.dumps(record, option=orjson.OPT_SORT_KEYS)


def _check_records(receipt: ForgetRecord, records: Sequence[TypedRecord]) -> None:
    """Raises ValueError unless ``records`` (after the receipt, already :func:`checked`)
    are what a forget writes: see the module docstring. So no intent commits a memory
    of a person's (or a trusted origin's), only a job's re-derivation from what remains."""
    forgotten = set(receipt.ids)
    episodes: set[str] = set()
    versioned = False
    for record in records:
        match record:
            case RememberRecord(episode=episode) | ApprovalRecord(episode=episode):
                sources = episode.get("sources") or []
                if episode.get("origin") != Origin.JOB.value or not sources or not forgotten.isdisjoint(sources):
                    raise ValueError(f"{episode['id']!r} is not a re-derivation from what its receipt keeps")
                episodes.add(episode["id"])
            case VersionRecord():
                if record.id not in episodes:
                    raise ValueError(f"a version of {record.id!r}, which it does not re-derive")
                versioned = True
            case RetireRecord():
                if record.reason != "versions" or not versioned:
                    raise ValueError("a retire that is not of versions beyond the bound of one it re-derives")
            case NoteRecord():
                # Versions of a note it forgets or of a rung it re-derives: the generated one, and a
                # person's pending edit of that file, kept first as its own version (note_versions.py).
                if record.id not in receipt.notes and record.id not in episodes:
                    raise ValueError(f"a note {record.id!r} that is neither one it forgets nor a rung it re-derives")
            case _:
                raise ValueError(f"a forget does not write a {record.op.value!r} record after its receipt")
