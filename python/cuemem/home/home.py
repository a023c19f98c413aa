"""``Home``: one home directory, opened — the journal, notes, indexes and the writer lock.

A ``Home`` owns every file of a home and is the only writer of them. Every write is
one :meth:`Home.commit` of journal records (built by :mod:`cuemem.store.records`):
the note files they carry are written first, then the records are appended durably
in one grouped commit, then applied to the indexes through the same
:class:`~.apply.Applier` replay uses — so a live write and a rebuild cannot diverge.

The life-cycle, the jobs and the policies read a home through the narrow methods
here (rows by cue, stored episodes, the life-cycle state, the last job runs) and
write only through :meth:`commit`. Inside ``cuemem.home`` the recall planner
(:mod:`.query.recall`) and the importer (:mod:`.imports`) use the indexes directly.

Two parts a home is given or owns tell the rest: its :class:`~.sharing.Sharing` (the
embedded home's :class:`~.sharing.Local`, or a shared home's :class:`~.mirror.Mirror`) says
how its journal meets other processes — holding the turn to write, catching up, publishing
a forget, carrying out others' — and its :class:`~.caches.Caches` own the derived caches
(the text index, a new recipe's waiting for the golden set, the vectors).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .._gc import gc_paused
from ..errors import (
    CorruptRecordError, CuememError, CueTypeError, ForgottenError, MissingFileError, SchemaError, NotFoundError, ReadOnlyError, StorageError,
)
from ..text.vectors import Embedder
from .state import ACCEPTED, LifecycleState
from ..salience import SalienceTable
from ..schema import Episode
from ..store import kinds
from ..store import records as rec
from ..store.erasure import Intent
from ..store.fsync import FsyncPolicy
from ..store.journal import Journal, Position, encode
from ..store.lock import WriterLock
from ..store.notes import NoteStore, Recovery
from .. import _core
from . import forks, noteseen, policycache, proof
from .apply import Applier
from .cues import DIMENSIONS
from .indexes import Indexes, record_sha
from .layout import Layout
from .guard import Guard
from .notebook import Notebook
from .rows import Rows
from .caches import Caches
from .replay import apply_journal, load_indexes
from .results import HomeStats, IndexState, OpenReport
from .clock import Clock
from .proposalfiles import ProposalFiles
from .sharing import Local, Sharing
from .textswap import replay_target

_log = logging.getLogger("cuemem.home")
#: Up to this many ids are asked one by one whether taken (the rows by id hash answer); more
#: are asked of the id -> row map at once, made for them if it is not yet.
_FEW_IDS = 1024
#: Episodes :meth:`Home.said` keeps (then it forgets them all and starts again).
_SAID = 4096

__all__ = ["Home", "Position"]

#: What the writer saw of the proposal files (``index/``; a hint, like ``notes-seen.json``).
PROPOSALS_SEEN = "proposals-seen.json"


class Home:
    """An open home. Get one with :meth:`Home.open`; :class:`~cuemem.Memory` is its facade."""

    def __init__(
        self, layout: Layout, journal: Journal, notes: NoteStore, indexes: Indexes, lock: WriterLock | None,
        report: OpenReport, caches: Caches, notes_edited: bool, sharing: Sharing,
    ) -> None:
        self.layout = layout
        #: The journal: the truth (for ``cuemem.home`` modules only).
        self.journal = journal
        #: The notes: their files, journaled versions and the policy cache made from them.
        self.notes: Notebook = Notebook(notes, self, notes_edited)
        #: Where the rows live in the journal: positions, lines, digests.
        self.rows = Rows(self)
        #: The in-memory indexes (for ``cuemem.home`` modules only).
        self.indexes = indexes
        self._lock = lock
        #: How the indexes came up.
        self.report = report
        #: The derived caches: the text index (and a new recipe's, waiting), the vectors.
        self.caches = caches
        #: Held by every call of the facade: one operation at a time on this home.
        self.guard = Guard()
        #: How the journal meets other processes: :class:`~.sharing.Local`, or a shared home's :class:`~.mirror.Mirror`.
        self.sharing = sharing
        self._closed = False
        #: The journal's checksums as the replay that built the indexes read it, for the next save.
        self._reading: proof.Reading | None = None
        #: The users of retired rows read so far (they have left the cue postings).
        self._retired_users: dict[int, str] = {}
        #: How many times :meth:`rebuild` built the indexes afresh (see :attr:`rows_epoch`).
        self._rebuilds = 0
        #: What :meth:`said` read, by id: (confidence, narrative); and the :attr:`rows_epoch`
        #: it was filled in (an erasure empties it: it keeps nothing forget erased).
        self._said: dict[str, tuple[float, str]] = {}
        self._said_epoch = self.rows_epoch
        #: The home's own clock, which destructive work checks its ``now`` against.
        self.clock = Clock(self)
        #: Called with the records of every commit once they are applied, or None after an
        #: import (too many to pass on): views that follow the home.
        self.listeners: list[Callable[[Sequence[kinds.TypedRecord] | None], None]] = []
        #: Called as a writer closes, before the index cache is saved: views leaving hints for the next open.
        self.closing: list[Callable[[], None]] = []
        forks.track(self)
        #: The files under ``proposals/`` (a writer's), a view of the journal's proposals.
        self.proposal_files = ProposalFiles(layout.proposals, journal.fsync) if lock is not None else None

    @property
    def fsync(self) -> FsyncPolicy:
        """The home's fsync policy."""
        return self.journal.fsync

    def committed(self, records: Sequence[kinds.TypedRecord] | None) -> None:
        """Tells every listener what a commit wrote, read by :func:`~cuemem.store.kinds.parse`
        (None: an import, anything)."""
        if self._said:
            self._kept_said()  # (nothing erased stays kept)
        for listener in self.listeners:
            listener(records)

    # -- life of a home -------------------------------------------------------------

    @classmethod
    @gc_paused  # an open builds many long-lived objects (indexes, what was seen of 25k note files) and no cycles
    def open(
        cls, root: Path, *, read_only: bool, fsync: FsyncPolicy, lock_timeout: float, salience: SalienceTable, text_analyzer: str,
        embedder: Embedder | None = None, sharing: Sharing = Local(),
    ) -> Home:
        """Opens (and, unless ``read_only``, creates and locks) the home at ``root``.

        Arguments are checked by the caller (:meth:`cuemem.Memory.open`). ``sharing`` is how
        the journal meets other processes: by default :class:`~.sharing.Local` (stateless), an
        embedded home; a shared home's :class:`~.mirror.Mirror` proves ``root``, its cache, or
        empties it, then catches it up.

        Raises:
            HomeLockedError: another process writes this home.
            MissingFileError: ``read_only`` and no home is there.
            NotAHomeError: ``root`` holds files and is not a home (nothing is created).
            StorageError: the directory cannot be created or read.
        """
        layout = Layout(root)
        if read_only:
            if not layout.is_home():
                raise MissingFileError(2, f"no cuemem home at {layout.root}")
        else:
            sharing.claim(layout)
            try:
                layout.create()
            except OSError as exc:
                raise StorageError(exc.errno or 0, f"cannot create home at {layout.root}: {exc.strerror}") from None
        lock = None
        if not read_only:
            lock = WriterLock(layout.lock)
            lock.acquire(timeout=lock_timeout)
        filled = None
        try:
            if lock is not None:
                try:
                    layout.own()
                except OSError as exc:
                    raise StorageError(exc.errno or 0, f"cannot create home at {layout.root}: {exc.strerror}") from None
            sharing.prepare(layout)
            journal = Journal(layout.journal, fsync=fsync, writable=not read_only, upstream=sharing.upstream)
            fetched = sharing.pull(journal)
            intent, refused = (None, None) if read_only else sharing.pending(layout, journal)
            filled = replay_target(layout.index, text_analyzer, writable=not read_only)  # one pass where both start afresh
            indexes, how, caught_up, journal_changed, reading = load_indexes(layout, journal, salience, filled)
            notes = NoteStore(layout.notes, fsync)
            notes.adopt(noteseen.load(layout.index))  # a note file whose stat is as seen is not read again
            files = sharing.files(fetched)
            if files:
                notes.place(notes.stage(files))  # the notes other processes wrote
            journaled = {nid: sha for nid, (_, sha) in indexes.notes.items()}
            survey = notes.survey(journaled)  # one listing and a stat per file serve the recovery and the scan
            names = None if survey is None else survey.names
            recovered = notes.recover(journaled, names=names) if not read_only else Recovery()
            # Only files that differ from the journal's versions are parsed (a person's edits);
            # a note the recovery placed is new to the survey: the scan looks again.
            scan = notes.scan(known=journaled, survey=None if recovered.placed else survey)
            caches = Caches.open(
                layout.index, text_analyzer, indexes, journal, writable=not read_only, distrust=journal_changed, fsync=fsync, filled=filled,
            )
            state, why = IndexState.of(how)
            text_state, text_why = IndexState.of(caches.report)
            assert state is not None
            report = OpenReport(
                index=state,
                caught_up=caught_up,
                journal_problems=list(journal.problems),
                note_errors=list(scan.errors),
                skipped_records=list(indexes.skipped),
                rebuilt_because=why,
                text=text_state,
                text_rebuilt_because=text_why,
                notes_recovered=recovered.placed,
                leftovers_removed=recovered.dropped,
                forget_intent_refused=refused,
            )
            edited = bool(scan.notes or scan.errors or scan.missing)
            home = cls(layout, journal, notes, indexes, lock, report, caches, edited, sharing)
            home._reading = reading
            if home.proposal_files is not None:
                home.proposal_files.adopt(noteseen.load_stats(layout.index / PROPOSALS_SEEN))
                left = home.proposal_files.reconcile(indexes.lifecycle, replayed=state is not IndexState.LOADED)
                home.report = dataclasses.replace(report, proposal_problems=left)
            if embedder is not None:
                caches.open_vectors(embedder, home, writable=not read_only, distrust=journal_changed)
            if intent is not None:
                home.complete(intent)
            sharing.attach(home, fetched)
            _log_open(home, read_only)
            return home
        except BaseException:
            if filled is not None:
                try:
                    filled.close()  # its writer's lock goes with the failed open
                except CuememError:
                    pass  # what failed the open is the error to raise
            if lock is not None:
                lock.release()
            sharing.close()
            raise

    def close(self) -> None:
        """Saves the index cache (a writer), closes the files and releases the writer lock,
        whatever fails on the way (the lock is released last, always). Idempotent.

        Raises:
            StorageError: saving the cache or closing the text index failed; the journal
                holds every acknowledged write and the next open rebuilds what is missing.
        """
        if self._closed:
            return
        self.sharing.stop()  # nothing catches the home up while it closes
        self._closed = True
        failures: list[BaseException] = []
        steps = [*self.closing, self._save_index] if self._lock is not None else []
        steps.extend(self.caches.closers())
        steps.append(self.journal.close)
        try:
            for step in steps:
                try:
                    step()
                except Exception as exc:  # every step runs; the first failure is reported
                    failures.append(exc)
        finally:
            self.caches.drop()  # dropping the core lets go of the text writer's lock, even after a failed close
            if self._lock is not None:
                try:
                    if not failures:
                        self.sharing.saved(self.layout)  # e.g. a shared home's cache left on the server for fresh processes
                finally:
                    self._lock.release()
            try:
                self.sharing.close()
            except CuememError as exc:
                failures.append(exc)
        if failures:
            first = failures[0]
            if isinstance(first, StorageError):
                raise first
            raise StorageError(getattr(first, "errno", None) or 0, f"closing the home at {self.root} failed: {first}") from first

    @property
    def root(self) -> Path:
        """The home directory."""
        return self.layout.root

    def abandon(self) -> None:
        """Lets go of this home in a forked child (:mod:`.forks`): closed without a step of its
        own — nothing saved, synced or joined, the lock kept for the parent (only this
        process's descriptor of it is closed), the text writer dropped untouched."""
        self._closed = True
        if self._lock is not None:
            self._lock.abandon()
        self.caches.abandon()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed

    @property
    def writable(self) -> bool:
        """Whether this handle holds the writer lock (and is open)."""
        return self._lock is not None and not self._closed

    def check_writable(self) -> None:
        """Raises unless this handle may write; a shared home's writer then holds the
        shared log's lock until its call returns, caught up with every other writer.

        Raises:
            ReadOnlyError: the handle is closed or read-only.
            HomeLockedError: a shared home's other writers held its lock too long.
            SharedHomeError: a shared home's server could not be reached.
        """
        self.check_local()
        if not self.sharing.held:
            self._hold()

    def _hold(self) -> bool:
        """Takes the turn to write and catches up; whether other processes had written."""
        if not self.sharing.hold() and self.indexes.head == self.journal.head():
            return False  # nothing new: no catch-up to read
        try:
            self.sharing.catch_up(self)
        except BaseException:
            self.sharing.release()
            raise
        return True

    def _check_handle(self) -> None:
        """Raises unless this handle may write, without taking a shared home's lock (the
        work is on this process's files only)."""
        self.check_local()
        self.sharing.check()

    def check_local(self) -> None:
        """Raises unless this handle may write the home's files (a shared home's cache included)."""
        if self._closed:
            raise ReadOnlyError("this Memory handle is closed")
        if self._lock is None:
            raise ReadOnlyError("this Memory handle is read-only")

    # -- the one write path ---------------------------------------------------------

    def commit(self, records: Sequence[rec.Record], *, notify: bool = True, last: bool = False) -> list[Position]:
        """Writes ``records`` (from :mod:`cuemem.store.records`) as one grouped commit.

        The note files of ``note`` records are staged first (hidden pending files,
        durable as a batch), then the records are appended to the journal in one append
        (one fsync), then the note files are renamed into place, each record is applied
        to the indexes as replay would apply it, and new rows join the text index. A
        crash at any instant leaves the old state or the new one: on the next open,
        :meth:`NoteStore.recover <cuemem.store.notes.NoteStore.recover>` places pending
        files the journal holds and drops the others.

        ``notify`` tells the listeners (False: the caller tells them once it is done, as a
        shared home's forget does after deleting the erased notes' files). ``last``: the
        call commits nothing after this, so a shared home's other writers may take their
        turn as soon as the records are in the log (:meth:`Sharing.hand_over
        <cuemem.home.sharing.Sharing.hand_over>`), while this handle applies them.

        Raises:
            ReadOnlyError: the handle is read-only or closed.
            StorageError: the file system refused (the journal holds all or a prefix).
            SharedHomeError: a shared home's server refused, or other processes wrote
                since the records were decided (a write call that did not begin with
                :meth:`check_writable`): nothing was written.
        """
        if not self.sharing.held:
            self.check_local()
            if self._hold():
                raise self.sharing.moved_on()
        self.check_writable()
        if not records:
            return []
        # A note's file holds its last version of the batch (a kept hand edit and the new text
        # are two records of one id): one pending file per note.
        written = [kinds.parse(r, trusted=True) for r in records]  # read once, for the files and views that follow
        notes = [r for r in written if type(r) is kinds.NoteRecord]
        files = list({r.id: r.markdown.encode("utf-8") for r in notes}.items())
        staged = self.notes.files.stage(files) if files else []  # hidden until journaled
        # Group commit: inside a facade call the sync waits until the call lets the guard go,
        # so other threads append meanwhile and one sync serves them all (a cache syncs at once).
        # Whatever durable step depends on these records waits for it first (:meth:`settle`).
        journal = self.journal
        defer = self.sharing.defers_sync and self.guard.holds()
        owed = journal.owed
        lines = encode(records, trusted=True)  # kept: the indexes read the new rows from these bytes
        if last:
            self.sharing.hand_over()
        try:
            positions = journal.append_lines(lines, defer=defer)
        except (SchemaError, CueTypeError, ReadOnlyError):
            self.notes.files.discard(staged)  # refused before a byte was written
            raise
        except BaseException:
            # A prefix of the batch may be in the journal (a full disk, an interrupt): the
            # indexes follow it, and its note files are placed; the rest are dropped.
            if self._follow_journal():
                self.notes.files.recover({nid: sha for nid, (_, sha) in self.indexes.notes.items()})
            raise
        finally:
            if defer and journal.owed != owed:
                ticket = journal.owed
                self.guard.defer(lambda: journal.wait_synced(ticket))
        try:
            if staged:
                self.settle()  # a note's file is placed only once its record is on disk
                self.notes.files.place(staged)  # what fails here stays pending: the next open places it
        finally:
            applier = Applier(self.indexes, trusted=True, texts=self.caches.text is not None)
            decoded = applier.add_written(records, lines, positions)
            applier.flush()
            self.indexes.head = self.journal.head()
            self.caches.add(decoded, applier.texts)
        if self.proposal_files is not None:
            self.proposal_files.committed(self.indexes.lifecycle, written, before=self.settle)
        if notify:
            self.committed(written)
        return positions

    def settle(self) -> None:
        """Waits until every record this handle appended is on disk (group commit defers the
        sync): a file or cache that follows from them is written only after them.

        Raises:
            StorageError: the sync failed.
        """
        self.journal.wait_synced(self.journal.owed)

    # -- the one exception to append-only: forget ----------------------------------

    def erase(
        self, receipt: rec.Record, edits: Sequence[tuple[Position, bytes]], notes: Sequence[str], records: Sequence[rec.Record],
        proposals: Sequence[str] = (),
    ) -> None:
        """Carries out a forget whose ``receipt`` (a ``forget`` record) erases: writes its
        intent (from then on the forget has happened),
        overwrites the erased lines with their tombstones, deletes the erased notes'
        files, commits the intent's records (the receipt last), erases the rows from the
        text index and the embeddings, and saves every index afresh, so that no file of
        the home holds the erased content. A crash at any instant leaves the old state
        (the intent never reached the disk) or the new one (the next writable open
        carries the intent out again): :mod:`cuemem.store.erasure`.

        Raises:
            ReadOnlyError: the handle is read-only or closed.
            StorageError: the file system refused (the intent stays, to be carried out at
                the next open).
        """
        self.check_writable()
        self._reading = None  # lines are about to be erased: the replay's checksums are of what was there
        self.sharing.erase(self, Intent(receipt["id"], tuple(edits), tuple(notes), (receipt, *records), tuple(proposals)))

    def complete(self, intent: Intent) -> None:
        """The steps of :meth:`erase` after the journal's tombstones; each is idempotent."""
        self._reading = None  # lines erased: the replay's checksums are of what was there
        # A note written again by the forget gets its new file from its record (or has it).
        rewritten = {r.id for r in map(_trusted, intent.records) if isinstance(r, kinds.NoteRecord)}
        self.notes.files.remove([n for n in intent.notes if n not in rewritten])
        if self.proposal_files is not None:
            self.proposal_files.remove(intent.proposals)
        left = self.sharing.unwritten(intent, self.journal, self.indexes.lifecycle)
        if left:
            self.commit(left)
        receipt = intent.records[0]
        if receipt["retention"] == "erase":
            self.caches.erase(self.rows_of(receipt["ids"]).tolist(), self.indexes, self.journal)
        proof.drop(self.layout.index, {p.segment for p, _ in intent.edits})
        if intent.notes:  # the policy book's cache may quote an erased note: it is made again when next read
            policycache.discard(self.layout.index)
        self._save_index()
        Intent.clear(self.layout.forget_intent)
        _log.info("%s: forget %s carried out (%d lines erased, %d notes deleted)", self.root, intent.receipt, len(intent.edits), len(intent.notes))

    def _follow_journal(self) -> bool:
        """Applies whatever the journal holds beyond the indexes (after a failed append);
        whether that worked (if not, the next open replays the journal)."""
        try:
            self.follow()
        except CuememError:
            return False  # the append's own error is the one to report
        return True

    def follow(self, files: Sequence[tuple[str, bytes]] = (), proposals: Sequence[kinds.TypedRecord] = ()) -> int:
        """Applies whatever the journal holds beyond the indexes — lines another process wrote,
        or a prefix of a failed append — to every index and cache; ``files`` are the note files
        those lines write (placed first) and ``proposals`` their proposal and decision records.
        Returns how many episodes."""
        if files:
            self.notes.files.place(self.notes.files.stage(files))
        # The text index takes the narratives in the same pass when it holds every row (else it reads them after).
        text = self.caches.text if self.caches.text is not None and self.caches.text.rows == len(self.indexes) else None
        count = apply_journal(self.indexes, self.journal, self.indexes.head, text=text)
        self.caches.feed(self.indexes, self.journal)
        if self.proposal_files is not None:
            self.proposal_files.committed(self.indexes.lifecycle, proposals)
        return count

    # -- ids ------------------------------------------------------------------------

    def new_id(self, stamp: str, text: str, pending: int = 0) -> str:
        """A fresh id of an episode written at ``stamp`` (ISO) with ``text``, derived from them
        and the home's size (plus ``pending`` ids a batch has taken but not committed):
        :func:`cuemem._core.episode_id`, stepping past an id already taken."""
        n = len(self.indexes) + pending
        seed = stamp.encode("utf-8", "surrogatepass"), text.encode("utf-8", "surrogatepass")
        while True:
            candidate = _core.episode_id(n, *seed)
            if not self.id_taken(candidate):
                return candidate
            n += 1

    def ids_taken(self, ids: set[str]) -> bool:
        """Whether any of ``ids`` is taken (:meth:`id_taken`): a few asked one by one, many
        of the id map at once."""
        if len(ids) <= _FEW_IDS:
            return any(map(self.id_taken, ids))
        state = self.indexes.lifecycle
        free = self.indexes.row_of.keys().isdisjoint(ids) and state.pending.keys().isdisjoint(ids)
        return not (free and state.decided.keys().isdisjoint(ids))

    def id_taken(self, id: str) -> bool:
        """Whether ``id`` names a record, or a write waiting in (or decided by) the approval queue."""
        state = self.indexes.lifecycle
        return self.indexes.row_for(id) is not None or id in state.pending or id in state.decided

    # -- reading --------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.indexes)

    def __contains__(self, id: object) -> bool:
        return self.holds(id, None)

    def holds(self, id: object, user: str | None) -> bool:
        """Whether :meth:`get` reads ``id`` for ``user``: a record of theirs (any user's for
        None), live, retired or superseded, not erased. No record is read but a retired one's."""
        row = self.indexes.row_for(id) if isinstance(id, str) else None
        if row is None or id in self.indexes.lifecycle.erased:
            return False
        return user is None or self._of_user(row, user)

    def record_count(self, user: str | None = None) -> int:
        """How many records :meth:`ids` lists for ``user`` (no list built without one)."""
        if user is None:
            return len(self.indexes) - len(self.indexes.lifecycle.erased)
        return len(self.ids(user))

    def ids(self, user: str | None = None) -> list[str]:
        """The id of every record :meth:`get` reads for ``user`` (every user's for None) —
        live, retired and superseded, not erased — in journal order (row order)."""
        lifecycle = self.indexes.lifecycle
        if user is None:
            erased = lifecycle.erased
            return [i for i in self.indexes.ids if i not in erased] if erased else list(self.indexes.ids)
        rows = set(self.select({"user": [user]}).tolist())
        retired = self.rows_of(i for i in lifecycle.retired if i not in lifecycle.erased).tolist()
        rows.update(r for r in retired if r not in rows and self._of_user(r, user))
        ids = self.indexes.ids
        return [ids[r] for r in sorted(rows)]

    def _of_user(self, row: int, user: str) -> bool:
        """Whether row ``row`` (not erased) is ``user``'s: its ``user`` cue while live; a retired
        row has left the postings, so its record is read, once (a row's user never changes)."""
        if self.indexes.ids[row] not in self.indexes.lifecycle.retired:
            return bool(self.indexes.cues.admits({"user": [user]}, np.array([row], dtype=np.uint32))[0])
        known = self._retired_users.get(row)
        if known is None:
            known = str(self.stored([row])[0].get("user_id"))
            self._retired_users[row] = known
        return known == user

    def rows_of(self, ids: Iterable[str]) -> npt.NDArray[np.uint32]:
        """The rows of those of ``ids`` the home holds, ascending."""
        rows = {row for row in map(self.indexes.row_for, ids) if row is not None}
        return np.array(sorted(rows), dtype=np.uint32)

    def id_at(self, row: int) -> str:
        """The id of row ``row``."""
        return self.indexes.ids[row]

    def episode(self, row: int) -> Episode:
        """The stored episode of row ``row``, read from the journal; a quarantined record a
        person accepted since reads as reviewed.

        Raises:
            ForgottenError: the record was erased.
        """
        stored = self.journal.read_at(self.indexes.position(row)).get("episode")
        if not isinstance(stored, dict):
            raise ForgottenError(f"episode {self.indexes.ids[row]!r} was erased by forget")
        episode = Episode.from_json(stored)
        if not episode.reviewed and self.indexes.lifecycle.reviewed.get(episode.id) == ACCEPTED:
            return dataclasses.replace(episode, reviewed=True)
        return episode

    def similar(self, text: str, cues: dict[str, list[str]], limit: int) -> list[int]:
        """The live rows matching ``cues`` whose narratives best match ``text`` by BM25, best
        first, at most ``limit`` (none without a text index, or when ``text`` has no terms)."""
        index = self.caches.text
        if index is None:
            return []
        index.ready(self.indexes, self.journal)
        rows, _ = index.core.search(text, self.indexes.cues.prune(cues), limit)
        return [int(r) for r in rows.tolist()]

    def quarantined(self, id: str) -> bool:
        """Whether ``id`` is a live record nobody has reviewed yet."""
        return self.indexes.quarantined(id)

    def marked(self, mark: str) -> frozenset[str]:
        """The ids of the live records with the ``trust`` cue ``mark`` (quarantined, tainted)."""
        ids = self.indexes.ids
        return frozenset(ids[r] for r in self.select({"trust": [mark]}).tolist())

    def loader(self, row: int) -> Callable[[], Episode]:
        """A function reading row ``row``'s episode when called (a lazy hit)."""
        return lambda: self.episode(row)

    def get(self, id: object, user: str | None = None) -> Episode:
        """The episode with this id, as ``user`` reads it (None: every user). To one user,
        another user's record — live, retired or erased — is one that does not exist:
        the same :class:`NotFoundError`, with the same message.

        Raises:
            NotFoundError: no such id in this home (for ``user``).
            ForgottenError: it was erased by forget (and, for ``user``, was theirs).
        """
        row = self.indexes.row_for(id) if isinstance(id, str) else None
        lifecycle = self.indexes.lifecycle
        if row is None or (user is not None and id in lifecycle.erased and not lifecycle.erased_for(str(id), user)):
            raise NotFoundError(missing(id))
        if id in lifecycle.erased:
            raise ForgottenError(f"episode {id!r} was erased by forget")
        episode = self.episode(row)
        if user is not None and episode.user_id != user:
            raise NotFoundError(missing(id))
        return episode

    def said(self, id: str) -> tuple[float, str]:
        """The confidence and narrative of the episode ``id`` as :meth:`get` reads them, kept
        once read (a record never changes: what the write gate asks of a subject's current
        version at each write of it). An erasure empties what is kept (:attr:`rows_epoch`): an
        erased one is read, and refused, again.

        Raises:
            NotFoundError: no such id. ForgottenError: it was erased by forget.
        """
        kept = self._kept_said().get(id)
        if kept is not None:
            return kept
        episode = self.get(id)
        return self.keep_said(id, episode.confidence, episode.narrative)

    def keep_said(self, id: str, confidence: float, narrative: str) -> tuple[float, str]:
        """Keeps what :meth:`said` answers of ``id``, an episode the journal holds (a write
        gate's, once its commit is done)."""
        said = self._kept_said()
        if len(said) >= _SAID:
            said.clear()
        kept = said[id] = (confidence, narrative)
        return kept

    def _kept_said(self) -> dict[str, tuple[float, str]]:
        """What :meth:`said` keeps, emptied first if a record was erased since it was filled."""
        if self._said_epoch != self.rows_epoch:
            self._said.clear()
            self._said_epoch = self.rows_epoch
        return self._said

    @property
    def rows_epoch(self) -> tuple[int, int]:
        """Changes whenever a row may no longer read as it did: the indexes were built afresh
        (a rebuild numbers the rows anew) or a record was erased. What a view keeps of a row
        holds while it stands."""
        return self._rebuilds, self.indexes.erasures

    @property
    def rows_edited(self) -> tuple[int, int, int]:
        """Changes whenever a row the home holds may match or rank otherwise than it did,
        but for being retired: the :attr:`rows_epoch` moved, or a row was accepted from
        quarantine. Rows are otherwise only appended, or retired (``lifecycle.retired`` names
        them in the order they left): what is kept of a ranking follows those while this stands."""
        return *self.rows_epoch, self.indexes.edits

    def stored(self, rows: Sequence[int] | npt.NDArray[Any]) -> list[dict[str, Any]]:
        """The stored episodes (``Episode.to_json`` form) of ``rows``, one open per segment.

        Raises:
            CorruptRecordError: a record there is not an episode.
            StorageError: a segment cannot be read.
        """
        wanted = rows.tolist() if isinstance(rows, np.ndarray) else [int(r) for r in rows]
        segments, offsets = self.indexes.segments, self.indexes.offsets
        found = self.journal.read_many([segments[r] for r in wanted], [offsets[r] for r in wanted])
        out = []
        for row, record in zip(wanted, found):
            episode = record.get("episode")
            if rec.op_of(record) is not rec.Op.REMEMBER or not isinstance(episode, dict):
                raise CorruptRecordError(f"the record of row {row} at {self.indexes.position(row)} is not an episode")
            out.append(episode)
        return out

    def select(self, cues: dict[str, list[str]], exclude: dict[str, list[str]] | None = None) -> npt.NDArray[np.uint32]:
        """The live rows matching every cue (values of one dimension are a union) and none
        of ``exclude``, ascending."""
        return np.asarray(self.indexes.cues.prune(cues, exclude).rows, dtype=np.uint32)

    def admits(self, cues: dict[str, list[str]], rows: Sequence[int], exclude: dict[str, list[str]] | None = None) -> list[bool]:
        """Whether each of ``rows`` is live and matches ``cues`` and none of ``exclude``."""
        if not rows:
            return []
        return [bool(x) for x in self.indexes.cues.admits(cues, np.asarray(rows, dtype=np.uint32), exclude).tolist()]

    def values(self, dimension: str, start: str | None = None) -> list[str]:
        """The values a cue dimension holds among live rows, sorted (from ``start`` on, when given)."""
        return self.indexes.cues.values(dimension, start)

    def count(self, cues: dict[str, list[str]], exclude: dict[str, list[str]] | None = None) -> int:
        """How many live rows match ``cues`` and none of ``exclude``."""
        return int(self.indexes.cues.count(cues, exclude))

    def citers(self) -> npt.NDArray[np.int64]:
        """Row -> the latest row citing it (-1 if none), as a view."""
        return np.frombuffer(self.indexes.citers, dtype=np.int64) if len(self.indexes) else np.zeros(0, np.int64)

    @property
    def citer_rows(self) -> Sequence[int]:
        """Row -> the latest row citing it (-1 if none): the live array, to read one row at a time."""
        return self.indexes.citers

    @property
    def salience(self) -> SalienceTable:
        """The salience table (decay passes, composites, top-k over rows)."""
        return self.indexes.salience

    @property
    def lifecycle(self) -> LifecycleState:
        """Versions, approvals, short-term and retired records (read it; commit records to change it)."""
        return self.indexes.lifecycle

    def last_run(self, job: str) -> dict[str, Any] | None:
        """The latest ``job`` record of ``job``, or None."""
        return self.indexes.jobs.get(job)

    @property
    def head(self) -> Position:
        """The journal position the indexes have applied up to (it moves with every commit)."""
        return self.indexes.head

    # -- upkeep ---------------------------------------------------------------------

    def refresh(self) -> int:
        """Catches up with records other processes appended; returns how many episodes."""
        return self.sharing.catch_up(self)

    def save_index(self) -> None:
        """Writes the index cache to ``index/`` and commits the text index.

        Raises:
            ReadOnlyError: the handle is read-only or closed.
        """
        self._check_handle()
        self._save_index()

    def _save_index(self) -> None:
        self.settle()  # the caches, and a forget's cleared intent after them, prove only what is on disk
        last = None
        if self.indexes.ids:
            last = record_sha(self.journal.read_at(self.indexes.position(len(self.indexes) - 1)))
        head, reading = self.indexes.head, self._reading
        with self.caches.saving(self):  # the text index commits meanwhile
            # The journal's fingerprint goes in before recipe.json: a reader never sees a recipe without it.
            self.indexes.save(self.layout.index, last_record_sha=last, before_recipe=lambda: proof.save(self.layout.index, self.journal, head, reading))
            self._reading = None  # the fingerprint saved carries them on
            noteseen.save(self.layout.index, self.notes.files.seen, self.indexes.notes, self.fsync)
            if self.proposal_files is not None:
                noteseen.save_stats(self.layout.index / PROPOSALS_SEEN, {k: list(v) for k, v in self.proposal_files.seen.items()}, self.fsync)

    def rebuild(self) -> int:
        """Discards the index cache and rebuilds it from the journal; returns the records
        indexed, erased ones left out (as :meth:`ids` counts them)."""
        self._check_handle()
        _log.info("%s: rebuilding every index from the journal", self.root)
        fresh = Indexes(SalienceTable(self.indexes.salience.weights, self.indexes.salience.half_lives_days))
        text = self.caches.restart()  # refilled by the same pass
        reading = proof.Reading(self.journal)
        apply_journal(fresh, self.journal, None, text=text, reading=reading)
        proof.discard(self.layout.index)
        self.indexes, self._reading = fresh, reading
        self._rebuilds += 1
        self.caches.discard_vectors()
        self._save_index()
        return self.record_count()

    def repair_text(self, why: str) -> None:
        """Rebuilds the text index from the journal after it was found damaged under the
        open handle (a writer's); the caches' report says so."""
        self.check_local()
        _log.warning("%s: the text index was damaged while open (%s); rebuilding it from the journal", self.root, why)
        self.caches.repair(self.indexes, self.journal, why)

    def stats(self) -> HomeStats:
        """Counts and sizes of the home."""
        s = self.indexes.cues.stats()
        segments = sorted(self.layout.journal.glob("*.jsonl"))
        try:
            journal_bytes = sum(p.stat().st_size for p in segments)
        except OSError as exc:
            raise StorageError(exc.errno or 0, f"cannot read the journal: {exc.strerror}") from None
        return HomeStats(
            episodes=len(self.indexes),
            notes=len(self.indexes.notes),
            dimensions=len(DIMENSIONS),
            values=s.values,
            postings=s.postings,
            index_bytes=s.bytes + self.indexes.salience.nbytes,
            journal_bytes=journal_bytes,
            journal_segments=len(segments),
            journal_problems=len(self.journal.problems),
        )


