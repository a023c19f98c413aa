"""``Mirror``: a home directory that mirrors a shared log (:mod:`cuemem.store.upstream`).

A process using a shared home keeps an ordinary home directory as a cache: its journal is a
byte-for-byte prefix of the shared log, so every index, note file and position in it is
what the embedded home would hold for the same records. Nothing else is special: the
same :class:`~cuemem.home.home.Home` reads and writes it, through the same one write path.

- **Open.** :meth:`Mirror.prepare` proves the directory is a prefix of the log (its last
  line is the log's line at that position, and ``index/mirror.json`` names the same home
  and log); a directory that cannot be proved is emptied and filled again. Then the home
  catches up (:meth:`Mirror.pull`).
- **Writes.** A write call holds the log's lock from its first write to its return
  (``Home.check_writable`` → :meth:`Mirror.enter`; the guard's ``on_release`` →
  :meth:`Mirror.release`), catching up first: every decision sees every record before it.
- **Forgets.** An erasing forget's intent is kept in the log beside its tombstones; a
  mirror overwrites the same lines and carries the intent out as the home that made it did
  (``index/mirror.json`` counts the forgets carried out; counting again is harmless).
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

import orjson

from ..errors import ReadOnlyError, SharedHomeError
from ..store.fsync import FsyncPolicy, write_atomic
from ..store.journal import Journal, Position, segment_name
from ..store.upstream import Fetched, SharedLog
from .layout import Layout

__all__ = ["Mirror"]

_log = logging.getLogger("cuemem.home")

STATE = "mirror.json"
#: What a mirror may hold, and so what emptying it removes (nothing else is touched).
_CACHED = ("journal", "index", "notes", "proposals", "MEMORY.md", ".forget.json")
_NOTE, _PROPOSAL, _DECISION = b'"op":"note"', b'"op":"proposal"', b'"op":"decision"'


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
        #: Why :meth:`prepare` emptied the directory, if it did.
        self.emptied: str | None = None
        #: Called by :meth:`close` (a follower thread's stop).
        self.on_close: list[Any] = []

    # -- open ------------------------------------------------------------------------

    def prepare(self, layout: Layout) -> None:
        """Proves ``layout``'s directory mirrors the log (or empties it) and sets the log's
        ``seq`` to the mirror's last line."""
        why = self._unproved(layout)
        if why is not None:
            self.emptied = why
            _log.warning("%s: the cache does not mirror %s (%s); filling it again from the shared home", layout.root, self.log.shown, why)
            for name in _CACHED:
                path = layout.root / name
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
            layout.create()
            self.log.seq = 0
            self.forgets = 0
        # A forget of this directory's own that never reached the log never happened; one
        # that did comes back with the log's forgets.
        layout.forget_intent.unlink(missing_ok=True)

    def _unproved(self, layout: Layout) -> str | None:
        """Why the directory cannot be proved a prefix of the log (None: it is one)."""
        state = _read_state(layout.index / STATE)
        if state is not None and (state.get("home_id"), state.get("log")) != (self.log.home_id, self.log.log):
            return "it mirrors another home or log"
        journal = Journal(layout.journal) if layout.journal.is_dir() else None
        head, line = journal.last_line() if journal is not None else (Position.start(), b"")
        if journal is not None and _size(journal, journal.segments()[-1] if journal.segments() else head.segment) != head.offset:
            return "its journal ends in a torn line"
        if not line:
            self.log.seq = 0
            return None
        seq = self.log.locate(Position(head.segment, head.offset - len(line)), line)
        if seq is None:
            return "its last journal line is not the shared log's"
        self.log.seq = seq
        forgets = state.get("forgets") if state is not None else 0
        self.forgets = forgets if isinstance(forgets, int) and not isinstance(forgets, bool) and forgets >= 0 else 0
        return None

    # -- catching up -----------------------------------------------------------------

    def pull(self, journal: Journal) -> Fetched:
        """Writes the log's lines beyond the mirror into ``journal``; returns what was read.

        A row someone wrote into the log by hand is hostile like any journal line: one that
        is not a single line is written as one of its length (the applier then skips it as
        invalid and reports it). One whose position does not follow the line before it
        cannot be mirrored: the lines before it are, then this is a ``SharedHomeError``
        (reads keep working on the mirror; writes wait until the log is mended).
        """
        fetched = self.log.fetch(self.log.seq, self.forgets)
        lines = [(p, _one_line(line)) for p, line in fetched.lines]
        good = _following(journal.head(), lines)
        if good:
            journal.place(lines[:good])
            self.log.seq = fetched.after + good
        if good < len(lines):
            position = lines[good][0]
            raise SharedHomeError(
                f"the shared log {self.log.shown} holds a row cuemem did not write at seq {fetched.after + good + 1} ({position}): "
                f"its position does not follow the line before it; the mirror stays at the line before it"
            )
        return Fetched(fetched.after, lines, fetched.forgets)

    @staticmethod
    def note_files(lines: list[tuple[Position, bytes]]) -> list[tuple[str, bytes]]:
        """The file of each note the lines write (its last version among them)."""
        files: dict[str, bytes] = {}
        for _, line in lines:
            if _NOTE in line:
                record = orjson.loads(line)
                if isinstance(record, dict) and record.get("op") == "note" and isinstance(record.get("markdown"), str):
                    files[str(record["id"])] = record["markdown"].encode("utf-8")
        return list(files.items())

    @staticmethod
    def proposal_records(lines: list[tuple[Position, bytes]]) -> list[dict[str, Any]]:
        """The proposal and decision records among the lines."""
        out = []
        for _, line in lines:
            if _PROPOSAL in line or _DECISION in line:
                record = orjson.loads(line)
                if isinstance(record, dict) and record.get("op") in ("proposal", "decision") and "id" in record:
                    out.append(record)
        return out

    def save(self, layout: Layout, fsync: FsyncPolicy) -> None:
        """Keeps what the directory mirrors, and its forgets carried out, in ``index/``."""
        body = {"home_id": self.log.home_id, "log": self.log.log, "forgets": self.forgets}
        write_atomic(layout.index / STATE, orjson.dumps(body, option=orjson.OPT_SORT_KEYS), fsync)

    # -- writing -----------------------------------------------------------------------

    def check(self) -> None:
        """Raises unless this handle may write to the shared home."""
        if self.read_only:
            raise ReadOnlyError(f"this handle of the shared home {self.log.shown} is read-only")

    def release(self) -> None:
        """Lets the next writer in, if this handle holds the lock."""
        if self.log.held:
            self.log.release()

    def close(self) -> None:
        """Stops what follows the log and lets go of the server."""
        try:
            for stop in self.on_close:
                stop()
        finally:
            self.log.close()


def _one_line(line: bytes) -> bytes:
    """``line`` as one ``\n``-terminated line of its length (a hand-written row may not be one)."""
    if line.endswith(b"\n") and b"\n" not in line[:-1]:
        return line
    body = line[:-1].replace(b"\n", b" ") if line else b""
    return body + b"\n"


def _following(head: Position, lines: list[tuple[Position, bytes]]) -> int:
    """How many of ``lines`` follow one another from ``head`` as a journal would place them."""
    segment, size = head.segment, head.offset
    for i, (position, line) in enumerate(lines):
        if position.segment == segment + 1 and position.offset == 0:
            segment, size = position.segment, 0
        elif position != Position(segment, size) or not line:
            return i
        size += len(line)
    return len(lines)


def _size(journal: Journal, segment: int) -> int:
    """The size of ``segment`` of ``journal`` (0 when it is missing)."""
    try:
        return (journal.directory / segment_name(segment)).stat().st_size
    except FileNotFoundError:
        return 0


def _read_state(path: Path) -> dict[str, Any] | None:
    """``index/mirror.json``, or None when it is missing or not one cuemem wrote (a hint)."""
    try:
        body = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return body if isinstance(body, dict) else None
