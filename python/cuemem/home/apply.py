"""Applying journal records to the indexes: the one function a live write and replay share.

An :class:`Applier` takes records in journal order with their positions and brings the
indexes up to them: a ``remember`` becomes a row (gathered in column batches, so no
per-row call crosses into the core), a ``note`` updates the note map, a life-cycle
record updates versions, approvals and retirement, a ``job`` records the run. A live
commit (:meth:`Home.commit <cuemem.home.Home.commit>`), an import and a replay of
the journal all go through it, so a live write and a rebuild cannot diverge.

Records read back from the journal are hostile (a person may have edited a line):
an applier opened with ``trusted=False`` validates each one and skips, with the reason
in :attr:`Indexes.skipped`, what cuemem did not write. Records a live write just built
are trusted.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..errors import SchemaError
from ..lifecycle.approvals import Approval
from ..lifecycle.state import ACCEPTED, ERASE, RETENTIONS, REVIEW_VERDICTS
from ..schema import Episode
from ..schema.enums import Tier
from ..schema.fields import MAX_SOURCE
from ..store import records as rec
from ..store.journal import Position
from .decoding import SHORT_KEPT
from .indexes import Batch, DecodedRows, IndexRow, Indexes

__all__ = ["Applier"]

#: Rows gathered before they join the indexes while replaying.
REPLAY_BATCH = 10_000

# The kinds, looked up once (an enum member's class attribute is a descriptor call).
_REMEMBER, _NOTE, _JOB, _RETIRE = rec.Op.REMEMBER, rec.Op.NOTE, rec.Op.JOB, rec.Op.RETIRE
_ERASED, _FORGET = rec.Op.ERASED, rec.Op.FORGET
_SHORT = Tier.SHORT.value
#: What the indexes hold of an erased record: a row, and nothing in it.
_NO_AXES = [0.0] * 7
_LIFECYCLE = rec.LIFECYCLE_OPS


class Applier:
    """Applies records to ``indexes`` in the order given.

    Args:
        indexes: What the records are applied to.
        trusted: The records were built by this process (skip their validation).
        deferred: Touch nothing until :meth:`flush` (an import, whose records join the
            journal only at its commit); otherwise rows join in batches as they come.
        texts: Keep ``(row, narrative)`` of every row :meth:`add` adds in :attr:`texts`.
    """

    __slots__ = ("_indexes", "_trusted", "_deferred", "_steps", "_batch", "_short", "_ids", "_next_row", "_keep_texts", "texts")

    def __init__(self, indexes: Indexes, *, trusted: bool, deferred: bool = False, texts: bool = False) -> None:
        self._indexes = indexes
        self._trusted = trusted
        self._deferred = deferred
        # What is waiting to be applied, in order: row batches and other records.
        self._steps: list[Batch | DecodedRows | tuple[Mapping[str, Any], int, int]] = []
        self._batch: Batch | None = None
        self._short: list[tuple[int, Mapping[str, Any]]] = []  # (step, episode) of short-term rows
        self._ids: set[str] = set()
        self._next_row = len(indexes)
        self._keep_texts = texts
        #: ``(row, narrative)`` of every row added (with ``texts=True``), for the text index.
        self.texts: list[tuple[int, str]] = []

    def add(self, record: Mapping[str, Any], segment: int, offset: int) -> None:
        """Applies (or queues) one record that starts at ``(segment, offset)`` in the journal."""
        op = rec.op_of(record)
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
                _tombstone(record)
                eid = record["id"]
                if eid in self._indexes.row_of or eid in self._ids:
                    raise ValueError(f"id {eid!r} appears twice in the journal")
            except (KeyError, TypeError, ValueError) as exc:
                self._indexes.skipped.append((Position(segment, offset), f"an erased record that cuemem did not write: {exc}"))
                return
            if self._batch is None:
                self._batch = Batch(self._next_row)
                self._steps.append(self._batch)
            self._batch.add(IndexRow(eid, {}, _NO_AXES, 0.0, 0.0), segment, offset)
            self._ids.add(eid)
            self._next_row += 1
            self._batch = None
            self._steps.append((record, segment, offset))
            if not self._deferred:
                self.flush()
        elif op is _ERASED:
            return  # an erased note, version, approval or decision: nothing is left of it
        elif op is not None:
            self._batch = None  # what follows may name the rows just gathered
            self._steps.append((record, segment, offset))
            if not self._deferred:
                self.flush()

    @property
    def next_row(self) -> int:
        """The row the next episode added gets."""
        return self._next_row

    def fresh(self, ids: list[str]) -> bool:
        """Whether none of ``ids`` repeats, among themselves or in what is applied or waiting."""
        return len(set(ids)) == len(ids) and self._indexes.row_of.keys().isdisjoint(ids) and self._ids.isdisjoint(ids)

    def add_decoded(self, rows: DecodedRows) -> None:
        """Applies (or queues) rows the core decoded and proved valid (:mod:`.decoding`),
        whose ids are :meth:`fresh`."""
        self._batch = None
        self._steps.append(rows)
        step = len(self._steps) - 1
        for i, kept in rows.decoded.tracked(rows.lo, rows.hi):
            self._short.append((step, {**dict(zip(SHORT_KEPT, kept)), "tier": _SHORT}))
        if not self._trusted:
            self._ids.update(rows.ids)
        self._next_row += rows.hi - rows.lo
        if not self._deferred:
            self.flush()

    def place(self, segment: int) -> None:
        """Sets the segment of every waiting row and record (staged records learn it at commit)."""
        for i, step in enumerate(self._steps):
            if isinstance(step, Batch):
                step.place(segment)
            elif isinstance(step, DecodedRows):
                self._steps[i] = step._replace(segment=segment)
            else:
                self._steps[i] = (step[0], segment, step[2])

    def flush(self) -> None:
        """Applies everything waiting, in order."""
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
            else:
                self._apply(step[0], step[1], step[2])

    # -- one record ---------------------------------------------------------------

    def _row(self, record: Mapping[str, Any]) -> IndexRow:
        """The index row of a ``remember`` record; an untrusted one is validated in full
        (:meth:`Episode.from_json`), so that replay indexes exactly what :meth:`Home.get` reads.

        Raises:
            SchemaError: the stored episode breaks the schema, or its id is taken.
        """
        stored = record.get("episode")
        if self._trusted:
            return IndexRow.of_json(stored)  # type: ignore[arg-type]
        if not isinstance(stored, Mapping):
            raise SchemaError("a remember record holds no episode", "episode")
        # The one validation get() reads it back with, shapes and values alike (a unit out of
        # [0, 1], a non-finite number, a time that is none): what it refuses is never indexed.
        row = IndexRow.of(Episode.from_json(stored))
        if row.id in self._indexes.row_of or row.id in self._ids:
            raise SchemaError(f"id {row.id!r} appears twice in the journal", "id")
        return row

    def _apply(self, record: Mapping[str, Any], segment: int, offset: int) -> None:
        op = rec.op_of(record)
        try:
            if op is _NOTE:
                self._note(record)
            elif op is _JOB:
                if not isinstance(record["job"], str):
                    raise TypeError("a job record names its job")
                _when(record["ran_at"])
                self._indexes.jobs[record["job"]] = dict(record)
            elif op is _ERASED:
                self._indexes.erase(self._indexes.lifecycle.apply(record))
            elif op in _LIFECYCLE:
                self._lifecycle(record)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if self._trusted:
                raise
            kind = str(op)
            article = "an" if kind[:1] in "aeiou" else "a"
            self._indexes.skipped.append((Position(segment, offset), f"{article} {kind} record that cuemem did not write: {exc!r}"))

    def _note(self, record: Mapping[str, Any]) -> None:
        nid, version, sha = record["id"], record["version"], record["sha256"]
        if not isinstance(nid, str) or isinstance(version, bool) or not isinstance(version, int) or not isinstance(sha, str):
            raise TypeError("a note record holds an id, an int version and a sha256")
        self._indexes.notes[nid] = (version, sha)

    def _lifecycle(self, record: Mapping[str, Any]) -> None:
        indexes = self._indexes
        if not self._trusted:
            _check_lifecycle(record, indexes.row_of)
        if rec.op_of(record) is _RETIRE:
            if not isinstance(record["ids"], list):
                raise TypeError("a retire record lists its ids")
            record = {**record, "ids": [i for i in record["ids"] if isinstance(i, str) and i in indexes.row_of]}
        op = rec.op_of(record)
        review = (
            op is rec.Op.DECISION and record["verdict"] in REVIEW_VERDICTS and record["id"] not in indexes.lifecycle.pending
            and record["id"] not in indexes.lifecycle.proposals  # a decision on a proposal names no record
        )
        if review and not indexes.quarantined(record["id"]):
            raise ValueError(f"a review decision names {record['id']!r}, which is not a quarantined record")
        gone = indexes.lifecycle.apply(record)
        if gone:
            indexes.retire(gone)
        if review and record["verdict"] == ACCEPTED:
            indexes.accept(record["id"])
        if op is _FORGET and record["retention"] == ERASE:
            indexes.erase([i for i in record["ids"] if i in indexes.row_of])
            for nid in record["notes"]:
                indexes.notes.pop(nid, None)


_VERDICTS = frozenset({"approved", "rejected", "expired", ACCEPTED})


def _plain_label(value: object) -> bool:
    """Whether a stored label (a session) is absent or as ``Episode.create`` leaves it."""
    return value is None or (type(value) is str and 0 < len(value) <= 100 and value == value.strip() and value.isprintable())


def _plain_source(value: object) -> bool:
    """Whether a stored ``source`` is absent or as ``Episode.create`` leaves it."""
    return value is None or (type(value) is str and 0 < len(value) <= MAX_SOURCE and value == value.strip() and value.isprintable())


def _check_lifecycle(record: Mapping[str, Any], rows: Mapping[str, int]) -> None:
    """Checks a life-cycle record read back from the journal against what cuemem writes
    (:mod:`cuemem.store.records`), so that nothing later trips on it.

    Raises:
        KeyError, TypeError, ValueError: it is not such a record.
    """
    op = rec.op_of(record)
    if op is rec.Op.VERSION:
        _ids(record["subject"], record["id"])
        _optional_id(record["supersedes"])
        _when(record["valid_from"]), _when(record["at"])
        if record["id"] not in rows or (record["supersedes"] is not None and record["supersedes"] not in rows):
            raise ValueError("a version names a record the journal does not hold")
    elif op is rec.Op.APPROVAL:
        _ids(record["id"], record["reason"], record["subject"])
        _optional_id(record["supersedes"])
        if Approval.of(record).episode.id != record["id"]:  # the episode in full, and both instants
            raise ValueError("an approval writes the episode of its own id")
        _when(record["requested_at"]), _when(record["expires_at"])
    elif op is rec.Op.DECISION:
        _ids(record["id"])
        if record["verdict"] not in _VERDICTS:
            raise ValueError(f"a decision is one of {sorted(_VERDICTS)}")
        _when(record["at"])
    elif op is rec.Op.RETIRE:
        _ids(record["reason"])
        _when(record["at"])
    elif op is rec.Op.FORGET:
        _ids(record["id"], *record["ids"], *record["notes"], *record["approvals"])
        if record["retention"] not in RETENTIONS or not isinstance(record["target"], dict):
            raise ValueError("a forget record names its retention and target")
        if not all(_digest(h) for h in record["hashes"]) or len(record["hashes"]) != len(record["ids"]) + len(record["approvals"]):
            raise ValueError("a forget record holds one content hash per record and queued write")
        owners = record.get("owners", [])
        if not isinstance(owners, list) or not all(_digest(h) for h in owners) or len(owners) not in (0, len(record["ids"])):
            raise ValueError("a forget record holds one owner hash per record, or none")
        if any(i not in rows for i in record["ids"]):
            raise ValueError("a forget record names a record the journal does not hold")
        _when(record["at"])
    elif op is rec.Op.PROPOSAL:
        _check_proposal(record)
    elif op is rec.Op.TAINT:
        if not all(isinstance(record[k], str) and _plain_label(record[k]) for k in ("user", "session")):
            raise ValueError("a taint record names its user and session")
        if not _plain_source(record["source"]):
            raise ValueError("a taint record's source is a source or null")
        _when(record["at"])


def _digest(value: object) -> bool:
    """Whether ``value`` is a SHA-256 in lowercase hex."""
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _tombstone(record: Mapping[str, Any]) -> None:
    """Checks an ``erased`` record against what :func:`cuemem.store.records.erased` writes.

    Raises:
        KeyError, TypeError, ValueError: it is not such a record.
    """
    if not isinstance(record["id"], str) or not record["id"] or not _digest(record["sha256"]) or set(record) != {"op", "id", "was", "sha256"}:
        raise ValueError("a tombstone holds an id, what it was and a SHA-256")


def _check_proposal(record: Mapping[str, Any]) -> None:
    """Checks the shape of a ``proposal`` record read back from the journal (what it would
    commit is checked again, in full, when someone accepts it).

    Raises:
        TypeError, ValueError: it is not such a record.
    """
    _ids(record["id"], record["job"], record["action"], record["user"], record["summary"], record["why"])
    _when(record["at"])
    if not isinstance(record["evidence"], list) or not all(isinstance(e, str) for e in record["evidence"]):
        raise TypeError("a proposal's evidence is a list of strings")
    sources = record["sources"]
    if not isinstance(sources, list) or not all(
        isinstance(s, dict) and isinstance(s.get("id"), str) and isinstance(s.get("sha256"), str) for s in sources
    ):
        raise TypeError("a proposal's sources are {id, sha256} objects")
    inner = record["records"]
    if not isinstance(inner, list) or not all(isinstance(r, dict) and rec.op_of(r) in rec.PROPOSABLE_OPS for r in inner):
        raise ValueError(f"a proposal holds only {sorted(str(o) for o in rec.PROPOSABLE_OPS)} records")


def _ids(*values: object) -> None:
    if not all(isinstance(v, str) for v in values):
        raise TypeError("an id, subject or reason is a string")


def _optional_id(value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError("supersedes is an id or null")


def _when(value: object) -> datetime:
    if not isinstance(value, str):
        raise TypeError("an instant is an ISO 8601 string")
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"the instant {value!r} has no time zone")
    return moment
