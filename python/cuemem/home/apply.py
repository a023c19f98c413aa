"""Applying journal records to the indexes: the one function a live write and replay share.

An :class:`Applier` takes records in journal order with their positions and brings the
indexes up to them: a ``remember`` becomes a row (gathered in column batches, so no
per-row call crosses into the core), a ``note`` updates the note map, a life-cycle
record updates versions, approvals and retirement, a ``job`` records the run. A live
commit (:meth:`Home.commit <cuemem.home.Home.commit>`), an import and a replay of
the journal all go through it, so a live write and a rebuild cannot diverge.

Records read back from the journal are hostile (a person may have edited a line):
an applier opened with ``trusted=False`` validates each one (its shape by
:func:`cuemem.store.kinds.parse`, then that it names rows the journal holds) and skips,
with the reason in :attr:`Indexes.skipped`, what cuemem did not write. Records a live
write just built are trusted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, cast

import orjson

from .. import _core
from ..errors import MalformedRecordError, SchemaError
from .state import ACCEPTED, ERASE, REVIEW_VERDICTS
from ..schema import Episode
from ..schema.enums import Tier
from ..store import kinds
from ..store import records as rec
from ..store.journal import Position
from .decoding import DECODER, SHORT_KEPT, VersionFields, proved_versions
from .indexes import Batch, DecodedRows, IndexRow, Indexes

__all__ = ["Applier"]

#: A run of rows the core decoded: ``(decoded, lo, hi, first row)``.
Fed = tuple[_core.Decoded, int, int, int]

#: A record other than a row waiting in an applier: the record, where it starts (segment,
#: offset), and the rows the journal held before it when they are fewer than the indexes'
#: (None: every row; see :meth:`Applier.add`).
_Step = tuple[Mapping[str, Any], int, int, "int | None"]

class _Version(NamedTuple):
    """A proved ``version`` record waiting in an applier, as a :data:`_Step` waits."""

    fields: VersionFields
    segment: int
    offset: int
    held: int | None

#: The kinds of record that change no row and that nothing a row's application reads: where
#: they interleave a run of rows (a version record follows each write of a subject), the rows
#: join the indexes in one batch and the records follow them, each checked against the rows
#: the journal holds before it (the ``held`` of :meth:`Applier.add`).
ASIDE = frozenset({rec.Op.VERSION, rec.Op.APPROVAL, rec.Op.PROPOSAL, rec.Op.TAINT, rec.Op.NOTE, rec.Op.JOB})

#: Rows gathered before they join the indexes while replaying.
REPLAY_BATCH = 10_000

# The kinds, looked up once (an enum member's class attribute is a descriptor call).
_REMEMBER, _ERASED = rec.Op.REMEMBER, rec.Op.ERASED
_SHORT = Tier.SHORT.value
#: What the indexes hold of an erased record: a row, and nothing in it.
_NO_AXES = [0.0] * 7


class Applier:
    """Applies records to ``indexes`` in the order given.

    Args:
        indexes: What the records are applied to.
        trusted: The records were built by this process (skip their validation).
        deferred: Touch nothing until :meth:`flush` (an import, whose records join the
            journal only at its commit); otherwise rows join in batches as they come.
        texts: Keep ``(row, narrative)`` of every row :meth:`add` adds in :attr:`texts`.
    """

    __slots__ = ("_indexes", "_trusted", "_deferred", "_steps", "_batch", "_short", "_ids", "_seen", "_next_row", "_keep_texts", "texts")

    def __init__(self, indexes: Indexes, *, trusted: bool, deferred: bool = False, texts: bool = False) -> None:
        self._indexes = indexes
        self._trusted = trusted
        self._deferred = deferred
        # What is waiting to be applied, in order: row batches and other records.
        self._steps: list[Batch | DecodedRows | _Version | _Step] = []
        self._batch: Batch | None = None
        self._short: list[tuple[int, Mapping[str, Any]]] = []  # (step, episode) of short-term rows
        self._ids: set[str] = set()
        # A replay into indexes of no rows (a rebuild) proves a run's ids new by their hashes
        # (every id of the indexes passes through this applier, so all are in it), which
        # leaves the id -> row map to be made when first asked for; otherwise by that map.
        self._seen = _core.Seen() if not trusted and not deferred and not len(indexes) else None
        self._next_row = len(indexes)
        self._keep_texts = texts
        #: ``(row, narrative)`` of every row added (with ``texts=True``), for the text index.
        self.texts: list[tuple[int, str]] = []

    def add(self, record: Mapping[str, Any], segment: int, offset: int, held: int | None = None) -> None:
        """Applies (or queues) one record that starts at ``(segment, offset)`` in the journal.

        ``held``: how many rows the journal holds before the record, when rows after it were
        applied first (the rows that records of :data:`ASIDE` interleave join in one batch, then
        those records); what it names must be among them.
        """
        op = rec.op_of(record)
        if op in ASIDE and not self._steps and not self._deferred:
            self._batch = None
            self._apply(record, segment, offset, held)  # nothing waits: no step to queue and flush
            return
        if op is _REMEMBER:
            try:
                row = self._row(record)
            except SchemaError as exc:
                self._indexes.skipped.append((Position(segment, offset), str(exc)))
                return
            if self._batch is None:
                self._batch = Batch(self._next_row)
                self._steps.append(self._batch)
            self._batch.add(row, segment, offset)
            if not self._trusted:
                self._ids.add(row.id)
                self._see(row.id)
            episode = record["episode"]
            if episode.get("tier") == "short":
                self._short.append((len(self._steps) - 1, episode))
            if self._keep_texts:
                self.texts.append((self._next_row, str(episode["narrative"])))
            self._next_row += 1
            if not self._deferred and len(self._batch.ids) >= REPLAY_BATCH:
                self.flush()
        elif op is _ERASED and record.get("was") == _REMEMBER.value:
            # The tombstone of an erased record keeps its row (rows stay dense) and nothing else.
            try:
                eid = kinds.parse(record, kinds.ErasedRecord).id
                if self._indexes.row_for(eid) is not None or eid in self._ids:
                    raise ValueError(f"id {eid!r} appears twice in the journal")
            except (KeyError, TypeError, ValueError) as exc:
                self._indexes.skipped.append((Position(segment, offset), f"an erased record that cuemem did not write: {exc}"))
                return
            if self._batch is None:
                self._batch = Batch(self._next_row)
                self._steps.append(self._batch)
            self._batch.add(IndexRow(eid, {}, _NO_AXES, 0.0, 0.0), segment, offset)
            self._ids.add(eid)
            self._see(eid)
            self._next_row += 1
            self._batch = None
            self._steps.append((record, segment, offset, None))
            if not self._deferred:
                self.flush()
        elif op is _ERASED:
            return  # an erased note, version, approval or decision: nothing is left of it
        elif op is not None:
            self._batch = None  # what follows may name the rows just gathered
            self._steps.append((record, segment, offset, held))
            if not self._deferred:
                self.flush()
        elif not self._trusted:  # no op cuemem writes (none, or a foreign one): skipped, and said so
            try:
                kinds.parse(record)
            except MalformedRecordError as exc:
                self._indexes.skipped.append((Position(segment, offset), str(exc)))

    def _see(self, id: str) -> None:
        """Takes ``id``, of a row added one by one, as met by the replay's hashes."""
        if self._seen is not None:
            self._seen.add(id.encode("utf-8", "surrogatepass"))

    @property
    def next_row(self) -> int:
        """The row the next episode added gets."""
        return self._next_row

    def add_fresh(self, rows: DecodedRows) -> bool:
        """Applies rows the core decoded and proved valid, as :meth:`add_decoded` does, if
        none of their ids repeats, among themselves or in what is applied; else applies
        nothing and returns False (the caller then hands their lines to :meth:`add`, which
        says which id repeats). For an applier that is not deferred (a replay): what is
        waiting is applied first, so the ids are checked against every row as they are mapped."""
        if self._deferred:
            raise ValueError("a deferred applier takes decoded rows through add_decoded")
        if self._steps:
            self.flush()
        if self._seen is not None:
            # A hash met may be another id's: the lines then go to add(), which checks exactly.
            if not rows.decoded.claim_ids(rows.lo, rows.hi, self._seen):
                return False
        elif not self._indexes.claim(rows.ids):
            return False
        try:
            self.add_decoded(rows)
        except BaseException:
            self._indexes.unclaim()
            raise
        return True

    def add_decoded(self, rows: DecodedRows) -> None:
        """Applies (or queues) rows the core decoded and proved valid (:mod:`.decoding`),
        whose ids are new (this process wrote them, or :meth:`add_fresh` proved it). A
        deferred applier (an import, which holds every row until its stage commits) keeps
        them without their narratives, which the text index has by then, so the run's
        decoded form is freed at once."""
        self._batch = None
        step = len(self._steps)
        self._steps.append(
            rows._replace(decoded=rows.decoded.without_narratives(rows.lo, rows.hi), lo=0, hi=rows.hi - rows.lo) if self._deferred else rows
        )
        for i, kept in rows.decoded.tracked(rows.lo, rows.hi):
            self._short.append((step, {**dict(zip(SHORT_KEPT, kept)), "tier": _SHORT}))
        self._next_row += rows.hi - rows.lo
        if not self._deferred:
            self.flush()  # (so no id waits to be checked against)
        elif not self._trusted:
            self._ids.update(rows.ids)

    def add_written(
        self, records: Sequence[Mapping[str, Any]], lines: Sequence[bytes], positions: Sequence[Position],
    ) -> list[Fed]:
        """Applies (or queues) records a live write just appended, with their lines and where
        each starts: each run of ``remember`` records that lie end to end in one segment goes
        through :meth:`add_run`; every other record through :meth:`add`.

        Returns what :meth:`add_run` returns, for the text index.
        """
        fed: list[Fed] = []
        run: list[int] = []
        for i, record in enumerate(records):
            if rec.op_of(record) is _REMEMBER:
                if run:
                    last = positions[run[-1]]
                    if positions[i] != Position(last.segment, last.offset + len(lines[run[-1]])):
                        fed += self._add_run_of(records, lines, positions, run)
                        run = []
                run.append(i)
            else:
                if run:
                    fed += self._add_run_of(records, lines, positions, run)
                    run = []
                self.add(record, positions[i].segment, positions[i].offset)
        if run:
            fed += self._add_run_of(records, lines, positions, run)
        return fed

    def _add_run_of(
        self, records: Sequence[Mapping[str, Any]], lines: Sequence[bytes], positions: Sequence[Position], run: list[int],
    ) -> list[Fed]:
        first = positions[run[0]]
        if len(run) > 1:
            return self.add_run(b"".join(lines[i] for i in run), first.segment, first.offset)
        # One line: the core's reading of it, when the core encoded it (a live write's episode).
        record = records[run[0]]
        return self.add_run(lines[run[0]], first.segment, first.offset, record.decoded if type(record) is rec.Encoded else None)

    def add_run(self, data: bytes, segment: int, offset: int, decoded: _core.Decoded | None = None) -> list[Fed]:
        """Applies (or queues) the ``remember`` records this process built, whose journal
        lines, end to end in ``data``, lie from ``(segment, offset)``: the core's decoder
        reads them as it reads a replay's runs (:data:`~.decoding.DECODER`), so a live
        write, an import and a replay share one reading of an episode; a line it does not
        prove (metadata, an unusual character) is read back from its bytes and goes
        through :meth:`add` (what is applied is what the journal holds). ``decoded`` is
        that reading when the core has it already (an import's admission works it out as
        it writes the lines).

        Returns ``(decoded, lo, hi, first row)`` of each run of rows the core decoded, whose
        narratives the caller hands to the text index.
        """
        if decoded is None:
            decoded = DECODER.decode(data)
        plan = decoded.plan()
        if len(plan) == 1 and plan[0][0]:  # rows alone (a live write's, on remember's path): :meth:`_take` inlined
            _, first, last = plan[0]
            held = self._next_row
            self.add_decoded(DecodedRows(decoded, first, last, decoded.ids(first, last), segment, offset))
            return [(decoded, first, last, held)]
        fed: list[Fed] = []
        # Rows lo..hi waiting (lo None: none), and the records of ASIDE among them:
        # (record, or a version's proved fields; offset; how many of the rows come before it).
        lo: int | None = None
        hi = 0
        aside: list[tuple[Mapping[str, Any] | VersionFields, int, int]] = []
        proved = proved_versions(decoded)
        for is_rows, a, b in plan:
            if is_rows:
                lo = a if lo is None else lo
                hi = b  # (the rows of a run come in order, without gaps)
                continue
            version = proved.get(a) if proved else None
            if version is not None:
                aside.append((version, a, 0 if lo is None else hi - lo))
                continue
            record = orjson.loads(data[a:b])
            if rec.op_of(record) in ASIDE:
                aside.append((record, a, 0 if lo is None else hi - lo))
                continue
            self._take(decoded, lo, hi, aside, segment, offset, fed)
            lo = None
            self.add(record, segment, offset + a)
        self._take(decoded, lo, hi, aside, segment, offset, fed)
        return fed

    def _take(
        self, decoded: _core.Decoded, lo: int | None, hi: int, aside: list[tuple[Mapping[str, Any] | VersionFields, int, int]],
        segment: int, offset: int, fed: list[Fed],
    ) -> None:
        """:meth:`add_run`'s step: rows ``lo..hi`` of ``decoded`` (None: none), then the records
        ``aside`` among them (emptied), each with the rows the journal holds before it (which
        only an applier of records read back checks: what this process built is trusted)."""
        held = self._next_row
        if lo is not None:
            self.add_decoded(DecodedRows(decoded, lo, hi, decoded.ids(lo, hi), segment, offset))
            fed.append((decoded, lo, hi, held))
        if aside:
            for record, at, before in aside:
                self.add_aside(record, segment, offset + at, held + before)
            aside.clear()

    def place(self, segment: int) -> None:
        """Sets the segment of every waiting row and record (staged records learn it at commit)."""
        for i, step in enumerate(self._steps):
            if isinstance(step, Batch):
                step.place(segment)
            elif isinstance(step, (DecodedRows, _Version)):
                self._steps[i] = step._replace(segment=segment)
            else:
                self._steps[i] = (step[0], segment, step[2], step[3])

    def flush(self) -> None:
        """Applies everything waiting, in order."""
        if not self._steps:
            return  # (a short-term row waits only with its step)
        steps, self._steps, self._batch = self._steps, [], None
        short, self._short = self._short, []
        self._ids.clear()
        s = 0
        for i, step in enumerate(steps):
            if isinstance(step, (Batch, DecodedRows)):
                if isinstance(step, Batch):
                    self._indexes.extend(step)
                else:
                    self._indexes.extend_decoded(step)
                while s < len(short) and short[s][0] == i:
                    self._indexes.lifecycle.note_remember(short[s][1])
                    s += 1
            elif type(step) is _Version:
                self._version(*step)
            else:
                self._apply(*step)

    # -- one record ---------------------------------------------------------------

    def _row(self, record: Mapping[str, Any]) -> IndexRow:
        """The index row of a ``remember`` record; an untrusted one is validated in full
        (:meth:`Episode.from_stored`), so that replay indexes exactly what :meth:`Home.get` reads.

        Raises:
            SchemaError: the stored episode breaks the schema, or its id is taken.
        """
        stored = record.get("episode")
        if self._trusted:
            return IndexRow.of_json(stored)  # type: ignore[arg-type]
        if not isinstance(stored, Mapping):
            raise SchemaError("a remember record holds no episode", "episode")
        # The one validation get() reads it back with, shapes and values alike (a unit out of
        # [0, 1], a non-finite number, a time that is none), and what every stored episode
        # holds (an external one is tainted): what it refuses is never indexed.
        row = IndexRow.of(Episode.from_stored(stored))
        if self._indexes.row_for(row.id) is not None or row.id in self._ids:
            raise SchemaError(f"id {row.id!r} appears twice in the journal", "id")
        return row

    def add_aside(self, record: Mapping[str, Any] | VersionFields, segment: int, offset: int, held: int | None = None) -> None:
        """Applies a record of :data:`ASIDE` read from its line (:meth:`add`), or a ``version``
        record's fields the core proved (:meth:`add_version`)."""
        if type(record) is tuple:
            self.add_version(record, segment, offset, held)
        else:
            self.add(cast("Mapping[str, Any]", record), segment, offset, held)

    def add_version(self, fields: VersionFields, segment: int, offset: int, held: int | None = None) -> None:
        """Applies a ``version`` record the core proved as cuemem writes one (``fields``:
        :data:`VersionFields`), starting at ``(segment, offset)``: as :meth:`add` applies the
        record read from its line, without reading it (``held``: as there)."""
        self._batch = None  # what follows may name the rows just gathered
        if self._steps or self._deferred:  # something waits: it goes in turn
            self._steps.append(_Version(fields, segment, offset, held))
            if not self._deferred:
                self.flush()
            return
        self._version(fields, segment, offset, held)

    def _version(self, fields: VersionFields, segment: int, offset: int, held: int | None) -> None:
        subject, id, supersedes, valid_from, at = fields
        if not self._trusted:
            try:
                _check_version(id, supersedes, self._indexes.row_for, len(self._indexes) if held is None else held)
            except ValueError as exc:
                self._skip(rec.Op.VERSION.value, exc, segment, offset)
                return
        self._indexes.lifecycle.adopt(subject, id, supersedes, valid_from, at)

    def _skip(self, kind: str, exc: Exception, segment: int, offset: int) -> None:
        """Reports a record of ``kind`` at ``(segment, offset)`` skipped for ``exc``."""
        article = "an" if kind[:1] in "aeiou" else "a"
        self._indexes.skipped.append((Position(segment, offset), f"{article} {kind} record that cuemem did not write: {exc!r}"))

    def _apply(self, record: Mapping[str, Any], segment: int, offset: int, held: int | None) -> None:
        try:
            parsed = kinds.parse(record, trusted=self._trusted)
            match parsed:
                case kinds.NoteRecord():
                    self._indexes.notes[parsed.id] = (parsed.version, parsed.sha256)
                case kinds.JobRecord():
                    self._indexes.jobs[parsed.job] = parsed.to_json()
                case kinds.ErasedRecord():
                    self._indexes.erase(self._indexes.lifecycle.apply(parsed))
                case (kinds.VersionRecord() | kinds.ApprovalRecord() | kinds.DecisionRecord() | kinds.RetireRecord() | kinds.TaintRecord()
                      | kinds.ForgetRecord() | kinds.ProposalRecord()):
                    self._lifecycle(parsed, held)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if self._trusted:
                raise
            self._skip(str(rec.op_of(record)), exc, segment, offset)

    def _lifecycle(self, record: kinds.LifecycleRecord, held: int | None) -> None:
        indexes = self._indexes
        state = indexes.lifecycle
        if not self._trusted:
            _check_rows(record, indexes.row_for, len(indexes) if held is None else held)
        if isinstance(record, kinds.RetireRecord):
            record = dataclasses.replace(record, ids=tuple(i for i in record.ids if indexes.row_for(i) is not None))
        accepted: str | None = None
        if (
            isinstance(record, kinds.DecisionRecord) and record.verdict in REVIEW_VERDICTS and record.id not in state.pending
            and record.id not in state.proposals  # a decision on a proposal names no record
        ):
            if not indexes.quarantined(record.id):
                raise ValueError(f"a review decision names {record.id!r}, which is not a quarantined record")
            accepted = record.id if record.verdict == ACCEPTED else None
        gone = state.apply(record)
        if gone:
            indexes.retire(gone)
        if accepted is not None:
            indexes.accept(accepted)
        if isinstance(record, kinds.ForgetRecord) and record.retention == ERASE:
            indexes.erase([i for i in record.ids if indexes.row_for(i) is not None])
            for nid in record.notes:
                indexes.notes.pop(nid, None)


