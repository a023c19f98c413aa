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
from typing import cast

import orjson

from ..errors import StorageError
from ..store.fsync import FsyncPolicy, replace_file, sync_directory
from ..store.notes import SeenRow
from ..store.regular import HINT_BYTES, read_regular
from .indexes import clear_foreign, typed_rows

__all__ = ["FILE", "load", "save"]

#: The file's name inside ``home/index``.
FILE = "notes-seen.json"
_VERSION = 1
#: The types of a :class:`~cuemem.store.notes.Seen`'s fields, exactly (a bool is no size).
_TYPES = (int, int, int, int, str, str, bool)


def save(directory: Path, seen: Mapping[str, SeenRow], journaled: Mapping[str, tuple[int, str]], fsync: FsyncPolicy) -> None:
    """Keeps the entries of ``seen`` whose digest is the journaled one (id -> (version,
    sha)), leaving out racy ones (see the module docstring).

    Raises:
        StorageError: the file system refused.
    """
    kept = {nid: list(s) for nid, s in seen.items() if nid in journaled and journaled[nid][1] == s[4]}
    save_stats(directory / FILE, kept, fsync)


def save_stats(path: Path, entries: Mapping[str, list[object]], fsync: FsyncPolicy) -> None:
    """Writes ``entries`` (name -> a list whose second item is a modification time in ns)
    to ``path``, without the racy ones (as new as the file written): also the proposal
    files' (:mod:`.proposalfiles`).

    Raises:
        StorageError: the file system refused.
    """
    clear_foreign(path)
    kept = dict(entries)
    for _ in range(2):  # the second pass drops the entries as new as the first file
        _write(path, kept, fsync)
        try:
            now = os.stat(path).st_mtime_ns
        except OSError:
            return
        racy = [name for name, e in kept.items() if not isinstance(e[1], int) or e[1] >= now]
        if not racy:
            break
        for name in racy:
            del kept[name]
    sync_directory(path.parent, fsync)


def _write(path: Path, entries: Mapping[str, list[object]], fsync: FsyncPolicy) -> None:
    body = {"version": _VERSION, "notes": dict(sorted(entries.items()))}
    try:
        replace_file(path, orjson.dumps(body), fsync)
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot write {path}: {exc.strerror}") from None


def load_stats(path: Path) -> dict[str, list[object]]:
    """The entries :func:`save_stats` wrote to ``path`` (unchecked lists); none when the
    file is missing, unreadable or of another shape."""
    try:
        body = orjson.loads(read_regular(path, HINT_BYTES))
    except (OSError, ValueError):
        return {}
    if not isinstance(body, dict) or body.get("version") != _VERSION or not isinstance(body.get("notes"), dict):
        return {}
    entries = body["notes"]
    return entries if all(isinstance(e, list) for e in entries.values()) else {}


def load(directory: Path) -> dict[str, SeenRow]:
    """The entries kept in ``directory``; none when the file is missing, unreadable or not
    what :func:`save` writes."""
    entries = load_stats(directory / FILE)
    rows = typed_rows(entries.values(), _TYPES)
    return {} if rows is None else dict(zip(entries, cast(list[SeenRow], rows)))