def missing(id: object) -> str:
    """The one message of a record that does not exist (or not for the reader)."""
    return f"no episode with id {id!r}"


def _trusted(record: rec.Record) -> kinds.TypedRecord:
    """A record this process built (or checked), read by its class."""
    return kinds.parse(record, trusted=True)


def _log_open(home: Home, read_only: bool) -> None:
    """Tells the ``cuemem.home`` logger how the home came up: INFO for the states, WARNING
    for every file or record skipped."""
    r = home.report
    _log.info(
        "opened %s%s: %d episodes; index %s%s, text %s", home.root, " read-only" if read_only else "", len(home.indexes),
        r.index.value, f" ({r.rebuilt_because})" if r.rebuilt_because else "", home.caches.report,
    )
    for problem in r.journal_problems:
        _log.warning("%s: journal: %s", home.root, problem)
    for position, why in r.skipped_records:
        _log.warning("%s: journal record at %s skipped: %s", home.root, position, why)
    for error in r.note_errors:
        _log.warning("%s: note file skipped: %s", home.root, error)
    for problem in r.proposal_problems:
        _log.warning("%s", problem)
    for nid in r.notes_recovered:
        _log.info("%s: note %s placed after an interrupted write", home.root, nid)
    vectors = home.caches.vectors
    if vectors is not None:
        _log.info("%s: vectors of %s %s", home.root, vectors.embedder.name, vectors.report)
