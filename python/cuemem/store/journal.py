"""The journal: the home's append-only truth, one JSON record per line.

On disk a journal is a directory of segments ``000001.jsonl``, ``000002.jsonl``, ...;
each line is one record serialized as
``json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True)`` in
UTF-8 and terminated by ``\\n``. **A record is committed iff its line ends with**
``\\n``. Committed bytes are never rewritten or truncated, with one exception:
:meth:`Journal.overwrite`, by which ``forget`` replaces a committed line with a
tombstone of exactly its length, so no position moves.

Positions. A :class:`Position` ``(segment, offset)`` is the byte offset where a line
starts; positions are totally ordered in journal order. :meth:`Journal.head` is the
position just after the last committed line.

Damage. A line that is not UTF-8 JSON holding an object is *invalid*; a last line with
no ``\\n`` is *torn* (a crash mid-write, or a write still in progress). Reads skip both
and record a :class:`Problem`; they never raise for them. Opening a journal writable
*seals* a torn tail by appending ``\\n``: the fragment becomes an invalid line that
reads skip, and new records start on a fresh line.

Durability. See :mod:`cuemem.store.fsync`: under ``FsyncPolicy.ALWAYS`` an append is on
disk when :meth:`Journal.append` returns. A batch is one grouped commit but not atomic:
after a crash during an append, a prefix of its records may be committed (none of them
was acknowledged).

Concurrency. One writer per home (the caller holds the home's
:class:`~cuemem.store.lock.WriterLock`); any number of readers in other processes, who
catch up exactly with::

    last = Position.start()
    while running:
        stop = journal.head()
        for entry in journal.read(last, stop):
            handle(entry.record)
        last = stop

Reading up to a ``stop`` taken from :meth:`Journal.head` before the read sees every
committed record exactly once, never a line still being written. Resuming from the last
entry's :attr:`Entry.end` is exact too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from .. import _scalars
from ..errors import (
    CorruptRecordError,
    CueTypeError,
    InvalidArgumentError,
    NotFoundError,
    ReadOnlyError,
    SchemaError,
    StorageError,
)
from .groupsync import WINDOW, GroupSyncLike, group_sync
from .fsync import FsyncPolicy, sync, sync_directory
from .position import Position
from .records import Encoded
from .upstream import Upstream, is_one_line

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["MAX_SEGMENT", "Entry", "Journal", "Position", "Problem", "ProblemKind", "Run", "Stage", "encode", "line_of", "lines_holding", "segment_name"]

#: How much of a segment :meth:`Journal.runs` reads at a time.
RUN_BYTES = 8 << 20
#: The least its buffer holds (more lines may land while it reads).
MIN_RUN_BUFFER = 64 << 10

_SEGMENT_RE = re.compile(r"^([0-9]{6,})\.jsonl$")
#: The largest segment number: a ``<digits>.jsonl`` numbered past it is not a segment (the index keeps a
#: position's segment in a fixed-width column; so many segments of 64 MiB are more bytes than any disk holds).
MAX_SEGMENT = 2**32 - 1
_NEWLINE = b"\n"
_BLOCK = 1 << 16


@dataclass(frozen=True)
class Entry:
    """A committed record as read: where its line starts, the record, where it ends."""

    position: Position
    record: dict[str, Any]
    end: Position


@dataclass(frozen=True)
class Run:
    """Whole committed lines of one segment, read in one piece: they start at ``offset``."""

    segment: int
    offset: int
    data: bytes


class ProblemKind(str, Enum):
    """What is wrong with a skipped line."""

    TORN = "torn"
    INVALID = "invalid"


@dataclass(frozen=True)
class Problem:
    """A line a read skipped: where it starts, why, and a human-readable detail."""

    position: Position
    kind: ProblemKind
    detail: str


def segment_name(segment: int) -> str:
    """The file name of segment number ``segment`` (``000001.jsonl``)."""
    return f"{segment:06d}.jsonl"


class Journal:
    """An append-only directory of JSONL segments.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as home:
        ...     with Journal(Path(home) / "journal", writable=True) as journal:
        ...         first, _ = journal.append([{"id": "a"}, {"id": "b"}])
        ...         journal.read_at(first), [e.record["id"] for e in journal.read()]
        ({'id': 'a'}, ['a', 'b'])

    Args:
        directory: the journal directory; created (with parents) when ``writable``.
        segment_bytes: a segment is closed before a record would make it larger than
            this; a record larger than this gets a segment of its own.
        fsync: the durability policy for appends (see :mod:`cuemem.store.fsync`).
        writable: whether this handle may append. The caller must hold the home's
            writer lock: two writable handles on one directory corrupt rotation. A
            handle is not thread-safe; threads sharing one must serialize appends.
        upstream: the shared log this journal mirrors (:mod:`cuemem.store.upstream`):
            each append and each staged segment is committed there first.

    Raises:
        InvalidArgumentError: ``segment_bytes`` < 1 or an unknown ``fsync`` policy.
        StorageError: the directory is missing (read-only), is not a directory, or
            cannot be created, opened or sealed.
    """

    __slots__ = (
        "_directory",
        "_head",
        "_fd",
        "_fsync",
        "_group",
        "_owed",
        "_needs_seal",
        "_problems",
        "_segment",
        "_segment_bytes",
        "_size",
        "_upstream",
        "_writer",
    )

    def __init__(
        self,
        directory: Path,
        *,
        segment_bytes: int = 64 << 20,
        fsync: FsyncPolicy = FsyncPolicy.ALWAYS,
        writable: bool = False,
        upstream: Upstream | None = None,
    ) -> None:
        segment = _scalars.as_int(segment_bytes)
        if segment is None or segment < 1:
            raise InvalidArgumentError(f"segment_bytes must be an int >= 1, got {segment_bytes!r}")
        try:
            policy = FsyncPolicy(fsync)
        except ValueError:
            raise InvalidArgumentError(f"unknown fsync policy {fsync!r}") from None
        self._directory = Path(directory)
        self._segment_bytes = segment  # a Python int (numpy's integer taken as one)
        self._fsync = policy
        self._problems: dict[Position, Problem] = {}
        self._fd: int | None = None
        self._segment = 1
        self._size = 0
        self._needs_seal = False
        self._writer = False
        self._upstream = upstream
        #: Syncs the appends: under ``fsync="always"`` one sync for every append waiting at once,
        #: under ``"interval"`` one for every append of its window (None under ``"never"``).
        self._group: GroupSyncLike | None = None
        if writable and policy is not FsyncPolicy.NEVER:
            self._group = group_sync(WINDOW if policy is FsyncPolicy.INTERVAL else 0.0)
        #: The ticket of the last append's bytes (0: none, or nothing to wait for), for :meth:`wait_synced`.
        self._owed = 0
        #: The writer's own head after its last append (it alone appends: the lock).
        self._head: Position | None = None
        if writable:
            self._create_directory()
            self._open_tail()
        elif not self._directory.is_dir():
            raise StorageError(f"journal directory {self._directory} does not exist")

    # -- properties --------------------------------------------------------------

    @property
    def directory(self) -> Path:
        """The journal directory."""
        return self._directory

    @property
    def writable(self) -> bool:
        """Whether this handle may append (false for readers and after :meth:`close`)."""
        return self._writer

    @property
    def fsync(self) -> FsyncPolicy:
        """The durability policy appends follow."""
        return self._fsync

    @property
    def problems(self) -> list[Problem]:
        """Lines skipped by reads so far (one per position, latest verdict), in journal order.

        A line reported torn while a writer was still writing it is dropped from this
        list once a later read finds it committed and valid.
        """
        return [self._problems[p] for p in sorted(self._problems)]

    # -- writing -----------------------------------------------------------------

    def append(self, records: Sequence[Mapping[str, Any]], *, trusted: bool = False, defer: bool = False) -> list[Position]:
        """Appends ``records`` in order as one grouped commit; returns where each starts.

        Every record is serialized before anything is written, so a bad record leaves
        the journal untouched. Under ``FsyncPolicy.ALWAYS`` the records are on disk when
        this returns — unless ``defer``: then they are written, and on disk once
        :meth:`wait_synced` of :attr:`owed` returns (group commit: a caller lets other
        writers append while it waits, and one sync serves them all).

        Args:
            records: JSON-serializable mappings with string keys (tuples come back as
                lists; NaN and infinities are refused).
            trusted: the records come from cuemem's own schema (``to_json``), whose keys
                are strings by construction: skip the walk that checks every key.
            defer: under ``ALWAYS``, return before the sync; the caller must
                :meth:`wait_synced` before it acknowledges the write. A mirrored
                journal (``upstream``) defers as well: the upstream holds the lines
                first; a failed write of them rewinds the journal, a failed deferred
                sync refuses every later append (the next open proves the cache).

        Raises:
            ReadOnlyError: the journal was opened read-only or has been closed.
            CueTypeError: ``records`` is a single mapping or string, not a sequence.
            SchemaError: a record is not a mapping, has a non-string key, or holds a
                value JSON cannot represent; ``field`` names the record's index.
            StorageError: the file system refused the write or the fsync; a prefix of
                the batch may have been written. The next append first seals any
                partial line, so later records never merge with it.
        """
        if not self._writer:
            raise ReadOnlyError(f"journal {self._directory} is not open for writing")
        return self.append_lines(encode(records, trusted=trusted), defer=defer)

    def append_lines(self, lines: Sequence[bytes], *, defer: bool = False) -> list[Position]:
        """Appends lines :func:`encode` made, as :meth:`append` appends records (the caller
        keeps the bytes: a live write hands them to the core's decoder).

        Raises:
            ReadOnlyError: the journal was opened read-only or has been closed.
            StorageError: as :meth:`append`.
        """
        if not self._writer:
            raise ReadOnlyError(f"journal {self._directory} is not open for writing")
        if not lines:
            return []
        if self._group is not None:
            self._group.check()  # after a failed sync not a byte more
        if self._needs_seal:
            self._seal()
        # Where each line goes: a line that would overflow the segment starts the next one.
        placed: list[tuple[Position, bytes]] = []
        segment, size = self._segment, self._size
        for line in lines:
            if size > 0 and size + len(line) > self._segment_bytes:
                segment, size = segment + 1, 0
            placed.append((Position(segment, size), line))
            size += len(line)
        if self._upstream is None:
            self._write_placed(placed)
            if not defer:
                self.wait_synced(self._owed)
            return [p for p, _ in placed]
        before = (self._segment, self._size)
        self._upstream.publish(placed)  # the truth first; these files mirror it
        try:
            self._write_placed(placed)
            if not defer:
                self.wait_synced(self._owed)  # a failure here rewinds the cache (a deferred sync's fails the handle's later appends)
        except BaseException as exc:
            # The lines are committed upstream: this journal goes back to where it was (never a
            # sealed fragment that would shift every later position) and takes them again later.
            self._rewind(*before)
            self._upstream.unplace(len(placed))
            if isinstance(exc, Exception):
                raise StorageError(
                    getattr(exc, "errno", None) or 0,
                    f"committed to the shared home, but this cache could not write it ({exc}); it catches up at the next call",
                ) from exc
            raise
        return [p for p, _ in placed]

    @property
    def owed(self) -> int:
        """The sync ticket of the last append (0: nothing to wait for); see :meth:`wait_synced`."""
        return self._owed

    def wait_synced(self, ticket: int) -> None:
        """Returns once the append that got ``ticket`` is on disk (under ``ALWAYS``; at once otherwise).

        Raises:
            StorageError: its sync failed, or an earlier one did (the handle writes no more).
        """
        if self._group is not None and ticket:
            self._group.wait(ticket)

    def _settle(self) -> None:
        """Syncs what waits for a sync, before the open segment's descriptor is closed."""
        if self._group is not None:
            self._group.flush()

    def _rewind(self, segment: int, size: int) -> None:
        """Cuts the journal back to ``(segment, size)`` (a mirror whose write failed midway)."""
        try:
            self._settle()
        except StorageError:
            pass  # the lines past ``size`` are cut; a failed sync already refuses later appends
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        try:
            for later in [n for n in self.segments() if n > segment]:
                self._path(later).unlink()
            if self._path(segment).exists():
                os.truncate(self._path(segment), size)
                self._fd = self._open_segment(segment, create=False)
        except OSError:
            self._needs_seal = True  # the next open proves the cache, or fills it again
            return
        self._segment, self._size, self._needs_seal = segment, size, False
        self._head = Position(segment, size)

    def place(self, lines: Sequence[tuple[Position, bytes]], *, defer: bool = False) -> None:
        """Writes lines another process committed to this journal's upstream, each at
        its position: the head, or the start of a later segment (a mirror's catch-up).
        One sync for the batch (``defer``: the caller waits for it, :meth:`wait_synced` of
        :attr:`owed`).

        Raises:
            ReadOnlyError: the journal is not open for writing.
            InvalidArgumentError: a line is not one ``\n``-terminated line, or its
                position is not where this journal would put it (the mirror diverged).
            StorageError: the file system refused; a prefix may have been written.
        """
        end = self._ready_to_place()
        for position, line in lines:
            end = _placed_end(end, position, line, "line", "one line", is_one_line)
        self._write_placed(lines)
        if not defer:
            self.wait_synced(self._owed)

    @contextmanager
    def placing(self) -> Iterator[Callable[[Position, bytes], None]]:
        """Writes runs of whole lines another process committed (a mirror's long catch-up,
        whose lines its shared log checked in bulk) as they are handed to the function this
        yields: each run is checked at once — at the head or the start of a later segment,
        after the run before, within one segment — and written by a writer thread in order, so
        that the caller's next fetch overlaps this run's write. When the block ends, even by an
        exception, every run handed over is written (or a write failed) and one sync covers them all.

        The caller touches this journal only through the function while the block runs.

        Raises:
            ReadOnlyError: the journal is not open for writing.
            InvalidArgumentError: (from the function) a run does not end a line, or does not
                follow; the runs before it are written.
            StorageError: the file system refused; a prefix may have been written. Raised
                from the function once a write has failed, and at the end of the block.
        """
        writer = _RunWriter(self)
        try:
            yield writer.place
        finally:
            writer.finish()
            if writer.started:
                self.wait_synced(self._owed)  # however the block ended: the runs written are the mirror's

    def _write_run(self, position: Position, data: bytes) -> None:
        """Writes a run :meth:`placing` checked (on its writer thread)."""
        if position.segment != self._segment:
            self._rotate(position.segment)
        self._write(data)
        self._head = Position(self._segment, self._size)

    def _ready_to_place(self) -> Position:
        """Where the bytes of the journal end, once it is known to take lines another process
        committed (:meth:`place`, :meth:`placing`): writable, a torn tail sealed, no sync failed.

        Raises:
            ReadOnlyError: the journal is not open for writing. StorageError: an earlier sync failed.
        """
        if not self._writer:
            raise ReadOnlyError(f"journal {self._directory} is not open for writing")
        if self._needs_seal:
            self._seal()
        if self._group is not None:
            self._group.check()
        return Position(self._segment, self._size)

    def _write_placed(self, placed: Sequence[tuple[Position, bytes]]) -> None:
        """Writes lines whose positions were checked: one write per segment."""
        batch = bytearray()
        for position, line in placed:
            if position.segment != self._segment:
                self._write(batch)
                batch.clear()
                self._rotate(position.segment)
            batch += line
        self._write(batch)
        self._head = Position(self._segment, self._size)

    def overwrite(self, edits: Sequence[tuple[Position, bytes]]) -> None:
        """Replaces committed lines in place, each with a line of exactly its length, and
        syncs every segment touched (whatever the fsync policy: an erasure is never left
        to chance). Idempotent: running the same edits again changes nothing more.

        This is the one exception to append-only, and only ``forget`` uses it: a
        tombstone (:func:`cuemem.store.records.erased`) over an erased record. A crash
        midway leaves some lines replaced; the caller's intent file redoes them.

        Raises:
            ReadOnlyError: the journal is not open for writing.
            InvalidArgumentError: a position is not the start of a committed line, or a
                new line is not of that line's length or does not end with ``\\n``.
            StorageError: a segment cannot be read, written or synced.
        """
        if not self._writer:
            raise ReadOnlyError(f"journal {self._directory} is not open for writing")
        by_segment: dict[int, list[tuple[Position, bytes]]] = {}
        for position, line in edits:
            if not isinstance(position, Position) or not isinstance(line, bytes) or not line.endswith(_NEWLINE) or _NEWLINE in line[:-1]:
                raise InvalidArgumentError(f"an overwrite is a Position and one line of bytes, got {position!r}")
            by_segment.setdefault(position.segment, []).append((position, line))
        for segment, changes in sorted(by_segment.items()):
            path = self._path(segment)
            try:
                fd = os.open(path, os.O_RDWR)
            except OSError as exc:
                raise StorageError(exc.errno or 0, f"cannot open {path} to erase: {exc.strerror}") from None
            try:
                for position, line in changes:
                    if position.offset > 0 and _read_at(fd, 1, position.offset - 1) != _NEWLINE:
                        raise InvalidArgumentError(f"{position} is not the start of a line")
                    old = _read_at(fd, len(line), position.offset)
                    if len(old) != len(line) or not old.endswith(_NEWLINE) or _NEWLINE in old[:-1]:
                        raise InvalidArgumentError(f"the line at {position} is not {len(line)} bytes long")
                    if old != line:
                        os.lseek(fd, position.offset, os.SEEK_SET)
                        _write_all(fd, line)
                sync(fd, FsyncPolicy.ALWAYS)
            except OSError as exc:
                raise StorageError(exc.errno or 0, f"cannot erase in {path}: {exc.strerror}") from None
            finally:
                os.close(fd)

    def stage(self) -> Stage:
        """Starts writing records aside, to join the journal all at once or not at all.

        See :class:`Stage`. Only one writer exists (the caller holds the home's lock).

        Raises:
            ReadOnlyError: the journal was opened read-only or has been closed.
            StorageError: the staging file cannot be created.
        """
        if not self._writer:
            raise ReadOnlyError(f"journal {self._directory} is not open for writing")
        return Stage(self)

    def _adopt(self, path: Path, size: int) -> int:
        """Renames a staged file into the journal as its next segment; returns its number."""
        if self._needs_seal:
            self._seal()
        present = self.segments()
        segment = (present[-1] if present else 0) + 1
        if self._upstream is not None:
            self._upstream.publish_segment(segment, path)
        self._settle()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        try:
            os.rename(path, self._path(segment))
        except OSError as exc:
            raise StorageError(f"cannot add {path} to the journal: {exc}") from exc
        sync_directory(self._directory, self._fsync)
        self._segment = segment
        self._size = size
        self._fd = self._open_segment(segment, create=False)
        self._head = Position(segment, size)
        return segment

    def close(self) -> None:
        """Closes the writing handle; reads keep working, appends raise ``ReadOnlyError``.

        Raises:
            StorageError: the last sync (``fsync="interval"``), or the one of appends still
                waiting for it (``"always"``), failed; the handle is closed anyway.
        """
        fd, self._fd = self._fd, None
        self._needs_seal = False
        self._writer = False
        try:
            if self._group is not None and fd is not None:
                self._group.flush()
        finally:
            if fd is not None:
                os.close(fd)

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- reading -----------------------------------------------------------------

    def read(self, start: Position | None = None, stop: Position | None = None) -> Iterator[Entry]:
        """Yields committed records in journal order from ``start`` up to ``stop``.

        Lines starting in ``[start, stop)`` are visited. Invalid lines and torn tails
        are skipped and recorded in :attr:`problems`. Without ``stop`` the read goes on
        to whatever is committed when it gets there, including segments created
        meanwhile; with ``stop`` taken from :meth:`head` it sees a fixed, fully
        committed range (the exact catch-up loop in the module docstring).

        Args:
            start: a line boundary: :meth:`Position.start`, a value from :meth:`head`,
                an :attr:`Entry.position` or :attr:`Entry.end`. Default: the beginning.
            stop: where to stop (exclusive); default: the end at the time of reading.

        Raises:
            CueTypeError: ``start`` or ``stop`` is not a :class:`Position`.
            InvalidArgumentError: ``start`` is not a line boundary of this journal.
            StorageError: a segment cannot be read.
        """
        begin = Position.start() if start is None else start
        if not isinstance(begin, Position):
            raise CueTypeError(f"start must be a Position, got {type(begin).__name__}")
        if stop is not None and not isinstance(stop, Position):
            raise CueTypeError(f"stop must be a Position, got {type(stop).__name__}")
        self._check_boundary(begin)
        return self._entries(begin, stop)

    def runs(self, start: Position | None = None) -> Iterator[Run]:
        """The committed lines from ``start`` on, as runs of whole lines (a bulk reader
        decodes them itself; :meth:`entry` reads one of their lines as :meth:`read` would).

        A torn tail is recorded in :attr:`problems` and left out, as :meth:`read` does.

        Raises:
            CueTypeError, InvalidArgumentError: ``start`` as for :meth:`read`.
            StorageError: a segment cannot be read.
        """
        begin = Position.start() if start is None else start
        if not isinstance(begin, Position):
            raise CueTypeError(f"start must be a Position, got {type(begin).__name__}")
        self._check_boundary(begin)
        return self._runs(begin)

    def entry(self, position: Position, line: bytes) -> Entry | None:
        """The line of a run that starts at ``position`` as an :class:`Entry`, or None for an
        invalid line (recorded in :attr:`problems`)."""
        record, why = _decode(line)
        if record is None:
            self._problems[position] = Problem(position, ProblemKind.INVALID, why)
            return None
        self._problems.pop(position, None)
        return Entry(position, record, Position(position.segment, position.offset + len(line)))

    def read_at(self, position: Position) -> dict[str, Any]:
        """The one record whose line starts at ``position``.

        Args:
            position: a position returned by :meth:`append` or found by :meth:`read`.

        Raises:
            CueTypeError: ``position`` is not a :class:`Position`.
            NotFoundError: no committed line starts there (no such segment, past the
                end, inside a line, or a torn tail).
            CorruptRecordError: the committed line there is not a JSON object.
            StorageError: the segment cannot be read.
        """
        if not isinstance(position, Position):
            raise CueTypeError(f"position must be a Position, got {type(position).__name__}")
        path = self._path(position.segment)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if position.offset >= size:
                    raise NotFoundError(f"no record at {position}: past the end of {path.name}")
                if position.offset > 0:
                    f.seek(position.offset - 1)
                    if f.read(1) != _NEWLINE:
                        raise NotFoundError(f"no record at {position}: not the start of a line")
                line = f.readline()
        except FileNotFoundError:
            raise NotFoundError(f"no record at {position}: segment {path.name} does not exist") from None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}") from exc
        if not line.endswith(_NEWLINE):
            raise NotFoundError(f"no record at {position}: the line there is torn (not committed)")
        record, why = _decode(line)
        if record is None:
            raise CorruptRecordError(f"the line at {position} is not a record: {why}")
        return record

    def read_many(self, segments: Sequence[int], offsets: Sequence[int]) -> list[dict[str, Any]]:
        """The records starting at each ``(segments[i], offsets[i])``, in the order given
        (plain ints, as an index holds its rows' places: no :class:`Position` per record).

        Each segment is opened once; places in journal order are mostly adjacent
        lines, read without a seek. Meant for places the caller got from this
        journal (an index's rows): a line that is not a whole record is an error.

        Raises:
            CorruptRecordError: the line at a place is not a committed record.
            StorageError: a segment cannot be read.
        """
        out: list[dict[str, Any]] = []
        for segment, offset, line in zip(segments, offsets, self._lines(zip(segments, offsets), check_start=False)):
            record, why = _decode(line)
            if record is None:
                raise CorruptRecordError(f"the line at {segment}:{offset} is not a record: {why}")
            out.append(record)
        return out

    def grep(self, needles: Sequence[bytes | re.Pattern[bytes]]) -> list[tuple[Position, bytes]]:
        """Every committed line holding any of ``needles`` (bytes as they are encoded in the
        line, or a pattern over them), with its position, in journal order. One read of
        each segment and a byte search, no decoding: the way to find the few records a
        value names.

        Raises:
            StorageError: a segment cannot be read.
        """
        found: list[tuple[Position, bytes]] = []
        for segment in self.segments():
            path = self._path(segment)
            try:
                data = path.read_bytes()
            except OSError as exc:
                raise StorageError(exc.errno or 0, f"cannot read {path}: {exc.strerror}") from None
            committed = data.rfind(_NEWLINE) + 1  # a torn tail is not committed
            found.extend((Position(segment, start), line) for start, line in lines_holding(data, needles, committed))
        return found

    def lines(self, positions: Sequence[Position]) -> list[bytes]:
        """The committed lines (``\\n`` included) starting at each of ``positions``, in order;
        each segment is opened once.

        Raises:
            CorruptRecordError: no committed line starts at a position.
            StorageError: a segment cannot be read.
        """
        return self._lines(((p.segment, p.offset) for p in positions), check_start=True)

    def _lines(self, places: Iterable[tuple[int, int]], *, check_start: bool) -> list[bytes]:
        """The committed lines at ``positions``, one open per segment, adjacent lines read
        without a seek; with ``check_start``, each position is checked to start a line."""
        out: list[bytes] = []
        handles: dict[int, BinaryIO] = {}
        at: dict[int, int] = {}  # segment -> offset its file is read up to
        try:
            for segment, offset in places:
                f = handles.get(segment)
                if f is None:
                    f = handles[segment] = open(self._path(segment), "rb", buffering=1 << 20)
                    at[segment] = 0
                if check_start and offset > 0 and at[segment] != offset:
                    f.seek(offset - 1)
                    if f.read(1) != _NEWLINE:
                        raise CorruptRecordError(f"no line starts at {segment}:{offset}")
                elif at[segment] != offset:
                    f.seek(offset)
                line = f.readline()
                at[segment] = offset + len(line)
                if not line.endswith(_NEWLINE):
                    raise CorruptRecordError(f"the line at {segment}:{offset} is not a committed record: a torn line")
                out.append(line)
        except OSError as exc:
            raise StorageError(exc.errno or 0, f"cannot read the journal {self._directory}: {exc.strerror}") from None
        finally:
            for f in handles.values():
                f.close()
        return out

    def head(self) -> Position:
        """The position just after the last committed line (``Position.start()`` if none).

        It lies in the segment holding the last committed line; the next append goes
        there or, after rotation, to offset 0 of the following segment.

        Raises:
            StorageError: a segment cannot be read.
        """
        if self._writer and self._head is not None:
            return self._head
        return self._last_line()[0]

    def last_line(self) -> tuple[Position, bytes]:
        """The :meth:`head` and the bytes of the last committed line before it (``b""`` when
        there is none).

        Raises:
            StorageError: a segment cannot be read.
        """
        return self._last_line()

    def digest(self) -> str:
        """A cheap fingerprint of the committed content, for index staleness checks.

        ``"{segment}:{offset}:{sha256}"``: the :meth:`head` position and the SHA-256 of
        the last committed line (with its ``\\n``; of no bytes for an empty journal).
        For an append-only journal, equal digests mean the same committed content and
        any append changes the digest; a torn tail does not count until committed.

        Raises:
            StorageError: a segment cannot be read.
        """
        head, line = self._last_line()
        return f"{head.segment}:{head.offset}:{hashlib.sha256(line).hexdigest()}"

    def size(self) -> int:
        """The bytes of every segment present (a stat each; a torn tail counts; a segment
        gone since the listing counts nothing).

        Raises:
            StorageError: as :meth:`segments`, or a segment cannot be stat'ed.
        """
        total = 0
        for n in self.segments():
            path = self._path(n)
            try:
                total += path.stat().st_size
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StorageError(exc.errno or 0, f"cannot read {path}: {exc.strerror or exc}") from None
        return total

    def segments(self) -> list[int]:
        """The segment numbers present, ascending.

        A name that is not a segment's (``000001.jsonl`` … up to :data:`MAX_SEGMENT`) is ignored;
        a segment that is not a regular file (a link to a device, a FIFO, a directory, a dangling
        link) is refused before anything reads it: read, it would block or never end.

        Raises:
            StorageError: the directory cannot be listed, or a segment is not a regular file.
        """
        try:
            with os.scandir(self._directory) as listing:
                entries = {entry.name: entry for entry in listing}
        except OSError as exc:
            raise StorageError(f"cannot list journal {self._directory}: {exc}") from exc
        found = [(name, int(m.group(1))) for name, m in zip(entries, map(_SEGMENT_RE.match, entries)) if m is not None]
        present = sorted(n for name, n in found if 1 <= n <= MAX_SEGMENT and name == segment_name(n))
        for n in present:
            if not entries[segment_name(n)].is_file():  # follows a link, as reading it would
                raise StorageError(f"journal segment {self._path(n)} is not a regular file; move it out of the journal")
        return present

    def __repr__(self) -> str:
        mode = "writable" if self._writer else "read-only"
        return f"Journal({str(self._directory)!r}, {mode}, fsync={self._fsync.value})"

    # -- internals: writing ------------------------------------------------------

    def _create_directory(self) -> None:
        """Creates the journal directory (and parents), durably."""
        try:
            existed = self._directory.is_dir()
            self._directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"cannot create journal directory {self._directory}: {exc}") from exc
        if not existed:
            sync_directory(self._directory.parent, self._fsync)

    def _open_tail(self) -> None:
        """Opens the last segment for appending and seals a torn tail.

        Staging files left by a crash were never committed: they are removed.
        """
        for leftover in self._directory.glob(".stage-*.tmp"):
            leftover.unlink(missing_ok=True)
        present = self.segments()
        self._segment = present[-1] if present else 1
        self._size = 0
        self._writer = True
        if present:
            self._fd = self._open_segment(self._segment, create=False)
        try:
            self._seal()
        except StorageError:
            self.close()
            raise

    def _open_segment(self, segment: int, *, create: bool) -> int:
        """An append descriptor on ``segment``; ``create`` insists that it is new."""
        path = self._path(segment)
        flags = os.O_RDWR | os.O_APPEND | (os.O_CREAT | os.O_EXCL if create else 0)
        try:
            return os.open(path, flags, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot open segment {path}: {exc}") from exc

    def _seal(self) -> None:
        """Ends a torn last line with ``\\n`` so that new records start on a fresh line."""
        self._needs_seal = True
        if self._fd is not None:
            try:
                size = os.fstat(self._fd).st_size
                if size > 0 and _last_byte(self._path(self._segment), size) != _NEWLINE:
                    _write_all(self._fd, _NEWLINE)
                    size += 1
                    sync(self._fd, self._fsync)
            except OSError as exc:
                raise StorageError(f"cannot seal the tail of {self._path(self._segment)}: {exc}") from exc
            self._size = size
        self._needs_seal = False

    def _rotate(self, segment: int) -> None:
        """Closes the current segment; the next write creates segment ``segment``."""
        self._settle()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._segment = segment
        self._size = 0

    def _write(self, data: bytearray | bytes) -> None:
        """Writes ``data`` at the end of the current segment and syncs it per policy."""
        if not data:
            return
        if self._fd is None:
            self._fd = self._open_segment(self._segment, create=True)
            sync_directory(self._directory, self._fsync)
        try:
            _write_all(self._fd, data)
            if self._group is not None:
                ticket = self._group.written(self._fd)
                if self._fsync is FsyncPolicy.ALWAYS:
                    self._owed = ticket  # "interval" acknowledges before the sync
            else:
                sync(self._fd, self._fsync)  # the policy's word (under "never": nothing)
        except (OSError, StorageError) as exc:
            self._needs_seal = True
            if isinstance(exc, StorageError):
                raise
            raise StorageError(f"cannot append to {self._path(self._segment)}: {exc}") from exc
        except BaseException:
            self._needs_seal = True  # interrupted (Ctrl-C) with bytes perhaps written: re-read the size first
            raise
        self._size += len(data)

    # -- internals: reading ------------------------------------------------------

    def _path(self, segment: int) -> Path:
        return self._directory / segment_name(segment)

    def _check_boundary(self, position: Position) -> None:
        """Raises unless ``position`` is a line boundary (or the start of a segment)."""
        path = self._path(position.segment)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if position.offset > size:
                    raise InvalidArgumentError(f"{position} is past the end of {path.name}")
                if position.offset > 0:
                    f.seek(position.offset - 1)
                    if f.read(1) != _NEWLINE:
                        raise InvalidArgumentError(f"{position} is not the start of a line")
        except FileNotFoundError:
            if position.offset != 0:
                raise InvalidArgumentError(f"{position}: segment {path.name} does not exist") from None
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}") from exc

    def _next_segment(self, after: int) -> int | None:
        """The smallest present segment number greater than ``after``."""
        later = [s for s in self.segments() if s > after]
        return later[0] if later else None

    def _entries(self, start: Position, stop: Position | None) -> Iterator[Entry]:
        """The generator behind :meth:`read` (arguments already checked)."""
        segment: int | None = start.segment
        offset = start.offset
        if not self._path(start.segment).exists():
            segment, offset = self._next_segment(start.segment), 0
        while segment is not None:
            if stop is not None and segment > stop.segment:
                return
            limit = stop.offset if stop is not None and segment == stop.segment else None
            yield from self._segment_entries(segment, offset, limit)
            segment, offset = self._next_segment(segment), 0

    def _runs(self, start: Position) -> Iterator[Run]:
        """The generator behind :meth:`runs` (arguments already checked)."""
        segment: int | None = start.segment
        offset = start.offset
        if not self._path(start.segment).exists():
            segment, offset = self._next_segment(start.segment), 0
        # Read into one buffer and copied out once a run: a fresh block per read, joined to
        # the line begun in the last one and cut at a line end, copied each run three times.
        # The buffer is as large as what is left to read, up to RUN_BYTES: a catch-up of a few
        # lines does not zero megabytes.
        buffer = bytearray()
        while segment is not None:
            path = self._path(segment)
            try:
                with open(path, "rb", buffering=0) as f:
                    f.seek(offset)
                    usual = min(RUN_BYTES, max(os.fstat(f.fileno()).st_size - offset, MIN_RUN_BUFFER))
                    if len(buffer) != usual:
                        buffer = bytearray(usual)
                    pos, held = offset, 0  # held: the bytes of a line begun, at the buffer's start
                    while True:
                        if held == len(buffer):  # a line longer than the buffer
                            buffer.extend(bytes(len(buffer)))
                        got = f.readinto(memoryview(buffer)[held:])
                        if not got:
                            if held:
                                here = Position(segment, pos)
                                self._problems[here] = Problem(here, ProblemKind.TORN, f"{held} bytes with no line end")
                            break
                        end = held + got
                        cut = buffer.rfind(_NEWLINE, held, end) + 1
                        if cut:
                            yield Run(segment, pos, bytes(memoryview(buffer)[:cut]))
                            pos += cut
                            held = end - cut
                            buffer[:held] = memoryview(buffer)[cut:end]
                            if len(buffer) > usual:  # grown for a long line, now read: back towards the usual size
                                del buffer[max(usual, 2 * held) :]
                        else:
                            held = end
            except OSError as exc:
                raise StorageError(f"cannot read {path}: {exc}") from exc
            segment, offset = self._next_segment(segment), 0

    def _segment_entries(self, segment: int, offset: int, limit: int | None) -> Iterator[Entry]:
        """Entries of one segment whose lines start in ``[offset, limit)``."""
        path = self._path(segment)
        try:
            f: BinaryIO
            with open(path, "rb") as f:
                f.seek(offset)
                pos = offset
                while limit is None or pos < limit:
                    line = f.readline()
                    if not line:
                        return
                    here = Position(segment, pos)
                    pos += len(line)
                    if not line.endswith(_NEWLINE):
                        detail = f"{len(line)} bytes with no line end"
                        self._problems[here] = Problem(here, ProblemKind.TORN, detail)
                        return
                    entry = self.entry(here, line)
                    if entry is not None:
                        yield entry
        except OSError as exc:
            raise StorageError(f"cannot read {path}: {exc}") from exc

    def _last_line(self) -> tuple[Position, bytes]:
        """The head position and the bytes of the last committed line before it."""
        for segment in reversed(self.segments()):
            path = self._path(segment)
            try:
                with open(path, "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    end = _rfind_newline(f, size)
                    if end < 0:
                        continue
                    begin = _rfind_newline(f, end) + 1
                    f.seek(begin)
                    return Position(segment, end + 1), f.read(end + 1 - begin)
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise StorageError(f"cannot read {path}: {exc}") from exc
        return Position.start(), b""


class Stage:
    """Records written aside that join the journal all at once, or not at all.

    A bulk write (an import) streams its records into a hidden file in the journal
    directory. :meth:`commit` syncs it and renames it into place as the journal's next
    segment: one atomic step, so after a crash the journal holds all of the batch or
    none of it. :meth:`abort` (or an exception inside ``with``) removes the file. Only
    cuemem's own records are staged (string keys and finite numbers by construction).

    Example:
        >>> import tempfile
        >>> j = Journal(Path(tempfile.mkdtemp()), writable=True)
        >>> with j.stage() as stage:
        ...     offsets = [stage.add({"n": i}) for i in range(3)]
        ...     segment = stage.commit()
        >>> [e.record["n"] for e in j.read()], segment
        ([0, 1, 2], 1)
    """

    __slots__ = ("_journal", "_path", "_fd", "_buffer", "_size", "_done")

    _FLUSH = 1 << 20

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._path = journal.directory / f".stage-{os.getpid()}-{id(self):x}.tmp"
        try:
            self._fd: int | None = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except OSError as exc:
            raise StorageError(f"cannot create {self._path}: {exc}") from exc
        self._buffer = bytearray()
        self._size = 0
        self._done = False

    def add(self, record: Mapping[str, Any]) -> int:
        """Stages one of cuemem's own records; returns its offset in the segment it will become."""
        return self.add_line(line_of(record))

    def add_line(self, line: bytes) -> int:
        """Stages one line :func:`line_of` made (or lines end to end); returns its offset in the
        segment it will become."""
        offset = self._size
        self._size += len(line)
        if not self._buffer and len(line) >= self._FLUSH:
            self._write(line)  # (an import's run of lines: written as it is, not copied into the buffer first)
            return offset
        self._buffer += line
        if len(self._buffer) >= self._FLUSH:
            self._flush()
        return offset

    def _flush(self) -> None:
        self._write(self._buffer)
        self._buffer.clear()

    def _write(self, data: bytes | bytearray) -> None:
        if self._fd is None:
            raise ReadOnlyError("this stage is already committed or aborted")
        try:
            _write_all(self._fd, data)
        except OSError as exc:
            raise StorageError(f"cannot write {self._path}: {exc}") from exc

    def commit(self) -> int:
        """Syncs the staged records and adds them to the journal; returns the segment.

        Raises:
            StorageError: the file system refused; the journal is unchanged.
        """
        self._flush()
        assert self._fd is not None
        try:
            sync(self._fd, self._journal.fsync)
        finally:
            os.close(self._fd)
            self._fd = None
        segment = self._journal._adopt(self._path, self._size)
        self._done = True
        return segment

    def abort(self) -> None:
        """Drops the staged records. Idempotent; nothing after a commit."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if not self._done:
            self._path.unlink(missing_ok=True)
            self._done = True

    def __enter__(self) -> Stage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.abort()


def encode(records: Sequence[Mapping[str, Any]], *, trusted: bool = False) -> list[bytes]:
    """``records`` as journal lines, each serialized before anything is written (see
    :meth:`Journal.append` for ``trusted``).

    Raises:
        CueTypeError: ``records`` is a single mapping or string, not a sequence.
        SchemaError: a record is not a mapping, has a non-string key, or holds a value
            JSON cannot represent; ``field`` names the record's index.
    """
    if type(records) is not list and (isinstance(records, (Mapping, str, bytes)) or not isinstance(records, Sequence)):
        raise CueTypeError(f"records must be a sequence of mappings, got {type(records).__name__}")
    return [_encode(record, i, trusted) for i, record in enumerate(records)]


def line_of(record: Mapping[str, Any]) -> bytes:
    """One of cuemem's own records (string keys, finite numbers) as its journal line (the
    core's line of an :class:`~.records.Encoded` one)."""
    if type(record) is Encoded:
        return record.line
    return orjson.dumps(record if type(record) is dict else dict(record), option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def _encode(record: object, index: int, trusted: bool = False) -> bytes:
    """One record as its journal line, or a ``SchemaError`` naming the record."""
    if trusted and type(record) is Encoded:
        return record.line  # encoded by the core from the write's fields
    if type(record) is not dict and not isinstance(record, Mapping):
        where = f"records[{index}]"
        raise SchemaError(f"{where} must be a mapping, got {type(record).__name__}", field=where)
    plain = record if type(record) is dict else dict(record)
    if trusted:
        return line_of(plain)  # cuemem's own records: string keys and finite numbers by construction
    try:
        text = json.dumps(plain, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
        line = text.encode("utf-8") + _NEWLINE
    except (TypeError, ValueError, RecursionError) as exc:
        where = f"records[{index}]"
        raise SchemaError(f"{where} is not JSON-serializable: {exc}", field=where) from exc
    if not trusted:
        _check_keys(plain, f"records[{index}]")
    return line


def _check_keys(value: object, where: str) -> None:
    """Refuses non-string keys anywhere (JSON would silently turn them into strings).

    Runs after ``json.dumps`` succeeded, so ``value`` is known to be acyclic.
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise SchemaError(f"{where} has a non-string key {key!r}", field=where)
                stack.append(child)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _decode(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """A committed line's record, or ``None`` and why it is invalid."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return _decode_slowly(line)
    if type(value) is not dict:
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, ""


def _decode_slowly(line: bytes) -> tuple[dict[str, Any] | None, str]:
    """The standard library's reading of a line orjson refused, for a precise reason."""
    try:
        value = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8: {exc.reason} at byte {exc.start}"
    except (ValueError, RecursionError) as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, ""


def _rfind_newline(f: BinaryIO, end: int) -> int:
    """The offset of the last ``\\n`` in ``f`` before ``end``, or -1; reads backwards."""
    while end > 0:
        begin = max(0, end - _BLOCK)
        f.seek(begin)
        found = f.read(end - begin).rfind(_NEWLINE)
        if found >= 0:
            return begin + found
        end = begin
    return -1


def _placed_end(
    end: Position, position: Position, data: object, what: str, shape: str, shaped: Callable[[bytes], bool] | None = None,
) -> Position:
    """Where a journal that ends at ``end`` ends once ``data`` (lines another process committed)
    is placed at ``position``.

    Raises:
        InvalidArgumentError: ``data`` is not ``\n``-terminated bytes (of the ``shape`` ``shaped``
            holds for), or ``position`` does not follow ``end`` (:meth:`Position.follows`).
    """
    if not isinstance(data, bytes) or not data.endswith(_NEWLINE) or (shaped is not None and not shaped(data)):
        raise InvalidArgumentError(f"the {what} for {position} is not {shape} of bytes")
    if not position.follows(end):
        raise InvalidArgumentError(f"a {what} for {position} does not follow this journal's head {end}")
    return Position(position.segment, position.offset + len(data))


class _RunWriter:
    """:meth:`Journal.placing`'s writer: runs checked on the caller's thread, written in
    order on one thread of its own (started with the first run), stopped at the first
    failure."""

    def __init__(self, journal: Journal) -> None:
        self._journal = journal
        self._expected = Position(1, 0)  # the journal's head, taken with the first run
        self._pool: ThreadPoolExecutor | None = None
        self._failed: BaseException | None = None

    @property
    def started(self) -> bool:
        """Whether a run was handed over."""
        return self._pool is not None

    def place(self, position: Position, data: bytes) -> None:
        """Checks the run and hands it to the writer thread.

        Raises:
            InvalidArgumentError: see :func:`_placed_end`. StorageError: a write failed.
        """
        if self._failed is not None:
            raise self._failed
        if self._pool is None:
            self._expected = self._journal._ready_to_place()  # where the bytes end (a sealed torn write's included), as place checks
        self._expected = _placed_end(self._expected, position, data, "run", "whole lines")
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor  # a long catch-up's only: not every open's import

            self._pool = ThreadPoolExecutor(1, thread_name_prefix="cuemem-journal")
        self._pool.submit(self._write, position, data)

    def _write(self, position: Position, data: bytes) -> None:
        """(On the writer thread.) Writes the run, unless a write before it failed."""
        if self._failed is None:
            try:
                self._journal._write_run(position, data)
            except BaseException as exc:  # raised on the caller's thread, by the next place or by finish
                self._failed = exc

    def finish(self) -> None:
        """Waits for every run handed over to be written; interrupted while it waits, it writes
        no run more but still waits for the one under way (the caller may go on using the
        journal once the interrupt reaches it).

        Raises:
            StorageError: a write failed (the runs before it are written).
        """
        if self._pool is None:
            return
        try:
            self._pool.shutdown(wait=True)
        except BaseException as exc:  # interrupted while waiting (Ctrl-C): no run more, and the write under way still waited for
            if self._failed is None:
                self._failed = exc
            self._pool.shutdown(wait=True, cancel_futures=True)
            raise
        if self._failed is not None:
            raise self._failed


def _write_all(fd: int, data: bytes | bytearray) -> None:
    """Writes every byte of ``data`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _read_at(fd: int, n: int, offset: int) -> bytes:
    """Up to ``n`` bytes of ``fd`` at ``offset`` (a seek and reads: ``os.pread`` is POSIX-only)."""
    os.lseek(fd, offset, os.SEEK_SET)
    out = bytearray()
    while len(out) < n:
        chunk = os.read(fd, n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


def _last_byte(path: Path, size: int) -> bytes:
    """The byte of ``path`` at ``size - 1`` (read through a handle of its own)."""
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1)


def lines_holding(data: bytes, needles: Sequence[bytes | re.Pattern[bytes]], end: int | None = None) -> list[tuple[int, bytes]]:
    """The lines of ``data`` holding any of ``needles`` at a place before ``end`` (all of
    ``data`` when None), with where each starts, in order: each whole, split at ``\\n`` alone as
    the journal splits them (a last line with no newline ends with ``data``); a byte search,
    never a Python object per line.
    """
    stop = len(data) if end is None else end
    starts: set[int] = set()
    for needle in needles:
        if isinstance(needle, bytes):
            hits: Iterator[int] = _finds(data, needle, stop)
        else:
            hits = (m.start() for m in needle.finditer(data, 0, stop))
        for at in hits:
            starts.add(data.rfind(_NEWLINE, 0, at) + 1)
    return [(start, data[start : (data.find(_NEWLINE, start) + 1) or len(data)]) for start in sorted(starts)]


def _finds(data: bytes, needle: bytes, end: int) -> Iterator[int]:
    """Where ``needle`` starts in ``data[:end]``, once per line at most."""
    at = data.find(needle, 0, end) if needle else -1
    while at >= 0:
        yield at
        line_end = data.find(_NEWLINE, at)
        if line_end < 0:  # the last line, with no newline
            return
        at = data.find(needle, line_end + 1, end)
