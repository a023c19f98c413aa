"""What the index cache was built from: a fingerprint of the journal bytes it covers.

The cache's recipe ties it to the journal's *last* record it applied; a person who
edits a line in the middle of the journal (same length or not) leaves that record
alone. ``index/journal.json`` closes the gap: for every segment up to the cache's
head, its size, modification time and the CRC-32 of the bytes the cache covers (a
checksum against edits and damage, not against forgery: the journal is a file its
owner may change at will, and the point is that the caches follow).

On open, a segment whose size and modification time are as recorded is taken as
unchanged (a stat, nothing read); any other is checksummed again over the covered
bytes, and a difference makes the cache stale. The file is written beside the cache
on every save; the checksum of a segment that only grew is carried on over the new
bytes (CRC-32 resumes) once the bytes the last save covered are checked to be the
same: a person's edit while a writer is open is caught at the next open too. A cache without the file (one saved by an
older version) is trusted as before and gets one at its next save; a file that is
there but unreadable proves nothing, and the cache is rebuilt.

A replay from the start of the journal reads every byte a save would checksum:
:class:`Reading` takes the checksum of the bytes as the replay reads them, after a stat
of every segment, and the save after it takes that for what the last save covered. A
segment still as it was stat is not read again, and one changed since the replay (a
person's edit while the writer that rebuilt is open) is caught as above.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .. import _core
from ..store.fsync import write_atomic
from ..errors import InvalidArgumentError
from ..store.journal import Journal, Position, segment_name
from ..store.regular import HINT_BYTES, read_regular
from .indexes import clear_foreign

__all__ = ["FILE", "Reading", "check", "discard", "drop", "save"]

#: The fingerprint's file name inside ``home/index``.
FILE = "journal.json"
_VERSION = 2


def _covered(journal_dir: Path, head: Position) -> list[tuple[str, int]]:
    """``(segment name, bytes covered)`` of every segment up to ``head``."""
    out = []
    for segment in range(1, head.segment + 1):
        name = segment_name(segment)
        if segment < head.segment:
            try:
                size = (journal_dir / name).stat().st_size
            except FileNotFoundError:
                continue  # a gap in the numbering: nothing there to cover
            out.append((name, size))
        else:
            out.append((name, head.offset))
    return out


def _crc(path: Path, start: int, end: int, crc: int = 0) -> int:
    """The CRC-32 of ``path``'s bytes ``[0, end)``, given ``crc`` of ``[0, start)``."""
    with open(path, "rb") as f:
        f.seek(start)
        left = end - start
        while left > 0:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            crc = _core.crc32(chunk, crc)
            left -= len(chunk)
    return crc


class Reading:
    """The checksums of the journal bytes a replay reads from the start of each segment.

    Made before the replay reads anything: it stats every segment then, so that a change
    to a segment after that (an edit, an append) shows in its stat, and the save checksums
    it again. The replay hands it each run of lines it reads (:meth:`add`), in order.
    """

    __slots__ = ("_directory", "_stats", "_read")

    def __init__(self, journal: Journal) -> None:
        self._directory = journal.directory
        self._stats: dict[int, tuple[int, int]] = {}
        for segment in journal.segments():
            try:
                stat = (self._directory / segment_name(segment)).stat()
            except OSError:
                continue
            self._stats[segment] = (stat.st_size, stat.st_mtime_ns)
        self._read: dict[int, tuple[int, int]] = {}  # segment -> (bytes read from its start, their CRC-32)

    def add(self, segment: int, offset: int, data: bytes) -> None:
        """Takes the bytes of ``segment`` read at ``offset``: they carry on the checksum when
        they follow the bytes read before them, from the start of the segment."""
        read, crc = self._read.get(segment, (0, 0))
        if segment in self._stats and offset == read:
            self._read[segment] = (read + len(data), _core.crc32(data, crc))
        else:
            self._read.pop(segment, None)
            self._stats.pop(segment, None)  # read out of order: nothing of it is vouched for

    def entries(self) -> dict[str, dict[str, int]]:
        """The fingerprint entry of each segment read, as :func:`save` records one."""
        return {
            segment_name(s): {"covered": read, "size": self._stats[s][0], "mtime_ns": self._stats[s][1], "crc32": crc}
            for s, (read, crc) in self._read.items()
        }


class _Unreadable(Exception):
    """The fingerprint file is there but is not one (or marks the cache stale)."""

    def __init__(self, why: str, *, stale: bool = False) -> None:
        super().__init__(why)
        self.stale = stale