def _check_rows(record: kinds.LifecycleRecord, row_for: Callable[[str], int | None], held: int) -> None:
    """Checks that a life-cycle record read back from the journal names only records the
    journal holds before it, the first ``held`` rows (``row_for``: an id's row, or None; its
    shape :func:`~cuemem.store.kinds.parse` checked).

    Raises:
        ValueError: it names one the journal does not hold.
    """
    if isinstance(record, kinds.VersionRecord):
        _check_version(record.id, record.supersedes, row_for, held)
    elif isinstance(record, kinds.ForgetRecord):
        if not all(_held(i, row_for, held) for i in record.ids):
            raise ValueError("a forget record names a record the journal does not hold")


def _check_version(id: str, supersedes: str | None, row_for: Callable[[str], int | None], held: int) -> None:
    """Checks that a version record names records among the first ``held`` rows (see :func:`_check_rows`).

    Raises:
        ValueError: it names one the journal does not hold.
    """
    if not _held(id, row_for, held) or (supersedes is not None and not _held(supersedes, row_for, held)):
        raise ValueError("a version names a record the journal does not hold")


def _held(id: str, row_for: Callable[[str], int | None], held: int) -> bool:
    """Whether ``id`` is the id of one of the first ``held`` rows."""
    row = row_for(id)
    return row is not None and row < held
