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
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..errors import CorruptRecordError, SchemaError
from ..schema.fields import validate_id
from .fsync import FsyncPolicy, sync_directory, write_atomic
from .journal import Position
from .records import Op, Record, checked

__all__ = ["Intent"]

_TOMBSTONE_KEYS = {"op", "id", "was", "sha256"}
_ID_KEYS = {"op", "id", "was"}


@dataclass(frozen=True)
class Intent:
    """What one forget does to the files.

    Attributes:
        receipt: The id of its ``forget`` record.
        edits: ``(position, tombstone line)``: the journal lines it overwrites.
        notes: The notes whose files it deletes.
        records: What it commits, the ``forget`` receipt first.
        proposals: The maintenance proposals whose files it deletes.
    """

    receipt: str
    edits: tuple[tuple[Position, bytes], ...]
    notes: tuple[str, ...]
    records: tuple[Record, ...]
    proposals: tuple[str, ...] = ()

    def write(self, path: Path) -> None:
        """Writes the intent atomically and durably (always synced: the forget starts here)."""
        write_atomic(path, self.to_bytes(), FsyncPolicy.ALWAYS)

    def to_bytes(self) -> bytes:
        """The intent as its file (and a shared home's ``forgets`` row) holds it."""
        body = {
            "receipt": self.receipt,
            "edits": [[p.segment, p.offset, line.decode("ascii")] for p, line in self.edits],
            "notes": list(self.notes),
            "records": list(self.records),
            "proposals": list(self.proposals),
        }
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)

    @classmethod
    def load(cls, path: Path) -> Intent | None:
        """The intent at ``path``, or None when there is none.

        Raises:
            CorruptRecordError: the file is not an intent cuemem wrote (nothing of it is done).
        """
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise CorruptRecordError(f"cannot read the forget intent {path}: {exc}") from None
        return cls.from_bytes(raw, str(path))

    @classmethod
    def from_bytes(cls, raw: bytes, where: str) -> Intent:
        """The intent ``raw`` holds (read from ``where``).

        Raises:
            CorruptRecordError: it is not an intent cuemem wrote (nothing of it is done).
        """
        try:
            body = json.loads(raw)
            edits = tuple((Position(int(s), int(o)), _tombstone(line)) for s, o, line in body["edits"])
            notes = tuple(str(n) for n in body["notes"])
            records = tuple(checked(_record(r)) for r in body["records"])
            proposals = tuple(validate_id(p, "proposal") for p in body.get("proposals", []))
            receipt = body["receipt"]
            if not isinstance(receipt, str) or not records or records[0].get("op") != Op.FORGET.value or records[0].get("id") != receipt:
                raise ValueError("the intent does not start with its receipt")
            # A tombstone may only stand for what the receipt forgets.
            named = {*records[0]["ids"], *records[0]["notes"], *records[0]["approvals"]}
            stray = [json.loads(line)["id"] for _, line in edits if json.loads(line)["id"] not in named]
            if stray:
                raise ValueError(f"tombstones of {stray[:3]} that its receipt does not forget")
        except (SchemaError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CorruptRecordError(f"{where} is not a forget intent cuemem wrote: {exc}") from None
        return cls(receipt, edits, notes, records, proposals)

    @staticmethod
    def clear(path: Path) -> None:
        """Deletes the intent (the forget is complete)."""
        try:
            path.unlink()
        except FileNotFoundError:
            return
        sync_directory(path.parent, FsyncPolicy.ALWAYS)


def _tombstone(line: object) -> bytes:
    if not isinstance(line, str) or not line.endswith("\n"):
        raise ValueError("an edit is one line")
    data = line.encode("ascii")
    record = json.loads(data)
    if not isinstance(record, dict) or set(record) not in (_TOMBSTONE_KEYS, _ID_KEYS) or record["op"] != Op.ERASED.value:
        raise ValueError("an edit writes a tombstone")
    return data


def _record(value: object) -> Record:
    if not isinstance(value, dict) or not isinstance(value.get("op"), str):
        raise ValueError("a record is an object with an op")
    return dict(value)

