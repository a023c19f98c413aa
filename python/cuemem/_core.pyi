"""Type stubs of the native core, ``cuemem._core`` (private: import from ``cuemem``)."""

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import ClassVar, Union, final

import numpy as np
import numpy.typing as npt
from pyroaring import BitMap

__all__ = [
    "__version__",
    "AXES",
    "DEFAULT_WEIGHTS",
    "DEFAULT_HALF_LIVES_DAYS",
    "CueIndex",
    "Pruned",
    "IndexStats",
    "SalienceTable",
    "TopK",
    "DecayPass",
    "Recall",
    "recall",
    "Decoder",
    "ItemPlan",
    "Owners",
    "Items",
    "episode_id",
    "content_hash",
    "item_line",
    "Decoded",
    "Seen",
    "IdRows",
    "TextIndex",
    "TextRecall",
    "text_recall",
    "Threads",
    "cosine_top",
    "crc32",
    "unseen_entries",
    "write_pending",
    "place_pending",
    "GroupSync",
    "group_syncs",
    "fork_generation",
    "count",
]

__version__: str
#: The seven salience axes, in column order.
AXES: tuple[str, ...]
#: Default weight per axis (they sum to 1).
DEFAULT_WEIGHTS: dict[str, float]
#: Default half-life per axis, in days.
DEFAULT_HALF_LIVES_DAYS: dict[str, float]

_Cues = Mapping[str, Union[str, Sequence[str]]]
_Rows = Union[npt.NDArray[np.uint32], BitMap, Pruned]

@final
class CueIndex:
    """Dimension -> value -> roaring posting list over dense uint32 rows."""

    def __new__(cls, dimensions: Sequence[str]) -> CueIndex: ...
    def dimensions(self) -> list[str]: ...
    def values(self, dimension: str, start: str | None = None) -> list[str]: ...
    def insert(self, dimension: str, value: str, rows: npt.NDArray[np.uint32]) -> None: ...
    def insert_column(
        self, dimension: str, values: Sequence[str], codes: npt.NDArray[np.uint32], rows: npt.NDArray[np.uint32]
    ) -> None: ...
    def insert_values(self, dimension: str, values: Sequence[str], rows: npt.NDArray[np.uint32]) -> None: ...
    def withdraw(self, dimension: str, value: str, rows: npt.NDArray[np.uint32]) -> None: ...
    def remove(self, rows: npt.NDArray[np.uint32]) -> None: ...
    def prune(self, cues: _Cues, exclude: _Cues | None = None) -> Pruned: ...
    def count(self, cues: _Cues, exclude: _Cues | None = None) -> int: ...
    def closed_sets(
        self,
        dimensions: list[str],
        within: _Rows,
        against: _Rows | None = None,
        min_support: int = 2,
        max_depth: int = 3,
        productive: bool = False,
    ) -> tuple[
        list[tuple[str, str]],
        tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]],
        tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]],
        tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64]],
    ]: ...
    def posting(self, dimension: str, value: str) -> BitMap: ...
    def admits(self, cues: _Cues, rows: npt.NDArray[np.uint32], exclude: _Cues | None = None) -> npt.NDArray[np.bool_]: ...
    def live(self) -> BitMap: ...
    def stats(self) -> IndexStats: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> CueIndex: ...
    def save(self, path: str | PathLike[str]) -> None: ...
    @staticmethod
    def load(path: str | PathLike[str]) -> CueIndex: ...
    def __len__(self) -> int: ...

@final
class Pruned:
    """The rows a query leaves, held as a bitmap in the core."""

    @property
    def rows(self) -> npt.NDArray[np.uint32]:
        """Matching rows, ascending."""
    @property
    def examined(self) -> int:
        """Postings the pruning plan touched."""
    @property
    def full_scan(self) -> int:
        """Live rows: what a full scan would have visited."""
    def bitmap(self) -> BitMap: ...
    def __len__(self) -> int: ...

@final
class IndexStats:
    """Size figures of a cue index."""

    @property
    def rows(self) -> int: ...
    @property
    def dimensions(self) -> int: ...
    @property
    def values(self) -> int: ...
    @property
    def postings(self) -> int: ...
    @property
    def bytes(self) -> int: ...
    def __eq__(self, value: object, /) -> bool: ...

