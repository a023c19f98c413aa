"""``Memory``: the one facade over a home — every public method, each one call deep.

Each method holds no rule and checks nothing itself: it hands its arguments, the
handle's scope (:class:`~cuemem.home.scope.Reach`) and its ``now`` to the one place
that owns them — the :class:`~cuemem.home.Home` (get, notes, upkeep), the recall
planner (:mod:`cuemem.home.query.recall`), the importer (:mod:`cuemem.home.imports`), the
life-cycle (:class:`~cuemem.lifecycle.service.Lifecycle`), the policies
(:class:`~cuemem.policy.service.Policies`), forgetting (:mod:`cuemem.forget`), the views
(:mod:`cuemem.views`) or the jobs (:mod:`cuemem.jobs`); opening a handle is
:mod:`cuemem.opening`'s. Each reads the clock once, at the edge, when ``now`` is not
given (:func:`cuemem.home.clock.edge_now`); ``now`` is keyword-only everywhere. Every
write of all of them is one :meth:`Home.commit <cuemem.home.Home.commit>`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar, overload

from . import _arrays
from .forget.receipt import ForgetReceipt
from .home.clock import TimeArg, edge_now, edge_now_or_none
from .home.query.golden import GoldenReport, golden_report
from .home.imports import import_jsonl, import_records
from .home.results import HomeStats, ImportReport, OpenReport, PolicyReport, RecallResult, SyncReport, TextHit
from .home.scope import Reach
from .jobs.config import ConsolidationConfig, DistillationConfig
from .jobs.dedupe import DedupeConfig
from .jobs.home import consolidation, deduplication, distillation
from .jobs.maintain import Job, due, last_run, maintenance
from .jobs.reports import ConsolidationReport, DedupeReport, DistillationReport, MaintenanceReport
from .jobs.summarize import Summarizer
from .lifecycle.approvals import Approval
from .lifecycle.freshness import freshness_of
from .lifecycle.patterns import Pattern
from .lifecycle.profiles import Profile
from .store.proposals import Proposal
from .lifecycle.review import ReviewItem
from .lifecycle.tiers import ExpiryReport, WorkingItem
from .lifecycle.versions import Version
from .lifecycle.workers import Worker
from .lifecycle.writes import KEEP, Keep, caller_origin, session_label, subject_version_key
from .opening import Parts, open_handle
from .policy.explain import Explanation
from .policy.judge import Judgement
from .schema.policy import Policy
from .schema import Episode, Kind, Level, Note, Origin, Tier
from .session import Session
from .store.fsync import FsyncPolicy
from .text import DEFAULT_ANALYZER, TextWeights
from .text.vectors import Embedder
from .views.context import Context, gather
from .views.memory_md import DEFAULT_BUDGET

__all__ = ["Memory"]

#: Cues of a recall: dimension -> a value or several (a union).
Cues = Mapping[str, str | Sequence[str] | Mapping[str, Any]]

P = ParamSpec("P")
R = TypeVar("R")


def _serialized(method: Callable[Concatenate[Memory, P], R]) -> Callable[Concatenate[Memory, P], R]:
    """Runs ``method`` holding the home's guard: one call at a time per home, so a handle is
    safe to share between threads (the Scheduler's among them). Calls nest (a job's run
    calls other methods); lazy ``Hit.record`` reads need no guard. (``recall``, the hot
    path, takes the guard in :meth:`Recaller.recall <cuemem.home.query.recall.Recaller.recall>`
    instead: the wrapper's repacking of its arguments was a tenth of a recall.)"""

    @functools.wraps(method)
    def call(self: Memory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._home.guard:
            return method(self, *args, **kwargs)

    return call


class Memory:
    """An agent's memory, kept in a home directory.

    Open one with :meth:`Memory.open` (a context manager). A handle may be shared
    between threads: its calls run one at a time (callbacks a call takes — a
    summarizer, a job's ``run``, an import's ``progress`` — run inside it, so they
    must not wait on another thread that uses the same handle). The journal under
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

    def __init__(self, parts: Parts, reach: Reach) -> None:
        """A handle on ``parts``' home within ``reach`` (made by :meth:`open` and :meth:`user`)."""
        self._parts, self._reach = parts, reach
        self._home, self._recall, self._life = parts.home, parts.recall, parts.life
        self._policies, self._memory_md, self._forgetting = parts.policies, parts.memory_md, parts.forgetting

    # -- life of a handle -----------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str],
        *,
        read_only: bool = False,
        fsync: FsyncPolicy | str = FsyncPolicy.ALWAYS,
        lock_timeout: float | None = None,
        weights: Mapping[str, float] | None = None,
        half_lives_days: Mapping[str, float] | None = None,
        profile: Profile | str = "medium",
        text_analyzer: str = DEFAULT_ANALYZER,
        text_weights: TextWeights | None = None,
        embedder: Embedder | None = None,
        user: str | None = None,
        memory_budget: int = DEFAULT_BUDGET,
        cache: str | os.PathLike[str] | None = None,
        follow: bool = True,
    ) -> Memory:
        """Opens the home at ``path`` — and, unless ``read_only``, creates it when ``path``
        is missing or an empty directory (one call: ``Memory.open("./new-home")``).

        A directory that holds files but is not a home (no ``journal/``) is refused
        (:class:`~cuemem.errors.NotAHomeError`) rather than filled with one: a typo or the
        wrong directory never becomes a home.

        Args:
            path: The home directory, or a shared home's address
                (``postgresql://…[?cuemem_home=NAME]``, :mod:`cuemem.postgres`; needs the
                ``cuemem[postgres]`` extra).
            read_only: Follow a home another process writes; takes no lock. (A shared
                home's read-only handle still keeps its cache.)
            fsync: ``"always"`` (default: every acknowledged write is on disk),
                ``"interval"`` (the journal synced within 50 ms of each write, one sync for
                all of them: a power loss may lose the last 50 ms) or ``"never"`` (leave
                flushing to the OS; for throwaway homes). For a shared
                home it governs the cache; the server's own settings govern the truth.
            lock_timeout: Seconds to wait for another writer to finish. A directory's writer
                holds it for the handle's life (default 0: fail at once); a shared home's
                writers take turns per write call (default 30).
            weights: Salience weight overrides, per axis.
            half_lives_days: Salience half-life overrides, per axis.
            profile: The failure-cost profile ("low", "medium", "high" or a
                :class:`~cuemem.lifecycle.Profile`): thresholds, TTLs, approvals, freshness.
            text_analyzer: The text index's analyzer (its recipe); each analyzer's
                index lives in its own directory under ``index/text/``.
            text_weights: The default blend of text recalls (default: ``TextWeights()``,
                with ``vector=0.2`` when an ``embedder`` is given).
            embedder: An :class:`~cuemem.text.vectors.Embedder` (opt-in vectors): the
                home keeps one vector per memory as a cache under ``index/vectors/``,
                embedded at the next recall that needs them, and text recall fuses in
                the memories nearest the question (``TextWeights.vector``: 0.2 unless
                ``text_weights`` says otherwise).
            user: Scope the handle to one user's memories (:mod:`cuemem.home.scope`):
                it reads and writes only theirs, and another user's record does not
                exist for it. ``"*"``: every user, explicitly. None (default): every
                user while the home holds one; on a home of several users a read that
                names no user is refused (``ScopeError``), and so is a write naming no
                ``user_id`` on a home holding another user's memories than the default's.
            memory_budget: The token budget of the home's ``MEMORY.md`` (see :meth:`autoload`).
            cache: A shared home's cache directory (default: one under ``$CUEMEM_CACHE`` or
                ``~/.cache/cuemem`` that no other process holds).
            follow: A shared home's handle catches up as soon as another process commits
                (a thread listening to the server); else at each write and :meth:`refresh`.

        Raises:
            HomeLockedError: another process writes this home.
            NotAHomeError: ``path`` holds files and is not a home (nothing is created).
            StorageError: the directory cannot be created or read.
            SharedHomeError: a shared home's server cannot be reached.
            SharedSchemaError: a shared home written by a newer cuemem.
        """
        return cls(*open_handle(
            path, read_only=read_only, fsync=fsync, lock_timeout=lock_timeout, weights=weights, half_lives_days=half_lives_days, profile=profile,
            text_analyzer=text_analyzer, text_weights=text_weights, embedder=embedder, user=user, memory_budget=memory_budget, cache=cache,
            follow=follow,
        ))

    @_serialized
    def user(self, user_id: str) -> Memory:
        """A handle on this home scoped to ``user_id`` (see ``Memory.open(user=...)``).

        It shares this handle's home, lock and guard; closing it closes nothing (close
        this one). A scoped handle can only narrow: asking it for another user is an error.

        Raises:
            InvalidIdError: a malformed ``user_id``.
            ScopeError: this handle is scoped to another user.
        """
        return Memory(self._parts.view(), self._reach.narrowed(user_id))

    @property
    def scope(self) -> str | None:
        """The user this handle is scoped to, ``"*"`` (every user, explicitly), or None (unscoped)."""
        return self._reach.name

    @_serialized
    def session(self, id: str, *, origin: Origin | str = Origin.AGENT) -> Session:
        """The agent session ``id`` (a handle and a context manager; see :class:`~cuemem.session.Session`):
        a view of this handle, as :meth:`user` is — the same home, lock, guard and scope;
        closing it closes nothing.

        Every write made through it records ``id`` as its session. Once the session
        has read external content (:meth:`Session.read_external`, or any write with
        ``origin="external"``) it is tainted for good — the journal says so — and
        everything it writes is tainted and quarantined.

        Raises:
            SchemaError: ``id`` is not 1-100 printable characters, or a bad ``origin``.
        """
        return Session(Memory(self._parts.view(), self._reach), session_label(id), caller_origin(origin))

    @_serialized
    def tainted(self, session: str) -> bool:
        """Whether the session ``session`` has read external content (in any handle, ever).

        A session's taint is the session's, whichever users it writes for: over-tainting
        is the safe side.

        Raises:
            SchemaError: ``session`` is not a label.
        """
        return self._life.tainted(session)

    @_serialized
    def taint_session(self, session: str, *, source: str | None = None, now: TimeArg = None, user_id: str | None = None) -> None:
        """Records that the session ``session`` read content no person has reviewed (from
        ``source``): it is tainted from now on, for good, as if it had read external content —
        everything it writes afterwards lands quarantined. A session's reads of quarantined
        text call this (:class:`~cuemem.session.Session`); so may a host that hands an agent
        text cuemem never saw. Tainting a tainted session writes nothing.

        Raises:
            SchemaError: ``session`` is not a label, ``source`` not 1-2000 printable characters.
            ReadOnlyError: the handle is read-only (a taint that cannot be journaled is refused, never dropped).
        """
        self._life.taint_session(session, user_id, source, now, self._reach)

    def close(self) -> None:
        """Saves the index cache (writers) and releases the writer lock. Idempotent.
        A view made by :meth:`user` closes nothing, and neither does a handle a forked
        child inherited (its parent's to close: :mod:`cuemem.home.forks`)."""
        self._parts.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def path(self) -> Path:
        """The home directory."""
        return self._home.root

    @property
    def open_report(self) -> OpenReport:
        """How the home came up: cache use, journal problems, broken note files."""
        return self._home.report

    @property
    def text_report(self) -> str:
        """How the text index came up: "loaded", "loaded and caught up", "rebuilt (why)"."""
        return self._home.caches.report

    @property
    def profile(self) -> Profile:
        """The failure-cost profile this handle was opened with."""
        return self._life.profile

    # -- write ----------------------------------------------------------------------

    @_serialized
    def remember(
        self,
        narrative: str,
        *,
        id: str | None = None,
        user_id: str | None = None,
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
        origin: Origin | str | None = Origin.USER,
        tier: Tier | str = Tier.LONG,
        kind: Kind | str = Kind.EPISODIC,
        level: Level | str = Level.RAW,
        sources: Sequence[str] = (),
        taint: bool = False,
        valid_from: datetime | date | str | None = None,
        valid_to: datetime | date | str | None = None,
        thread: str | None = None,
        session: str | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        allow_forgotten: bool = False,
        now: TimeArg = None,
    ) -> str:
        """Validates an episode, appends it to the journal durably, indexes it, returns its id.

        ``occurred_at`` defaults to ``now``'s date; salience decays from it. An id is
        assigned when none is given. The life-cycle fields (``origin``, ``tier``,
        ``kind``, ``level``, ``sources``, ``taint``, valid time) are those of
        :meth:`Episode.create <cuemem.schema.Episode.create>`. ``thread`` names the
        conversation, session or ticket the memory belongs to; memories of a thread
        are ordered as written, and text recall lets a hit share its neighbours' and
        its thread's scores (:class:`TextWeights`). ``metadata`` is your own JSON object,
        kept and returned as given (``hit.record.metadata``); each scalar top-level value is
        a ``meta`` cue: ``recall({"meta": {"project": "apollo"}})``.

        A long-term, raw record with a ``subject`` is a version of that subject: it
        passes the write gate as :meth:`observe`'s writes do (trust by ``origin``,
        approvals, conflicts), so remembering a changed fact supersedes the current
        version (see :meth:`history`), and saying the current one again writes
        nothing and returns its id; a write the gate queues returns the id it will
        get once approved.

        A memory :meth:`forget` took out (the same user and narrative) is refused unless
        ``allow_forgotten``; a forgotten id stays taken for good.

        Raises:
            SchemaError: a field breaks the schema (the error names it); nothing is written.
            InvalidIdError: the id is malformed or already taken.
            ReingestError: it was forgotten (see above).
            ScopeError: ``user_id`` is another user than a scoped handle's; or the handle
                is unscoped, names no ``user_id`` and the home holds another user's
                memories than the default user's (a read would have to name one too).
            ReadOnlyError: the handle is read-only.
        """
        return self._life.remember(
            narrative, dict(
                id=id, type=type, outcome=outcome, actors=actors, occurred_at=occurred_at, importance=importance, risk=risk, salience=salience,
                confidence=confidence, subject=subject, tags=tags, tier=tier, kind=kind, level=level, sources=sources, taint=taint,
                valid_from=valid_from, valid_to=valid_to, thread=thread, session=session, source=source, metadata=metadata,
            ), user_id=user_id, origin=origin, now=now, allow_forgotten=allow_forgotten, reach=self._reach,
        )

    @_serialized
    def update(
        self,
        id: str,
        narrative: str | None = None,
        *,
        type: str | None = None,
        outcome: str | None | Keep = KEEP,
        actors: Sequence[str] | None = None,
        occurred_at: date | str | None = None,
        importance: float | None = None,
        risk: float | None = None,
        salience: Mapping[str, float] | None = None,
        confidence: float | None = None,
        subject: str | None | Keep = KEEP,
        tags: Sequence[str] | None = None,
        kind: Kind | str | None = None,
        tier: Tier | str | None = None,
        valid_from: datetime | date | str | None = None,
        valid_to: datetime | date | str | None | Keep = KEEP,
        metadata: Mapping[str, Any] | None | Keep = KEEP,
        origin: Origin | str | None = Origin.USER,
        now: TimeArg = None,
    ) -> str:
        """Changes record ``id`` by writing its successor — never an edit in place — and
        returns the new id.

        The successor is the record with the changes given (``None`` leaves a field as it
        is; for the fields where None is a value — ``outcome``, ``subject``, ``valid_to``,
        ``metadata`` — leaving it out keeps it), recorded at ``now``, ``supersedes`` naming
        the old one, and it passes the write gate as any write does: a fact's update is its
        subject's next version (``history`` shows both; the gate may queue it), any other
        record is retired in the same commit. Its trust is the caller's (``origin``), its
        provenance as for :meth:`remember`, and never more than the record it replaces: the
        successor of a tainted or quarantined record is tainted and quarantined (out of
        default recall and ``MEMORY.md``, in :meth:`review`) until a person accepts it.

        Raises:
            NotFoundError: no such record this handle sees. ForgottenError: it was erased.
            InvalidArgumentError: it is retired or a superseded version.
            SchemaError: a change breaks the schema; nothing is written.
            ReadOnlyError: the handle is read-only.
        """
        return self._life.update(id, dict(
            narrative=narrative, type=type, actors=actors, occurred_at=occurred_at, importance=importance, risk=risk, salience=salience,
            confidence=confidence, tags=tags, kind=kind, tier=tier, valid_from=valid_from, outcome=outcome, subject=subject, valid_to=valid_to,
            metadata=metadata,
        ), now, origin, self._reach)

    @_serialized
    def import_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        skip_bad_lines: bool = False,
        now: TimeArg = None,
        progress: Callable[[int, int], None] | None = None,
        session: str | None = None,
        allow_forgotten: bool = False,
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

        Each item passes the write gate as :meth:`remember` does; ``ids`` holds what
        each good item returned. A forgotten item is a bad one unless ``allow_forgotten``.

        Raises:
            ImportFileError: bad lines (with their line numbers), nothing written.
            StorageError: the file cannot be read, or the journal cannot be written.
        """
        return import_jsonl(
            self._home, self._life.admission, path, skip_bad=skip_bad_lines, now=now, progress=progress, session=session,
            allow_forgotten=allow_forgotten, reach=self._reach,
        )

    @_serialized
    def import_records(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        skip_bad: bool = False,
        now: TimeArg = None,
        progress: Callable[[int, int], None] | None = None,
        session: str | None = None,
        allow_forgotten: bool = False,
    ) -> ImportReport:
        """Imports mappings of ``remember``'s keywords plus ``narrative``, all or nothing.

        Same rules as :meth:`import_jsonl`; item numbers in errors count from 1, and
        ``progress(done, total)`` counts items (``total`` is 0 when ``records`` has no
        length).
        """
        return import_records(
            self._home, self._life.admission, records, skip_bad=skip_bad, now=now, progress=progress, session=session,
            allow_forgotten=allow_forgotten, reach=self._reach,
        )

    # -- read -----------------------------------------------------------------------

    # Typing only: a cue recall gives Hits, a text recall TextHits (with ``bm25``).
    @overload
    def recall(
        self, /, cues: Cues | None = None, text: None = None, k: int = 10, *, now: TimeArg = None,
        exclude: Cues | None = None, exclude_stale: bool = False, weights: TextWeights | None = None, include_quarantined: bool = False,
        follows: RecallResult | None = None,
    ) -> RecallResult: ...
    @overload
    def recall(
        self, /, cues: Cues | None, text: str, k: int = 10, *, now: TimeArg = None,
        exclude: Cues | None = None, exclude_stale: bool = False, weights: TextWeights | None = None, include_quarantined: bool = False,
        follows: RecallResult | None = None,
    ) -> RecallResult[TextHit]: ...
    @overload
    def recall(
        self, /, cues: Cues | None = None, *, text: str, k: int = 10, now: TimeArg = None,
        exclude: Cues | None = None, exclude_stale: bool = False, weights: TextWeights | None = None, include_quarantined: bool = False,
        follows: RecallResult | None = None,
    ) -> RecallResult[TextHit]: ...
    @overload
    def recall(
        self, /, cues: Cues | None = None, text: str | None = None, k: int = 10, *, now: TimeArg = None,
        exclude: Cues | None = None, exclude_stale: bool = False, weights: TextWeights | None = None, include_quarantined: bool = False,
        follows: RecallResult | None = None,
    ) -> RecallResult: ...

    def recall(  # the guard is held by the Recaller (the hot path spares the wrapper)
        self,
        cues: Cues | None = None,
        text: str | None = None,
        k: int = 10,
        *,
        now: TimeArg = None,
        exclude: Cues | None = None,
        exclude_stale: bool = False,
        weights: TextWeights | None = None,
        include_quarantined: bool = False,
        follows: RecallResult | None = None,
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
                :class:`~cuemem.TextHit` (breakdown: text, salience, freshness).
            k: How many hits (>= 1).
            now: The instant salience decays to (default: the wall clock, read once).
            exclude: Values to leave out, same shape as ``cues``.
            exclude_stale: Leave out hits whose freshness at ``now`` is below the
                profile's threshold (:attr:`Hit.stale <cuemem.home.results.Hit.stale>`).
            weights: The text blend for this call (default: the handle's).
            include_quarantined: Let quarantined memories through too (unreviewed,
                derived from external content); each hit says so
                (:attr:`Hit.quarantined <cuemem.home.results.Hit.quarantined>`, ``tainted``).
            follows: The text recall this question follows up on (an exchange of
                questions; :meth:`Session.recall <cuemem.session.Session.recall>` passes
                its previous one): a question that names no one but holds a pronoun
                ("what did she say next?") is read as naming whom that recall's question
                named, or else the people of its first hit (``result.named`` says whom).

        Raises:
            ScopeError: a user cue outside this handle's scope, or none on a home of
                several users through an unscoped handle.
            UnknownDimensionError: an unknown cue dimension.
            TimeCueError: a time value that is neither a bucket nor a known phrase.
            InvalidArgumentError: ``k < 1``, a blank ``text``, or a read-only home
                whose text index was never built.
            CueTypeError: ``text`` not a string, ``weights`` not a TextWeights,
                ``follows`` not a RecallResult.
        """
        return self._recall.recall(
            cues, text, k, now, exclude=exclude, exclude_stale=exclude_stale, weights=weights, include_quarantined=include_quarantined,
            follows=follows, reach=self._reach,
        )

    @_serialized
    def get(self, id: str) -> Episode:
        """The episode with this id: live, retired or superseded.

        To a scoped handle another user's record — live, retired or forgotten — is one
        that does not exist (the same ``NotFoundError``); its own forgotten ones are a
        ``ForgottenError``.

        Raises:
            ScopeError: an unscoped handle on a home of several users (as :meth:`recall`).
            NotFoundError: no such id in this home (or in this handle's scope).
            ForgottenError: it was erased by :meth:`forget`.
        """
        return self._home.get(id, self._reach.reader())

    @_serialized
    def cue_values(self, dimension: str) -> list[tuple[str, int]]:
        """The values of a cue dimension with how many memories carry each, most first
        (within this handle's scope; an unscoped handle may always list the ``user`` values).

        Raises:
            ScopeError: an unscoped handle on a home of several users (but for ``user``).
            UnknownDimensionError: ``dimension`` is not a cue dimension.
        """
        return self._recall.cue_values(dimension, self._reach)

    @_serialized
    def __contains__(self, id: object) -> bool:
        """Whether :meth:`get` reads ``id`` (ScopeError: as :meth:`get`)."""
        return self._home.holds(id, self._reach.reader())

    @_serialized
    def __len__(self) -> int:
        """How many records :meth:`ids` lists (ScopeError: as :meth:`get`)."""
        return self._home.record_count(self._reach.reader())

    @_serialized
    def ids(self) -> list[str]:
        """Every record id :meth:`get` reads through this handle — live, retired and
        superseded records of its scope, never erased ones — in journal order. Recall
        returns the live ones among them.

        Raises:
            ScopeError: an unscoped handle on a home of several users (as :meth:`recall`).
        """
        return self._home.ids(self._reach.reader())

    @_serialized
    def refresh(self) -> int:
        """Catches up with records other processes appended; returns how many episodes."""
        return self._home.refresh()

    # -- notes ----------------------------------------------------------------------

    @_serialized
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
        session: str | None = None,
        now: TimeArg = None,
    ) -> Note:
        """Writes a note (a new version if the id exists), file and journal both.

        A person's edit of the file since its last version is kept first, as a
        version of its own (origin user). A note of origin ``external`` (which taints
        its ``session``), or written by a tainted ``session``, is tainted and unreviewed:
        never in ``MEMORY.md``. Over a note whose current version is reviewed (a
        person's), such a version is not written: it waits in :meth:`review` as a
        proposal (job ``write_note``, action ``replace``) and the file, the note and
        ``MEMORY.md`` stay as they were until a person accepts it; the note returned is
        the version accepting it writes.

        Raises:
            SchemaError: a field breaks the schema.
            ReadOnlyError: the handle is read-only.
        """
        return self._life.write_note(
            dict(id=id, kind=kind, subject=subject, body=body, sources=sources, confidence=confidence, origin=origin, tags=tags), session, now,
            self._reach,
        )

    @_serialized
    def notes(self) -> list[Note]:
        """Every readable note, sorted by id (broken files are in ``sync().errors``).

        Notes a person or an agent writes belong to the home: every scope sees them. A
        note a job generated from memories (a rung of the ladder, a mined policy) belongs
        to their user: a scoped handle sees only its own user's.
        """
        return self._policies.notes(self._reach.scope.user)

    @_serialized
    def sync(self, *, now: TimeArg = None) -> SyncReport:
        """Picks up note files a person edited or added, as new versions with origin user.

        The person's text is kept as written; only the version metadata is advanced.
        Files that fail to parse are reported and left alone.
        """
        return self._home.notes.sync(edge_now(now))

    # -- upkeep ---------------------------------------------------------------------

    @_serialized
    def save_index(self) -> None:
        """Writes the index cache to ``home/index`` (done on close)."""
        self._home.save_index()

    @_serialized
    def rebuild(self) -> int:
        """Discards the index cache and rebuilds it from the journal; returns the records
        indexed, erased ones left out (as ``len`` of an unscoped handle counts them)."""
        return self._home.rebuild()

    @_serialized
    def stats(self) -> HomeStats:
        """Counts and sizes of the home, and per job its maintenance proposals and regret
        rate (``stats().proposals``: accepted proposals whose retired content was written
        again afterwards, over accepted; :mod:`cuemem.lifecycle.proposals`)."""
        return self._life.stats()

    # -- the life-cycle: observe, approvals, versions, tiers, workers -----------------

    @_serialized
    def observe(
        self,
        text: str,
        *,
        now: TimeArg = None,
        session: str | None = None,
        origin: Origin | str | None = Origin.USER,
        user_id: str | None = None,
        patterns: Sequence[Pattern] | None = None,
    ) -> list[str]:
        """Extracts ``text``, gates each candidate and writes it to its tier; returns the ids.

        Preferences, decisions and definitions go long-term (as versions of their
        subject), disambiguations short-term (tagged ``session:<session>``), other
        sentences into this turn's working memory (a sentence held twice in a turn is
        promoted to short-term), greetings nowhere. The gate may lower a write to
        short-term (origin trusted too little), queue it for approval (sensitive, under
        the high profile; or less confident than the current version) or find it
        repeats the current version (its id is returned, nothing is written). The
        call's writes are one commit. With ``session``, every record
        written belongs to that thread (``thread=session``; see :meth:`remember`).

        Returns:
            Per stored sentence: a record id (``ep-...``; for a queued write, the id it
            will get if approved) or a working-memory id (``wm-...``).

        Raises:
            CueTypeError, InvalidArgumentError: bad ``text``, ``session`` or ``patterns``.
            SchemaError: a bad ``origin`` or ``user_id``, or ``text`` that is not valid
                Unicode (a lone surrogate); nothing is written.
            ReadOnlyError: the handle is read-only.
        """
        return self._life.observe(text, now=now, session=session, origin=origin, user_id=user_id, patterns=patterns, reach=self._reach)

    @_serialized
    def approvals(self, *, now: TimeArg = None) -> list[Approval]:
        """Writes waiting for a decision, oldest first; with ``now``, those not yet expired at it."""
        return self._life.waiting(now, self._reach)

    @_serialized
    def golden(self, *, now: TimeArg = None) -> GoldenReport:
        """Runs the home's golden recall set (``golden.yaml``, E3; :mod:`cuemem.home.query.golden`)
        and reports each case: passed or failed, the ids expected, the ids that came back.
        A case without its own ``now`` runs at the file's, else at ``now``, else at the
        home's latest record (never the wall clock: the same home gives the same report).

        Raises:
            MissingFileError: the home has no ``golden.yaml``.
            GoldenFileError: the file is not a golden set (the message names the case and field).
        """
        return golden_report(self._home, self._recall, edge_now_or_none(now))

    @_serialized
    def proposals(self, *, pending_only: bool = False) -> list[Proposal]:
        """The maintenance proposals (D5), oldest first: changes the jobs would make —
        a merge of near-duplicates, a retirement — waiting for :meth:`accept` or
        :meth:`reject` (they are in :meth:`review` too); with ``pending_only``, only those
        not yet decided. Each is also ``proposals/<id>.md`` in the home.

        Raises:
            ScopeError: an unscoped handle on a home of several users.
        """
        return self._life.proposals(self._reach.single(), pending_only=pending_only)

    @_serialized
    def review(self, *, now: TimeArg = None) -> list[ReviewItem]:
        """Everything waiting for a person, oldest first: quarantined records (unreviewed,
        derived from external content) and writes in the approval queue (those not yet
        expired at ``now``, when given), each with its provenance chain. One queue: both
        are answered by :meth:`accept` or :meth:`reject` (:mod:`cuemem.lifecycle.review`).

        Raises:
            ScopeError: an unscoped handle on a home of several users.
        """
        return self._life.review(now, self._reach)

    @_serialized
    def accept(self, id: str, *, now: TimeArg = None) -> str:
        """Accepts what waits for review: a quarantined record is reviewed from now on
        (recalled by default; still tainted, so never in ``MEMORY.md``), a queued write is
        approved (:meth:`approve`), a maintenance proposal's change is made (if its
        sources are as they were). Journaled; returns the record (or proposal) id.

        Raises:
            CueTypeError: ``id`` is not a string.
            NotFoundError: nothing with this id waits (in this handle's scope).
            ApprovalError: it is already decided.
            ProposalConflictError: a proposal whose sources changed since it was made
                (retired, superseded, another digest); nothing is written.
            ApprovalExpiredError: a queued write whose window closed.
            ReadOnlyError: the handle is read-only.
        """
        return self._life.accept(id, now, self._reach)

    @_serialized
    def approve(self, id: str, *, now: TimeArg = None) -> str:
        """Writes a queued record, now reviewed, as the current version of its subject; returns its id.

        The record's valid time is kept; it is known (recorded) from ``now``.

        Raises:
            CueTypeError: ``id`` is not a string.
            NotFoundError: no write with this id was ever queued.
            ApprovalError: it is already decided.
            ApprovalExpiredError: its approval window closed at or before ``now``.
            InvalidArgumentError: ``now`` is before the write was queued.
            ReadOnlyError: the handle is read-only.
        """
        return self._life.approve(id, now, self._reach)

    @_serialized
    def reject(self, id: str, *, now: TimeArg = None) -> None:
        """Rejects what waits for review: drops a queued write or a maintenance proposal,
        or retires a quarantined record from the live indexes (the journal keeps each,
        with the decision).

        Raises:
            CueTypeError, NotFoundError, ApprovalError, ApprovalExpiredError, ReadOnlyError: as :meth:`accept`.
        """
        self._life.reject(id, now, self._reach)

    @_serialized
    def forget(
        self,
        id: str | Sequence[str] | None = None,
        *,
        subject: str | None = None,
        session: str | None = None,
        source: str | None = None,
        user: str | None = None,
        retention: str = "erase",
        dry_run: bool = False,
        now: TimeArg = None,
    ) -> ForgetReceipt:
        """Forgets records for real, with everything derived from them; returns the receipt.

        The target is one of: ``id`` (one or several), every record of a ``subject``, of a
        ``session``, from a ``source`` (e.g. one external document), or of a ``user`` —
        ``user`` with another target narrows it to that user's records (and an unscoped
        handle on a home of several users must name one). Live, retired and superseded
        records alike; then their lineage: queued writes holding them, consolidated
        records and rungs citing them (made again from the sources that remain), a rung's
        note, mined policies resting on them (mined again from the outcomes that remain).
        A person's note that cites or quotes one is reported in ``kept``, never edited.

        ``retention="erase"`` (default): the content leaves every file of the home — each
        journal line that held it becomes a tombstone of the same length (id, content hash),
        note files are deleted, the text index, embeddings, index cache and MEMORY.md are
        rewritten without it. ``"retire"``: out of every recall path, kept in the journal
        for audit. Either way a forgotten record is never ingested again (same id, or same
        user and narrative) unless a write says ``allow_forgotten=True``. ``dry_run``
        returns the plan and changes nothing. A crash at any instant leaves the home
        before the forget or after it.

        Raises:
            InvalidArgumentError: no target, more than one, or an unknown ``retention``.
            CueTypeError, SchemaError, InvalidIdError: a malformed value.
            NotFoundError: an id this handle does not see. ForgottenError: an id already erased.
            ScopeError: another user's records through a scoped handle; no user named on a
                shared home (subject, session, source).
            ReadOnlyError: the handle is read-only (a ``dry_run`` is allowed).
        """
        return self._forgetting.request(
            id, subject=subject, session=session, source=source, user=user, retention=retention, dry_run=dry_run, now=now, reach=self._reach,
        )

    @_serialized
    def history(self, subject: str, *, user_id: str | None = None) -> list[Version]:
        """Every adopted version of ``subject``, oldest first (retired ones included).

        Raises:
            CueTypeError: ``subject`` is not a string.
            SchemaError: ``subject`` is blank or ``user_id`` invalid.
        """
        return self._life.history(subject_version_key(subject, self._reach.about(user_id)))

    @_serialized
    def as_of(
        self, subject: str, valid_at: datetime | date | str, known_at: TimeArg = None, *, user_id: str | None = None
    ) -> Version | None:
        """The version of ``subject`` true at ``valid_at``, as known at ``known_at`` (default: all known).

        True from its ``valid_from`` (inclusive) until the next version's (exclusive);
        known from its adoption (inclusive). None when nothing was true then, or not
        yet known.

        Raises:
            CueTypeError: ``subject`` is not a string.
            SchemaError: a time is not a date or datetime, or ``subject`` is blank.
        """
        return self._life.as_of(subject_version_key(subject, self._reach.about(user_id)), valid_at, known_at)

    @_serialized
    def working(self) -> list[WorkingItem]:
        """What this handle holds in working memory this turn (its scope's user's items)."""
        return self._life.working(self._reach.scope.sees)

    @_serialized
    def keep(self, id: str, *, now: TimeArg = None, origin: Origin | str = Origin.USER, user_id: str | None = None) -> str:
        """Promotes a working-memory item to short-term memory (an explicit approval); returns the record id.

        Raises:
            NotFoundError: this turn holds no item with this id.
            SchemaError: a bad ``origin`` or ``user_id``.
            ReadOnlyError: the handle is read-only.
        """
        return self._life.keep(id, now=now, origin=origin, user_id=user_id, reach=self._reach)

    @_serialized
    def end_turn(self) -> int:
        """Ends the turn: working memory (its scope's user's) is dropped; returns how many items it held."""
        return self._life.end_turn(self._reach.scope.sees)

    @_serialized
    def worker(self, name: str) -> Worker:
        """The worker handle called ``name`` (the same one on every call).

        Raises:
            InvalidIdError: ``name`` is not a valid id.
        """
        return self._life.worker(name, self, self.scope)

    @_serialized
    def expire(self, *, now: TimeArg = None, allow_clock_jump: bool = False) -> ExpiryReport:
        """Retires short-term records past their TTL and long-term ones beyond the capacity
        bound (least salient first), and lapses expired approvals; journals all of it.

        ``now`` more than a year past the home's latest record is refused unless
        ``allow_clock_jump`` (see :mod:`cuemem.home.clock`).

        Raises:
            ClockError: ``now`` leaps past the home's clock unacknowledged; nothing changes.
            ReadOnlyError: the handle is read-only.
        """
        return self._life.expire(now, allow_clock_jump, self._reach)

    # -- policies from outcomes -------------------------------------------------------

    @_serialized
    def distill_policies(self, *, min_support: int = 2, max_cues: int = 3, now: TimeArg = None) -> PolicyReport:
        """Mines policies from the home's outcome episodes and keeps each as a note (D3).

        A policy whose content changed gets a new note version; the retirement of one no
        longer mined is proposed (:meth:`proposals`; accepted, it is a new version with
        ``valid_to``); under the high profile new and changed policies are proposed too.
        The same episodes give the same ids and the same notes. See :func:`cuemem.policy.distill_policies`
        (which checks ``min_support`` and ``max_cues``).

        Raises:
            InvalidArgumentError: ``min_support`` or ``max_cues`` below 1.
            ReadOnlyError: the handle is read-only.
        """
        return self._policies.mine(min_support=min_support, max_cues=max_cues, now=now, propose=self.profile.propose_derivations, reach=self._reach)

    @_serialized
    def policies(self) -> list[Policy]:
        """Every current policy (mined or written by a person), most confident first.

        A policy note with a ``valid_to`` is retired and left out. A scoped handle sees
        the policies mined from its user's outcomes and those a person wrote.

        Raises:
            ScopeError: an unscoped handle on a home of several users.
        """
        return list(self._policies.book(self._reach.single_user()))

    @_serialized
    def judge(
        self, cues: Mapping[str, str | Sequence[str]] | None = None, text: str | None = None, *, now: TimeArg = None,
        include_tainted: bool = False,
    ) -> Judgement:
        """The policies that apply to a situation, ranked, with their evidence and conflicts.

        Args:
            cues: The situation, dimension -> value(s), as for :meth:`recall`.
            text: A description of the situation; the cue values of known policies that
                occur in it as words join the situation.
            now: Resolves time phrases in the cues. Current policies are those whose
                note has no ``valid_to`` (retired ones are left out).
            include_tainted: Apply policies whose evidence is all tainted too (by
                default they are reported in ``Judgement.withheld`` and not applied).

        Raises:
            ScopeError: an unscoped handle on a home of several users.
            InvalidArgumentError: neither cues nor text given.
            UnknownDimensionError, CueTypeError: a malformed cue, or ``text`` not a string.
        """
        return self._policies.situation(cues, text, now, include_tainted, self._reach)

    @_serialized
    def explain(self, policy_id: str) -> Explanation:
        """A policy's lineage: its evidence and counter-example episodes and its rivals.

        Raises:
            NotFoundError: no current policy with that id (in this handle's scope).
        """
        return self._policies.explain(policy_id, self._reach.single_user())

    # -- views: MEMORY.md and budgeted context ------------------------------------------

    @_serialized
    def autoload(self, *, budget: int | None = None, count_tokens: Callable[[str], int] | None = None) -> str:
        """What an agent may load without asking: the ``MEMORY.md`` view of this handle's
        scope (:mod:`cuemem.views.memory_md`) — reviewed, untainted, current preferences,
        facts, procedures and policies, each line with its pointer, within the budget.

        The home's own ``MEMORY.md`` (at its root) is this view of an unscoped handle
        at the home's ``memory_budget``; it is rewritten by the writer whenever what it
        draws on changes, and is byte-identical for the same home. Editing it changes
        nothing (its header says so): edit the notes. A quarantined or tainted memory
        never appears in it.

        Args:
            budget: The budget in tokens (default: the handle's ``memory_budget``).
            count_tokens: Counts a text's tokens (default: the documented estimate,
                :func:`cuemem.views.tokens.estimate_tokens`).

        Raises:
            InvalidArgumentError: a budget too small for the header, or out of range.
        """
        return self._memory_md.autoload(budget, count_tokens, self._reach)

    @_serialized
    def context(
        self, query: str, *, budget_tokens: int, now: TimeArg = None, k: int = 20, cues: Mapping[str, str | Sequence[str]] | None = None,
        include_quarantined: bool = False, count_tokens: Callable[[str], int] | None = None,
    ) -> Context:
        """Context for a task, within ``budget_tokens`` (C5; :mod:`cuemem.views.context`).

        Draws on this turn's working memory and on short- and long-term memory (a text
        recall of ``query`` within ``cues``, quarantined memories only with
        ``include_quarantined``), ranks by relevance and trust, and fits the budget by
        coarsening each item step by step — full text, a section, an outline line, a
        bare pointer — so a larger budget never shows fewer items. Each item carries
        its evidence pointers, provenance (origin, session, source), review state and taint.

        Raises:
            CueTypeError, InvalidArgumentError: a bad query, budget, ``k`` or counter.
            ScopeError: as :meth:`recall`.
        """
        return gather(
            query, budget_tokens, count_tokens,
            functools.partial(self.recall, cues, k=k, now=now, include_quarantined=include_quarantined),
            functools.partial(self._life.working, self._reach.scope.sees), include_quarantined,
        )

    # -- life-cycle jobs: consolidation, distillation, maintenance ---------------------

    @_serialized
    def consolidate(
        self, *, now: TimeArg = None, config: ConsolidationConfig | None = None, allow_clock_jump: bool = False
    ) -> ConsolidationReport:
        """Promotes due groups of short-term items to long-term records (D1); see :mod:`cuemem.jobs.consolidate`.

        Short-term items no record cites yet are grouped and promoted by repetition or
        intensity; each promotion is a long-term record citing every member, and
        passes the write gate as any write does. The run is journaled (``op: job``)
        in the same commit as its records. Without ``config``, the thresholds and
        per-type/kind TTLs are the handle's profile's.

        Raises:
            ClockError: ``now`` is more than a year past the home's latest record and
                ``allow_clock_jump`` is False (see :meth:`expire`); nothing changes.
            InvalidArgumentError: ``config`` is not a :class:`~cuemem.jobs.ConsolidationConfig`.
            ReadOnlyError: the handle is read-only.
        """
        return consolidation(self._home, self.profile, now=now, config=config, allow_clock_jump=allow_clock_jump, reach=self._reach)

    @_serialized
    def distill(
        self, *, now: TimeArg = None, config: DistillationConfig | None = None, summarizer: Summarizer | None = None,
        allow_clock_jump: bool = False,
    ) -> DistillationReport:
        """Abstracts old, unreferenced, faded memories one rung up the ladder (D2); see :mod:`cuemem.jobs.distill`.

        Args:
            now: The instant to decay to (default: the clock, read once).
            config: Floor, minimum age, per-run limit (default: the documented defaults,
                with the floor of the handle's profile).
            summarizer: Writes each rung's text (default: extractive, deterministic).
            allow_clock_jump: Accept a ``now`` more than a year past the home's latest record.

        Raises:
            ClockError: such a ``now`` without ``allow_clock_jump``; nothing changes.
            InvalidArgumentError: ``config`` or ``summarizer`` is of the wrong kind.
            ReadOnlyError: the handle is read-only.
        """
        return distillation(
            self._home, self.profile, now=now, config=config, summarizer=summarizer, allow_clock_jump=allow_clock_jump, reach=self._reach,
        )

    @_serialized
    def dedupe(self, *, now: TimeArg = None, config: DedupeConfig | None = None) -> DedupeReport:
        """Finds duplicate memories written since the last run — the same event or the same
        fact, never look-alikes of other days, actors or threads — and proposes merging
        them (D5; :mod:`cuemem.jobs.dedupe`): never merges on its own. Each proposal is in
        :meth:`proposals` and :meth:`review`, with its evidence; :meth:`accept` keeps the
        earliest memory of the group and retires the others (the journal keeps them).

        Raises:
            InvalidArgumentError: ``config`` is not a :class:`~cuemem.jobs.dedupe.DedupeConfig`.
            ReadOnlyError: the handle is read-only.
        """
        return deduplication(self._home, now=now, config=config, reach=self._reach)

    @_serialized
    def maintain(self, *, now: TimeArg = None, jobs: Sequence[Job] | None = None, allow_clock_jump: bool = False) -> MaintenanceReport:
        """Runs whichever jobs are due at ``now`` and reports what ran. By default: expiry
        daily at 02:00 UTC, consolidation daily at 03:00, distillation weekly on Sunday at
        04:00, policies from outcomes on Sunday at 05:00 (:data:`cuemem.jobs.DEFAULT_JOBS`).

        A ``now`` more than a year past the home's latest record is refused unless
        ``allow_clock_jump``, which then covers every job of the run.

        Raises:
            ClockError: such a ``now`` without ``allow_clock_jump``; no job runs.
            InvalidArgumentError: ``jobs`` is not a sequence of :class:`~cuemem.jobs.Job`.
            ReadOnlyError: the handle is read-only.
        """
        return maintenance(self, self._home, now=now, jobs=jobs, allow_clock_jump=allow_clock_jump, reach=self._reach)

    @_serialized
    def last_run(self, job: str) -> datetime | None:
        """When maintenance job ``job`` last ran in this home (from the journal), or None."""
        return last_run(self._home, _arrays.string(job, "job"))

    @_serialized
    def next_due(self, *, now: TimeArg = None, jobs: Sequence[Job] | None = None) -> datetime:
        """The earliest instant at or after ``now`` when one of ``jobs`` (default: the
        default jobs) is due.

        Raises:
            InvalidArgumentError: ``jobs`` is not a sequence of :class:`~cuemem.jobs.Job`.
        """
        return due(self._home, now, jobs)

