"""``index/notes-seen.json``: what the note store last saw of each note file, kept across sessions.

Each entry is a note file's size, modification time, change time and inode with the
SHA-256 of its bytes and the note's kind and ``generated`` flag
(:class:`~cuemem.store.notes.Seen`). An entry is only ever a hint: a scan relies on it
only while the file's stat is exactly the entry's, and on its digest only where it
equals the journaled one. The file is hostile input like any other (anything unexpected
reads as no entries), and deleting it loses nothing: the next open hashes every note.

Racy entries: a file changed within the file system's timestamp tick after cuemem saw
it keeps its stat. As in git's index, an entry whose modification time is not older
than this file's own is dropped when it is saved, so such a file is hashed again.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import orjson

from ..errors import StorageError
from ..store.fsync import FsyncPolicy, replace_file, sync_directory
from ..store.notes import Seen
from .indexes import clear_foreign

__all__ = ["FILE", "load", "save"]

#: The file's name inside ``home/index``.
FILE = "notes-seen.json"
_VERSION = 1


def save(directory: Path, seen: Mapping[str, Seen], journaled: Mapping[str, tuple[int, str]], fsync: FsyncPolicy) -> None:
    """Keeps the entries of ``seen`` whose digest is the journaled one (id -> (version,
    sha)), leaving out racy ones (see the module docstring).

    Raises:
        StorageError: the file system refused.
    """
    path = directory / FILE
    clear_foreign(path)
    kept = {nid: s for nid, s in seen.items() if nid in journaled and journaled[nid][1] == s.sha256}
    for _ in range(2):  # the second pass drops the entries as new as the first file
        _write(path, kept, fsync)
        try:
            now = os.stat(path).st_mtime_ns
        except OSError:
            return
        racy = [nid for nid, s in kept.items() if s.mtime_ns >= now]
        if not racy:
            break
        for nid in racy:
            del kept[nid]
    sync_directory(directory, fsync)


def _write(path: Path, seen: Mapping[str, Seen], fsync: FsyncPolicy) -> None:
    body = {"version": _VERSION, "notes": {nid: list(s) for nid, s in sorted(seen.items())}}
    try:
        replace_file(path, orjson.dumps(body), fsync)
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot write {path}: {exc.strerror}") from None


def load(directory: Path) -> dict[str, Seen]:
    """The entries kept in ``directory``; none when the file is missing, unreadable or not
    what :func:`save` writes."""
    try:
        body = orjson.loads((directory / FILE).read_bytes())
        if not isinstance(body, dict) or body.get("version") != _VERSION or not isinstance(body.get("notes"), dict):
            return {}
        out: dict[str, Seen] = {}
        for nid, entry in body["notes"].items():
            if not (isinstance(entry, list) and len(entry) == 7 and all(type(v) is int for v in entry[:4])
                    and type(entry[4]) is str and type(entry[5]) is str and type(entry[6]) is bool):
                return {}
            out[nid] = Seen(*entry)
        return out
    except (OSError, ValueError):
        return {}