@final
class SalienceTable:
    """Seven decaying salience axes, confidence and reference time per row."""

    def __new__(cls, weights: Sequence[float] | None = None, half_lives_days: Sequence[float] | None = None) -> SalienceTable: ...
    @property
    def weights(self) -> list[float]: ...
    @property
    def half_lives_days(self) -> list[float]: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def live(self) -> int: ...
    def put(
        self,
        rows: npt.NDArray[np.uint32],
        axes: npt.NDArray[np.float32],
        confidence: npt.NDArray[np.float32],
        t: npt.NDArray[np.float64],
    ) -> None: ...
    def remove(self, rows: npt.NDArray[np.uint32]) -> None: ...
    def erase(self, rows: npt.NDArray[np.uint32]) -> None: ...
    def get(self, row: int) -> tuple[list[float], float, float, bool] | None: ...
    def composite(self, rows: npt.NDArray[np.uint32], now: float) -> npt.NDArray[np.float32]: ...
    def score_key(self, now: float) -> int | None: ...
    def top_k(self, candidates: _Rows, now: float, k: int) -> TopK: ...
    def decay_pass(self, now: float, floor: float = 0.35, out: npt.NDArray[np.float32] | None = None) -> DecayPass: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> SalienceTable: ...
    def save(self, path: str | PathLike[str]) -> None: ...
    @staticmethod
    def load(path: str | PathLike[str]) -> SalienceTable: ...
    def __len__(self) -> int: ...

@final
class TopK:
    """The best rows of a candidate set, best first."""

    @property
    def rows(self) -> npt.NDArray[np.uint32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float32]: ...
    @property
    def breakdown(self) -> npt.NDArray[np.float32]:
        """Per-axis contributions, ``len x 7``; each row sums to its score."""
    def __len__(self) -> int: ...

@final
class DecayPass:
    """Every row decayed to ``now``, and the rows below the floor."""

    @property
    def axes(self) -> npt.NDArray[np.float32]: ...
    @property
    def below(self) -> npt.NDArray[np.uint32]: ...

@final
class Recall:
    """Cue pruning plus decayed-composite top k, with the work it took."""

    @property
    def rows(self) -> npt.NDArray[np.uint32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float32]: ...
    @property
    def breakdown(self) -> npt.NDArray[np.float32]: ...
    @property
    def total(self) -> int:
        """Rows matching the cues before ranking."""
    @property
    def examined(self) -> int:
        """Postings touched by the pruning plan."""
    @property
    def full_scan(self) -> int:
        """Live rows: what a scan would have visited."""

def recall(
    index: CueIndex,
    table: SalienceTable,
    cues: _Cues | None,
    now: float,
    k: int = 10,
    exclude: _Cues | None = None,
) -> Recall: ...

@final
class Decoder:
    """The episode schema compiled (``cuemem.schema.spec``), decoding runs of journal lines."""

    def __new__(
        cls,
        fields: list[tuple[str, str, bool, int | None, list[str] | None, bool, str | None]],
        cues: list[tuple[str, str, list[str], bool, list[tuple[float, str]] | None, tuple[str, str] | None]],
        axes: list[str],
        op: str,
        track: tuple[str, str, list[str]] | None = None,
        sparse: list[str] | None = None,
        implied: list[tuple[str, list[str], str, bool]] | None = None,
        versions: str | None = None,
    ) -> Decoder: ...
    @property
    def dimensions(self) -> list[str]: ...
    def encode(self, values: list[object]) -> bytes | None:
        """The journal line of a write's episode (``values``: one per field, in the schema's
        order, None for a field left out) when the core proves every value valid and in the
        form validation leaves it in; None otherwise (the caller validates in full)."""
    def encode_decoded(self, values: list[object]) -> tuple[bytes, Decoded] | None:
        """:meth:`encode`'s line, with what :meth:`decode` of that line gives (one row, or the
        line left to the caller), worked out from the values rather than read back."""
    def decode(self, run: bytes, narratives_only: bool = False) -> Decoded:
        """Decodes whole journal lines (the GIL released); with ``narratives_only`` a row is
        any line of the record kind, with its id and narrative only."""
    def read_items(self, chunk: bytes, keys: list[str]) -> Items:
        """The lines of an import's JSONL ``chunk``, whose items may give the fields ``keys``."""

