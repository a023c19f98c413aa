"""Imports: many items staged beside the journal, joining it in one atomic step or not at all.

Each item (``remember``'s keywords plus ``narrative``) is validated and passes the
write gate as a single ``remember`` would (the :class:`Gate` the importer is given: the
life-cycle's :class:`~cuemem.lifecycle.writes.Admission`, which follows the batch's own
versions). A file's lines, and mappings of JSON's own types written as lines, reach the core a
chunk at a time, and its plain items are admitted there in runs (:meth:`Gate.write_run`), the
rest here, in order. The records they make are streamed into a journal
:class:`~cuemem.store.journal.Stage` and gathered, column by column, by a deferred
:class:`~.apply.Applier`. Only when every item is good (or bad ones are to be
skipped) does the stage become the journal's next segment — one fsync, one rename —
and only then do the indexes change. Narratives reach the text index as they are
staged and are rolled back if the import fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from datetime import datetime
from typing import Any, BinaryIO, NamedTuple, Protocol

import orjson

from .. import _arrays, _core, _scalars
from ..errors import CueTypeError, ImportFileError, InvalidArgumentError, SchemaError, ScopeError, StorageError
from ..store import records as rec
from ..schema.spec import IMPORT_KEYS
from ..schema.fields import optional_label
from ..store.journal import line_of
from ..store.regular import open_regular
from .clock import TimeArg, edge_now
from .scope import Reach
from .apply import ASIDE, Applier, Fed
from .decoding import DECODER
from .home import Home
from .._gc import gc_paused
from .results import ImportReport
from .textindex import TextFeed

__all__ = [
    "EXAMPLE", "REMEMBER_KEYS", "Admitted", "Gate", "Lines", "import_items", "import_jsonl", "import_records", "jsonl_lines", "record_items",
]


class Admitted(Protocol):
    """What the gate made of one item: the id to report, its records and the gate's action."""

    @property
    def id(self) -> str:
        """The id to report (for a repetition, the current version's)."""
        ...

    @property
    def records(self) -> Sequence[rec.Record]:
        """The journal records that write it."""
        ...

    def parts(self) -> tuple[Sequence[rec.Record], bytes | None, Sequence[rec.Record]]:
        """The records, the journal line of a ``remember`` record that follows them, not read
        back (or None), and the records after that line."""
        ...

    @property
    def action(self) -> str:
        """What the gate did: ``write``, ``supersede``, ``queue`` or ``repeat``."""
        ...


class GateOf(Protocol):
    """Makes the gate of one import written at ``at`` (:meth:`cuemem.lifecycle.service.Lifecycle.admission`)."""

    def __call__(self, at: datetime, *, allow_forgotten: bool = False) -> Gate:
        """The gate."""
        ...


class Gate(Protocol):
    """The write gate of one import, given by the life-cycle (:class:`~cuemem.lifecycle.writes.Admission`):
    it knows the home, the profile, the time the batch is written and whether a forgotten item may return."""

    def write(self, narrative: object, fields: dict[str, Any], taken: set[str]) -> Admitted:
        """The records that write one item of ``remember``'s keywords, validated as a single
        ``remember`` is and admitted as the gate decides (``taken``: the ids the batch has
        used; the item's own is added to it)."""
        ...

    def write_run(
        self, items: _core.Items, start: int, owners: _core.Owners, session: str | None, taken: set[str],
    ) -> tuple[bytes, _core.Decoded | None, list[str], int, list[str], int]:
        """Admits the plain items of a chunk, from line ``start`` on, each as :meth:`write`
        would (``owners``: whose an item is, by the user it names; None: refused): their journal
        lines end to end, what the core's decoder reads of them (None: read them again),
        their ids (added to ``taken``), the first line not admitted, the
        users its block names whom ``owners`` does not answer for, and how many lines after
        the first not admitted no plan makes plain."""
        ...


#: The keys an imported item may hold: the fields a caller gives in a memory's content
#: (:data:`~cuemem.schema.spec.IMPORT_KEYS`).
REMEMBER_KEYS = IMPORT_KEYS

