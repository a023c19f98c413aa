"""``Caches``: the derived caches of a home's rows, behind one owner — the text index in use,
a new recipe's text index waiting for the golden set (:mod:`.textswap`, :func:`.query.golden.settle`),
and the vectors of an embedder (:mod:`.vectorindex`).

Each is rebuilt from the journal when it cannot be proved to match it; none is the truth.
The :class:`~cuemem.home.home.Home` holds one ``Caches`` and hands it what the journal gained
(:meth:`Caches.add`, :meth:`Caches.feed`), what a forget erased (:meth:`Caches.erase`) and
when to save (:meth:`Caches.save`); which text index serves changes only here
(:meth:`Caches.swap`, :meth:`Caches.keep`, :meth:`Caches.trying`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..store.fsync import FsyncPolicy
from ..store.journal import Journal
from ..text.vectors import Embedder
from . import forks
from .apply import Fed
from .indexes import Indexes
from .aside import Aside
from .textindex import WRITER_LOCK, TextCache
from .textswap import Candidate, mark_in_use, open_text
from .vectorindex import VectorCache

__all__ = ["Caches"]

_log = logging.getLogger("cuemem.home")


class Caches:
    """A home's text index (and a waiting candidate) and vectors; see the module docstring."""

    def __init__(self, index_dir: Path, fsync: FsyncPolicy, text: TextCache | None, report: str, candidate: Candidate | None) -> None:
        self._index_dir = index_dir
        self._fsync = fsync
        #: The text index in use, if the home has one (a read-only handle of a home never opened writable has none).
        self.text = text
        #: How the text index came up: "loaded", "loaded and caught up", "rebuilt (why)" (and a swap's outcome).
        self.report = report
        #: A text index of a new recipe built beside the one in use, until the golden set decides.
        self.candidate = candidate
        #: The embeddings of the rows, when the handle was opened with an embedder.
        self.vectors: VectorCache | None = None

    @classmethod
    def open(
        cls, index_dir: Path, analyzer: str, indexes: Indexes, journal: Journal, *, writable: bool, distrust: bool, fsync: FsyncPolicy,
        filled: TextCache | None = None,
    ) -> Caches:
        """The text index of ``analyzer`` (or the one in use, :func:`.textswap.open_text`),
        caught up with ``indexes`` or rebuilt (``distrust``: the journal changed under it);
        ``filled``: the one the replay filled (:func:`.textswap.replay_target`)."""
        text, report, candidate = open_text(
            index_dir, analyzer, indexes, journal, writable=writable, distrust=distrust, fsync=fsync, filled=filled,
        )
        return cls(index_dir, fsync, text, report, candidate)

    def open_vectors(self, embedder: Embedder, home: Any, *, writable: bool, distrust: bool) -> None:
        """Opens the vectors of ``embedder`` for ``home``'s rows (loaded, or rebuilt when next needed)."""
        self.vectors = VectorCache.open(self._index_dir, embedder, home, writable=writable, fsync=self._fsync, distrust=distrust)

    # -- following the journal --------------------------------------------------------

    def add(self, decoded: Sequence[Fed], texts: Sequence[tuple[int, str]]) -> None:
        """Adds the narratives of a commit's new rows: runs the core decoded, and ``(row, text)`` pairs."""
        if self.text is None:
            return
        for run, lo, hi, first in decoded:
            self.text.add_decoded(run, lo, hi, first)
        self.text.add_pairs(texts)

    def feed(self, indexes: Indexes, journal: Journal) -> None:
        """Adds the narratives of the rows the text index lacks, read from the journal."""
        if self.text is not None:
            self.text.feed(indexes, journal)

    def refresh(self) -> None:
        """Picks up the text index a writer committed (a reader's)."""
        if self.text is not None:
            self.text.refresh()

    def erase(self, rows: Sequence[int], indexes: Indexes, journal: Journal) -> None:
        """Erases ``rows`` from the text index and the embeddings (a forget)."""
        if self.text is not None:
            self.text.erase(rows, indexes, journal)
        if self.vectors is not None:
            self.vectors.erase(list(rows))

    def restart(self) -> TextCache | None:
        """Empties every cache before a rebuild; returns the text index to refill in the same pass."""
        if self.text is not None:
            self.text.restart()
        return self.text

    def discard_vectors(self) -> None:
        """Forgets every embedding (embedded again when next needed)."""
        if self.vectors is not None:
            self.vectors.discard()

    def repair(self, indexes: Indexes, journal: Journal, why: str) -> None:
        """Rebuilds the text index from the journal after it was found damaged while open."""
        if self.text is not None:
            self.text.rebuild(indexes, journal)
            self.report = f"rebuilt (damaged while open: {why})"

    def save(self, home: Any) -> None:
        """Commits the text index and writes the embeddings of ``home``'s rows (a writer)."""
        if self.text is not None:
            self.text.commit(home.indexes, home.journal)
        if self.vectors is not None:
            self.vectors.save(home)

    @contextmanager
    def saving(self, home: Any) -> Iterator[None]:
        """Saves the caches (:meth:`save`) on a thread of their own while the body saves the
        row indexes: the text index's commit waits on its writer's threads and its sync with
        the GIL released. Each cache proves what it covers when next opened, so neither
        save needs the other's done (without a thread, the save is made first). The body's
        error is raised first, then the save's; the thread has ended when this returns."""
        save = Aside(self.save, home, name="cuemem-save-caches")
        try:
            yield
        except BaseException:
            save.wait()
            if save.error is not None:  # the body's error is the one raised; this one is said
                _log.warning("%s: saving the caches failed too: %s", self._index_dir.parent, save.error)
            raise
        save.result()

    # -- closing ------------------------------------------------------------------------

    def closers(self) -> list[Callable[[], None]]:
        """The steps closing the text indexes (each run whatever the others do)."""
        return [t.close for t in (self.text, self.candidate.cache if self.candidate is not None else None) if t is not None]

    def drop(self) -> None:
        """Lets go of the text indexes (dropping the core lets go of a text writer's lock, even after a failed close)."""
        self.text = None
        self.candidate = None

    def abandon(self) -> None:
        """Lets go of the text writers in a forked child, untouched (:mod:`.forks`)."""
        for text in (self.text, self.candidate.cache if self.candidate is not None else None):
            if text is not None and text.writable:
                try:
                    text.core.abandon()
                finally:
                    text.writable = False
                    forks.close_descriptors_of((text.directory / WRITER_LOCK).resolve())

    # -- which text index serves ------------------------------------------------------

    def take_candidate(self) -> Candidate | None:
        """The text index waiting for the golden set, if any; it waits no longer."""
        candidate, self.candidate = self.candidate, None
        return candidate

    @contextmanager
    def trying(self, new: TextCache) -> Iterator[None]:
        """Serves ``new`` for the duration (the golden set asked of it), then the one in use again."""
        old, self.text = self.text, new
        try:
            yield
        finally:
            self.text = old

    def swap(self, candidate: Candidate, why: str) -> None:
        """Makes ``candidate``'s index the one in use (recorded on disk); the old one is closed."""
        old, new = self.text, candidate.cache
        assert old is not None
        mark_in_use(self._index_dir, new.analyzer, self._fsync)
        old.close()
        self.text = new
        self.report = f"{candidate.report}; {new.analyzer} swapped in for {old.analyzer} ({why})"
        _log.info("%s: text index %s swapped in for %s (%s)", self._index_dir.parent, new.analyzer, old.analyzer, why)

    def keep(self, new: TextCache, indexes: Indexes, journal: Journal, why: str) -> None:
        """Keeps the index in use; ``new`` is flushed (asked again at the next open) and closed."""
        old = self.text
        assert old is not None
        new.flush(indexes, journal)
        new.close()
        self.report = f"{self.report}; kept {old.analyzer} in use, not {new.analyzer}: {why}"
        _log.warning("%s: text index %s kept in use, not the new recipe %s: %s", self._index_dir.parent, old.analyzer, new.analyzer, why)