def _read(index_dir: Path) -> dict[str, Any] | None:
    """The saved fingerprint, or None when there is none.

    Raises:
        _Unreadable: a file is there that is not a fingerprint.
    """
    try:
        body = json.loads(read_regular(index_dir / FILE, HINT_BYTES).decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise _Unreadable(str(exc)) from None
    if isinstance(body, dict) and isinstance(body.get("stale"), str):
        raise _Unreadable(body["stale"], stale=True)
    if not isinstance(body, dict) or body.get("version") != _VERSION or not isinstance(body.get("segments"), dict):
        raise _Unreadable("not a journal fingerprint")
    return body


def discard(index_dir: Path) -> None:
    """Forgets the fingerprint (the cache is being rebuilt: its checksums cannot be carried on)."""
    try:
        (index_dir / FILE).unlink()
    except FileNotFoundError:
        pass
    except OSError:
        clear_foreign(index_dir / FILE)


def drop(index_dir: Path, segments: set[int]) -> None:
    """Forgets the checksums of ``segments`` (a forget overwrote lines in them): the next
    save checksums them afresh, and only them."""
    if not segments:
        return
    try:
        body = _read(index_dir)
    except _Unreadable:
        return
    if body is None:
        return
    names = {segment_name(s) for s in segments}
    body["segments"] = {k: v for k, v in body["segments"].items() if k not in names}
    _write(index_dir, body)


def save(index_dir: Path, journal: Journal, head: Position, reading: Reading | None = None) -> None:
    """Writes the fingerprint of the journal bytes up to ``head`` (the cache's head).

    With ``reading`` (the replay the cache was built by), what the replay read of a
    segment stands for what the last save covered: still as it was stat, it is not read
    again; grown, the bytes the replay read are checked to be the same.

    Raises:
        StorageError: the file cannot be written.
    """
    try:
        known = (_read(index_dir) or {}).get("segments", {})
    except _Unreadable as exc:
        if exc.stale:
            return  # the cache was found stale: only a rebuild (which discards this) may vouch for it again
        known = {}
    read = reading.entries() if reading is not None else {}
    segments: dict[str, Any] = {}
    for name, length in _covered(journal.directory, head):
        path = journal.directory / name
        try:
            stat = path.stat()
        except OSError:
            continue
        old = _entry(read.get(name, known.get(name)))  # what the replay read, else what the last save covered
        if old is not None and old["covered"] == length and (old.get("size"), old.get("mtime_ns")) == (stat.st_size, stat.st_mtime_ns):
            crc = old["crc32"]  # untouched since the last save
        elif old is not None and 0 <= old["covered"] <= length:
            # Grown since: the bytes the last save covered must still be those; then carry on over the rest.
            before = _crc(path, 0, old["covered"])
            if before != old["crc32"]:
                _write(index_dir, {"version": _VERSION, "stale": f"journal segment {name} changed while a writer had it open"})
                return
            crc = _crc(path, old["covered"], length, before)
        else:
            crc = _crc(path, 0, length)
        segments[name] = {"covered": length, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "crc32": crc}
    _write(index_dir, {"version": _VERSION, "head": [head.segment, head.offset], "segments": segments})


def _entry(entry: object) -> Mapping[str, Any] | None:
    """A segment's entry of a fingerprint, if it has the shape one is written with (what it
    covers and its checksum, integers): a damaged one vouches for nothing."""
    if isinstance(entry, Mapping) and type(entry.get("covered")) is int and type(entry.get("crc32")) is int:
        return entry
    return None


def _write(index_dir: Path, body: Mapping[str, Any]) -> None:
    write_atomic(index_dir / FILE, (json.dumps(body, indent=1, sort_keys=True) + "\n").encode())


def check(index_dir: Path, journal_dir: Path, head: Position) -> str | None:
    """Why the journal bytes up to ``head`` differ from those the cache was built from,
    or None when they are the same (or when no fingerprint was ever saved)."""
    try:
        body = _read(index_dir)
    except _Unreadable as exc:
        return f"the journal fingerprint is unreadable ({exc})"
    if body is None:
        return None
    if body.get("head") != [head.segment, head.offset]:
        return "the journal fingerprint is of another cache"
    recorded = body["segments"]
    present = {name for name, _ in _covered(journal_dir, head)}
    gone = sorted(set(recorded) - present)
    if gone:
        return f"journal segment {gone[0]} is gone"
    for name, length in _covered(journal_dir, head):
        entry = _entry(recorded.get(name))
        if entry is None or entry["covered"] != length:
            return f"the journal fingerprint does not cover {name}"
        path = journal_dir / name
        try:
            stat = os.stat(path)
        except OSError:
            return f"journal segment {name} is gone"
        if stat.st_size < length:
            return f"journal segment {name} is shorter than the cache"
        if stat.st_size == entry.get("size") and stat.st_mtime_ns == entry.get("mtime_ns"):
            continue
        try:
            if _crc(path, 0, length) != entry.get("crc32"):
                return f"journal segment {name} changed under the cache"
        except OSError:
            return f"journal segment {name} cannot be read"
    return None


def check_saved(index_dir: Path, journal_dir: Path) -> str | None:
    """Why the journal bytes the saved fingerprint covers are not those it was made from —
    or that no fingerprint is there to tell (a shared home's cache proves itself by it)."""
    try:
        body = _read(index_dir)
    except _Unreadable as exc:
        return f"the journal fingerprint is unreadable ({exc})"
    if body is None:
        return "no journal fingerprint"
    head = body.get("head")
    try:
        position = Position(*head) if isinstance(head, list) and len(head) == 2 else None
    except (InvalidArgumentError, TypeError):
        position = None
    if position is None:
        return "the journal fingerprint names no head"
    return check(index_dir, journal_dir, position)
