"""The home's indexes — cue postings, salience and the row map — and their disk cache.

Every index here is a cache of the journal. Rows are dense numbers in journal order:
row ``r`` is the ``r``-th episode the journal holds, so rebuilding from the same
journal gives the same rows, the same postings and the same bytes. ``index/`` holds
the cached files and ``recipe.json``, which says what built them (dimensions,
salience parameters, format) and up to which journal record; a recipe that differs
from the running code's, or a journal that no longer extends the recorded prefix,
makes the cache stale and it is rebuilt. A journal that has only grown since is
caught up from where the cache stopped.
"""

from __future__ import annotations

import gc
import hashlib
import io
import json
import math
import shutil
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date
from itertools import repeat
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np
import orjson

from .. import _core
from .._gc import gc_paused
from ..errors import CuememError
from ..index import CueIndex
from .state import LifecycleState
from ..salience import AXES, SalienceTable
from ..schema import Episode
from ..store.journal import Position
from ..store.fsync import write_atomic
from ..store.regular import HINT_BYTES, open_regular, read_regular
from .cues import DIMENSIONS, FOLDED, QUARANTINED, cue_values_json
from .threads import Threads

#: Bumped whenever the cached files' meaning changes.
FORMAT = 2
_DAY = 86_400.0
_EPOCH_ORDINAL = 719_163  # date(1970, 1, 1).toordinal()

_SHARED = -2  # what _core.IdRows.find says of an id whose hash two rows share
_FILES = ("cue.idx", "salience.tbl", "rows.ids", "rows.npy", "notes.json", "lifecycle.json", "citers.npy", "jobs.json")

#: ``Indexes.citers`` value of a row no later record cites.
NOT_CITED = -1


class IndexRow(NamedTuple):
    """What the indexes need of one episode (a tuple: one is made per row written or replayed)."""

    id: str
    cues: dict[str, list[str]]
    axes: list[float]
    confidence: float
    t: float
    sources: tuple[str, ...] = ()

    @classmethod
    def of(cls, episode: Episode) -> IndexRow:
        """The row of a validated episode."""
        return cls.of_json(episode.to_json())

    @classmethod
    def of_json(cls, record: Mapping[str, Any]) -> IndexRow:
        """The row of an episode as stored in the journal (no re-validation).

        Raises:
            KeyError, TypeError, ValueError: the stored record is malformed.
        """
        occurred = date.fromisoformat(record["occurred_at"])
        salience = record["salience"]
        return cls(
            id=record["id"],
            cues=cue_values_json(record),
            axes=[salience[a] for a in AXES],
            confidence=record["confidence"],
            t=(occurred.toordinal() - _EPOCH_ORDINAL) * _DAY,
            sources=tuple(record.get("sources") or ()),
        )


def recipe(salience: SalienceTable) -> dict[str, Any]:
    """What the cached indexes are a function of, besides the journal."""
    return {
        "format": FORMAT,
        "dimensions": list(DIMENSIONS),
        "folded": sorted(FOLDED),
        "salience": {
            "axes": list(AXES),
            "weights": [float(w) for w in salience.weights.values()],
            "half_lives_days": [float(h) for h in salience.half_lives_days.values()],
            "reference_time": "occurred_at",
        },
    }


class Batch:
    """New rows gathered column by column, compactly, before they join the indexes.

    An import gathers its rows here while it stages the journal records, so that
    nothing reaches the indexes before the journal commits, and no per-episode
    object is kept meanwhile.
    """

    def __init__(self, start: int) -> None:
        self.start = start
        self.columns: dict[str, tuple[list[str], array[int]]] = {d: ([], array("I")) for d in DIMENSIONS}
        self.axes = array("f")
        self.confidence = array("f")
        self.times = array("d")
        self.ids: list[str] = []
        self.segments = array("Q")
        self.offsets = array("Q")
        #: ``(row, sources)`` of the rows that cite other records.
        self.citing: list[tuple[int, tuple[str, ...]]] = []

    def add(self, row: IndexRow, segment: int, offset: int) -> None:
        """Gathers one row, whose record starts at ``(segment, offset)`` in the journal."""
        r = self.start + len(self.ids)
        for dimension, values in row.cues.items():
            names, rows = self.columns[dimension]
            names.extend(values)
            rows.extend([r] * len(values))
        self.axes.extend(row.axes)
        self.confidence.append(row.confidence)
        self.times.append(row.t)
        self.ids.append(row.id)
        self.segments.append(segment)
        self.offsets.append(offset)
        if row.sources:
            self.citing.append((r, row.sources))

    def place(self, segment: int) -> None:
        """Sets the segment of every row (staged rows learn theirs at commit)."""
        self.segments = array("Q", [segment]) * len(self.ids)


