"""The jobs against a home: read what they need, write what they decide, journal the run.

Reading: candidate rows come from the cue index and the salience table (bitmaps and
numpy); only the chosen rows' records are read, one segment file open per segment.
Writing: every record a run derives is validated first, then the whole run goes to
the journal in one append (one fsync), ending with the ``job`` record that says what
ran, when, and what it changed — so a rebuild from the journal gives the same state,
and the last run of each job is known without a clock.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import orjson

from ..errors import CorruptRecordError, SchemaError, StorageError
from ..home.indexes import IndexRow, Indexes
from ..home.replay import gc_paused
from ..schema import Episode, Level, Note, Origin, Tier
from ..store.fsync import FsyncPolicy, replace_file, sync_directory
from ..store.journal import Position
from .config import ConsolidationConfig, DistillationConfig
from .consolidate import INTENSITY, REPETITION, Promotion, consolidate
from .distill import Rung, plan_rungs, select_candidates
from .items import Item
from .reports import ConsolidationReport, DistillationReport
from .summarize import Summarizer

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["old_rows", "read_items", "run_consolidation", "run_distillation"]

#: Tag carried by every record a job derives.
GENERATED_TAG = "generated"


def read_items(mem: Memory, rows: Sequence[int] | npt.NDArray[Any]) -> list[Item]:
    """The items of ``rows``, read from the journal in row order, one open per segment.

    Raises:
        CorruptRecordError: a record there is not an episode.
        StorageError: a segment cannot be read.
    """
    indexes = mem._indexes
    journal = mem._journal
    out: list[Item] = []
    handles: dict[int, Any] = {}
    segments, offsets = indexes.segments, indexes.offsets
    wanted = rows.tolist() if isinstance(rows, np.ndarray) else [int(r) for r in rows]
    at: dict[int, int] = {}  # segment -> offset its file is read up to
    try:
        for row in wanted:
            segment, offset = segments[row], offsets[row]
            f = handles.get(segment)
            if f is None:
                f = handles[segment] = open(journal._path(segment), "rb", buffering=1 << 20)
                at[segment] = 0
            if at[segment] != offset:
                f.seek(offset)  # rows in order are mostly adjacent lines: no seek, no refill
            line = f.readline()
            at[segment] = offset + len(line)
            try:
                out.append(Item.of_json(orjson.loads(line)["episode"]))
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise CorruptRecordError(f"the record of row {row} at {Position(segment, offset)} is not an episode: {exc}") from None
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot read the journal: {exc}") from None
    finally:
        for f in handles.values():
            f.close()
    return out


def _citers(indexes: Indexes) -> npt.NDArray[np.int64]:
    return np.frombuffer(indexes.citers, dtype=np.int64) if len(indexes) else np.zeros(0, np.int64)


def old_rows(indexes: Indexes, cutoff: datetime) -> npt.NDArray[np.bool_]:
    """Rows whose episode occurred before ``cutoff``'s date, as a mask (from the time cues).

    Whole years, then whole months, then days before the cutoff's are unioned, so the
    cost is a few dozen bitmaps, not a pass over the rows.
    """
    day = cutoff.date().isoformat()
    year, month = day[:4], day[:7]
    buckets = [
        b for b in indexes.cues.values("time")
        if (len(b) == 4 and b < year) or (len(b) == 7 and b[:4] == year and b < month) or (len(b) == 10 and b[:7] == month and b < day)
    ]
    mask = np.zeros(len(indexes), dtype=bool)
    if buckets:
        mask[indexes.cues.prune({"time": buckets}).rows] = True
    return mask


def _tier_mask(indexes: Indexes, tier: Tier) -> npt.NDArray[np.bool_]:
    mask = np.zeros(len(indexes), dtype=bool)
    if tier.value in indexes.cues.values("tier"):
        mask[indexes.cues.prune({"tier": tier.value}).rows] = True
    return mask


def _commit(mem: Memory, episodes: Sequence[Episode], notes: Sequence[Note], job: str, now: datetime, summary: dict[str, Any]) -> None:
    """Writes the notes' files, then the run's records in one journal append, then indexes them."""
    indexes = mem._indexes
    stored = [e.to_json() for e in episodes]
    records: list[dict[str, Any]] = [{"op": "remember", "episode": s} for s in stored]
    shas = []
    for note, markdown in zip(notes, _write_note_files(mem, notes)):
        shas.append(hashlib.sha256(markdown).hexdigest())
        records.append({"op": "note", "id": note.id, "version": note.version, "sha256": shas[-1], "markdown": markdown.decode("utf-8")})
    run = {"op": "job", "job": job, "ran_at": now.isoformat(), "report": summary}
    positions = mem._journal.append([*records, run], trusted=True)  # built and validated here
    indexes.add([(IndexRow.of_json(s), p) for s, p in zip(stored, positions)])
    for n, sha in zip(notes, shas):
        indexes.notes[n.id] = (n.version, sha)
    indexes.jobs[job] = run
    indexes.head = mem._journal.head()


def journal_run(mem: Memory, job: str, now: datetime, summary: dict[str, Any]) -> None:
    """Journals that ``job`` ran at ``now`` (``op: job``), for a job whose own records are already written."""
    run = {"op": "job", "job": job, "ran_at": now.isoformat(), "report": summary}
    mem._journal.append([run], trusted=True)
    mem._indexes.jobs[job] = run
    mem._indexes.head = mem._journal.head()


def _write_note_files(mem: Memory, notes: Sequence[Note]) -> list[bytes]:
    """Writes each note's file atomically (temporary file, sync, rename) under the home's
    fsync policy, then syncs the notes directory once for the whole batch.

    Returns:
        Each note's file bytes.

    Raises:
        SchemaError: a note cannot be encoded as UTF-8 (nothing is written).
        StorageError: the file system refused.
    """
    policy = mem._journal.fsync
    directory = mem._notes.directory
    try:
        encoded = [(mem._notes.path_for(n.id), n.to_markdown().encode("utf-8")) for n in notes]
    except UnicodeEncodeError as exc:
        raise SchemaError(f"a note is not valid Unicode text: {exc.reason}") from None
    if not encoded:
        return []
    batched = policy is FsyncPolicy.ALWAYS and _syncfs is not None
    per_file = FsyncPolicy.NEVER if batched else policy
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for path, data in encoded:
            replace_file(path, data, per_file)
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot write a note under {directory}: {exc.strerror}") from None
    if batched:
        _sync_file_system(directory)
    else:
        sync_directory(directory, policy)
    return [data for _, data in encoded]


def _load_syncfs() -> Callable[[int], int] | None:
    """``syncfs(2)`` where the C library has it (Linux), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn: Callable[[int], int] = libc.syncfs
    except (OSError, AttributeError):
        return None
    return fn


