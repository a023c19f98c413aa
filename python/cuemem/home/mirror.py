"""``Mirror``: a home directory that mirrors a shared log (:mod:`cuemem.store.upstream`).

A process using a shared home keeps an ordinary home directory as a cache: its journal is a
byte-for-byte prefix of the shared log, so every index, note file and position in it is
what the embedded home would hold for the same records. Nothing else is special: the
same :class:`~cuemem.home.home.Home` reads and writes it, through the same one write path;
a :class:`Mirror` is the :class:`~.sharing.Sharing` it is given (where the embedded home has
:class:`~.sharing.Local`).

- **Open.** :meth:`Mirror.prepare` proves the directory is a prefix of the log (its last
  line is the log's line at that position, the lines before it are those its last save
  fingerprinted (:mod:`.proof`), and its marker file ``.cuemem-cache`` names the same home
  and log); a cache that cannot be proved is emptied and filled again. A
  directory holding a journal but no marker is not a cache (an embedded home, say): it is
  refused, never emptied. An empty cache's ``index/`` may be seeded first (``seed``: a
  server-kept snapshot, :mod:`cuemem.postgres.snapshots`), then proved by the open as any
  cache's. Then the home catches up (:meth:`Mirror.pull`; a long catch-up in runs).
- **Writes.** A write call holds the log's lock from its first write to its return
  (``Home.check_writable`` → :meth:`Mirror.hold`; the guard's ``on_release`` →
  :meth:`Mirror.release`), catching up first (:meth:`Mirror.catch_up`): every decision
  sees every record before it. What need not be done holding it waits until the call
  lets it go: the server's flush of the call's commits (:mod:`cuemem.postgres.log`, group
  commit) and the sync of the cache's own journal (deferred, as an embedded home's
  group commit; lines whose note or proposal files follow them are synced first).
- **Forgets.** An erasing forget's tombstones, intent and records are one transaction of
  the log; a mirror overwrites the same lines and carries the intent out as the home that
  made it did (``index/mirror.json`` counts the forgets carried out; counting again is
  harmless, and a cache filled afresh starts past the forgets its lines already hold).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from ..errors import CorruptRecordError, InvalidArgumentError, MalformedRecordError, ReadOnlyError, SharedHomeError
from ..schema.fields import validate_id
from ..store import kinds
from ..store import records as rec
from ..store.erasure import Intent
from ..store.fsync import FsyncPolicy, write_atomic
from ..store.journal import Journal, Position, lines_holding, segment_name
from ..store.regular import HINT_BYTES, read_regular
from ..store.upstream import Fetched, Run, SharedLog, Upstream, one_line
from . import proof
from .layout import Layout
from .sharing import Engine
from .state import LifecycleState

__all__ = ["MARKER", "Mirror", "vouched"]

_log = logging.getLogger("cuemem.home")

STATE = "mirror.json"
#: The file that makes a directory a shared home's cache (what it mirrors).
MARKER = ".cuemem-cache"
#: What a mirror may hold, and so what emptying it removes (nothing else is touched).
_CACHED = ("journal", "index", "notes", "proposals", "MEMORY.md", ".forget.json")
#: How a note record's line reads (the journal's canonical encoding): lines to parse at a mirror's open.
_NOTE = rec.Op.NOTE
_NOTE_LINE = rec.marker(_NOTE)
#: Most lines of a catch-up whose records the views are told one by one (more: "anything").
_TOLD = 256
#: The kinds of record whose files a mirror writes as it catches up.
_FILED = frozenset({_NOTE, rec.Op.PROPOSAL, rec.Op.DECISION})
#: What a line of a note record, or of one of the :data:`_FILED` kinds, holds (a kind's marker).
_FILED_LINES = [rec.marker(op) for op in sorted(_FILED)]
#: The kinds whose records :meth:`Mirror.proposal_records` keeps.
_DECIDED = frozenset({rec.Op.PROPOSAL, rec.Op.DECISION})


class Mirror:
    """A home directory's link to the shared log it mirrors: the :class:`~.sharing.Sharing` of a shared home."""

    def __init__(
        self, log: SharedLog, *, lock_timeout: float, read_only: bool, seed: Callable[[Layout], object] | None = None,
        keep: Callable[[Layout], None] | None = None,
    ) -> None:
        #: The shared log.
        self.log = log
        #: Fills an empty cache's ``index/`` before its journal is pulled (a server-kept
        #: snapshot, :mod:`cuemem.postgres.snapshots`); what it returns is kept in :attr:`seeded`.
        self.seed = seed
        #: What it filled the cache from (None: nothing).
        self.seeded: object = None
        #: Called with the closed cache, its writer lock still held, by a writable handle (a snapshot's publishing).
        self.keep = keep
        self.lock_timeout = lock_timeout
        #: The handle may not write to the shared home (its mirror is still kept up).
        self.read_only = read_only
        #: The id of the last forget of the log this directory carried out.
        self.forgets = 0
        #: Called first by :meth:`stop` (a follower thread's stop).
        self.on_close: list[Any] = []

    # -- open ------------------------------------------------------------------------

    @property
    def upstream(self) -> Upstream:
        """The shared log: the journal commits there first."""
        return self.log

    def claim(self, layout: Layout) -> None:
        """Nothing before the lock: :meth:`prepare` proves the directory, or empties a cache it cannot prove."""

    def pending(self, layout: Layout, journal: Journal) -> tuple[Intent | None, str | None]:
        """None: a forget of this directory's own that never reached the log never happened
        (:meth:`prepare` removed its file); one that did comes back with the log's forgets."""
        return None, None

    def attach(self, home: Engine, fetched: Fetched) -> None:
        """The home is up: each call letting go of its guard lets go of the log's lock, and the
        forgets of the log the open fetched are carried out."""
        home.guard.on_release = self.release
        with home.guard:
            self.carry_out(home, fetched.forgets)

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
        if self.log.seq == 0 and self.seed is not None and not any(p.stat().st_size for p in layout.journal.glob("*.jsonl")):
            self.seeded = self.seed(layout)  # the open then proves it as any cache, and replays the lines after it
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
        """Writes the log's lines beyond the mirror into ``journal`` (synced); returns what was read.
        See :meth:`_pull`."""
        return self._pull(journal, defer=False)

    def _pull(self, journal: Journal, *, defer: bool) -> Fetched:
        """Writes the log's lines beyond the mirror into ``journal``; returns what was read
        (``defer``: the caller waits for their sync, as :meth:`Journal.place` says).

        A long catch-up's runs (each checked by the log to be whole lines following one
        another) are written as the log reads them (:meth:`Journal.placing`), each checked
        here to start where the one before ended.

        A row someone wrote into the log by hand is hostile like any journal line: one that
        is not a single line is written as one of its length (the applier then skips it as
        invalid and reports it). One whose position does not follow the line before it, or
        whose ``seq`` does not, cannot be mirrored: the lines before it are, then this is a
        ``SharedHomeError`` (reads keep working on the mirror; writes wait until the log is
        mended).
        """
        runs = _Runs(self.log.shown, journal.head(), self.log.seq)
        try:
            with journal.placing() as place:
                fetched = self.log.fetch(self.log.seq, self.forgets, place=runs.placer(place))
        finally:
            self.log.seq = runs.seq_at(journal.head())  # the runs written before any failure are the mirror's
        lines = [(p, one_line(line)) for p, line in fetched.lines]  # after any runs: where they stopped
        good = _following(journal.head(), self.log.seq, fetched.seqs, lines)
        if good:
            journal.place(lines[:good], defer=defer)
            self.log.seq = fetched.seqs[good - 1]
        if good < len(lines) or fetched.broken is not None:
            where = f"seq {fetched.seqs[good]} ({lines[good][0]})" if good < len(lines) else fetched.broken
            raise SharedHomeError(
                f"the shared log {self.log.shown} holds a row cuemem did not write at {where}: it does not follow the line "
                f"before it; the mirror stays at the line before it"
            )
        return fetched

    def files(self, fetched: Fetched) -> list[tuple[str, bytes]]:
        """The note files the lines of ``fetched`` write (the notes other processes wrote)."""
        return self.note_files(_records(_fetched_holding(fetched, [_NOTE_LINE])))

    @staticmethod
    def note_files(records: Iterable[dict[str, Any]]) -> list[tuple[str, bytes]]:
        """The file of each note the records write (its last version among them); a record
        that is not a note cuemem could have written is left to the applier to report."""
        files: dict[str, bytes] = {}
        for record in records:
            if rec.op_of(record) is _NOTE and isinstance(record.get("markdown"), str):
                try:
                    files[validate_id(record.get("id"), "note")] = record["markdown"].encode("utf-8", "surrogatepass")
                except (InvalidArgumentError, ValueError):
                    continue
        return list(files.items())

    @staticmethod
    def proposal_records(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """The proposal and decision records among the records."""
        return [r for r in records if rec.op_of(r) in _DECIDED and isinstance(r.get("id"), str)]

    def save(self, layout: Layout, fsync: FsyncPolicy) -> None:
        """Keeps the forgets the directory carried out in ``index/``."""
        write_atomic(layout.index / STATE, orjson.dumps({"forgets": self.forgets}), fsync)

    def catch_up(self, home: Engine) -> int:
        """Brings ``home``, the mirror, up to the shared log; returns how many episodes.

        The lines go to the journal, their notes' files to ``notes/``, the records through
        the one applier to every index, and the log's new forgets are carried out.
        """
        home.check_local()
        journal = home.journal
        behind = home.indexes.head != journal.head()  # a catch-up that failed midway: its lines are not fetched again
        defer = home.guard.holds()  # the sync waits until the call lets the guard (and the log's lock) go
        fetched = self._pull(journal, defer=defer)
        if defer and fetched.lines and journal.owed:
            ticket = journal.owed
            home.guard.defer(lambda: journal.wait_synced(ticket))
        count = 0
        if home.indexes.head != journal.head():
            # Everything the journal holds beyond the indexes (a catch-up that failed midway included:
            # read back from the journal; else what was fetched, in memory): of it, the records whose
            # files follow them here (notes, proposals) are kept aside.
            lines = _filed_lines(journal, home.indexes.head) if behind else _fetched_holding(fetched, _FILED_LINES)
            records = [r for r in _records(lines) if rec.op_of(r) in _FILED]
            if records:
                home.settle()  # a file is placed only once its line is on disk
            count = home.follow(self.note_files(records), _as_written(self.proposal_records(records)))
        self.carry_out(home, fetched.forgets)
        if count or fetched.lines or fetched.runs or fetched.forgets:
            # After the forgets: a view drawn now sees their note files gone. A few lines and
            # nothing else are passed on, so that a view redraws only for what may change it.
            few = not behind and not fetched.forgets and not fetched.runs and len(fetched.lines) <= _TOLD
            home.committed(_typed(line for _, line in fetched.lines) if few else None)
        return count

    def carry_out(self, home: Engine, forgets: Sequence[tuple[int, bytes]]) -> None:
        """Carries out the shared log's forgets after the mirror's last: the same lines
        overwritten, the same steps as the home that made each. A forget's receipt is in the
        log with it (one transaction); a row of ``forgets`` without one, or whose lines are
        not the log's, is not a forget cuemem wrote: it is reported and skipped."""
        for number, raw in forgets:
            where = f"forget {number} of {self.log.shown}"
            try:
                intent = Intent.from_bytes(raw, where)
                if not _receipt_committed(intent, home.indexes.lifecycle):
                    raise CorruptRecordError(f"{where} has no receipt in the log")
                home.journal.overwrite(intent.edits)
            except (CorruptRecordError, InvalidArgumentError) as exc:
                _log.warning("%s: %s; skipped", home.layout.root, exc)
            else:
                home.complete(intent)
            self.forgets = number
            self.save(home.layout, home.fsync)

    # -- writing -----------------------------------------------------------------------

    @property
    def held(self) -> bool:
        """Whether this handle holds the log's lock (a write call, from its first write to its return)."""
        return self.log.held

    @property
    def defers_sync(self) -> bool:
        """True: the cache's sync waits until the call lets the log's lock go (the log holds
        the truth, committed before it)."""
        return True

    def check(self) -> None:
        """Raises unless this handle may write to the shared home."""
        if self.read_only:
            raise ReadOnlyError(f"this handle of the shared home {self.log.shown} is read-only")

    def hold(self) -> bool:
        """Takes the log's lock; whether the log moved beyond the mirror (lines or forgets).

        Raises:
            ReadOnlyError: a read-only handle.
            HomeLockedError: other writers held the lock too long.
            SharedHomeError: the server could not be reached.
        """
        self.check()
        return self.log.hold(self.lock_timeout) != (self.log.seq, self.forgets)

    def moved_on(self) -> SharedHomeError:
        """The error of a write decided while other processes wrote: nothing was written."""
        return SharedHomeError(f"the shared home {self.log.shown} moved on while this write was decided: nothing was written; call again")

    def erase(self, home: Engine, intent: Intent) -> None:
        """One transaction of the shared log: the tombstones, the intent and its records. From
        then on the forget has happened; this cache follows it as every other does."""
        self.log.stage_forget(intent.receipt, intent.to_bytes(), intent.edits)
        try:
            home.commit(list(intent.records), notify=False)
        finally:
            forget = self.log.unstage_forget()
        self.carry_out(home, [(forget, intent.to_bytes())] if forget is not None else [])
        home.committed([kinds.parse(r, trusted=True) for r in intent.records])  # the views, once the erased notes' files are gone

    def unwritten(self, intent: Intent, journal: Journal, state: LifecycleState) -> list[rec.Record]:
        """The log commits the intent's records in one transaction with its tombstones: all of
        them are in, or (a forget cuemem did not finish writing) none."""
        return [] if _receipt_committed(intent, state) else list(intent.records)

    def hand_over(self) -> None:
        """The call's next commit is its last: the lock passes on once it is committed."""
        self.log.hand_over()

    def saved(self, layout: Layout) -> None:
        """The cache is closed and saved (its writer lock still held): a writable handle may
        leave a snapshot of it on the server (:attr:`keep`)."""
        self.save(layout, FsyncPolicy.NEVER)  # the forgets its files reflect, which a snapshot of them records
        if self.keep is not None and not self.read_only:
            self.keep(layout)

    def release(self) -> None:
        """Lets the next writer in, if this handle holds the lock, and waits for the server's
        disk to hold what the call committed.

        Raises:
            SharedHomeError: that wait failed (see :meth:`RecordLog.release <cuemem.postgres.log.RecordLog.release>`).
        """
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


def vouched(layout: Layout, home_id: str, log: str, locate: Callable[[Position, bytes], int | None]) -> tuple[int, int] | None:
    """The ``seq`` and the forgets of log ``log`` of home ``home_id`` that the closed cache
    at ``layout`` reflects in its saved ``index/`` — what a snapshot of it may say — or None
    when it cannot vouch for one: not that log's cache, its indexes not saved at its
    journal's end, its journal's last line not the log's (``locate``), or its journal not
    as its fingerprint (:mod:`.proof`) says."""
    marker = _read_json(layout.root / MARKER)
    if marker is None or (marker.get("home_id"), marker.get("log")) != (home_id, log):
        return None
    recipe = _read_json(layout.index / "recipe.json")
    state = _read_json(layout.index / STATE)
    if recipe is None or state is None or not layout.journal.is_dir():
        return None
    head, line = Journal(layout.journal).last_line()
    saved = recipe.get("journal", {}).get("head") if isinstance(recipe.get("journal"), dict) else None
    if not line or saved != [head.segment, head.offset] or proof.check_saved(layout.index, layout.journal) is not None:
        return None
    seq = locate(Position(head.segment, head.offset - len(line)), line)
    forgets = state.get("forgets")
    if seq is None or type(forgets) is not int:
        return None
    return seq, forgets


def _size(journal: Journal, segment: int) -> int:
    """The size of ``segment`` of ``journal`` (0 when it is missing)."""
    try:
        return (journal.directory / segment_name(segment)).stat().st_size
    except FileNotFoundError:
        return 0


class _Runs:
    """A long catch-up's runs as :meth:`Mirror._pull` places them: each must start where the
    one before ended (by ``seq`` and position); where each ends, to know how far the mirror
    got."""

    def __init__(self, shown: str, head: Position, seq: int) -> None:
        self._shown = shown
        self._head, self._seq = head, seq
        self._ends: dict[Position, int] = {head: seq}

    def placer(self, place: Callable[[Position, bytes], None]) -> Callable[[Run], None]:
        """What the log hands each run to: checked here, then ``place`` d.

        Raises:
            SharedHomeError: (from it) the run does not follow the one before.
        """

        def placed(run: Run) -> None:
            head = self._head
            if run.first != self._seq + 1 or not run.position.follows(head):
                raise SharedHomeError(
                    f"the shared log {self._shown} holds a row cuemem did not write at seq {run.first} ({run.position}): it does "
                    f"not follow the line before it; the mirror stays at the line before it"
                )
            place(run.position, run.data)
            self._head = Position(run.position.segment, run.position.offset + len(run.data))
            self._seq = run.first + run.count - 1
            self._ends[self._head] = self._seq

        return placed

    def seq_at(self, head: Position) -> int:
        """The ``seq`` of the line that ends at ``head`` (the journal's, once placing is over):
        the runs a failed write cut short are not the mirror's."""
        return self._ends.get(head, min(self._ends.values()))


def _following(head: Position, seq: int, seqs: list[int], lines: list[tuple[Position, bytes]]) -> int:
    """How many of ``lines`` follow one another from ``head`` (and ``seq``) as a journal would place them."""
    end = head
    for i, ((position, line), number) in enumerate(zip(lines, seqs)):
        if number != seq + i + 1 or not position.follows(end):
            return i
        end = Position(position.segment, position.offset + len(line))
    return len(lines)


def _filed_lines(journal: Journal, start: Position) -> Iterator[bytes]:
    """The lines from ``start`` that may be records of the :data:`_FILED` kinds (a kind's
    ``"op":"..."`` appears in their bytes; a string's quotes are escaped, so no narrative
    holds it), read in runs: the rest of a long catch-up is never parsed here."""
    for run in journal.runs(start):
        yield from (line for _, line in lines_holding(run.data, _FILED_LINES))


def _fetched_holding(fetched: Fetched, needles: Sequence[bytes]) -> Iterator[bytes]:
    """The lines of ``fetched``, as a mirror places them, holding any of ``needles`` (a byte
    search over each run, and over the lines read one by one, joined)."""
    runs = [run.data for run in fetched.runs]
    if fetched.lines:
        runs.append(b"".join(one_line(raw) for _, raw in fetched.lines))
    for data in runs:
        yield from (line for _, line in lines_holding(data, needles))


def _records(lines: Iterable[bytes]) -> list[dict[str, Any]]:
    """The records among ``lines`` that parse as JSON objects (the applier reports the rest)."""
    out = []
    for line in lines:
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def _as_written(records: Iterable[rec.Record]) -> list[kinds.TypedRecord]:
    """The records read back from the journal that are as cuemem writes them (the applier
    reports the others)."""
    out = []
    for record in records:
        try:
            out.append(kinds.parse(record))
        except MalformedRecordError:
            continue
    return out


def _typed(lines: Iterable[bytes]) -> list[kinds.TypedRecord] | None:
    """The records of ``lines`` as :func:`~cuemem.store.kinds.parse` reads them for the
    views (their episodes are the applier's to check), or None (anything) when one is not a
    record cuemem writes."""
    try:
        return [kinds.parse(r, episodes=False) for r in (orjson.loads(line) for line in lines)]
    except (orjson.JSONDecodeError, MalformedRecordError):
        return None


def _receipt_committed(intent: Intent, state: LifecycleState) -> bool:
    """Whether the receipt of ``intent`` (a shared log's forget) is in the journal already."""
    return intent.receipt in state.receipts


def _read_json(path: Path) -> dict[str, Any] | None:
    """A small JSON object cuemem wrote, or None when it is missing or is not one (a hint)."""
    try:
        body = orjson.loads(read_regular(path, HINT_BYTES))
    except (OSError, orjson.JSONDecodeError):
        return None
    return body if isinstance(body, dict) else None
