"""``Notebook``: a home's notes — the note files, their journaled versions, and the policy cache
made from them.

A note is written by committing a ``note`` record (:meth:`~cuemem.home.home.Home.commit`
stages and places its file); everything else about the notes is read here: which version
of each the journal holds, the files as they are now (a person may have edited them),
picking those edits up as new versions (:meth:`Notebook.sync`), and the index's cache of the
policies parsed from the journaled notes. A :class:`~cuemem.home.home.Home` holds one
``Notebook`` as ``home.notes`` (its files: ``home.notes.files``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from ..errors import CuememError
from ..store import records as rec
from ..store.note_versions import synced_versions
from ..store.notes import NoteScan, NoteStore, Seen
from . import policycache
from .notefacts import JournaledNotes
from .results import SyncReport

if TYPE_CHECKING:
    from ..schema import Note
    from ..schema.policy import Policy
    from ..store.journal import Position
    from .indexes import Indexes
    from .layout import Layout

__all__ = ["Notebook"]


class Keeper(Protocol):
    """What a notebook needs of its home (a :class:`~cuemem.home.home.Home`): the indexes as
    they are now, the layout, and the write path."""

    @property
    def indexes(self) -> Indexes:
        """The home's indexes as they are now (a rebuild replaces them)."""

    @property
    def layout(self) -> Layout:
        """Where the home's files are."""

    @property
    def writable(self) -> bool:
        """Whether the handle holds the writer lock (and is open)."""

    def check_writable(self) -> None:
        """Raises unless the handle may write."""

    def commit(self, records: Sequence[rec.Record], *, notify: bool = True) -> list[Position]:
        """Writes ``records`` as one grouped commit."""


class Notebook:
    """A home's notes; see the module docstring."""

    def __init__(self, files: NoteStore, home: Keeper, edited: bool) -> None:
        #: The note files (writing one is committing a ``note`` record; the home stages and places them).
        self.files = files
        self._home = home
        #: Note files differ from their journaled versions (a person's edits, until :meth:`sync`).
        self.edited = edited

    @property
    def versions(self) -> dict[str, tuple[int, str]]:
        """Note id -> (latest journaled version, sha256 of its file then)."""
        return self._home.indexes.notes

    def sync(self, at: datetime) -> SyncReport:
        """Picks up note files a person edited or added as new versions (origin user); one commit."""
        self._home.check_writable()
        scan = self.scan(changed_only=True)
        notes = synced_versions(scan, self.versions, at)
        self._home.commit([rec.note(n) for n in notes])
        self.edited = bool(scan.errors)
        return SyncReport(updated=[n.id for n in notes], errors=list(scan.errors))

    def cached_policies(self, notes: Mapping[str, tuple[int, str]] | None = None) -> list[Policy] | None:
        """The policies of the index's policy cache, if it was made from exactly the
        journaled notes (or ``notes``, a state of them: id -> (version, sha)) and no note
        file was edited since; else None."""
        return None if self.edited else policycache.load(self._home.layout.index, self.versions if notes is None else notes)

    def journaled_kind(self, id: str) -> str | None:
        """The kind of note ``id`` as the store last wrote or read its file, if that file
        held the journaled version; None when unknown (the file must be read)."""
        seen = self.files.seen.get(id)
        journaled = self.versions.get(id)
        if seen is None or journaled is None or seen[4] != journaled[1]:
            return None
        return seen[5]

    def cache_policies(self, policies: Sequence[Policy]) -> None:
        """Keeps ``policies``, parsed from the journaled notes, in the index's policy cache
        (a writer whose note files are as journaled; otherwise nothing is written)."""
        if self._home.writable and not self.edited:
            policycache.save(self._home.layout.index, self.versions, policies)

    def scan(self, *, changed_only: bool = False, skip: Callable[[Seen], bool] | None = None) -> NoteScan:
        """The note files: every one, or only those differing from their journaled version;
        a note whose file is as last seen and that ``skip`` holds for is left unread
        (:attr:`NoteScan.passed <cuemem.store.notes.NoteScan.passed>`)."""
        known = {nid: sha for nid, (_, sha) in self.versions.items()} if changed_only else None
        return self.files.scan(known=known, skip=skip)

    def read(self, id: str) -> Note:
        """Note ``id`` as its file holds it now.

        Raises:
            NotFoundError: no such file. NoteFormatError: the file is broken.
        """
        return self.files.read(id)

    def journaled(self) -> JournaledNotes | None:
        """The note files as journaled, when it is provable now: no note file is known to be
        edited by hand and one survey finds every ``.md`` file of the directory as last seen
        with its journaled digest, none missing. None otherwise (read the files)."""
        if self.edited:
            return None
        store, versions = self.files, self.versions
        try:
            survey = store.survey({nid: sha for nid, (_, sha) in versions.items()})
        except CuememError:
            return None
        if survey is None:
            return JournaledNotes(store.seen, versions) if not versions else None
        if survey.missing or any(name[0] != "." and name.endswith(".md") for name in survey.names):
            return None  # a hidden entry is a pending or temporary file, which no scan reads
        return JournaledNotes(store.seen, versions)