#: An import file to start from (``cuemem import --example`` prints it): one JSON object
#: per line, ``narrative`` required, any other key one of :data:`REMEMBER_KEYS` with
#: :meth:`cuemem.Memory.remember`'s meaning (times as ``remember`` takes them).
EXAMPLE = """\
{"narrative": "Acme signed the renewal at 10% off.", "actors": ["acme", "priya"], "type": "deal", "outcome": "positive", \
"occurred_at": "2026-06-10", "importance": 0.7, "tags": ["sales"]}
{"narrative": "Checkout outage hit Acme for 10 minutes.", "actors": ["acme"], "type": "incident", "outcome": "negative", \
"occurred_at": "2026-06-05", "risk": 0.8}
{"narrative": "The office is in Lyon.", "kind": "semantic", "subject": "office", "occurred_at": "2026-05-02"}
{"narrative": "Kim prefers the weekly sync on Thursdays.", "actors": ["kim"], "kind": "preference", "subject": "weekly sync"}
"""

_REMEMBER = rec.Op.REMEMBER

#: Remember records handed to the core's decoder at a time while staging (their rows and
#: narratives join the indexes and the text index in one pass, in parallel).
_RUN = 10_000

#: Rows of a run the core admitted that go to the indexes as it read them; a shorter run joins
#: the waiting one (each hand-over to the indexes and the text index costs more than reading a
#: few lines again: a file alternating plain and other lines makes many short runs).
_AS_READ = 256

#: The longest line an imported JSONL file may hold (an episode is a few hundred bytes).
MAX_LINE = 64 << 20

#: Items between two progress reports of an import.
PROGRESS_EVERY = 5_000

#: Bytes of an import file the core reads at a time (whole lines).
_CHUNK = 2 << 20

#: One item: its number (line or position, from 1), the object, or why it is unreadable.
Item = tuple[int, Any, "str | None"]

#: What refuses an item (a bad item, its words kept); anything else ends the import.
_REFUSED = (ValueError, TypeError, ScopeError)

#: The keys an item may give, as the core takes them.
_KEYS = sorted(REMEMBER_KEYS)


#: Mappings of :func:`import_records` the core reads at a time, at most.
_RECORDS = 4_096


class Lines(NamedTuple):
    """Whole lines of an import (each ending in ``\\n`` but perhaps a file's last), the first numbered ``first``."""

    first: int
    data: bytes


def open_jsonl(path: str) -> tuple[BinaryIO, int]:
    """The file at ``path``, open for reading, and its size: only a regular file, never
    waited on (:func:`~cuemem.store.regular.open_regular`).

    Raises:
        InvalidArgumentError: it is not a regular file.
        StorageError: it cannot be opened.
    """
    try:
        return open_regular(path)
    except InvalidArgumentError as exc:
        raise InvalidArgumentError(f"cannot import {path}: {exc}; an import reads a regular JSONL file") from None
    except FileNotFoundError as exc:
        raise StorageError(exc.errno or 0, f"cannot read {path}: {exc.strerror}") from None


def jsonl_lines(handle: BinaryIO, size: int, progress: Callable[[int, int], None] | None) -> Iterator[Lines]:
    """The lines of an open JSONL file, about :data:`_CHUNK` bytes of whole lines at a time
    (closing it at the end), streamed; ``progress(bytes_read, size)`` now and then.

    Raises:
        ImportFileError: a line longer than :data:`MAX_LINE` (a device, a binary file).
        StorageError: the file cannot be read (``/proc/self/mem``, an I/O error).
    """
    done = reported = 0
    first = 1
    held: list[bytes] = []  # the start of a line not ended yet, block by block
    length = 0
    with handle:
        while True:
            block = _read(handle, _CHUNK)
            end = block.rfind(b"\n") + 1 if block else 0
            if block and not end:
                held.append(block)
                length += len(block)
                whole = b""
            else:  # the lines ended in this block (at the end: a last line without one)
                whole = b"".join([*held, block[:end]]) if block else b"".join(held)
                held, length = ([block[end:]], len(block) - end) if block and end < len(block) else ([], 0)
            if whole:
                if len(whole) > MAX_LINE:  # a line as long can only be here
                    parts = whole.split(b"\n")
                    for k, line in enumerate(parts):
                        if len(line) + (k < len(parts) - 1) > MAX_LINE:  # its \n counted
                            raise _too_long(first + k)
                done += len(whole)
                yield Lines(first, whole)
                first += whole.count(b"\n") + (not whole.endswith(b"\n"))
                if progress is not None and first - reported > PROGRESS_EVERY and done < size:
                    reported = first
                    progress(done, size)
            if length > MAX_LINE:  # read no further: it may never end (a device)
                raise _too_long(first)
            if not block:
                break
    if progress is not None:
        progress(size, size)


