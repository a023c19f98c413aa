"""Bringing the indexes up to date with the journal: load the cache, catch up, rebuild.

The journal is the truth; the indexes follow it. :func:`load_indexes` uses the cached
indexes when their recipe matches and the journal still extends the record they
stopped at, catches them up when the journal has grown, and rebuilds them otherwise.
:func:`apply_journal` reads the journal in runs the core decodes in batches and feeds
what it proves, and every other record, to the same :class:`~.apply.Applier` a live
write uses, which validates in full what the core left to it: a record a person broke
is skipped and reported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import _core
from .._gc import gc_paused
from ..errors import CuememError
from ..salience import SalienceTable
from ..store.journal import Journal, Position, Run
from ..store.records import op_of
from . import proof
from .apply import ASIDE, Applier
from .decoding import VersionFields, decoded_runs, proved_versions
from .indexes import DecodedRows, Indexes, record_sha
from .layout import Layout
from .textindex import TextFeed

if TYPE_CHECKING:
    from .textindex import TextCache


#: What a cache file may hold beyond the journal's bytes (the headers and keys of an empty home's).
CACHE_SLACK = 1 << 20


def load_indexes(
    layout: Layout, journal: Journal, salience: SalienceTable, text: TextCache | None = None,
) -> tuple[Indexes, str, int, bool, proof.Reading | None]:
    """The indexes of the home: the cache if the journal extends it (caught up), else rebuilt.

    The cache is used only when the journal still holds the very bytes it was built
    from: its last record (the recipe) and every byte before it (:mod:`.proof`). A rebuild
    fills ``text`` (an empty text index, :func:`~.textswap.replay_target`) in the same pass.

    Returns the indexes, how they came up (``"loaded"``, ``"loaded and caught up"`` or
    ``"rebuilt (why)"``), how many episodes catching up added, whether journal bytes the
    cache had covered changed (so that every cache of the home must go), and, rebuilt,
    the checksums of the journal as the rebuild read it (for the next save's fingerprint).
    """
    cached, info = Indexes.load(layout.index, salience, journal.size() + CACHE_SLACK)
    changed = False
    if cached is not None and isinstance(info, dict):
        fresh = True
        if cached.ids:
            try:
                last = journal.read_at(cached.position(len(cached.ids) - 1))
                fresh = record_sha(last) == info["journal"]["last_record_sha256"]
            except CuememError:
                fresh = False
        if fresh and cached.head <= journal.head():
            edited = proof.check(layout.index, layout.journal, cached.head)
            if edited is None:
                try:
                    caught_up = apply_journal(cached, journal, cached.head)
                except CuememError as exc:  # e.g. a cached head that is no line boundary
                    edited = f"the cache cannot be caught up: {exc}"
                else:
                    return cached, "loaded" if not caught_up else "loaded and caught up", caught_up, False, None
            why, changed = edited, True
        else:
            why, changed = "the journal does not extend the cached index", True
    else:
        why = str(info)
    if journal.writable:
        proof.discard(layout.index)  # rebuilt: the next save checksums the journal afresh
    fresh_indexes = Indexes(salience)
    reading = proof.Reading(journal)
    apply_journal(fresh_indexes, journal, None, text=text, reading=reading)
    return fresh_indexes, f"rebuilt ({why})", 0, changed, reading


class _Aside(NamedTuple):
    """A record of :data:`ASIDE` waiting in a :class:`_Window`: the record (or, proved by the
    core, a version record's fields: :meth:`~cuemem._core.Decoded.versions`), where it starts
    in the run, and where it ends there."""

    record: Mapping[str, Any] | VersionFields
    offset: int
    end: int

    def apply(self, applier: Applier, run: Run, held: int | None = None) -> None:
        """Hands it to ``applier`` (``held``: the rows before it, when rows after it went first)."""
        applier.add_aside(self.record, run.segment, run.offset + self.offset, held)


class _Window:
    """The rows of one decoded run waiting to be applied, and the records of :data:`ASIDE`
    between them, in journal order."""

    __slots__ = ("_journal", "_run", "_decoded", "_lo", "_hi", "_pieces")

    def __init__(self, journal: Journal, run: Run, decoded: _core.Decoded) -> None:
        self._journal, self._run, self._decoded = journal, run, decoded
        self._lo = self._hi = 0
        self._pieces: list[tuple[int, int] | _Aside] = []  # rows lo..hi, or a record

    def rows(self, lo: int, hi: int) -> bool:
        """Takes rows ``lo..hi`` of the run's decoded rows, unless other rows wait that they
        do not follow (False: apply first)."""
        if self._hi > self._lo and lo != self._hi:
            return False
        if self._hi == self._lo:
            self._lo = lo
        self._hi = hi
        self._pieces.append((lo, hi))
        return True

    def aside(self, record: Mapping[str, Any] | VersionFields, offset: int, end: int) -> None:
        """Takes a record of :data:`ASIDE` (or a proved version's fields) at bytes ``offset..end`` of the run."""
        self._pieces.append(_Aside(record, offset, end))

    def apply(self, applier: Applier, feed: TextFeed | None) -> Position | None:
        """Applies what waits: the rows in one batch when their ids are new, then each record
        checked against the rows before it; else piece by piece in journal order, a piece of
        rows whole when its ids are new, else line by line (the applier says which id repeats).
        Returns where the last ends (None: nothing waited)."""
        if not self._pieces:
            return None
        run, decoded, lo, hi, pieces = self._run, self._decoded, self._lo, self._hi, self._pieces
        self._pieces, self._lo, self._hi = [], 0, 0
        held = applier.next_row
        if hi == lo or applier.add_fresh(DecodedRows(decoded, lo, hi, decoded.ids(lo, hi), run.segment, run.offset)):
            if hi > lo and feed is not None:
                feed.add(decoded, lo, hi, held)
            for piece in pieces:
                if isinstance(piece, _Aside):
                    piece.apply(applier, run, held)
                else:
                    held += piece[1] - piece[0]
        else:  # piece by piece in journal order; a piece of rows whole when its ids are new, else line by line
            for piece in pieces:
                if isinstance(piece, _Aside):
                    piece.apply(applier, run)
                    continue
                first = applier.next_row
                if applier.add_fresh(DecodedRows(decoded, *piece, decoded.ids(*piece), run.segment, run.offset)):
                    if feed is not None:
                        feed.add(decoded, *piece, first)
                    continue
                for s, e in decoded.spans(*piece):
                    entry = self._journal.entry(Position(run.segment, run.offset + s), run.data[s:e])
                    if entry is not None:
                        applier.add(entry.record, run.segment, run.offset + s)
        last = pieces[-1]
        if isinstance(last, _Aside):
            return Position(run.segment, run.offset + last.end)
        return Position(run.segment, run.offset + decoded.spans(last[1] - 1, last[1])[0][1])


@gc_paused
def apply_journal(
    indexes: Indexes, journal: Journal, start: Position | None, text: TextCache | None = None, reading: proof.Reading | None = None,
) -> int:
    """Applies journal records from ``start`` to the indexes; returns how many episodes.

    The journal is read in runs of whole lines, and the core decodes each run
    (:func:`~.decoding.decoded_runs`: the next one while this one is applied): the
    ``remember`` records it proves valid join the indexes as rows without a Python object
    each; every other line goes, checked, through the :class:`~.apply.Applier` a live write
    uses (the journal is a file a person may edit): a broken record is skipped and reported
    in :attr:`Indexes.skipped`.

    With ``text`` (a text index that holds every row the indexes do), the narratives of
    the rows added go to it in the same pass; ``reading`` is handed every run read.
    """
    before = len(indexes)
    applier = Applier(indexes, trusted=False, texts=text is not None)
    head = start
    feed = TextFeed(text) if text is not None else None
    try:
        for run, decoded in decoded_runs(journal.runs(start)):
            if reading is not None:
                reading.add(run.segment, run.offset, run.data)
            window = _Window(journal, run, decoded)
            proved = proved_versions(decoded)
            for is_rows, a, b in decoded.plan():
                if is_rows:
                    if not window.rows(a, b):
                        head = window.apply(applier, feed) or head
                        window.rows(a, b)
                    continue
                version = proved.get(a) if proved else None
                if version is not None:
                    window.aside(version, a, b)
                    continue
                entry = journal.entry(Position(run.segment, run.offset + a), run.data[a:b])
                if entry is not None and op_of(entry.record) in ASIDE:
                    window.aside(entry.record, a, b)
                    continue
                head = window.apply(applier, feed) or head
                if entry is not None:
                    applier.add(entry.record, run.segment, run.offset + a)
                    head = entry.end
            head = window.apply(applier, feed) or head
    except BaseException:
        if feed is not None:
            feed.wait(quiet=True)  # no thread outlives the call; the error raised is this one
        raise
    if feed is not None:
        feed.finish(applier.texts)  # with the rows of lines the core left to the applier
    applier.flush()
    if text is not None:
        text.rows = len(indexes)
    if head is not None:
        indexes.head = head
    return len(indexes) - before