@final
class ItemPlan:
    """What an import decided once for its plain writes (see ``Items.admit``)."""

    def __new__(
        cls, stamp: str, session: str | None, verdicts: dict[tuple[str, str, bool], tuple[bool, bool, str, float]], forgotten: set[str],
    ) -> ItemPlan:
        """The plan of an import written at ``stamp`` in ``session``: ``verdicts`` maps (origin,
        tier, taint claim) to (taint, reviewed, tier, confidence cap); ``forgotten`` holds the
        content hashes a forget took out."""

@final
class Owners:
    """Whose an import's items are, by the user they name, as the caller answers it (kept for the import)."""

    def __init__(self) -> None: ...
    def answer(self, user: str | None, owner: str | None) -> None:
        """Answers for the items naming ``user`` (None: naming none): written as ``owner``, or refused (None)."""
    def __len__(self) -> int: ...

@final
class Items:
    """The items of an import's chunk, one per line (``Decoder.read_items``)."""

    def __len__(self) -> int: ...
    def admit(self, start: int, counter: int, plan: ItemPlan, owners: Owners) -> tuple[bytes, Decoded, list[str], int, list[str], int]:
        """Admits the plain items from line ``start`` on, in order (the GIL released): their
        journal lines end to end, what decoding those lines gives (as :meth:`Decoder.decode`
        of them), their ids, the first line not admitted, the users named in
        the block it stopped in that ``owners`` does not answer for, and how many lines after
        the first not admitted no plan makes plain. ``counter`` is the
        first one's id counter; ``owners`` answers whose an item is by the user it names."""

def episode_id(n: int, stamp: bytes, text: bytes) -> str:
    """The id of an episode written at ``stamp`` with ``text`` (UTF-8), the home holding ``n`` rows before it."""

def item_line(obj: object) -> bytes | None:
    """``obj`` as a line of an import (its JSON and ``\\n``) when it is a dict (no subclass) of str keys
    and values of exactly None, bool, a 64-bit int, a finite float, str, a list or tuple of str, or a
    dict of str to int or finite float; else None."""

def content_hash(user: bytes, narrative: bytes) -> str:
    """The SHA-256 of ``user``'s memory ``narrative`` (UTF-8) a forget keeps, in hex."""

@final
class Decoded:
    """A decoded run: its lines in order and the rows of the proven ones."""

    def __len__(self) -> int: ...
    def versions(self) -> list[tuple[int, str, str, str | None, str, str]]:
        """The ``version`` records proved among the lines left to the caller (a decoder made with
        ``versions``): ``(start, subject, id, supersedes, valid_from, at)`` as the lines hold them."""
    def plan(self) -> list[tuple[bool, int, int]]:
        """``(True, lo, hi)`` for rows ``lo..hi``; ``(False, start, end)`` for a line left to the caller."""
    def without_narratives(self, lo: int, hi: int) -> Decoded:
        """Rows ``lo..hi`` on their own (rows ``0 .. hi - lo``), their narratives left out."""
    def ids(self, lo: int, hi: int) -> list[str]: ...
    def offsets(self, lo: int, hi: int, base: int) -> npt.NDArray[np.uint64]: ...
    def spans(self, lo: int, hi: int) -> list[tuple[int, int]]: ...
    def tracked(self, lo: int, hi: int) -> list[tuple[int, list[str]]]: ...
    def citing(self, lo: int, hi: int) -> list[tuple[int, list[str]]]: ...
    def values(self, dimension: str, lo: int, hi: int) -> tuple[list[str], npt.NDArray[np.uint32]]: ...
    def feed(self, lo: int, hi: int, first: int, cues: CueIndex, salience: SalienceTable) -> None:
        """Adds rows ``lo..hi`` as rows ``first ..`` of the cue index and the salience table."""
    def feed_text(self, lo: int, hi: int, first: int, text: TextIndex) -> None:
        """Adds their narratives as documents of rows ``first ..``."""
    def claim_ids(self, lo: int, hi: int, seen: Seen) -> bool:
        """Takes the ids of rows ``lo..hi`` as met by ``seen`` if none may have been; whether it did."""

@final
class Seen:
    """The ids a replay has met, as seeded hashes: a hash never met proves an id new; one
    met means it may repeat, which the caller's exact check decides."""

    def __new__(cls) -> Seen: ...
    def add(self, id: bytes) -> None:
        """Takes ``id`` (its UTF-8 bytes) as met."""