def _too_long(number: int) -> ImportFileError:
    return ImportFileError(f"line {number} is longer than {MAX_LINE} bytes (is this a JSONL file?), nothing imported",
                           [(number, "line too long")])


def _read(handle: BinaryIO, size: int) -> bytes:
    """The next ``size`` bytes of ``handle`` at most.

    Raises:
        StorageError: the read failed.
    """
    try:
        return handle.read(size)
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot read {getattr(handle, 'name', 'the import file')}: {exc.strerror or exc}") from None


def _item(number: int, line: bytes) -> Item | None:
    """The item of line ``number`` (None: a blank line)."""
    if not line.strip():
        return None
    try:
        return number, orjson.loads(line), None
    except orjson.JSONDecodeError as exc:
        return number, None, f"not JSON (or not UTF-8): {exc}"


def record_items(records: Iterable[Any], progress: Callable[[int, int], None] | None) -> Iterator[Item | Lines]:
    """Mappings as items, in order: each written as its JSON line when it is a dict of JSON's own
    types (:func:`cuemem._core.item_line`, as it is when pulled), up to :data:`_RECORDS` such lines
    at a time; any other object as it is, when pulled. ``progress(done, total)`` now and then and
    once at the end (``total`` 0 without a length)."""
    total = len(records) if isinstance(records, Sized) else 0
    number = 0
    lines: list[bytes] = []
    for number, obj in enumerate(records, start=1):
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress(number, total)
        line = _core.item_line(obj)
        if line is not None:
            lines.append(line)
            if len(lines) < _RECORDS:
                continue
        if lines:
            yield Lines(number - len(lines) + (line is not None), b"".join(lines))
            lines = []
        if line is None:
            yield number, obj, None
    if lines:
        yield Lines(number - len(lines) + 1, b"".join(lines))
    if progress is not None:
        progress(number, total)  # the last report says all were read, as a file's does


def import_jsonl(
    home: Home, gate_of: GateOf, path: object, *, skip_bad: bool, now: TimeArg, progress: Callable[[int, int], None] | None,
    session: object, allow_forgotten: object, reach: Reach,
) -> ImportReport:
    """``Memory.import_jsonl``: the JSONL file at ``path`` streamed into :func:`import_items`,
    each item written as ``reach`` says whose it is, through the gate ``gate_of`` gives
    for ``now`` read at the edge.

    Raises:
        ReadOnlyError: the handle is read-only. ImportFileError, StorageError: as :func:`import_items`.
        CueTypeError: ``progress`` is not callable, ``skip_bad`` not a bool. InvalidArgumentError: a bad ``path``.
    """
    home.check_writable()
    forgotten_too = _scalars.boolean(allow_forgotten, "allow_forgotten")
    report = _arrays.callback(progress, "progress")
    skipping = _scalars.boolean(skip_bad, "skip_bad_lines")
    at = edge_now(now)
    label = optional_label(session, "session")
    handle, size = open_jsonl(_arrays.path(path))
    return import_items(
        home, gate_of(at, allow_forgotten=forgotten_too), jsonl_lines(handle, size, report), skip_bad=skipping, source=str(path),
        owner=reach.owner(), session=label,
    )


def import_records(
    home: Home, gate_of: GateOf, records: object, *, skip_bad: bool, now: TimeArg, progress: Callable[[int, int], None] | None,
    session: object, allow_forgotten: object, reach: Reach,
) -> ImportReport:
    """``Memory.import_records``: mappings of ``remember``'s keywords into :func:`import_items`,
    as :func:`import_jsonl` does with a file's lines.

    Raises:
        ReadOnlyError: the handle is read-only. CueTypeError: ``records`` is not an iterable of mappings,
            ``progress`` not callable, or ``skip_bad`` not a bool.
    """
    home.check_writable()
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
        raise CueTypeError(f"records must be an iterable of mappings, got {type(records).__name__}")
    forgotten_too = _scalars.boolean(allow_forgotten, "allow_forgotten")
    report = _arrays.callback(progress, "progress")
    skipping = _scalars.boolean(skip_bad, "skip_bad")
    at = edge_now(now)
    return import_items(
        home, gate_of(at, allow_forgotten=forgotten_too), record_items(records, report), skip_bad=skipping, source="records",
        owner=reach.owner(), session=optional_label(session, "session"),
    )