_syncfs = _load_syncfs()


def _sync_file_system(directory: Path) -> None:
    """Makes every file written under ``directory`` durable with one ``syncfs`` call.

    A run writes hundreds of note files; one flush of their file system costs about
    what two per-file fsyncs do, and like them it reports write-back errors.

    Raises:
        StorageError: the flush failed.
    """
    assert _syncfs is not None
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot open {directory} to flush it: {exc.strerror}") from None
    try:
        if _syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise StorageError(err, f"syncfs of {directory} failed: {os.strerror(err)}")
    finally:
        os.close(fd)


def _promoted_episode(p: Promotion, now: datetime) -> Episode:
    return Episode.create(
        p.narrative, id=p.id, recorded_at=now, user_id=p.user_id, type=p.type, actors=p.actors, occurred_at=p.occurred_at,
        importance=p.salience["importance"], risk=p.salience["risk"], salience=p.salience, confidence=p.confidence,
        subject=p.subject, tags=tuple(dict.fromkeys((*p.tags, GENERATED_TAG))), origin=Origin.JOB, tier=Tier.LONG,
        kind=p.kind, level=Level.RAW, sources=p.sources, taint=p.taint,
    )


@gc_paused
def run_consolidation(mem: Memory, now: datetime, config: ConsolidationConfig) -> ConsolidationReport:
    """Promotes the home's due short-term groups at ``now`` and journals the run.

    The cyclic garbage collector is paused meanwhile, as bulk loaders do: a run
    creates a hundred thousand short-lived objects and no cycles.
    """
    indexes = mem._indexes
    fresh = _tier_mask(indexes, Tier.SHORT) & (_citers(indexes) < 0)
    items = read_items(mem, np.flatnonzero(fresh))
    plan = [p for p in consolidate(items, now, config) if p.id not in indexes.row_of]
    episodes = [_promoted_episode(p, now) for p in plan]
    report = ConsolidationReport(
        ran_at=now,
        considered=len(items),
        promoted=tuple(p.id for p in plan),
        sources=sum(len(p.sources) for p in plan),
        by_repetition=sum(REPETITION in p.routes for p in plan),
        by_intensity=sum(INTENSITY in p.routes for p in plan),
    )
    _commit(mem, episodes, (), report.job, now, report.summary())
    return report


def _rung_records(rung: Rung, now: datetime, version: int) -> tuple[Episode, Note]:
    tags = (GENERATED_TAG,)
    episode = Episode.create(
        rung.narrative, id=rung.id, recorded_at=now, user_id=rung.user_id, type=rung.type, actors=rung.actors,
        occurred_at=now.date(), importance=rung.salience["importance"], risk=rung.salience["risk"], salience=rung.salience,
        confidence=rung.confidence, subject=rung.subject, tags=tags, origin=Origin.JOB, tier=Tier.LONG, kind=rung.kind,
        level=rung.level, sources=rung.sources, taint=rung.taint,
    )
    note = Note.create(
        rung.narrative, id=rung.id, kind=rung.kind, recorded_at=now, subject=rung.subject, sources=rung.sources,
        confidence=rung.confidence, origin=Origin.JOB, generated=True, level=rung.level, tier=Tier.LONG,
        taint=rung.taint, tags=tags, version=version,
    )
    return episode, note


@gc_paused
def run_distillation(mem: Memory, now: datetime, config: DistillationConfig, summarizer: Summarizer | None) -> DistillationReport:
    """Abstracts the home's faded memories one rung up at ``now`` and journals the run."""
    indexes = mem._indexes
    n = len(indexes)
    rows = np.zeros(0, np.uint32)
    if n:
        decayed = indexes.salience.decay_pass(now, config.floor).axes
        eligible = old_rows(indexes, now - timedelta(days=config.min_age_days)) & _tier_mask(indexes, Tier.LONG)
        rows = select_candidates(decayed, eligible, _citers(indexes), config.floor)
    chosen = rows[: config.max_sources]
    items = read_items(mem, chosen)
    rungs = [r for r in plan_rungs(items, now, config, summarizer) if r.id not in indexes.row_of]
    records = [_rung_records(r, now, indexes.notes.get(r.id, (0, ""))[0] + 1) for r in rungs]
    by_level: dict[str, int] = {}
    for r in rungs:
        by_level[r.level.value] = by_level.get(r.level.value, 0) + 1
    report = DistillationReport(
        ran_at=now,
        scanned=n,
        candidates=len(rows),
        abstracted=sum(len(r.sources) for r in rungs),
        deferred=len(rows) - len(chosen),
        rungs=tuple(r.id for r in rungs),
        by_level=by_level,
    )
    _commit(mem, [e for e, _ in records], [nt for _, nt in records], report.job, now, report.summary())
    return report