class DecodedRows(NamedTuple):
    """Rows ``lo..hi`` of a run the core decoded (their ``ids``), whose lines start at
    ``base`` in ``segment``."""

    decoded: _core.Decoded
    lo: int
    hi: int
    ids: list[str]
    segment: int
    base: int


class Indexes:
    """Cue postings, salience and the row map of one home, kept in memory."""

    def __init__(self, salience: SalienceTable) -> None:
        self.cues = CueIndex(list(DIMENSIONS))
        self.salience = salience
        self.ids: list[str] = []
        # id -> row of rows 0 .. _mapped, the rest mapped on first use (:attr:`row_of`).
        self._row_of: dict[str, int] = {}
        self._mapped = 0
        # The rows of ids 0 .. _hashed by the ids' hashes, the rest taken on first use (:meth:`row_for`).
        self._id_rows: _core.IdRows | None = None
        self._hashed = 0
        self.segments = array("Q")
        self.offsets = array("Q")
        #: Journal position just after the last record applied.
        self.head = Position.start()
        #: Note id -> (latest version, sha256 of its file as last recorded).
        self.notes: dict[str, tuple[int, str]] = {}
        #: Journal records this session could not index (a person broke them), and why.
        self.skipped: list[tuple[Position, str]] = []
        #: Versions, approvals, live short-term and retired records (see :mod:`cuemem.home.state`).
        self.lifecycle = LifecycleState()
        #: Row -> the latest row whose ``sources`` cite it (:data:`NOT_CITED` if none):
        #: what builds on a memory (a consolidated record, a rung of the ladder).
        self.citers = array("q")
        #: Whether a row was ever cited in these indexes (False: no recall page needs the
        #: abstractions' lead, and no row's citer need be looked at).
        self.cited = False
        #: Job name -> its last run record (``op: job``) as journaled.
        self.jobs: dict[str, dict[str, Any]] = {}
        #: Thread and live neighbours of each row, built from the cue index on first use.
        self.threads = Threads()
        #: How many erasures these indexes have taken: what is derived from rows in place
        #: (a text recall's vocabulary) is derived afresh once this moves.
        self.erasures = 0
        #: How many times a row held had its cues changed in place (accepted from quarantine).
        #: Otherwise rows are appended, retired (``lifecycle.retired`` names them, in order) or
        #: erased (:attr:`erasures`).
        self.edits = 0

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def row_of(self) -> dict[str, int]:
        """id -> row. Rows join the map when it is next read, not as they are added: a home
        opened from its cache, an import or a replay maps nothing until something asks by
        id (a recall never does; a 1M-row map costs about a second)."""
        ids, mapped = self.ids, self._mapped
        n = len(ids)
        if mapped < n:
            self._row_of.update(zip(ids[mapped:n], range(mapped, n)))
            self._mapped = n
            if self._id_rows is not None:  # the map answers from now on (:meth:`row_for`)
                self._id_rows, self._hashed = None, 0
        return self._row_of

    def row_for(self, id: str) -> int | None:
        """The row whose id is ``id``, or None. Once something has made :attr:`row_of` (a
        catch-up, a retire), its answer; until then the core's rows by id hash answer
        (:class:`cuemem._core.IdRows`, made at first need from the ids in a sixth of the
        map's time, and kept up as rows come), and the map is made only for an id whose hash
        two rows' ids share. So a write's fresh id, and a read by id, do not wait for a
        large home's map."""
        ids = self.ids
        if self._mapped or not ids:
            return self.row_of.get(id)  # (the map's tail mapped as it is read)
        if self._id_rows is None:
            self._id_rows, self._hashed = _core.IdRows(), 0
        if self._hashed < len(ids):
            self._id_rows.extend(ids[self._hashed:] if self._hashed else ids, self._hashed)
            self._hashed = len(ids)
        row = self._id_rows.find(id)
        if row == _SHARED:
            return self.row_of.get(id)
        return row if row >= 0 and ids[row] == id else None

    def claim(self, ids: list[str]) -> bool:
        """Maps ``ids`` to the rows the next :meth:`extend_decoded` appends (``len(self)``
        on), if none repeats among them or names a row mapped already; else maps none and
        says so (the map untouched). The caller appends those rows next."""
        row_of = self.row_of  # every row so far mapped
        if len(set(ids)) != len(ids) or not row_of.keys().isdisjoint(ids):
            return False
        start = len(self.ids)
        row_of.update(zip(ids, range(start, start + len(ids))))
        self._mapped = start + len(ids)
        return True

    def unclaim(self) -> None:
        """Drops what :meth:`claim` mapped beyond the rows appended (the map is made again
        from the rows on next use)."""
        if self._mapped > len(self.ids):
            self._row_of, self._mapped = {}, 0

    def position(self, row: int) -> Position:
        """Where row ``row``'s record starts in the journal."""
        return Position(int(self.segments[row]), int(self.offsets[row]))

    def extend(self, batch: Batch) -> None:
        """Appends the rows of ``batch`` (which must start at ``len(self)``).

        Hands the core one ``insert_values`` per dimension and one ``put`` for the
        salience: no per-row call crosses into the core. The batch's columns are of
        the core's own types (lists of str, uint32 and float arrays), so they go to
        the native objects directly; the core still checks every value.
        """
        if not batch.ids:
            return
        start = len(self.ids)
        if batch.start != start:
            raise ValueError(f"a batch starting at row {batch.start} cannot follow {start} rows")
        for dimension, (names, rows) in batch.columns.items():
            if names:
                self.cues._inner.insert_values(dimension, names, np.frombuffer(rows, dtype=np.uint32))
        n = len(batch.ids)
        axes = np.frombuffer(batch.axes, dtype=np.float32).reshape(n, len(AXES))
        self.salience._inner.put(
            np.arange(start, start + n, dtype=np.uint32),
            axes,
            np.frombuffer(batch.confidence, dtype=np.float32),
            np.frombuffer(batch.times, dtype=np.float64),
        )
        self.ids.extend(batch.ids)
        self.segments.extend(batch.segments)
        self.offsets.extend(batch.offsets)
        self.citers.extend(array("q", [NOT_CITED]) * n)
        names, rows = batch.columns["thread"]
        self.threads.append(names, np.frombuffer(rows, dtype=np.uint32))
        if batch.citing:
            for citer, sources in batch.citing:
                for source in sources:
                    cited = self.row_for(source)
                    if cited is not None and cited != citer:
                        self.citers[cited] = citer
                        self.cited = True

    def extend_decoded(self, rows: DecodedRows) -> None:
        """Appends rows the core decoded (:mod:`.decoding`): the cues and salience go from
        the core's rows to the core's indexes directly; ids, positions, threads and
        citations join here as :meth:`extend` joins them."""
        decoded, lo, hi = rows.decoded, rows.lo, rows.hi
        if hi <= lo:
            return
        start, n = len(self.ids), hi - lo
        decoded.feed(lo, hi, start, self.cues._inner, self.salience._inner)
        self.ids.extend(rows.ids)
        self.offsets.frombytes(decoded.offsets(lo, hi, rows.base).tobytes())
        if n == 1:  # a live write's row (no arrays of one value made to be copied)
            self.segments.append(rows.segment)
            self.citers.append(NOT_CITED)
        else:
            self.segments.extend(array("Q", [rows.segment]) * n)
            self.citers.extend(array("q", [NOT_CITED]) * n)
        names, at = decoded.values("thread", lo, hi)
        if names:
            self.threads.append(names, at + np.uint32(start))
        citing = decoded.citing(lo, hi)
        if citing:
            for i, sources in citing:
                citer = start + i
                for source in sources:
                    cited = self.row_for(source)
                    if cited is not None and cited != citer:
                        self.citers[cited] = citer
                        self.cited = True

    def retire(self, ids: Sequence[str]) -> None:
        """Takes the rows of ``ids`` out of the cue postings and the salience table.

        Their ids and journal positions stay, so ``Memory.get`` still finds them. What
        they cited is no longer built upon by them: those rows count as uncited again.
        """
        rows = np.array([r for r in map(self.row_for, ids) if r is not None], dtype=np.uint32)
        if len(rows):
            self.cues.remove(rows)
            self.salience.remove(rows)
            self.threads.remove(rows)
            if self.cited:  # (else every row is uncited: nothing to look through, at every retire)
                citers = np.frombuffer(self.citers, dtype=np.int64)
                citers[np.isin(citers, rows.astype(np.int64))] = NOT_CITED

    def erase(self, ids: Sequence[str]) -> None:
        """Takes the rows of ``ids`` out as :meth:`retire` does, and leaves nothing of them:
        their salience rows and reference times are cleared and nothing counts as citing
        them, as if each had been written empty and retired (what a replay of their
        tombstones makes)."""
        rows = np.array([r for r in map(self.row_for, ids) if r is not None], dtype=np.uint32)
        if len(rows):
            self.erasures += 1
            self.retire([self.ids[r] for r in rows.tolist()])
            self.salience.erase(rows)
            np.frombuffer(self.citers, dtype=np.int64)[rows.astype(np.int64)] = NOT_CITED

    def quarantined(self, id: str) -> bool:
        """Whether ``id`` is a live record nobody has reviewed yet (its ``trust`` cue says so)."""
        row = self.row_for(id)
        return row is not None and bool(self.cues.admits({"trust": [QUARANTINED]}, np.array([row], dtype=np.uint32))[0])

    def accept(self, id: str) -> None:
        """A quarantined record, reviewed: it loses its ``quarantined`` cue (its ``tainted`` one stays)."""
        row = self.row_for(id)
        if row is None:
            raise KeyError(id)
        self.edits += 1
        self.cues.withdraw("trust", QUARANTINED, np.array([row], dtype=np.uint32))

    # -- the disk cache -------------------------------------------------------------

    @gc_paused  # the images of a home of many facts hold hundreds of thousands of lists, and no cycles
    def save(self, directory: Path, *, last_record_sha: str | None, before_recipe: Callable[[], None] | None = None) -> None:
        """Writes the cache files, then ``before_recipe()`` (what else the cache needs),
        then ``recipe.json`` last (so a torn save is stale)."""
        directory.mkdir(parents=True, exist_ok=True)
        recipe_path = directory / "recipe.json"
        for name in ("recipe.json", *_FILES):
            clear_foreign(directory / name)
        if recipe_path.exists():
            recipe_path.unlink()  # the files below are about to change
        self.cues.save(directory / "cue.idx")
        self.salience.save(directory / "salience.tbl")
        write_atomic(directory / "rows.ids", ("\n".join(self.ids) + "\n").encode() if self.ids else b"")
        positions = np.stack([np.frombuffer(self.segments, dtype=np.uint64), np.frombuffer(self.offsets, dtype=np.uint64)], axis=1) if self.ids else np.zeros((0, 2), np.uint64)
        write_atomic(directory / "rows.npy", _npy_bytes(positions))
        notes = {k: list(v) for k, v in sorted(self.notes.items())}
        write_atomic(directory / "notes.json", (json.dumps(notes, sort_keys=True) + "\n").encode())
        write_atomic(directory / "lifecycle.json", json.dumps(self.lifecycle.to_json(), sort_keys=True, ensure_ascii=False).encode())
        write_atomic(directory / "citers.npy", _npy_bytes(np.frombuffer(self.citers, dtype=np.int64) if self.ids else np.zeros(0, np.int64)))
        write_atomic(directory / "jobs.json", (json.dumps(self.jobs, sort_keys=True) + "\n").encode())
        if before_recipe is not None:
            before_recipe()
        files = {name: _saved_fingerprint(directory / name) for name in _FILES}
        body = {
            "recipe": recipe(self.salience),
            "rows": len(self.ids),
            "journal": {"head": [self.head.segment, self.head.offset], "last_record_sha256": last_record_sha},
            "files": files,
        }
        write_atomic(recipe_path, (json.dumps(body, indent=2, sort_keys=True) + "\n").encode())

    @classmethod
    def load(
        cls, directory: Path, salience_params: SalienceTable, bound: int | None = None,
    ) -> tuple[Indexes | None, dict[str, Any] | str]:
        """The cached indexes and their recipe, or ``None`` and why they cannot be used.

        With ``bound``, a cache file of more bytes is not the recipe's and is never read (every
        cached fact comes from the journal: no save writes a file larger than it, and a little).
        """
        was = gc.isenabled()
        gc.disable()  # a million ids and no cycles: collections would only cost time
        try:
            return cls._load(directory, salience_params, bound)
        finally:
            if was:
                gc.enable()

    @classmethod
    def _load(cls, directory: Path, salience_params: SalienceTable, bound: int | None) -> tuple[Indexes | None, dict[str, Any] | str]:
        """The cached indexes and their recipe, or ``None`` and why they cannot be used."""
        try:
            body = json.loads(read_regular(directory / "recipe.json", HINT_BYTES).decode("utf-8"))
        except FileNotFoundError:
            return None, "no cached index"
        except (OSError, ValueError) as exc:
            return None, f"unreadable recipe.json: {exc}"
        if not isinstance(body, dict) or body.get("recipe") != recipe(salience_params):
            return None, "the recipe changed"
        try:
            # Each file is read once, whole, and what is parsed is the bytes its fingerprint
            # proved: a file swapped in after its check is never the one read.
            read: dict[str, bytes] = {}
            for name in _FILES:
                data = _read_file(directory / name, bound)
                if data is None or _fingerprint(name, data) != body["files"][name]:
                    return None, f"{name} does not match its recipe"
                read[name] = data
            indexes = cls(SalienceTable.from_bytes(read.pop("salience.tbl")))
            indexes.cues = CueIndex.from_bytes(read.pop("cue.idx"))
            raw = read.pop("rows.ids").decode()
            indexes.ids = raw.split("\n")[:-1] if raw else []
            positions = _npy(read.pop("rows.npy"), np.uint64, 2)
            n = int(body["rows"])
            indexes.lifecycle = LifecycleState.from_json(_json(read["lifecycle.json"]))
            live = n - len(indexes.lifecycle.retired)
            if len(indexes.ids) != n or positions.shape != (n, 2) or len(indexes.salience) != n or len(indexes.cues) != live:
                return None, "cached files disagree on the number of rows"
            indexes.segments = array("Q", positions[:, 0].tobytes())
            indexes.offsets = array("Q", positions[:, 1].tobytes())
            notes = _json(read["notes.json"])
            rows = typed_rows(notes.values(), (int, str)) if isinstance(notes, dict) else None
            if rows is None:
                return None, "notes.json is not of note id -> [version, sha256]"
            indexes.notes = dict(zip(notes, cast(list[tuple[int, str]], rows)))
            citers = _npy(read.pop("citers.npy"), np.int64, 1)
            if citers.shape != (n,):
                return None, "cached files disagree on the number of rows"
            indexes.citers = array("q", citers.tobytes())
            indexes.cited = bool((citers >= 0).any())
            jobs = _json(read["jobs.json"])
            if not isinstance(jobs, dict):
                return None, "jobs.json is not a mapping"
            indexes.jobs = jobs
            seg, off = body["journal"]["head"]
            indexes.head = Position(int(seg), int(off))
        except (CuememError, OSError, ValueError, KeyError, TypeError) as exc:
            return None, f"cached index unusable: {exc}"
        return indexes, body