@gc_paused
def import_items(
    home: Home, gate: Gate, items: Iterable[Item | Lines], *, skip_bad: bool, source: str,
    owner: Callable[[Any], str], session: str | None = None,
) -> ImportReport:
    """Imports ``items`` into ``home`` through ``gate``, all or nothing (bad ones skipped with ``skip_bad``).

    An item is an object read already, or one of the :class:`Lines` of a file, which the
    core reads and admits in runs (:meth:`Gate.write_run`) up to a line that is not a plain
    write, which is read and admitted here as any item is. ``owner`` maps an item's
    ``user_id`` (None when it names none) to the user it is written as, raising
    :class:`~cuemem.errors.ScopeError` for one its handle may not write; ``session`` is the
    session of every item (provenance comes from the call, so an item cannot name its
    own). A forgotten item (its id, or its user and narrative) is a bad item unless the
    gate allows it (and its id stays taken).

    Raises:
        ImportFileError: bad items (with their numbers) and not ``skip_bad``; nothing written.
        StorageError: the journal cannot be written; nothing written.
    """
    home.check_writable()
    text = home.caches.text
    if text is not None:
        text.flush(home.indexes, home.journal)  # a failed import rolls back to here
    try:
        staging = _Staging(home, gate, owner, session)
        staging.run(items, skip_bad, source)
    except BaseException:
        if text is not None:
            text.rollback()
        raise
    # The stage is in the journal now: nothing below may fail short of the indexes.
    staging.applier.flush()
    home.indexes.head = home.journal.head()
    if staging.written or staging.queued:
        home.committed(None)
    return ImportReport(
        count=len(staging.written), skipped=staging.errors, ids=staging.written, queued=staging.queued, repeated=staging.repeated,
    )