@final
class IdRows:
    """The row each id of the indexes may be at, by seeded hash: what finds a row by its id,
    or proves an id absent, without a map of strings."""

    def __new__(cls) -> IdRows: ...
    def extend(self, ids: list[str], first: int) -> None:
        """Takes ``ids`` as the ids of rows ``first``, ``first + 1``, ...

        Raises InvalidArgumentError: a row past 2**32 - 2."""
    def find(self, id: str) -> int:
        """The row ``id`` may be at (the caller compares that row's id), -1: at none, -2: two
        rows' ids share its hash (ask an exact map)."""

@final
class TextIndex:
    """BM25 over row texts in a directory (tantivy inside the core)."""

    def __new__(cls, path: Union[str, PathLike[str]], analyzer: str = "stem-bigram", writable: bool = True) -> TextIndex: ...
    @staticmethod
    def analyzers() -> list[str]:
        """Every analyzer's name."""
    @property
    def analyzer(self) -> str: ...
    @property
    def pending(self) -> int:
        """Documents added since the last commit."""
    @property
    def searches_pending(self) -> bool:
        """Whether searches see every pending document (held in memory, at most ``tail_limit``)."""
    tail_limit: ClassVar[int]
    @property
    def num_docs(self) -> int:
        """Committed documents."""
    @property
    def payload(self) -> str | None:
        """The payload of the last commit, or None."""
    def add(self, rows: Union[npt.NDArray[np.uint32], BitMap], texts: Sequence[str]) -> None: ...
    def commit(self, payload: str) -> None: ...
    def close(self) -> None:
        """Releases the writer and its lock; the index stays searchable."""
    def abandon(self) -> None:
        """Lets go of an inherited writer untouched (a forked child's): nothing is waited for, joined or removed."""
    def rollback(self) -> None: ...
    def erase(self, rows: Union[npt.NDArray[np.uint32], BitMap], payload: str) -> int:
        """Erases the documents of ``rows``; how many it removed."""
    def holds_terms(self, text: str) -> bool:
        """Whether a term of ``text`` is still in a segment's term dictionary or the tail."""
    def reload(self) -> None: ...
    def terms(self, text: str) -> list[str]:
        """The distinct terms the analyzer makes of `text`."""
    def search(
        self,
        text: str,
        candidates: Union[npt.NDArray[np.uint32], BitMap, Pruned, None] = None,
        limit: int = 10,
        plan: str = "auto",
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]]:
        """The best `limit` rows by BM25 (among `candidates`: uint32 array, pyroaring
        bitmap or Pruned), as (rows, scores) arrays, best first."""
    def __len__(self) -> int: ...

@final
class TextRecall:
    """Blended text hits and the work the recall took."""

    @property
    def rows(self) -> npt.NDArray[np.uint32]: ...
    @property
    def scores(self) -> npt.NDArray[np.float32]:
        """The blended scores."""
    @property
    def bm25(self) -> npt.NDArray[np.float32]: ...
    @property
    def text(self) -> npt.NDArray[np.float32]:
        """Weighted parts of each score: text, salience, freshness."""
    @property
    def salience(self) -> npt.NDArray[np.float32]: ...
    @property
    def freshness(self) -> npt.NDArray[np.float32]: ...
    @property
    def total(self) -> int: ...
    @property
    def examined(self) -> int: ...
    @property
    def full_scan(self) -> int: ...

@final
class Threads:
    """Thread and live neighbours of each row; spreads a pool's scores along threads."""

    def __init__(self) -> None: ...
    @staticmethod
    def from_cues(index: CueIndex, dimension: str) -> Threads: ...
    def append(self, rows: npt.NDArray[np.uint32], names: list[str]) -> None: ...
    def remove(self, rows: npt.NDArray[np.uint32]) -> None: ...
    def thread(self, row: int) -> int | None: ...
    def neighbours(self, row: int) -> tuple[int | None, int | None]: ...
    def spread(
        self,
        rows: npt.NDArray[np.uint32],
        scores: npt.NDArray[np.float32],
        *,
        neighbour_share: float,
        window: int,
        thread_share: float,
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]]: ...
    def is_empty(self) -> bool: ...