def clear_foreign(path: Path) -> None:
    """Removes what stands where a cache file goes if it is not a regular file (a
    directory, a link, a FIFO): ``index/`` is the home's own, and one such entry must
    not stop every save."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def typed_rows(values: Iterable[Sequence[object]], types: tuple[type, ...]) -> list[tuple[object, ...]] | None:
    """``values`` as tuples, if each one's fields are of exactly ``types`` (a bool is no
    int); else None. The checks run in ``map``'s C loops: no Python frame per row."""
    rows = list(map(tuple, values))
    return rows if set(map(tuple, map(map, repeat(type), rows))) <= {types} else None


def record_sha(record: dict[str, Any]) -> str:
    """A digest of one journal record, to check the journal still extends the cache."""
    return hashlib.sha256(json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()


def _read_file(path: Path, bound: int | None = None) -> bytes | None:
    """A cache file's bytes, read from the one open of it; None for one of more than
    ``bound`` bytes, which is not read at all (no save of the home writes one that large),
    and for one that grew while it was read (bytes written meanwhile in place are the
    fingerprint's to catch).

    Raises:
        InvalidArgumentError, StorageError: it is not a regular file (never opened if a FIFO).
        OSError: it cannot be read.
    """
    f, size = open_regular(path)  # a FIFO would block the open, a device never end
    with f:
        if bound is not None and size > bound:
            return None
        data = f.read(size + 1)  # one read of the size it had, and a byte to see it did not grow
    return data if len(data) <= size else None


def _fingerprint(name: str, data: bytes) -> str:
    """What identifies the content ``data`` of the cache file ``name``: the core's files end in
    a CRC-32 of their whole body (which their reader checks), so their size and that trailer
    do; the others are hashed."""
    if _core_file(name):
        return _sized(len(data), data[-4:])
    return "sha256=" + hashlib.sha256(data).hexdigest()


def _saved_fingerprint(path: Path) -> str:
    """:func:`_fingerprint` of a file a save just wrote, reading of a core file only its trailer.

    Raises:
        InvalidArgumentError, StorageError: it is not a regular file, or cannot be read.
    """
    if not _core_file(path.name):
        return _fingerprint(path.name, read_regular(path))
    f, size = open_regular(path)
    with f:
        f.seek(max(size - 4, 0))
        return _sized(size, f.read(4))


def _core_file(name: str) -> bool:
    """Whether ``name`` is one of the core's files (cue postings, salience), which end in a CRC-32."""
    return name.endswith((".idx", ".tbl"))


def _sized(size: int, trailer: bytes) -> str:
    """The fingerprint of a core file of ``size`` bytes ending in ``trailer``."""
    return f"size={size} crc32={trailer.hex()}"


def _npy(data: bytes, dtype: type[np.generic], ndim: int) -> np.ndarray[Any, Any]:
    """A cached array of ``dtype`` and ``ndim`` dimensions, read in place from the bytes
    :func:`_npy_bytes` wrote: its header must describe exactly the bytes that follow it.

    Raises:
        ValueError: the bytes are not such an array.
    """
    header = io.BytesIO(data)
    version = np.lib.format.read_magic(header)
    if version == (1, 0):
        shape, fortran, kind = np.lib.format.read_array_header_1_0(header)
    elif version == (2, 0):
        shape, fortran, kind = np.lib.format.read_array_header_2_0(header)
    else:
        raise ValueError(f"an array file of version {version}")
    if kind != np.dtype(dtype) or fortran or len(shape) != ndim or any(type(d) is not int or d < 0 for d in shape):
        raise ValueError(f"not a {ndim}-d array of {np.dtype(dtype)} in row order")
    if math.prod(shape) * kind.itemsize != len(data) - header.tell():
        raise ValueError("an array file whose header does not describe its bytes")
    return np.frombuffer(data, dtype=kind, offset=header.tell()).reshape(shape)


def _json(data: bytes) -> Any:
    """A cache file's JSON: parsed by orjson, or by :mod:`json` where orjson refuses what
    :func:`json.dumps` may write (``NaN``, integers past 64 bits).

    Raises:
        ValueError: the bytes are not JSON.
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data.decode("utf-8"))


def _npy_bytes(a: np.ndarray[Any, Any]) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()



