"""What the home's operations return: hits (cue and text), recall results, reports."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, overload

from typing_extensions import TypeVar

from ..salience import AXES
from ..schema import Episode

if TYPE_CHECKING:
    from ..store.proposals import JobRegret


class Hit:
    """One recalled memory: its id, score, per-axis breakdown and (lazily) its record.

    The record is read from the journal on first access, so a recall that only needs
    ids and scores never touches the disk.
    """

    __slots__ = ("id", "score", "_parts", "_load", "_record", "_fresh", "stale_below")

    def __init__(self, id: str, score: float, parts: list[float], load: Callable[[], Episode]) -> None:
        self.id = id
        self.score = score
        self._parts = parts
        self._load = load
        self._record: Episode | None = None
        #: Freshness of a record at the recall's ``now`` (set by ``Memory.recall``), and
        #: the profile's threshold below which it is stale.
        self._fresh: Callable[[Episode], float] | None = None
        self.stale_below = 0.0

    @property
    def breakdown(self) -> dict[str, float]:
        """Each axis's contribution to the score (they sum to it)."""
        return dict(zip(AXES, self._parts))

    @property
    def record(self) -> Episode:
        """The recalled episode, as written."""
        if self._record is None:
            self._record = self._load()
        return self._record

    @property
    def freshness(self) -> float:
        """Confidence left after decay by age and kind at the recall's ``now`` (C6)."""
        return self.record.confidence if self._fresh is None else self._fresh(self.record)

    @property
    def stale(self) -> bool:
        """Whether :attr:`freshness` is below the profile's ``stale_below``."""
        return self.freshness < self.stale_below

    @property
    def quarantined(self) -> bool:
        """Untrusted: nobody has reviewed it (recalled only with ``include_quarantined=True``)."""
        return not self.record.reviewed

    @property
    def tainted(self) -> bool:
        """Derived from external content (for good, even once reviewed)."""
        return self.record.taint

    def __repr__(self) -> str:
        return f"Hit(id={self.id!r}, score={self.score:.4f})"


#: The parts of a text hit's score, in order.
PARTS = ("text", "salience", "freshness", "boost")


class TextHit(Hit):
    """A memory found by text: its blended score, raw BM25 and the score's parts."""

    __slots__ = ("bm25",)

    def __init__(self, id: str, score: float, bm25: float, parts: list[float], load: Callable[[], Episode]) -> None:
        super().__init__(id, score, parts, load)
        self.bm25 = bm25

    @property
    def breakdown(self) -> dict[str, float]:
        """The weighted text, salience and freshness parts of the core's blend and the
        ``boost`` question reading and thread context added (they sum to the score)."""
        return dict(zip(PARTS, self._parts))

    def __repr__(self) -> str:
        return f"TextHit(id={self.id!r}, score={self.score:.4f}, bm25={self.bm25:.3f})"


#: The kind of hit a recall returns: :class:`Hit` for cue recall, ``TextHit`` for text recall.
H = TypeVar("H", bound=Hit, default=Hit, covariant=True)


