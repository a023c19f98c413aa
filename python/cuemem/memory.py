"""``Memory``: the one facade over a home — open, remember, recall, import, notes."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from . import _arrays, _core
from .errors import (
    CuememError,
    CueTypeError,
    ImportFileError,
    InvalidArgumentError,
    InvalidIdError,
    MissingFileError,
    NotFoundError,
    ReadOnlyError,
    SchemaError,
    StorageError,
    UnknownDimensionError,
)
from .home.cues import DIMENSIONS, normalize
from .home.indexes import Batch, IndexRow, Indexes, record_sha
from .home.layout import Layout
from .home.replay import apply_journal, gc_paused, load_indexes
from .home.results import HomeStats, Hit, ImportReport, OpenReport, RecallResult, SyncReport
from .policy.facade import PolicyMethods
from .policy.judge import PolicyBook
from .lifecycle.facade import LifecycleMethods
from .lifecycle.freshness import freshness_of
from .lifecycle.profiles import Profile, profile as lifecycle_profile
from .lifecycle.tiers import WorkingMemory
from .salience import SalienceTable
from .schema import Episode, Kind, Level, Note, Origin, Tier
from .schema.fields import to_datetime
from .store.fsync import FsyncPolicy
from .store.journal import Journal
from .store.lock import WriterLock
from .store.notes import NoteStore
from .jobs.config import ConsolidationConfig, DistillationConfig
from .jobs.home import run_consolidation, run_distillation
from .jobs.lead import lead_with_abstractions
from .jobs.maintain import DEFAULT_JOBS, Job
from .jobs.maintain import maintain as run_maintenance
from .jobs.reports import ConsolidationReport, DistillationReport, MaintenanceReport
from .jobs.summarize import Summarizer
from .text import DEFAULT_ANALYZER, TextCache, TextHit, TextWeights
from .text.cache import check_analyzer

__all__ = ["Memory"]

TimeArg = datetime | date | None

#: Items between two progress reports of an import.
_PROGRESS_EVERY = 5_000

#: The keys an imported record may carry.
#: The keys an imported item may hold: ``narrative`` and every keyword of ``remember``.
_REMEMBER_KEYS = frozenset(
    {"narrative", "id", "user_id", "type", "outcome", "actors", "occurred_at", "importance", "risk", "salience", "confidence", "subject",
     "tags", "origin", "tier", "kind", "level", "sources", "taint", "valid_from", "valid_to"}
)


def _edge_now(now: TimeArg) -> datetime:
    """``now`` as an aware UTC datetime; the wall clock is read here, at the API edge, only."""
    if now is None:
        return datetime.now(timezone.utc)
    if isinstance(now, datetime) and now.tzinfo is not None:
        return now  # kept in its own zone: "yesterday" is that zone's yesterday
    if isinstance(now, date):
        return to_datetime(now, "now")  # naive: UTC; a date: its midnight UTC
    raise CueTypeError(f"now must be a datetime or a date, got {type(now).__name__}")


class Memory(LifecycleMethods, PolicyMethods):
    """An agent's memory, kept in a home directory.

    Open one with :meth:`Memory.open` (a context manager). The journal under
    ``home/journal`` is the truth; indexes under ``home/index`` are a cache that is
    loaded when it matches the journal, caught up when the journal has grown, and
    rebuilt otherwise. One process writes at a time (a file lock); any number of
    read-only handles may follow along with :meth:`refresh`.

    Example:
        >>> import tempfile
        >>> from datetime import date
        >>> with Memory.open(tempfile.mkdtemp()) as mem:
        ...     eid = mem.remember("Acme asked for a 12% discount", actors=["acme"],
        ...                        type="deal", occurred_at=date(2026, 6, 3), importance=0.6,
        ...                        now=date(2026, 6, 3))
        ...     res = mem.recall({"actor": "acme", "time": "June 2026"}, now=date(2026, 6, 10))
        ...     [h.id for h in res.hits] == [eid], res.total, res.full_scan
        (True, 1, 1)
    """

    def __init__(self, layout: Layout, journal: Journal, notes: NoteStore, indexes: Indexes, lock: WriterLock | None, report: OpenReport,
                 text: TextCache | None = None, text_weights: TextWeights | None = None, text_report: str = "") -> None:
        self._text = text
        self._text_weights = text_weights or TextWeights()
        #: How the text index came up: "loaded", "loaded and caught up", "rebuilt (why)".
        self.text_report = text_report
        self._layout = layout
        self._index_dir = layout.index
        self._journal = journal
        self._notes = notes
        self._indexes = indexes
        self._lock = lock
        self._closed = False
        self.open_report = report
        self._book: PolicyBook | None = None
        #: Note files differ from their journaled versions (a person's edits, until sync).
        self._notes_edited = bool(report.note_errors)
        self._book_notes: dict[str, tuple[int, str]] = {}
        self._book_head: object = None
        # The life-cycle: the failure-cost profile, this turn's working memory, the workers.
        self._profile = lifecycle_profile("medium")
        self._working = WorkingMemory()
        self._workers = {}

    # -- life of a handle -----------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        fsync: FsyncPolicy | str = FsyncPolicy.ALWAYS,
        lock_timeout: float = 0.0,
        weights: Mapping[str, float] | None = None,
        half_lives_days: Mapping[str, float] | None = None,
        profile: Profile | str = "medium",
        text_analyzer: str = DEFAULT_ANALYZER,
        text_weights: TextWeights | None = None,
    ) -> Memory:
        """Opens (and, unless ``read_only``, creates) the home at ``path``.

        Args:
            path: The home directory.
            read_only: Follow a home another process writes; takes no lock.
            fsync: ``"always"`` (default: every acknowledged write is on disk) or
                ``"never"`` (leave flushing to the OS; for throwaway homes).
            lock_timeout: Seconds to wait for another writer to finish (0: fail at once).
            weights: Salience weight overrides, per axis.
            half_lives_days: Salience half-life overrides, per axis.
            profile: The failure-cost profile ("low", "medium", "high" or a
                :class:`~cuemem.lifecycle.Profile`): thresholds, TTLs, approvals, freshness.
            text_analyzer: The text index's analyzer (its recipe); each analyzer's
                index lives in its own directory under ``index/text/``.
            text_weights: The default blend of text recalls.

        Raises:
            HomeLockedError: another process writes this home.
            StorageError: the directory cannot be created or read.
        """
        layout = Layout(Path(_arrays.path(path)))
        # Every option is checked before anything is created on disk.
        try:
            policy = FsyncPolicy(fsync)
        except ValueError:
            raise InvalidArgumentError(f"fsync must be one of {[p.value for p in FsyncPolicy]}, got {fsync!r}") from None
        if isinstance(lock_timeout, bool) or not isinstance(lock_timeout, (int, float)) or not 0 <= lock_timeout < float("inf"):
            raise InvalidArgumentError(f"lock_timeout must be a finite number of seconds >= 0, got {lock_timeout!r}")
        salience = SalienceTable(weights, half_lives_days)
        chosen = lifecycle_profile(profile)
        check_analyzer(text_analyzer)
        if text_weights is not None and not isinstance(text_weights, TextWeights):
            raise CueTypeError(f"text_weights must be a TextWeights, got {type(text_weights).__name__}")
        if read_only:
            if not layout.journal.is_dir():
                raise MissingFileError(2, f"no cuemem home at {layout.root}")
        else:
            try:
                layout.create()
            except OSError as exc:
                raise StorageError(exc.errno or 0, f"cannot create home at {layout.root}: {exc.strerror}") from None
        lock = None
        if not read_only:
            lock = WriterLock(layout.lock)
            lock.acquire(timeout=lock_timeout)
        try:
            journal = Journal(layout.journal, fsync=policy, writable=not read_only)
            indexes, how, caught_up = load_indexes(layout, journal, salience)
            notes = NoteStore(layout.notes)
            # Only files that differ from the journal's versions are parsed (a person's edits).
            scan = notes.scan(known={nid: sha for nid, (_, sha) in indexes.notes.items()})
            report = OpenReport(
                index=how,
                caught_up=caught_up,
                journal_problems=list(journal.problems),
                note_errors=list(scan.errors),
                skipped_records=list(indexes.skipped),
            )
            text, text_report = TextCache.open(layout.index, text_analyzer, indexes, journal, writable=not read_only)
            mem = cls(layout, journal, notes, indexes, lock, report, text, text_weights, text_report)
            mem._profile = chosen
            mem._notes_edited = bool(scan.notes or scan.errors or scan.missing)
        except BaseException:
            if lock is not None:
                lock.release()
            raise
        return mem

    def close(self) -> None:
        """Saves the index cache (writers) and releases the writer lock. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._lock is not None:
                self.save_index()
        finally:
            if self._text is not None:
                self._text.close()
            self._journal.close()
            if self._lock is not None:
                self._lock.release()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _writable(self) -> None:
        if self._closed:
            raise ReadOnlyError("this Memory handle is closed")
        if self._lock is None:
            raise ReadOnlyError("this Memory handle is read-only")

    @property
    def path(self) -> Path:
        """The home directory."""
        return self._layout.root

    # -- write ----------------------------------------------------------------------

    def _new_id(self, episode_seed: str, pending: int = 0) -> str:
        n = len(self._indexes) + pending
        while True:
            candidate = "ep-" + hashlib.blake2b(f"{n}|{episode_seed}".encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
            if not self._id_taken(candidate):
                return candidate
            n += 1

    def _id_taken(self, id: str) -> bool:
        """Whether ``id`` names a record, or a write waiting in (or decided by) the approval queue."""
        state = self._indexes.lifecycle
        return id in self._indexes.row_of or id in state.pending or id in state.decided

    def _episode(self, narrative: Any, fields: dict[str, Any], recorded_at: datetime, taken: set[str] | None = None) -> Episode:
        given = fields.pop("id", None)
        if given is None:
            # The counter (rows so far, plus this import's) keeps ids of equal narratives apart.
            pending = len(taken) if taken is not None else 0
            eid = self._new_id(f"{recorded_at.isoformat()}|{narrative}", pending)
            while taken is not None and eid in taken:
                pending += 1
                eid = self._new_id(f"{recorded_at.isoformat()}|{narrative}", pending)
        else:
            eid = given
            if isinstance(eid, str) and (self._id_taken(eid) or (taken is not None and eid in taken)):
                raise InvalidIdError(f"id {eid!r} already exists in this home", "id")
        return Episode.create(narrative, id=eid, recorded_at=recorded_at, **fields)

    def remember(
        self,
        narrative: str,
        *,
        id: str | None = None,
        user_id: str = "default",
        type: str = "note",
        outcome: str | None = None,
        actors: Sequence[str] = (),
        occurred_at: date | str | None = None,
        importance: float = 0.0,
        risk: float = 0.0,
        salience: Mapping[str, float] | None = None,
        confidence: float = 1.0,
        subject: str | None = None,
        tags: Sequence[str] = (),
        origin: Origin | str = Origin.USER,
        tier: Tier | str = Tier.LONG,
        kind: Kind | str = Kind.EPISODIC,
        level: Level | str = Level.RAW,
        sources: Sequence[str] = (),
        taint: bool = False,
        valid_from: datetime | date | str | None = None,
        valid_to: datetime | date | str | None = None,
        now: TimeArg = None,
    ) -> str:
        """Validates an episode, appends it to the journal durably, indexes it, returns its id.

        ``occurred_at`` defaults to ``now``'s date; salience decays from it. An id is
        assigned when none is given. The life-cycle fields (``origin``, ``tier``,
        ``kind``, ``level``, ``sources``, ``taint``, valid time) are those of
        :meth:`Episode.create <cuemem.schema.Episode.create>`.

        Raises:
            SchemaError: a field breaks the schema (the error names it); nothing is written.
            InvalidIdError: the id is malformed or already taken.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        recorded = _edge_now(now)
        fields = dict(
            id=id, user_id=user_id, type=type, outcome=outcome, actors=actors, occurred_at=occurred_at,
            importance=importance, risk=risk, salience=salience, confidence=confidence, subject=subject, tags=tags,
            origin=origin, tier=tier, kind=kind, level=level, sources=sources, taint=taint, valid_from=valid_from,
            valid_to=valid_to,
        )
        episode = self._episode(narrative, fields, recorded)
        stored = episode.to_json()
        (position,) = self._journal.append([{"op": "remember", "episode": stored}], trusted=True)
        self._indexes.add([(IndexRow.of_json(stored), position)])
        self._indexes.lifecycle.note_remember(stored)
        self._indexes.head = self._journal.head()
        if self._text is not None:
            self._text.add([len(self._indexes) - 1], [episode.narrative])
        return episode.id

    def import_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        skip_bad_lines: bool = False,
        now: TimeArg = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Imports one JSON object per line (``remember``'s keywords plus ``narrative``).

        All or nothing: every line is validated and staged beside the journal, and the
        batch joins the journal in one atomic step (one fsync, one rename) only if no
        line was bad — otherwise the import raises and the home is unchanged, unless
        ``skip_bad_lines`` (then bad lines are reported and the rest imported). The
        file is streamed, never held in memory whole.

        Args:
            path: The JSONL file.
            skip_bad_lines: Import the good lines and report the bad ones.
            now: The recording time for every imported episode.
            progress: Called now and then as ``progress(bytes_read, file_size)``.

        Raises:
            ImportFileError: bad lines (with their line numbers), nothing written.
            StorageError: the file cannot be read, or the journal cannot be written.
        """
        self._writable()
        try:
            handle = open(_arrays.path(path), "rb")
            size = os.fstat(handle.fileno()).st_size
        except OSError as exc:
            raise StorageError(exc.errno or 0, f"cannot read {path}: {exc.strerror}") from None

        def items() -> Iterator[tuple[int, Any, str | None]]:
            done = 0
            with handle:
                for number, line in enumerate(handle, start=1):
                    done += len(line)
                    if progress is not None and number % _PROGRESS_EVERY == 0:
                        progress(done, size)
                    if not line.strip():
                        continue
                    try:
                        yield number, orjson.loads(line), None
                    except orjson.JSONDecodeError as exc:
                        yield number, None, f"not JSON (or not UTF-8): {exc}"
            if progress is not None:
                progress(size, size)

        return self._import(items(), skip_bad=skip_bad_lines, now=now, source=str(path))

    def import_records(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        skip_bad: bool = False,
        now: TimeArg = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> ImportReport:
        """Imports mappings of ``remember``'s keywords plus ``narrative``, all or nothing.

        Same rules as :meth:`import_jsonl`; item numbers in errors count from 1, and
        ``progress(done, total)`` counts items (``total`` is 0 when ``records`` has no
        length).
        """
        self._writable()
        if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Iterable):
            raise CueTypeError(f"records must be an iterable of mappings, got {type(records).__name__}")
        total = len(records) if isinstance(records, Sized) else 0

        def items() -> Iterator[tuple[int, Any, str | None]]:
            for number, obj in enumerate(records, start=1):
                if progress is not None and number % _PROGRESS_EVERY == 0:
                    progress(number, total)
                yield number, obj, None

        return self._import(items(), skip_bad=skip_bad, now=now, source="records")

    @gc_paused
    def _import(self, items: Iterable[tuple[int, Any, str | None]], *, skip_bad: bool, now: TimeArg, source: str) -> ImportReport:
        recorded = _edge_now(now)
        errors: list[tuple[int, str]] = []
        taken: set[str] = set()
        batch = Batch(len(self._indexes))
        ids = batch.ids
        text = self._text
        if text is not None:
            text.ready(self._indexes, self._journal)  # a failed import rolls back to here
        rows: list[int] = []
        texts: list[str] = []
        short: list[dict[str, Any]] = []
        try:
            self._stage_import(items, skip_bad, source, recorded, errors, taken, batch, rows, texts, short)
        except BaseException:
            if text is not None:
                text.rollback()
            raise
        self._indexes.extend(batch)
        for stored in short:
            self._indexes.lifecycle.note_remember(stored)
        self._indexes.head = self._journal.head()
        if text is not None:
            text.add(rows, texts)
        return ImportReport(count=len(ids), skipped=errors, ids=list(ids))

    def _stage_import(self, items: Iterable[tuple[int, Any, str | None]], skip_bad: bool, source: str, recorded: datetime,
                      errors: list[tuple[int, str]], taken: set[str], batch: Batch, rows: list[int], texts: list[str],
                      short: list[dict[str, Any]]) -> None:
        ids = batch.ids
        text = self._text
        with self._journal.stage() as stage:
            for number, obj, unreadable in items:
                if unreadable is not None:
                    errors.append((number, unreadable))
                    continue
                try:
                    if not isinstance(obj, Mapping):
                        raise SchemaError("each item must be a JSON object", None)
                    unknown = set(obj) - _REMEMBER_KEYS
                    if unknown:
                        raise SchemaError(f"unknown keys {sorted(unknown)}", sorted(unknown)[0])
                    if "narrative" not in obj:
                        raise SchemaError("narrative is required", "narrative")
                    fields = {k: v for k, v in obj.items() if k != "narrative"}
                    episode = self._episode(obj["narrative"], fields, recorded, taken)
                except (ValueError, TypeError) as exc:
                    errors.append((number, str(exc)))
                    continue
                taken.add(episode.id)
                stored = episode.to_json()
                offset = stage.add({"op": "remember", "episode": stored})
                batch.add(IndexRow.of_json(stored), 0, offset)
                if stored["tier"] == "short":
                    short.append(stored)
                if text is not None:
                    rows.append(batch.start + len(ids) - 1)
                    texts.append(episode.narrative)
                    if len(rows) >= 10_000:
                        text.add(rows, texts)  # indexed meanwhile; committed with the home's next save
                        rows.clear()
                        texts.clear()
            if errors and not skip_bad:
                shown = "; ".join(f"line {n}: {m}" for n, m in errors[:5])
                raise ImportFileError(f"{len(errors)} bad item(s) in {source}, nothing imported: {shown}", errors)
            if ids:
                batch.place(stage.commit())

    # -- read -----------------------------------------------------------------------

    def recall(
        self,
        cues: Mapping[str, str | Sequence[str]] | None = None,
        text: str | None = None,
        k: int = 10,
        now: TimeArg = None,
        *,
        exclude: Mapping[str, str | Sequence[str]] | None = None,
        exclude_stale: bool = False,
        weights: TextWeights | None = None,
    ) -> RecallResult:
        """Memories matching every cue, ranked by salience decayed to ``now`` — or, with
        ``text``, ranked by BM25 blended with salience (see :class:`TextWeights`).

        Args:
            cues: Dimension -> value or list of values (a union). Dimensions:
                actor, user, type, outcome, time, subject, tag, kind, tier, band. A
                ``time`` value is a bucket ("2026", "2026-06", "2026-06-07") or a phrase
                resolved against ``now`` ("June 2026", "last week", "yesterday", ...).
            text: Full-text query. Cues then only narrow: the memories they let
                through that contain any of the query's terms are ranked by the
                blend of BM25, decayed salience and freshness, and hits are
                :class:`~cuemem.text.TextHit` (breakdown: text, salience, freshness).
            k: How many hits (>= 1).
            now: The instant salience decays to (default: the wall clock, read once).
            exclude: Values to leave out, same shape as ``cues``.
            exclude_stale: Leave out hits whose freshness at ``now`` is below the
                profile's threshold (:attr:`Hit.stale <cuemem.home.results.Hit.stale>`).
            weights: The text blend for this call (default: the handle's).

        Raises:
            UnknownDimensionError: an unknown cue dimension.
            TimeCueError: a time value that is neither a bucket nor a known phrase.
            InvalidArgumentError: ``k < 1``, a blank ``text``, or a read-only home
                whose text index was never built.
            CueTypeError: ``text`` not a string, ``weights`` not a TextWeights.
        """
        if not isinstance(exclude_stale, bool):
            raise CueTypeError(f"exclude_stale must be a bool, got {type(exclude_stale).__name__}")
        if text is not None:
            return self._recall_text(cues, text, k, now, exclude, weights, exclude_stale)
        at = _edge_now(now)
        resolved = normalize(cues, now=at)
        excluded = normalize(exclude, now=at) or None
        k = _arrays.count(k, "k")
        wanted = k
        made: dict[int, Hit] = {}  # a hit (and the record it loaded) is reused when the page grows
        while True:
            r = _core.recall(self._indexes.cues._inner, self._indexes.salience._inner, resolved, at.timestamp(), wanted, excluded)
            ranked = [
                (row, made.get(row) or made.setdefault(row, self._hit(row, score, parts, at)))
                for row, score, parts in zip(r.rows.tolist(), r.scores.tolist(), r.breakdown.tolist())
            ]
            if not exclude_stale:
                break
            fresh = [(row, h) for row, h in ranked if not h.stale]
            if len(fresh) >= k or len(ranked) < wanted:
                ranked = fresh[:k]
                break
            wanted *= 4  # stale hits crowded the first page: look further down the ranking
        hits = self._lead_with_abstractions([h for _, h in ranked], [row for row, _ in ranked], k, at)
        return RecallResult(hits=hits, total=r.total, examined=r.examined, full_scan=r.full_scan, cues=resolved)

    def _hit(self, row: int, score: float, parts: list[float], at: datetime) -> Hit:
        hit = Hit(self._indexes.ids[row], score, parts, self._loader(row))
        hit._fresh = lambda e: freshness_of(e, at, self._profile)
        hit.stale_below = self._profile.stale_below
        return hit

    def _now(self, now: TimeArg) -> datetime:
        return _edge_now(now)

    def _can_write(self) -> bool:
        return self._lock is not None


    def _recall_text(
        self,
        cues: Mapping[str, str | Sequence[str]] | None,
        text: str,
        k: int,
        now: TimeArg,
        exclude: Mapping[str, str | Sequence[str]] | None,
        weights: TextWeights | None,
        exclude_stale: bool = False,
    ) -> RecallResult:
        if not isinstance(text, str):
            raise CueTypeError(f"text must be a string, got {type(text).__name__}")
        if not text.strip():
            raise InvalidArgumentError("text must hold at least one word")
        if weights is not None and not isinstance(weights, TextWeights):
            raise CueTypeError(f"weights must be a TextWeights, got {type(weights).__name__}")
        at = _edge_now(now)
        resolved = normalize(cues, now=at)
        excluded = normalize(exclude, now=at) or None
        k = _arrays.count(k, "k")
        if self._text is None:
            raise InvalidArgumentError(f"this home has no text index yet ({self.text_report}); open it writable once to build it")
        self._text.ready(self._indexes, self._journal)
        blend = (weights or self._text_weights).core_kwargs()
        ids = self._indexes.ids
        wanted = k
        while True:
            r = _core.text_recall(
                self._indexes.cues._inner, self._indexes.salience._inner, self._text.core, resolved, text, at.timestamp(), wanted,
                excluded, **blend
            )
            hits: list[Hit] = []
            for row, score, bm25, t, s, f in zip(
                r.rows.tolist(), r.scores.tolist(), r.bm25.tolist(), r.text.tolist(), r.salience.tolist(), r.freshness.tolist()
            ):
                hit = TextHit(ids[row], score, bm25, [t, s, f], self._loader(row))
                hit._fresh = lambda e: freshness_of(e, at, self._profile)
                hit.stale_below = self._profile.stale_below
                hits.append(hit)
            if not exclude_stale:
                break
            fresh = [h for h in hits if not h.stale]
            if len(fresh) >= k or len(hits) < wanted:
                hits = fresh[:k]
                break
            wanted *= 4  # stale hits crowded the first page: look further down the ranking
        return RecallResult(hits=hits, total=r.total, examined=r.examined, full_scan=r.full_scan, cues=resolved)

    def _loader(self, row: int) -> Callable[[], Episode]:
        return lambda: Episode.from_json(self._journal.read_at(self._indexes.position(row))["episode"])

    def get(self, id: str) -> Episode:
        """The episode with this id.

        Raises:
            NotFoundError: no such id in this home.
        """
        row = self._indexes.row_of.get(id) if isinstance(id, str) else None
        if row is None:
            raise NotFoundError(f"no episode with id {id!r}")
        return self._loader(row)()

    def cue_values(self, dimension: str) -> list[tuple[str, int]]:
        """The values of a cue dimension with how many memories carry each, most first.

        Raises:
            UnknownDimensionError: ``dimension`` is not a cue dimension.
        """
        if dimension not in DIMENSIONS:
            raise UnknownDimensionError(f"unknown cue dimension {dimension!r}; the dimensions are {list(DIMENSIONS)}")
        cues = self._indexes.cues
        counts = [(v, cues.count({dimension: v})) for v in cues.values(dimension)]
        return sorted(counts, key=lambda vc: (-vc[1], vc[0]))

    def __contains__(self, id: object) -> bool:
        return isinstance(id, str) and id in self._indexes.row_of

    def __len__(self) -> int:
        return len(self._indexes)

    def refresh(self) -> int:
        """Catches up with records other processes appended; returns how many episodes."""
        count = apply_journal(self._indexes, self._journal, self._indexes.head)
        if self._text is not None:
            self._text.refresh()
        return count

    # -- notes ----------------------------------------------------------------------

    def write_note(
        self,
        id: str,
        body: str,
        *,
        kind: Kind | str = "semantic",
        subject: str | None = None,
        sources: Sequence[str] = (),
        confidence: float = 1.0,
        origin: str = "agent",
        tags: Sequence[str] = (),
        now: TimeArg = None,
    ) -> Note:
        """Writes a note (a new version if the id exists), file and journal both.

        Raises:
            SchemaError: a field breaks the schema.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        at = _edge_now(now)
        if isinstance(id, str) and id in self._indexes.notes:
            self._keep_hand_edit(id, at)
        version = self._indexes.notes.get(id, (0, ""))[0] + 1 if isinstance(id, str) else 1
        note = Note.create(
            id=id, kind=kind, subject=subject, body=body, sources=tuple(sources), confidence=confidence,
            recorded_at=at, origin=origin, tags=tuple(tags), version=version,
        )
        self._record_note(note)
        return note

    def _record_note(self, note: Note) -> None:
        self._notes.write(note)
        sha = self._notes.fingerprint(note.id)
        self._journal.append([{"op": "note", "id": note.id, "version": note.version, "sha256": sha, "markdown": note.to_markdown()}])
        self._indexes.notes[note.id] = (note.version, sha)
        self._indexes.head = self._journal.head()

    def _keep_hand_edit(self, id: str, at: datetime) -> None:
        """Records a person's pending edit of note ``id`` before the agent overwrites it."""
        try:
            sha = self._notes.fingerprint(id)
        except CuememError:
            return  # the file is gone; the journal holds every version
        if sha != self._indexes.notes[id][1]:
            try:
                edited = self._notes.read(id)
            except CuememError:
                return  # unreadable: left for sync() to report; the new version replaces it
            version = self._indexes.notes[id][0]
            self._record_note(Note.create(**{**edited.fields(), "version": version + 1, "origin": "user", "recorded_at": at}))

    def _write_note_fields(self, fields: dict[str, Any], at: datetime) -> Note:
        nid = fields["id"]
        if nid in self._indexes.notes:
            self._keep_hand_edit(nid, at)
        version = self._indexes.notes.get(nid, (0, ""))[0] + 1
        note = Note.create(**{**fields, "recorded_at": at, "version": version})
        self._record_note(note)
        return note

    def ids(self) -> list[str]:
        """Every episode id, in journal order."""
        return list(self._indexes.ids)

    def notes(self) -> list[Note]:
        """Every readable note, sorted by id (broken files are in ``sync().errors``)."""
        return self._notes.scan().notes

    def sync(self, now: TimeArg = None) -> SyncReport:
        """Picks up note files a person edited or added, as new versions with origin user.

        The person's text is kept as written; only the version metadata is advanced.
        Files that fail to parse are reported and left alone.
        """
        self._writable()
        at = _edge_now(now)
        scan = self._notes.scan(known={nid: sha for nid, (_, sha) in self._indexes.notes.items()})  # changed files only
        updated: list[str] = []
        for note in scan.notes:
            version = self._indexes.notes.get(note.id, (0, ""))[0]
            edited = Note.create(**{**note.fields(), "version": version + 1, "origin": "user", "recorded_at": at})
            self._record_note(edited)
            updated.append(note.id)
        self._notes_edited = bool(scan.errors)
        return SyncReport(updated=updated, errors=list(scan.errors))

    # -- maintenance ----------------------------------------------------------------

    def save_index(self) -> None:
        """Writes the index cache to ``home/index`` (done on close)."""
        last = None
        if self._indexes.ids:
            last = record_sha(self._journal.read_at(self._indexes.position(len(self._indexes) - 1)))
        self._indexes.save(self._layout.index, last_record_sha=last)
        if self._text is not None:
            self._text.commit(self._indexes, self._journal)

    def rebuild(self) -> int:
        """Discards the index cache and rebuilds it from the journal; returns the episodes indexed."""
        self._writable()
        fresh = Indexes(SalienceTable(self._indexes.salience.weights, self._indexes.salience.half_lives_days))
        count = apply_journal(fresh, self._journal, None)
        self._indexes = fresh
        if self._text is not None:
            self._text.rebuild(fresh, self._journal)
        self.save_index()
        return count

    def stats(self) -> HomeStats:
        """Counts and sizes of the home."""
        s = self._indexes.cues.stats()
        segments = sorted(self._layout.journal.glob("*.jsonl"))
        return HomeStats(
            episodes=len(self._indexes),
            notes=len(self._indexes.notes),
            dimensions=len(DIMENSIONS),
            values=s.values,
            postings=s.postings,
            index_bytes=s.bytes + self._indexes.salience.nbytes,
            journal_bytes=sum(p.stat().st_size for p in segments),
            journal_segments=len(segments),
            journal_problems=len(self._journal.problems),
        )

    # -- life-cycle jobs: consolidation, distillation, maintenance ---------------------

    def consolidate(self, now: TimeArg = None, *, config: ConsolidationConfig | None = None) -> ConsolidationReport:
        """Promotes due groups of short-term items to long-term records (D1); see :mod:`cuemem.jobs.consolidate`.

        Short-term items no record cites yet are grouped and promoted by repetition or
        intensity; each promotion is a long-term record citing every member. The run
        is journaled (``op: job``) in the same append as its records. Without
        ``config``, the thresholds and per-type/kind TTLs are the handle's profile's.

        Raises:
            InvalidArgumentError: ``config`` is not a :class:`~cuemem.jobs.ConsolidationConfig`.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        at = _edge_now(now)
        if config is not None and not isinstance(config, ConsolidationConfig):
            raise InvalidArgumentError(f"config must be a ConsolidationConfig, got {type(config).__name__}")
        return run_consolidation(self, at, config or self._consolidation_config())

    def _consolidation_config(self) -> ConsolidationConfig:
        """Consolidation's thresholds and TTLs as the handle's failure-cost profile sets them."""
        p = self._profile
        return ConsolidationConfig(
            min_occurrences=p.min_occurrences, salience_floor=p.salience_floor, min_confidence=p.min_confidence, ttl=p.ttl
        )

    def distill(
        self, now: TimeArg = None, *, config: DistillationConfig | None = None, summarizer: Summarizer | None = None
    ) -> DistillationReport:
        """Abstracts old, unreferenced, faded memories one rung up the ladder (D2); see :mod:`cuemem.jobs.distill`.

        Args:
            now: The instant to decay to (default: the clock, read once).
            config: Floor, minimum age, per-run limit (default: the documented defaults,
                with the floor of the handle's profile).
            summarizer: Writes each rung's text (default: extractive, deterministic).

        Raises:
            InvalidArgumentError: ``config`` or ``summarizer`` is of the wrong kind.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        at = _edge_now(now)
        if config is not None and not isinstance(config, DistillationConfig):
            raise InvalidArgumentError(f"config must be a DistillationConfig, got {type(config).__name__}")
        if summarizer is not None and not callable(summarizer):
            raise InvalidArgumentError(f"summarizer must be callable, got {type(summarizer).__name__}")
        return run_distillation(self, at, config or DistillationConfig(floor=self._profile.distill_floor), summarizer)

    def maintain(self, now: TimeArg = None, *, jobs: Sequence[Job] | None = None) -> MaintenanceReport:
        """Runs whichever jobs are due at ``now`` and reports what ran. By default: expiry
        daily at 02:00 UTC, consolidation daily at 03:00, distillation weekly on Sunday at
        04:00, policies from outcomes on Sunday at 05:00 (:data:`cuemem.jobs.DEFAULT_JOBS`).

        Raises:
            InvalidArgumentError: ``jobs`` is not a sequence of :class:`~cuemem.jobs.Job`.
            ReadOnlyError: the handle is read-only.
        """
        self._writable()
        if jobs is not None and not isinstance(jobs, (list, tuple)):
            raise InvalidArgumentError(f"jobs must be a list or tuple of Job entries, got {type(jobs).__name__}")
        return run_maintenance(self, _edge_now(now), DEFAULT_JOBS if jobs is None else tuple(jobs))

    def _lead_with_abstractions(self, hits: list[Hit], rows: list[int], k: int, at: datetime) -> list[Hit]:
        """Places before each hit the record that cites it (consolidated record or rung)."""
        if not hits:
            return hits
        citers = np.frombuffer(self._indexes.citers, dtype=np.int64)
        order = lead_with_abstractions(rows, citers, k)
        if order == rows:
            return hits
        by_row = dict(zip(rows, hits))
        out = []
        for row in order:
            hit = by_row.get(row)
            if hit is None:
                top = self._indexes.salience.top_k(np.array([row], dtype=np.uint32), at, 1)
                if not len(top.scores):
                    continue  # no longer live (retired): nothing to lead with
                hit = self._hit(row, float(top.scores[0]), top.breakdown[0].tolist(), at)
            out.append(hit)
        return out