class _Staging:
    """One import's items staged beside the journal; the stage joins it as the last step of :meth:`run`, or not at all."""

    def __init__(self, home: Home, gate: Gate, owner: Callable[[Any], str], session: str | None) -> None:
        self.home, self.gate, self.owner, self.session = home, gate, owner, session
        self.errors: list[tuple[int, str]] = []
        self.written: list[str] = []
        self.queued: list[str] = []
        self.repeated: list[str] = []
        self.by_action = {"queue": self.queued, "repeat": self.repeated}  # the gate's actions, as their values
        self.taken: set[str] = set()
        self.owners = _core.Owners()  # whose the items the core admits are, by the user they name
        self.applier = Applier(home.indexes, trusted=True, deferred=True, texts=home.caches.text is not None)
        self.text = TextFeed(home.caches.text) if home.caches.text is not None else None
        self.staged = 0
        # The lines of a run of remember records waiting for the core's decoder, end to end
        # from ``base`` in the stage; a record of another kind ends the run (order is kept).
        # Only the bytes wait (a record is read back from its line if the decoder leaves it).
        self.waiting = bytearray()
        self.count = 0
        self.base = 0

    def run(self, items: Iterable[Item | Lines], skip_bad: bool, source: str) -> None:
        """Stages every item, then commits the stage (see :func:`import_items`)."""
        with self.home.journal.stage() as stage:
            self.stage = stage
            try:
                for item in items:
                    if isinstance(item, Lines):
                        self.lines(item)
                    else:
                        self.item(*item)
                self.decode()
            except BaseException:
                if self.text is not None:
                    self.text.wait(quiet=True)  # the text index is rolled back after this; the error raised is this one
                raise
            if self.text is not None:
                self.text.finish(self.applier.texts)  # with the rows of lines the core left to the applier
            if self.errors and not skip_bad:
                shown = "; ".join(f"line {n}: {m}" for n, m in self.errors[:5])
                raise ImportFileError(f"{len(self.errors)} bad item(s) in {source}, nothing imported: {shown}", self.errors)
            if self.staged:
                self.applier.place(stage.commit())

    def lines(self, lines: Lines) -> None:
        """Stages lines: runs of plain items the core admits, each other line read here as an
        item (with the lines after it that no plan makes plain)."""
        items = DECODER.read_items(lines.data, _KEYS)
        if not self.owners:
            self.answer([None])
        parts: list[bytes] | None = None
        i, n = 0, len(items)
        while i < n:
            run, decoded, ids, i, missing, unplain = self.gate.write_run(items, i, self.owners, self.session, self.taken)
            if ids:
                self.written += ids
                self.remembers(run, self.stage.add_line(run), len(ids), decoded)
            if missing:
                self.answer(missing)
                continue
            if i < n:
                parts = lines.data.split(b"\n") if parts is None else parts
                for k in range(i, min(i + 1 + unplain, n)):
                    item = _item(lines.first + k, parts[k])
                    if item is not None:
                        self.item(*item)
                i += 1 + unplain

    def answer(self, users: Iterable[str | None]) -> None:
        """Asks whose the items naming ``users`` are, for the core: a user refused (as :meth:`item`
        would refuse it) is None, and its items are read here, each a bad item with the refusal's words."""
        for user in users:
            try:
                owner: str | None = self.owner(user)
            except _REFUSED:
                owner = None
            self.owners.answer(user, owner)

    def item(self, number: int, obj: Any, unreadable: str | None) -> None:
        """Stages one item (a bad one is noted in :attr:`errors`)."""
        if unreadable is not None:
            self.errors.append((number, unreadable))
            return
        try:
            if not isinstance(obj, Mapping):
                raise SchemaError("each item must be a JSON object", None)
            if not REMEMBER_KEYS.issuperset(obj):
                unknown = sorted(set(obj) - REMEMBER_KEYS)
                raise SchemaError(f"unknown keys {unknown}", unknown[0])
            if "narrative" not in obj:
                raise SchemaError("narrative is required", "narrative")
            fields = dict(obj)
            del fields["narrative"]
            if fields.get("origin") == "job":
                raise SchemaError("origin 'job' is the maintenance jobs' own; an import writes as user, agent or external", "origin")
            fields["user_id"] = self.owner(fields.get("user_id"))
            if self.session is not None:
                fields["session"] = self.session
            admitted = self.gate.write(obj["narrative"], fields, self.taken)
        except _REFUSED as exc:
            self.errors.append((number, str(exc)))
            return
        self.by_action.get(admitted.action, self.written).append(admitted.id)
        records, own, after = admitted.parts()
        self.stage_records(records)
        if own is not None:
            self.remembers(own, self.stage.add_line(own), 1)
            self.stage_records(after)

    def stage_records(self, records: Sequence[rec.Record]) -> None:
        """Stages records of one item, as the journal holds them."""
        for record in records:
            line = line_of(record)
            offset = self.stage.add_line(line)
            op = rec.op_of(record)
            if op is _REMEMBER:
                self.remembers(line, offset, 1)
            elif op in ASIDE and self.count:
                # Right after the waiting run's lines in the stage: it is read with them, and the
                # run stays one (Applier.add_run: a version record follows each write of a subject).
                self.waiting += line
                self.staged += 1
            else:
                self.decode()
                self.applier.add(record, 0, offset)
                self.staged += 1

    def remembers(self, lines: bytes, offset: int, count: int, decoded: _core.Decoded | None = None) -> None:
        """Stages ``count`` remember records, staged at ``offset`` as ``lines``: they join the
        run waiting for the decoder, or, with what the decoder reads of them (``decoded``,
        from the core's admission) and enough of them (:data:`_AS_READ`), go to the applier
        and the text index as they are."""
        if decoded is not None and count >= _AS_READ:
            self.decode()  # what waits goes first
            self.staged += count
            self.feed(self.applier.add_run(lines, 0, offset, decoded))
            return
        if not self.count:
            self.base = offset
        self.waiting += lines
        self.count += count
        self.staged += count
        if self.count >= _RUN:
            self.decode()

    def decode(self) -> None:
        """Hands the waiting run to the core's decoder and the text index."""
        if self.count:
            self.feed(self.applier.add_run(bytes(self.waiting), 0, self.base))  # its segment is known at commit
            self.waiting.clear()
            self.count = 0

    def feed(self, fed: list[Fed]) -> None:
        """Hands the text index the rows the applier took (indexed meanwhile; committed with the home's next save)."""
        if self.text is not None:
            for decoded, lo, hi, first in fed:
                self.text.add(decoded, lo, hi, first)