class Hits(Sequence[H]):
    """A page of hits, best first, each built the first time it is read.

    A recall returns its ranking as columns from one native call; a hit object (and,
    later, its record) exists only once the caller looks at it, so a recall whose
    hits are never read costs no Python object per hit. It reads like a list: it
    has a length, indexes and slices (a slice is a list), iterates, concatenates (into
    a list) and compares equal to a list or tuple of the same hits; it is read-only
    (``list(hits)`` for a list to change).
    """

    __slots__ = ("_rows", "_ids", "_make", "_made")

    def __init__(self, rows: Sequence[int], ids: Sequence[str], make: Callable[[int], H]) -> None:
        """``rows``: the page's rows, best first; ``ids``: the home's ids by row; ``make``: builds the ``i``-th hit."""
        self._rows = rows
        self._ids = ids
        self._make = make
        self._made: list[H | None] | None = None  # the hits built so far (None: none yet)

    @property
    def ids(self) -> list[str]:
        """The hits' ids, best first, read without building a hit."""
        ids = self._ids
        return [ids[row] for row in self._rows]

    def __len__(self) -> int:
        return len(self._rows)

    @overload
    def __getitem__(self, i: int) -> H: ...
    @overload
    def __getitem__(self, i: slice) -> list[H]: ...
    def __getitem__(self, i: int | slice) -> H | list[H]:
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self._rows)))]
        n = len(self._rows)
        j = i.__index__() + n if i < 0 else i.__index__()
        if not 0 <= j < n:
            raise IndexError("hit index out of range")
        return self._at(j)

    def _at(self, j: int) -> H:
        """The ``j``-th hit, built on first read."""
        made = self._made
        if made is None:
            made = self._made = [None] * len(self._rows)
        hit = made[j]
        if hit is None:
            hit = made[j] = self._build(j)
        return hit

    def _build(self, j: int) -> H:
        """Builds the ``j``-th hit (a subclass may build it from its own state instead of ``make``)."""
        return self._make(j)

    def __iter__(self) -> Iterator[H]:
        return (self._at(j) for j in range(len(self._rows)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Hits):
            return list(self) == list(other)
        if isinstance(other, (list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    def __add__(self, other: Sequence[H]) -> list[H]:
        return [*self, *other]

    def __radd__(self, other: Sequence[H]) -> list[H]:
        return [*other, *self]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


@dataclass(frozen=True)
class RecallResult(Generic[H]):
    """Ranked hits and the work the recall took.

    ``RecallResult`` alone means ``RecallResult[Hit]``; a text recall returns a
    ``RecallResult[TextHit]``, whose hits carry ``bm25`` (type checkers know which).

    Attributes:
        hits: Best first: a list, or (a cue recall) :class:`Hits`, which builds each hit
            when it is first read.
        total: The same number as :attr:`candidates`, under its first name (kept for
            compatibility; prefer ``candidates``, which says what it counts).
        examined: Postings the pruning plan touched.
        full_scan: Live memories: what a scan would have visited.
        cues: The cues as resolved (time phrases turned into buckets).
        named: A text recall's question: the cue values it named (or, if it referred
            back with a pronoun, those it carried over from the recall it follows).
    """

    hits: Sequence[H]
    total: int
    examined: int
    full_scan: int
    cues: dict[str, list[str]] = field(default_factory=dict)
    named: dict[str, list[str]] = field(default_factory=dict)

    @property
    def candidates(self) -> int:
        """Memories the cues let through, before ranking: for a cue recall, every memory
        that matched them; for a text recall, the pool the text was matched in — a
        candidate need not hold any of the query's terms, so there may be fewer hits than
        candidates even below ``k`` (``len(hits)`` is what matched the text)."""
        return self.total


def page_result(hits: Sequence[H], total: int, examined: int, full_scan: int, cues: dict[str, list[str]]) -> RecallResult[H]:
    """A :class:`RecallResult` of one recalled page (``named`` empty), equal to the
    constructor's but made without it: a frozen dataclass's ``__init__`` sets each field
    through ``object.__setattr__``, which cost a cue recall as much as its hits; the
    fields go into the new instance's ``__dict__`` directly."""
    result: RecallResult[H] = object.__new__(RecallResult)
    fields = result.__dict__
    fields["hits"] = hits
    fields["total"] = total
    fields["examined"] = examined
    fields["full_scan"] = full_scan
    fields["cues"] = cues
    fields["named"] = {}
    return result


@dataclass(frozen=True)
class ImportReport:
    """The outcome of :meth:`cuemem.Memory.import_jsonl` and :meth:`~cuemem.Memory.import_records`.

    Every good item passes the write gate as :meth:`~cuemem.Memory.remember` does: it is
    written, or it waits for approval, or it repeats its subject's current version.

    Attributes:
        count: Episodes written.
        skipped: ``(line_number, message)`` of lines skipped (only with ``skip_bad_lines``).
        ids: The ids written, in order.
        queued: The ids of items waiting in the approval queue (each the id it gets once approved).
        repeated: The ids of the current versions that items said again (nothing written).
    """

    count: int
    skipped: list[tuple[int, str]]
    ids: list[str]
    queued: list[str] = field(default_factory=list)
    repeated: list[str] = field(default_factory=list)


class IndexState(str, enum.Enum):
    """How a home's index cache came up on open."""

    #: The cache matched the journal.
    LOADED = "loaded"
    #: The cache matched a prefix of the journal and was caught up.
    CAUGHT_UP = "loaded and caught up"
    #: The cache could not be used and was rebuilt from the journal (see ``rebuilt_because``).
    REBUILT = "rebuilt"

    def __str__(self) -> str:
        return str(self.value)

    @classmethod
    def of(cls, how: str) -> tuple[IndexState | None, str | None]:
        """The state and reason of an outcome such as ``"rebuilt (no cached index)"``
        (``"unavailable (why)"``: no index, None)."""
        for state, word in ((cls.REBUILT, "rebuilt"), (None, "unavailable")):
            if how.startswith(word):
                return state, how[len(word) + 2 : -1] if how.endswith(")") else None
        return cls(how), None


@dataclass(frozen=True)
class OpenReport:
    """How the home came up: cache use, journal problems, broken note files.

    Attributes:
        index: Loaded, loaded and caught up, or rebuilt (:class:`IndexState`).
        caught_up: Episodes applied on top of the cached index.
        journal_problems: Torn or unreadable journal lines that were skipped.
        note_errors: Note files that could not be read.
        skipped_records: ``(position, why)`` of journal records that break the schema.
        rebuilt_because: Why the cache was rebuilt (None unless ``index`` is ``REBUILT``).
        text: How the text index came up (None: the home has none, a read-only handle
            of a home never opened writable).
        text_rebuilt_because: Why the text index was rebuilt, or why there is none.
        notes_recovered: Notes whose journaled version a crash had left unplaced, now placed.
        leftovers_removed: Files a crash left in ``notes/`` that no journal record holds, removed.
        forget_intent_refused: Why the forget intent file (``.forget.json``) was left in
            place undone: the journal does not vouch for it, or it is not one cuemem wrote.
        proposal_problems: Files under ``proposals/`` left alone: a pending proposal's file
            edited by hand, a file no proposal owns, one that cannot be read or written.
    """

    index: IndexState
    caught_up: int
    journal_problems: list[Any]
    note_errors: list[Any]
    skipped_records: list[Any] = field(default_factory=list)
    rebuilt_because: str | None = None
    text: IndexState | None = None
    text_rebuilt_because: str | None = None
    notes_recovered: list[str] = field(default_factory=list)
    leftovers_removed: list[str] = field(default_factory=list)
    forget_intent_refused: str | None = None
    proposal_problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class HomeStats:
    """Size figures of a home."""

    episodes: int
    notes: int
    dimensions: int
    values: int
    postings: int
    index_bytes: int
    journal_bytes: int
    journal_segments: int
    journal_problems: int
    #: Per job, its maintenance proposals, their acceptance rate and regret rate (:class:`~cuemem.JobRegret`).
    proposals: tuple[JobRegret, ...] = ()

    def as_dict(self) -> dict[str, int]:
        """The size figures (``proposals`` apart)."""
        return {k: int(v) for k, v in self.__dict__.items() if k != "proposals"}


@dataclass(frozen=True)
class SyncReport:
    """Note files a person changed, picked up as new versions."""

    updated: list[str]
    errors: list[Any]


@dataclass(frozen=True)
class PolicyReport:
    """What :meth:`Memory.distill_policies` changed."""

    #: Policies whose note was written (new, or a new version).
    written: list[str]
    #: Policies mined again with the same content: nothing written.
    unchanged: list[str]
    #: Policies whose note file a person deleted: a new version with ``valid_to`` set.
    retired: list[str]
    #: Contradicting pairs among the mined policies.
    contradictions: list[tuple[str, str]]
    #: Proposals written: the retirement of each policy no longer mined (a version with
    #: ``valid_to``, once accepted) and, under the high profile, every new or changed policy.
    proposed: list[str] = field(default_factory=list)

