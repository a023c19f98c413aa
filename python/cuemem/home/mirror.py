"""``Mirror``: a home directory that mirrors a shared log (:mod:`cuemem.store.upstream`).

A process using a shared home keeps an ordinary home directory as a cache: its journal is a
byte-for-byte prefix of the shared log, so every index, note file and position in it is
what the embedded home would hold for the same records. Nothing else is special: the
same :class:`~cuemem.home.home.Home` reads and writes it, through the same one write path.

- **Open.** :meth:`Mirror.prepare` proves the directory is a prefix of the log (its last
  line is the log's line at that position, the lines before it are those its last save
  fingerprinted (:mod:`.proof`), and its marker file ``.cuemem-cache`` names the same home
  and log); a cache that cannot be proved is emptied and filled again. A
  directory holding a journal but no marker is not a cache (an embedded home, say): it is
  refused, never emptied. Then the home catches up (:meth:`Mirror.pull`).
- **Writes.** A write call holds the log's lock from its first write to its return
  (``Home.check_writable``; the guard's ``on_release`` → :meth:`Mirror.release`),
  catching up first: every decision sees every record before it.
- **Forgets.** An erasing forget's tombstones, intent and records are one transaction of
  the log; a mirror overwrites the same lines and carries the intent out as the home that
  made it did (``index/mirror.json`` counts the forgets carried out; counting again is
  harmless, and a cache filled afresh starts past the forgets its lines already hold).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from ..errors import InvalidArgumentError, ReadOnlyError, SharedHomeError
from ..schema.fields import validate_id
from ..store.fsync import FsyncPolicy, write_atomic
from ..store.journal import Journal, Position, segment_name
from ..store.upstream import Fetched, SharedLog, one_line
from . import proof
from .layout import Layout

__all__ = ["MARKER", "Mirror"]

_log = logging.getLogger("cuemem.home")

STATE = "mirror.json"
#: The file that makes a directory a shared home's cache (what it mirrors).
MARKER = ".cuemem-cache"
#: What a mirror may hold, and so what emptying it removes (nothing else is touched).
_CACHED = ("journal", "index", "notes", "proposals", "MEMORY.md", ".forget.json")


class Mirror:
    """A home directory's link to the shared log it mirrors."""

    def __init__(self, log: SharedLog, *, lock_timeout: float, read_only: bool) -> None:
        #: The shared log.
        self.log = log
        self.lock_timeout = lock_timeout
        #: The handle may not write to the shared home (its mirror is still kept up).
        self.read_only = read_only
        #: The id of the last forget of the log this directory carried out.
        self.forgets = 0
        #: Called first by :meth:`stop` (a follower thread's stop).
        self.on_close: list[Any] = []

    # -- open ------------------------------------------------------------------------

    def prepare(self, layout: Layout) -> None:
        """Proves ``layout``'s directory mirrors the log (or empties it) and sets the log's
        ``seq`` to the mirror's last line.

        Raises:
            InvalidArgumentError: the directory holds a journal and is not a cache.
        """
        marked = (layout.root / MARKER).is_file()
        marker = _read_json(layout.root / MARKER) if marked else None
        journal = layout.journal
        if not marked and journal.is_dir() and any(journal.glob("*.jsonl")):
            raise InvalidArgumentError(
                f"{layout.root} holds a home that is not a shared home's cache; give the shared home another cache directory"
            )
        why = "its marker is not one cuemem wrote" if marked and marker is None else self._unproved(layout, marker)
        if why is not None:
            self.log.seq = 0
            _log.warning("%s: the cache does not mirror %s (%s); filling it again from the shared home", layout.root, self.log.shown, why)
            for name in _CACHED:
                path = layout.root / name
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
        if self.log.seq == 0:
            # A cache filled from nothing takes the log's lines as they are now, tombstones included:
            # the forgets before them are carried out already.
            self.forgets = self.log.heads()[1]
        layout.create()
        write_atomic(layout.root / MARKER, orjson.dumps({"home_id": self.log.home_id, "log": self.log.log}), FsyncPolicy.ALWAYS)
        # A forget of this directory's own that never reached the log never happened; one
        # that did comes back with the log's forgets.
        layout.forget_intent.unlink(missing_ok=True)

    def _unproved(self, layout: Layout, marker: dict[str, Any] | None) -> str | None:
        """Why the directory cannot be proved a prefix of the log (None: it is one)."""
        self.log.seq = 0
        if marker is not None and (marker.get("home_id"), marker.get("log")) != (self.log.home_id, self.log.log):
            return "it mirrors another home or log"
        if not layout.journal.is_dir():
            return None
        journal = Journal(layout.journal)
        head, line = journal.last_line()
        for segment in journal.segments():
            size = _size(journal, segment)
            if segment > head.segment and size == 0:
                (journal.directory / segment_name(segment)).unlink()  # made by a crash before its first line
            elif segment == head.segment and size != head.offset or segment > head.segment:
                return "its journal ends in a torn line"
        if not line:
            return None
        seq = self.log.locate(Position(head.segment, head.offset - len(line)), line)
        if seq is None:
            return "its last journal line is not the shared log's"
        edited = proof.check_saved(layout.index, layout.journal)  # the lines before it, as the cache last saw them
        if edited is not None:
            return f"its journal cannot be proved ({edited})"
        self.log.seq = seq
        state = _read_json(layout.index / STATE)
        forgets = state.get("forgets") if state is not None else 0
        self.forgets = forgets if isinstance(forgets, int) and not isinstance(forgets, bool) and forgets >= 0 else 0
        return None

    # -- catching up -----------------------------------------------------------------

    def pull(self, journal: Journal) -> Fetched:
        """Writes the log's lines beyond the mirror into ``journal``; returns what was read.

        A row someone wrote into the log by hand is hostile like any journal line: one that
        is not a single line is written as one of its length (the applier then skips it as
        invalid and reports it). One whose position does not follow the line before it, or
        whose ``seq`` does not, cannot be mirrored: the lines before it are, then this is a
        ``SharedHomeError`` (reads keep working on the mirror; writes wait until the log is
        mended).
        """
        fetched = self.log.fetch(self.log.seq, self.forgets)
        lines = [(p, one_line(line)) for p, line in fetched.lines]
        good = _following(journal.head(), self.log.seq, fetched.seqs, lines)
        if good:
            journal.place(lines[:good])
            self.log.seq = fetched.seqs[good - 1]
        if good < len(lines) or fetched.broken is not None:
            where = f"seq {fetched.seqs[good]} ({lines[good][0]})" if good < len(lines) else fetched.broken
            raise SharedHomeError(
                f"the shared log {self.log.shown} holds a row cuemem did not write at {where}: it does not follow the line "
                f"before it; the mirror stays at the line before it"
            )
        return fetched

    @staticmethod
    def note_files(records: Iterable[dict[str, Any]]) -> list[tuple[str, bytes]]:
        """The file of each note the records write (its last version among them); a record
        that is not a note cuemem could have written is left to the applier to report."""
        files: dict[str, bytes] = {}
        for record in records:
            if record.get("op") == "note" and isinstance(record.get("markdown"), str):
                try:
                    files[validate_id(record.get("id"), "note")] = record["markdown"].encode("utf-8", "surrogatepass")
                except (InvalidArgumentError, ValueError):
                    continue
        return list(files.items())

    @staticmethod
    def proposal_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The proposal and decision records among the records."""
        return [r for r in records if r.get("op") in ("proposal", "decision") and isinstance(r.get("id"), str)]

    def save(self, layout: Layout, fsync: FsyncPolicy) -> None:
        """Keeps the forgets the directory carried out in ``index/``."""
        write_atomic(layout.index / STATE, orjson.dumps({"forgets": self.forgets}), fsync)

    # -- writing -----------------------------------------------------------------------

    def check(self) -> None:
        """Raises unless this handle may write to the shared home."""
        if self.read_only:
            raise ReadOnlyError(f"this handle of the shared home {self.log.shown} is read-only")

    def release(self) -> None:
        """Lets the next writer in, if this handle holds the lock."""
        if self.log.held:
            self.log.release()

    def stop(self) -> None:
        """Stops what follows the log (before the home closes: nothing catches up meanwhile)."""
        stops, self.on_close = self.on_close, []
        for stop in stops:
            stop()

    def close(self) -> None:
        """Stops what follows the log and lets go of the server."""
        try:
            self.stop()
        finally:
            self.log.close()


def _size(journal: Journal, segment: int) -> int:
    """The size of ``segment`` of ``journal`` (0 when it is missing)."""
    try:
        return (journal.directory / segment_name(segment)).stat().st_size
    except FileNotFoundError:
        return 0


def _following(head: Position, seq: int, seqs: list[int], lines: list[tuple[Position, bytes]]) -> int:
    """How many of ``lines`` follow one another from ``head`` (and ``seq``) as a journal would place them."""
    segment, size = head.segment, head.offset
    for i, ((position, line), number) in enumerate(zip(lines, seqs)):
        if number != seq + i + 1:
            return i
        if position.segment == segment + 1 and position.offset == 0:
            segment, size = position.segment, 0
        elif position != Position(segment, size):
            return i
        size += len(line)
    return len(lines)


def _read_json(path: Path) -> dict[str, Any] | None:
    """A small JSON object cuemem wrote, or None when it is missing or is not one (a hint)."""
    try:
        body = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return body if isinstance(body, dict) else None
