"""The home's text index (:class:`TextCache`): a cache of the journal's narratives, one directory per recipe.

``index/text/<analyzer>-v<format>/`` holds a tantivy index whose documents are the
home's rows (the row in a fast field). Each commit records, as its payload, the
recipe, how many rows it covers and a digest of the journal record of its last row.
On open the index is used when its recipe matches and the journal still holds that
record at that row; rows added since are caught up from the journal; anything else
rebuilds it from the journal. Rebuilding the same journal gives the same documents,
hence the same results. Indexes of other recipes sit beside it, untouched.

Rows added since the last commit are searchable at once: the core searches them in
memory (its *tail*) beside the committed segments, with the BM25 statistics of both
together, so a text recall answers the same before a commit as after it. The tail
holds at most ``_core.TextIndex.tail_limit`` rows; past that, :meth:`TextCache.ready`
commits before the next search. A writer also commits at ``save_index`` (and so on
close); a crash loses only uncommitted rows of a cache, which the next open catches
up from the journal. A read-only handle sees the last commit, never a writer's tail.

Damaged files: the core checks every segment file of the index against its checksum
when it opens it (read-only or not), except a file whose size and modification time
are those a writer recorded when it last checked it (``.cuemem-verified`` beside the
segments: a stat instead of a read of every byte, the shortcut the journal's proof
takes too). A writer then wipes and rebuilds the index; a read-only handle has none
("unavailable (...)": its text recalls are refused; a handle opened after a writer
rebuilt it has one again). Before each search the core stats the files it searches:
one changed under the open handle is checked again, and a damaged one is a
:class:`~cuemem.errors.CorruptIndexError` — which a writer's text recall answers by
rebuilding the index from the journal and asking again (``Home.repair_text``), and a
reader's raises. The one edit no stamp shows — same size, the modification time put
back — meets tantivy's own reads: a typed error (never a panic: the binding turns one
into that error) or, rarely, a wrong answer, until ``Memory.rebuild()``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .. import _core
from ..errors import CorruptIndexError, CuememError, StorageError
from ..store.journal import Journal, Position
from ..text.recipe import text_directory, text_recipe
from .aside import Aside
from .decoding import DECODER
from .indexes import Indexes, record_sha
from .layout import stray

#: Rows handed to the core at a time while (re)building.
_BATCH = 10_000
#: Fewest rows :class:`TextFeed` feeds on a thread of its own (fewer are fed in turn).
ASIDE_ROWS = 256

#: The lock file the text index's writer holds (tantivy's, taken with ``flock``).
WRITER_LOCK = ".tantivy-writer.lock"


class TextCache:
    """The text index of one home and recipe, kept in step with the row indexes."""

    def __init__(self, core: _core.TextIndex, directory: Path, analyzer: str, writable: bool) -> None:
        self._core = core
        self.directory = directory
        self.analyzer = analyzer
        self.writable = writable
        #: Rows the index holds (committed or pending).
        self.rows = 0
        #: The feed that may be handing the core a batch from another thread (:class:`TextFeed`).
        self.feeding: TextFeed | None = None

    @property
    def core(self) -> _core.TextIndex:
        """The core's index, once the batch a :class:`TextFeed` is handing it from another
        thread is in: whatever reads or writes the index meanwhile (a search from an
        import's progress callback, a commit, a close) waits for it first."""
        if self.feeding is not None:
            self.feeding.join()
        return self._core

    @core.setter
    def core(self, core: _core.TextIndex) -> None:
        self._core = core

    @classmethod
    def open(
        cls, index_dir: Path, analyzer: str, indexes: Indexes, journal: Journal, *, writable: bool, distrust: bool = False
    ) -> tuple[TextCache | None, str]:
        """Opens, catches up or rebuilds the text index; returns it and how it came up.

        A read-only handle uses the index as last committed (``None`` if there is
        none): rows a writer added since are not searchable by text until it commits.
        With ``distrust`` (journal bytes the caches covered have changed) a writer
        rebuilds it and a reader goes without it.
        """
        directory = text_directory(index_dir, analyzer)
        if distrust and not writable:
            return None, "unavailable (the journal changed under it; a writer rebuilds it)"
        if not writable:
            try:
                core = _opened(directory, analyzer, False)
            except CuememError as exc:
                return None, f"unavailable ({exc})"
            cache = cls(core, directory, analyzer, False)
            cache.rows = _payload_rows(core.payload, analyzer) or 0
            return cache, "loaded"
        try:
            cache = cls(_opened(directory, analyzer, True), directory, analyzer, True)
        except CorruptIndexError:  # damaged (a checksum, a panic) or foreign files: a cache, so start over
            shutil.rmtree(directory, ignore_errors=True)
            cache = cls(_writable(directory, analyzer), directory, analyzer, True)
        start, why = (None, "the journal changed under it") if distrust else cache._usable_rows(indexes, journal)
        if start is None:
            cache.core = cache._fresh()
            start = 0
        cache.rows = start
        fed = cache.feed(indexes, journal)
        if fed:
            cache.commit(indexes, journal)
        if why:
            return cache, f"rebuilt ({why})"
        return cache, "loaded and caught up" if fed else "loaded"

    @classmethod
    def empty(cls, index_dir: Path, analyzer: str) -> TextCache:
        """A new, empty writable text index of ``analyzer`` in ``index_dir``, where there is
        none (:func:`~.textswap.replay_target`): a replay from scratch fills it."""
        directory = text_directory(index_dir, analyzer)
        return cls(_writable(directory, analyzer), directory, analyzer, True)

    def _usable_rows(self, indexes: Indexes, journal: Journal) -> tuple[int | None, str]:
        raw = self.core.payload
        if raw is None:
            return None, "no text index"
        try:
            body = json.loads(raw)
            if body.get("recipe") != text_recipe(self.analyzer):
                return None, "the recipe changed"
            rows = int(body["rows"])
            if rows > len(indexes) or int(body.get("docs", rows)) != self.core.num_docs:
                return None, "the text index holds rows the journal does not"
            if rows and record_sha(journal.read_at(indexes.position(rows - 1))) != body["last_record_sha256"]:
                return None, "the journal does not extend the text index"
        except (CuememError, ValueError, KeyError, TypeError, AttributeError) as exc:
            return None, f"unusable payload: {exc}"
        return rows, ""

    def _fresh(self) -> _core.TextIndex:
        """A new, empty index in place of this one (whose writer lets go first)."""
        self.core.close()
        del self._core
        shutil.rmtree(self.directory, ignore_errors=True)
        return _writable(self.directory, self.analyzer)

    def restart(self) -> None:
        """Discards the index: it holds no row now (:meth:`feed` or a replay fills it)."""
        self.core = self._fresh()
        self.rows = 0

    def rebuild(self, indexes: Indexes, journal: Journal) -> int:
        """Discards the index and builds it again from the journal; returns the rows."""
        self.restart()
        count = self.feed(indexes, journal)
        self.commit(indexes, journal)
        return count

    def feed(self, indexes: Indexes, journal: Journal) -> int:
        """Adds the narratives of rows ``self.rows ..`` from the journal; returns how many.

        The journal is read in runs the core reads (:data:`~.decoding.DECODER`, for
        narratives only: a row is a line at a row's position, which the indexes proved): their
        narratives go to the text index without leaving the core;
        the core leaves the rest to :meth:`Journal.entry <cuemem.store.journal.Journal.entry>`.
        """
        n = len(indexes)
        start = self.rows
        if start >= n:
            return 0
        segments = np.frombuffer(indexes.segments, dtype=np.uint64)
        offsets = np.frombuffer(indexes.offsets, dtype=np.uint64)
        rows: list[int] = []
        texts: list[str] = []
        r = start
        for run in journal.runs(indexes.position(r)):
            # The indexes proved their rows: the text index needs only where each is and its narrative.
            # (Decoded in turn, not ahead: this loop stops at the indexes' last row, and a run read
            # past it would be read for nothing, a line being appended there reported torn.)
            decoded = DECODER.decode(run.data, narratives_only=True)
            for is_rows, a, b in decoded.plan():
                if is_rows:
                    found = decoded.offsets(a, b, run.offset)
                    k = min(b - a, n - r)
                    if k == b - a and bool((segments[r:r + k] == run.segment).all()) and bool((offsets[r:r + k] == found).all()):
                        self.add(rows, texts)  # what came before, first
                        rows, texts = [], []
                        decoded.feed_text(a, b, r, self.core)
                        r += k
                        self.rows = max(self.rows, r)
                        continue
                    spans = decoded.spans(a, b)  # rows the indexes do not hold as they come
                else:
                    spans = [(a, b)]
                for lo, hi in spans:
                    if r < n and Position(run.segment, run.offset + lo) == indexes.position(r):
                        entry = journal.entry(indexes.position(r), run.data[lo:hi])
                        episode = None if entry is None else entry.record.get("episode")
                        if isinstance(episode, dict):  # else the tombstone of an erased record: no document
                            rows.append(r)
                            texts.append(episode["narrative"])
                        r += 1
                if len(rows) >= _BATCH:
                    self.add(rows, texts)
                    rows, texts = [], []
                if r >= n:
                    break
            if r >= n:
                break
        self.add(rows, texts)
        self.rows = max(self.rows, r)
        return r - start

    def add(self, rows: Sequence[int], texts: Sequence[str]) -> None:
        """Adds narratives of new rows (searchable after the next commit)."""
        if rows:
            self.core.add(np.asarray(rows, dtype=np.uint32), list(texts))
            self.rows = max(self.rows, int(rows[-1]) + 1)

    def add_pairs(self, pairs: Sequence[tuple[int, str]]) -> None:
        """Adds ``(row, narrative)`` pairs: the rows an applier read in Python (a line the core
        does not prove), searchable after the next commit."""
        if pairs:
            rows, texts = zip(*pairs)
            self.add(rows, texts)

    def add_decoded(self, decoded: _core.Decoded, lo: int, hi: int, first: int) -> None:
        """Adds the narratives of rows ``lo..hi`` the core decoded, as rows ``first ..``
        (searchable after the next commit)."""
        self._add_decoded(decoded, lo, hi, first, self.core)

    def _add_decoded(self, decoded: _core.Decoded, lo: int, hi: int, first: int, core: _core.TextIndex) -> None:
        if hi > lo:
            decoded.feed_text(lo, hi, first, core)
            self.rows = max(self.rows, first + hi - lo)

    def _payload(self, indexes: Indexes, journal: Journal, docs: int) -> str:
        last = record_sha(journal.read_at(indexes.position(self.rows - 1))) if self.rows else None
        body: dict[str, object] = {"recipe": text_recipe(self.analyzer), "rows": self.rows, "last_record_sha256": last}
        if docs != self.rows:
            body["docs"] = docs  # rows without a document: erased ones
        return json.dumps(body, sort_keys=True)

    def commit(self, indexes: Indexes, journal: Journal) -> None:
        """Commits pending rows with a payload naming the recipe, the rows and documents it
        covers and the journal digest."""
        self.core.commit(self._payload(indexes, journal, self.core.num_docs + self.core.pending))

    def erase(self, rows: Sequence[int], indexes: Indexes, journal: Journal) -> int:
        """Erases the documents of ``rows`` for good (their terms leave the files); how many."""
        if not rows:
            return 0
        held = np.asarray(rows, dtype=np.uint32)
        expected = self.core.num_docs + self.core.pending - int(np.count_nonzero(held < self.rows))
        removed = int(self.core.erase(held, self._payload(indexes, journal, expected)))
        if self.core.num_docs != expected:  # some of them held no document: say what is there
            self.core.commit(self._payload(indexes, journal, self.core.num_docs))
        return removed

    def rollback(self) -> None:
        """Drops the rows added since the last commit."""
        self.core.rollback()
        self.rows = _payload_rows(self.core.payload, self.analyzer) or 0

    def ready(self, indexes: Indexes, journal: Journal) -> None:
        """Makes every added row searchable: the core's tail searches pending rows in
        memory; a writer commits only the rows past its bound."""
        if self.writable and self.core.pending and not self.core.searches_pending:
            self.commit(indexes, journal)

    def flush(self, indexes: Indexes, journal: Journal) -> None:
        """Commits the rows added since the last commit, if any (a writer)."""
        if self.writable and self.core.pending:
            self.commit(indexes, journal)

    def close(self) -> None:
        """Releases the writer (and its lock) after its merges finish."""
        if self.writable:
            self.core.close()
            self.writable = False

    def refresh(self) -> None:
        """Picks up a writer's latest commit (read-only handles)."""
        if not self.writable:
            self.core.reload()
            self.rows = _payload_rows(self.core.payload, self.analyzer) or 0


def _opened(directory: Path, analyzer: str, writable: bool) -> _core.TextIndex:
    """The core's index in ``directory``, opened only if every entry there is a regular file,
    as the core writes them: a FIFO would block its open, a link to a device never end a read.

    Raises:
        CorruptIndexError: an entry that is not a regular file (links not followed), or as the core raises.
    """
    try:
        with os.scandir(directory) as listing:
            odd = next((entry.name for entry in listing if not entry.is_file(follow_symlinks=False)), None)
    except FileNotFoundError:
        odd = None  # the core makes it (a writer) or says there is none (a reader)
    except OSError as exc:
        raise CorruptIndexError(f"cannot list the text index {directory}: {exc}") from None
    if odd is not None:
        raise CorruptIndexError(f"{directory / odd} is not a regular file")
    return _writable(directory, analyzer) if writable else _core.TextIndex(directory, analyzer, False)


def _writable(directory: Path, analyzer: str) -> _core.TextIndex:
    """A writer's text index in ``directory``, made there if need be: a file, a FIFO or a
    link to anything but a directory standing where the directory (or ``index/text/``)
    goes is the home's own cache entry, and is removed, not a reason the home cannot open.

    Raises:
        StorageError: it cannot be removed. CuememError: as the core raises.
    """
    for path in (directory.parent, directory):
        if stray(path):
            try:
                path.unlink()
            except OSError as exc:
                raise StorageError(exc.errno or 0, f"cannot remove {path}, which stands where the text index goes: {exc.strerror}") from None
    return _core.TextIndex(directory, analyzer, True)


def _payload_rows(raw: str | None, analyzer: str) -> int | None:
    if raw is None:
        return None
    try:
        body = json.loads(raw)
        return int(body["rows"]) if body.get("recipe") == text_recipe(analyzer) else None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


class TextFeed:
    """A text index fed decoded narratives on a thread of its own, one batch at a time and in
    order, while the caller goes on (a replay feeds the same rows to the cue and salience
    indexes, an import reads and admits the next chunk): the core releases the GIL for
    each. While a batch is under way, anything else that uses the index waits for it
    (:attr:`TextCache.core`); the batch's error is raised by :meth:`wait`, to the caller."""

    __slots__ = ("_text", "_batch")

    def __init__(self, text: TextCache) -> None:
        self._text = text
        self._batch: Aside[None] | None = None

    def add(self, decoded: _core.Decoded, lo: int, hi: int, first: int) -> None:
        """Feeds the narratives of rows ``lo..hi`` of ``decoded`` as rows ``first ..``, once the
        batch before is in; the error of the batch before is raised here. Fewer than
        :data:`ASIDE_ROWS` rows are fed in turn (a thread would cost more than they do: a
        catch-up of a few lines)."""
        self.wait()
        text = self._text
        if hi - lo < ASIDE_ROWS:
            text._add_decoded(decoded, lo, hi, first, text.core)
            return
        self._batch = Aside(text._add_decoded, decoded, lo, hi, first, text.core, name="cuemem-text-feed")
        text.feeding = self

    def finish(self, pairs: Sequence[tuple[int, str]]) -> None:
        """Returns once the batches fed are in (raising their error), having added the
        ``(row, narrative)`` pairs the applier read in Python (:meth:`TextCache.add_pairs`)."""
        self.wait()
        self._text.add_pairs(pairs)

    def join(self) -> None:
        """Returns once the batch under way is in (its error is kept for :meth:`wait`); from
        the feeding thread itself, at once."""
        if self._batch is not None:
            self._batch.wait()

    def wait(self, *, quiet: bool = False) -> None:
        """Returns once the batch under way is in; raises its error unless ``quiet``."""
        batch = self._batch
        if batch is None:
            return
        batch.wait()
        self._batch = None
        if self._text.feeding is self:
            self._text.feeding = None
        if not quiet:
            batch.result()
