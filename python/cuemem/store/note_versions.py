"""Note versioning: which note versions a write makes, a person's pending edit kept first.

A note's file is truth a person may edit. Each journaled version records the SHA-256
of the file it wrote; a file that no longer hashes to it holds a person's edit. Before
the agent writes a new version over such a file, the edit is kept as a version of its
own (origin ``user``), so nobody's words are lost. Pure functions of the note store
and the journaled versions; the caller commits the notes they return.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from ..errors import CuememError
from ..schema import Note
from .notes import NoteScan

__all__ = ["NoteReader", "next_versions", "synced_versions"]


class NoteReader(Protocol):
    """Reading a home's note files (what versioning needs of them)."""

    def read(self, id: str) -> Note: ...

    def fingerprint(self, id: str) -> str: ...

    def scan(self, known: Mapping[str, str] | None = None) -> NoteScan: ...

#: Note id -> (latest journaled version, sha256 of its file as journaled).
Known = Mapping[str, tuple[int, str]]


def next_versions(store: NoteReader, known: Known, fields: Mapping[str, Any], at: datetime) -> list[Note]:
    """The notes that write ``fields`` (``Note.create``'s keywords, ``id`` among them) as
    the next version of its note: a person's pending edit first, if any, then the new one.

    Raises:
        SchemaError, InvalidIdError: a field breaks the note schema (nothing to write).
    """
    nid = fields.get("id")
    out: list[Note] = []
    version = known[nid][0] if isinstance(nid, str) and nid in known else 0
    if isinstance(nid, str) and nid in known:
        edited = _pending_edit(store, nid, known[nid][1])
        if edited is not None:
            version += 1
            out.append(Note.create(**{**edited.fields(), "version": version, "origin": "user", "recorded_at": at}))
    out.append(Note.create(**{**fields, "recorded_at": at, "version": version + 1}))
    return out


def synced_versions(scan: NoteScan, known: Known, at: datetime) -> list[Note]:
    """Each changed file of ``scan`` (a scan of files differing from ``known``) as the next
    version of its note, origin ``user``, the person's text kept as written."""
    return [
        Note.create(**{**note.fields(), "version": known.get(note.id, (0, ""))[0] + 1, "origin": "user", "recorded_at": at})
        for note in scan.notes
    ]


def _pending_edit(store: NoteReader, id: str, journaled_sha: str) -> Note | None:
    """The file of note ``id`` if a person changed it since its journaled version."""
    try:
        if store.fingerprint(id) == journaled_sha:
            return None
        return store.read(id)
    except CuememError:
        return None  # gone (the journal holds every version) or unreadable (left for sync to report)