def text_recall(
    index: CueIndex,
    table: SalienceTable,
    text_index: TextIndex,
    cues: _Cues | None,
    text: str,
    now: float,
    k: int = 10,
    exclude: _Cues | None = None,
    *,
    text_weight: float = 1.0,
    salience_weight: float = 0.3,
    freshness_weight: float = 0.0,
    freshness_half_life_days: float = 30.0,
    pool: int = 100,
    whole_pool: bool = False,
    scale: float | None = None,
) -> TextRecall:
    """Cues prune, text ranks by BM25, the blend re-ranks (one call, GIL released);
    with ``whole_pool`` every blended row of the pool comes back (at least ``k``)."""


def cosine_top(
    matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32], candidates: _Rows, k: int = 10,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.float32]]:
    """The best ``k`` candidates by the dot product of their rows of ``matrix`` with ``query``."""


def crc32(data: bytes, crc: int = 0) -> int:
    """The CRC-32 (zlib's) of the bytes ``crc`` is the checksum of, followed by ``data``."""


def unseen_entries(
    directory: str | PathLike[str], suffix: str, seen: Mapping[str, tuple[int, int, int, int, *tuple[object, ...]]],
    expected: Mapping[str, object], *, digest: bool, follow: bool,
) -> tuple[list[str], list[str]]:
    """The hidden entries of ``directory`` and those ending in ``suffix`` that are not a
    regular file (through a link, with ``follow``) as ``seen`` holds it (size, mtime_ns,
    ctime_ns, inode, and with ``digest`` the sha256 ``expected`` holds for it), and the keys
    of ``expected`` no entry is named after, sorted (stats in parallel, GIL released).
    ``seen`` and ``expected`` must be dicts."""

def write_pending(directory: str | PathLike[str], files: Sequence[tuple[str, bytes]], *, mode: int, sync_each: bool) -> None:
    """Writes each ``(name, data)`` to ``.<name>.pending`` in ``directory`` (in parallel,
    GIL released): a new file gets ``mode``, a replaced one keeps its permissions; with
    ``sync_each`` each is synced. Raises StorageError naming the path (the batch's pending
    files removed) when something not a file stands at a name or the file system refuses."""

def place_pending(directory: str | PathLike[str], names: Sequence[str]) -> list[tuple[int, int, int, int] | None]:
    """Renames ``.<name>.pending`` over ``name`` for each of ``names``, in order; each placed
    file's ``(size, mtime_ns, ctime_ns, inode)``, or None where its stat failed. Raises
    StorageError naming the pending file whose rename failed."""

def count(value: int, name: str) -> int:
    """A count (``k``, ``pool``, ``limit``, ``min_support``...): at least 1, capped at 2**32 - 1.
    Raises CueTypeError for anything but a Python int (a bool, a numpy integer), and
    InvalidArgumentError below 1."""

@final
class GroupSync:
    """One journal's group commit (see ``cuemem.store.groupsync``): a worker thread of the core's
    own, which needs no GIL, syncs the open segment whenever a ticket is unsynced (once its
    window is over)."""

    def __new__(cls, window: float = 0.0) -> GroupSync:
        """Syncs each ticket at most ``window`` seconds after it was written (0: at once).
        Raises InvalidArgumentError: not a number of seconds from 0 to 3600."""
    def written(self, fd: int) -> int:
        """A ticket for bytes just written to the open segment ``fd``; their sync starts at once.
        Raises StorageError: an earlier sync failed, or ``fd`` cannot be duplicated;
        ForkedHandleError: this is a child forked since the group was made."""
    def wait(self, ticket: int) -> None:
        """Returns, the GIL released while it waits (polling first if its sync should end
        soon), once ``ticket``'s bytes are on disk.
        Raises StorageError: the sync covering it failed, or an earlier one did;
        ForkedHandleError: as ``written``."""
    def flush(self) -> None:
        """Syncs every ticket, then lets the segment go (before its descriptor is closed); in
        a forked child, nothing (the tickets are the parent's).
        Raises StorageError: a sync failed, now or earlier."""
    def check(self) -> None:
        """Raises StorageError if an earlier sync failed; ForkedHandleError in a forked child."""

def group_syncs() -> int:
    """How many syncs the group commits of this process have made so far."""

def fork_generation() -> int:
    """This process's fork generation: moved on in a forked child inside ``fork`` itself (a
    ``pthread_atfork`` handler), before any of the child's code runs; never an id that comes back."""
