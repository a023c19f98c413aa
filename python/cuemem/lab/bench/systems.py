"""The systems the benchmark compares, behind one small interface.

* ``cuemem`` — the engine itself: :class:`cuemem.CueIndex` for pruning and
  :func:`cuemem.recall` (pruning fused with scoring in Rust).
* ``pyroaring+numpy`` — what a careful Python user would write: pyroaring
  posting lists intersected smallest first, numpy gather, decay and
  ``argpartition``.
* ``python-sets`` — the seed's design: a Python ``set`` per cue value and a
  plain Python scoring loop.

All three run the same plan (union within a dimension, intersect smallest
first, stop when empty, subtract exclusions) and the same ranking, so their
answers must match; :mod:`cuemem.lab.bench.agreement` checks that they do.
"""

from __future__ import annotations

import array
import heapq
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np

from cuemem.lab.bench import reference
from cuemem.lab.bench.corpus import DIMENSIONS, Corpus, Dimension
from cuemem.lab.bench.reference import Columns, Ranking
from cuemem.errors import InvalidArgumentError

Cues = Mapping[str, "str | list[str]"]

SYSTEMS: tuple[str, ...] = ("cuemem", "pyroaring+numpy", "python-sets")
"""Names of the benchmarked systems, in report order."""

BUILD_STEPS = len(DIMENSIONS) + 1
"""Progress steps of :meth:`System.build`: one per dimension, one for salience."""


class Recalled(NamedTuple):
    """What one recall returned.

    Attributes:
        rows: Top rows, best first.
        scores: Their composite salience at ``now``.
        examined: Postings the pruning plan touched.
        full_scan: Rows a full scan would have visited.
        candidates: Rows left after pruning (before top-k).
    """

    rows: np.ndarray
    scores: np.ndarray
    examined: int
    full_scan: int
    candidates: int


class System(Protocol):
    """A memory store that can be loaded with a corpus and asked for top-k recalls."""

    name: str

    def build(self, corpus: Corpus, step: Callable[[], None] | None = None) -> float:
        """Load ``corpus``; call ``step`` after each of :data:`BUILD_STEPS` steps; return seconds."""
        ...

    def recall(self, cues: Cues, exclude: Cues | None, now: float, k: int) -> Recalled:
        """Return the ``k`` most salient rows at ``now`` matching ``cues`` minus ``exclude``."""
        ...

    def bytes(self) -> int:
        """Return the resident bytes of the index and salience storage."""
        ...


def make_system(name: str, ranking: Ranking) -> System:
    """Return an empty system by name.

    Args:
        name: One of :data:`SYSTEMS`.
        ranking: Weights and half-lives the Python baselines score with.

    Raises:
        KeyError: If ``name`` is not a known system.
    """
    factories: dict[str, Callable[[], System]] = {
        "cuemem": CuememSystem,
        "pyroaring+numpy": lambda: RoaringNumpySystem(ranking),
        "python-sets": lambda: PythonSetsSystem(ranking),
    }
    if name not in factories:
        raise KeyError(f"unknown system {name!r}; choose from {', '.join(SYSTEMS)}")
    return factories[name]()


def _as_list(value: str | list[str]) -> list[str]:
    """Return a cue value as a list of values."""
    return [value] if isinstance(value, str) else list(value)


def _tick(step: Callable[[], None] | None) -> None:
    """Report one finished build step, if anyone listens."""
    if step is not None:
        step()


def _groups(dim: Dimension) -> Iterable[tuple[str, np.ndarray]]:
    """Yield ``(value, rows)`` for each value of ``dim``, rows ascending."""
    order = np.argsort(dim.codes, kind="stable")
    codes, rows = dim.codes[order], dim.rows[order]
    cuts = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate(([0], cuts))
    for start, chunk in zip(starts.tolist(), np.split(rows, cuts)):
        yield dim.values[int(codes[start])], chunk


class _Posting(Protocol):
    """What the plan needs of a posting list: a pyroaring ``BitMap`` or a ``set``."""

    def __len__(self) -> int: ...
    def __and__(self, other: Any) -> Any: ...
    def __sub__(self, other: Any) -> Any: ...


def _prune(
    cues: Cues, exclude: Cues | None, resolve: Callable[[str, list[str]], tuple[_Posting, int]]
) -> tuple[Any, int]:
    """Run cuemem's pruning plan over the lists ``resolve(dim, values)`` returns.

    ``resolve`` gives a dimension's union of lists and the postings it merged.
    Lists are intersected smallest first, stopping once nothing survives, then
    exclusions are subtracted. ``examined`` counts as cuemem does: postings merged
    by unions, the first list once, then the survivors carried into every
    probe after the first.

    Returns:
        ``(rows, examined)``.

    Raises:
        cuemem.errors.InvalidArgumentError: If ``cues`` is empty.
    """
    if not cues:
        raise InvalidArgumentError("a recall needs at least one cue")
    examined = 0
    include: list[Any] = []
    subtract: list[Any] = []
    for clauses, out in ((cues, include), (exclude or {}, subtract)):
        for dim, value in clauses.items():
            posting, merged = resolve(dim, _as_list(value))
            examined += merged
            out.append(posting)
    include.sort(key=len)
    acc = include[0]
    examined += len(acc)
    steps = [(p, True) for p in include[1:]] + [(p, False) for p in subtract]
    for probe, (posting, keep) in enumerate(steps):
        if not acc:
            break
        if probe > 0:
            examined += len(acc)
        acc = acc & posting if keep else acc - posting
    return acc, examined


class CuememSystem:
    """cuemem's cue index and salience table, recalled through :func:`cuemem.recall`."""

    name = "cuemem"

    def __init__(self) -> None:
        self._index: Any = None
        self._table: Any = None

    def build(self, corpus: Corpus, step: Callable[[], None] | None = None) -> float:
        """Load every dimension column-wise and the salience columns in one ``put``."""
        import cuemem

        start = time.perf_counter()
        index = cuemem.CueIndex(list(DIMENSIONS))
        for name in DIMENSIONS:
            dim = corpus.dims[name]
            index.insert_column(name, values=dim.values, codes=dim.codes, rows=dim.rows)
            _tick(step)
        table = cuemem.SalienceTable()
        rows = np.arange(corpus.n, dtype=np.uint32)
        table.put(rows, corpus.axes, corpus.confidence, corpus.t)
        elapsed = time.perf_counter() - start
        _tick(step)
        self._index, self._table = index, table
        return elapsed

    def recall(self, cues: Cues, exclude: Cues | None, now: float, k: int) -> Recalled:
        """Prune and rank in one call to :func:`cuemem.recall`."""
        import cuemem

        r = cuemem.recall(self._index, self._table, cues, now=now, k=k, exclude=exclude)
        return Recalled(r.rows, r.scores, r.examined, r.full_scan, r.total)

    def decay_pass(self, now: float, floor: float, out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Run :meth:`cuemem.SalienceTable.decay_pass` (into ``out`` if given); return ``(axes, below)``."""
        dp = self._table.decay_pass(now, floor=floor, out=out)
        return dp.axes, dp.below

    def bytes(self) -> int:
        """Return the cue index's resident bytes plus the salience table's."""
        return int(self._index.stats().bytes) + int(self._table.nbytes)


class RoaringNumpySystem:
    """pyroaring posting lists per cue value, numpy columns for ranking."""

    name = "pyroaring+numpy"

    def __init__(self, ranking: Ranking) -> None:
        import pyroaring

        self._bitmap = pyroaring.BitMap
        self._ranking = ranking
        self._postings: dict[str, dict[str, Any]] = {}
        self._cols: Columns | None = None
        self._n = 0

    def build(self, corpus: Corpus, step: Callable[[], None] | None = None) -> float:
        """Build one bitmap per value from the dictionary-encoded columns."""
        start = time.perf_counter()
        postings: dict[str, dict[str, Any]] = {}
        for name in DIMENSIONS:
            postings[name] = {
                value: self._bitmap(array.array("I", rows.tobytes()))
                for value, rows in _groups(corpus.dims[name])
            }
            _tick(step)
        cols = Columns(
            axes=np.ascontiguousarray(corpus.axes, dtype=np.float32),
            confidence=np.ascontiguousarray(corpus.confidence, dtype=np.float32),
            t=np.ascontiguousarray(corpus.t, dtype=np.float64),
            protected=corpus.protected,
        )
        elapsed = time.perf_counter() - start
        _tick(step)
        self._postings, self._cols, self._n = postings, cols, corpus.n
        return elapsed

    @property
    def _columns(self) -> Columns:
        """Return the numpy columns.

        Raises:
            RuntimeError: If :meth:`build` has not run.
        """
        if self._cols is None:
            raise RuntimeError("build() the system before recalling")
        return self._cols

    def _union(self, dim: str, values: list[str]) -> tuple[Any, int]:
        """Return the union of ``values``' bitmaps in ``dim`` and the postings merged."""
        lists = self._postings[dim]
        parts = [lists[v] for v in values if v in lists]
        if len(parts) < 2:
            return (parts[0] if parts else self._bitmap()), 0
        return self._bitmap.union(*parts), sum(len(p) for p in parts)

    def candidates(self, cues: Cues, exclude: Cues | None) -> tuple[np.ndarray, int]:
        """Run the pruning plan; return the surviving rows and the postings examined."""
        acc, examined = _prune(cues, exclude, self._union)
        return np.frombuffer(acc.to_array(), dtype=np.uint32), examined

    def recall(self, cues: Cues, exclude: Cues | None, now: float, k: int) -> Recalled:
        """Prune with pyroaring, then decay, score and select with numpy."""
        rows, examined = self.candidates(cues, exclude)
        scores = reference.composite(self._columns, rows, now, self._ranking)
        top_rows, top_scores = reference.top_k(rows, scores, k)
        return Recalled(top_rows, top_scores, examined, self._n, len(rows))

    def decay_pass(self, now: float, floor: float) -> tuple[np.ndarray, np.ndarray]:
        """Decay every row with numpy; return ``(axes, below)``."""
        return reference.decay_pass(self._columns, now, self._ranking, floor)

    def bytes(self) -> int:
        """Return the bitmaps' sizes plus the numpy columns'."""
        postings = sum(sys.getsizeof(bm) for lists in self._postings.values() for bm in lists.values())
        return postings + (self._cols.nbytes if self._cols is not None else 0)


class PythonSetsSystem:
    """A Python ``set`` of rows per cue value and one salience tuple per row."""

    name = "python-sets"

    def __init__(self, ranking: Ranking) -> None:
        self._weights: list[float] = ranking.weights.tolist()
        self._half_lives: list[float] = ranking.half_lives_s.tolist()
        self._postings: dict[str, dict[str, set[int]]] = {}
        self._records: list[tuple[tuple[float, ...], float, float, bool]] = []

    def build(self, corpus: Corpus, step: Callable[[], None] | None = None) -> float:
        """Build the sets and per-row records from the corpus columns."""
        start = time.perf_counter()
        postings: dict[str, dict[str, set[int]]] = {}
        for name in DIMENSIONS:
            postings[name] = {value: set(rows.tolist()) for value, rows in _groups(corpus.dims[name])}
            _tick(step)
        records = list(
            zip(
                map(tuple, corpus.axes.tolist()),
                corpus.confidence.tolist(),
                corpus.t.tolist(),
                corpus.protected.tolist(),
            )
        )
        elapsed = time.perf_counter() - start
        _tick(step)
        self._postings, self._records = postings, records
        return elapsed

    def _union(self, dim: str, values: list[str]) -> tuple[set[int], int]:
        """Return the union of ``values``' sets in ``dim`` and the postings merged."""
        sets = self._postings[dim]
        parts = [sets[v] for v in values if v in sets]
        if len(parts) < 2:
            return (parts[0] if parts else set()), 0
        return set().union(*parts), sum(len(p) for p in parts)

    def recall(self, cues: Cues, exclude: Cues | None, now: float, k: int) -> Recalled:
        """Intersect sets smallest first, then score each candidate in a Python loop."""
        acc, examined = _prune(cues, exclude, self._union)
        scored = [(self._score(row, now), row) for row in acc]
        best = heapq.nlargest(k, scored)
        rows = np.array([row for _, row in best], dtype=np.uint32)
        scores = np.array([score for score, _ in best], dtype=np.float64)
        return Recalled(rows, scores, examined, len(self._records), len(acc))

    def _score(self, row: int, now: float) -> float:
        """Return the composite salience of ``row`` at ``now``."""
        axes, confidence, t, protected = self._records[row]
        if protected:
            total = sum(w * a for w, a in zip(self._weights, axes))
        else:
            age = max(now - t, 0.0)
            total = sum(
                w * a * math.pow(2.0, -age / h) for w, h, a in zip(self._weights, self._half_lives, axes)
            )
        return total * (0.6 + 0.4 * confidence)

    def bytes(self) -> int:
        """Return the sets' and records' sizes, counting each stored int and float object."""
        int_size = sys.getsizeof(2**20)
        float_size = sys.getsizeof(0.5)
        total = 0
        for sets in self._postings.values():
            total += sum(sys.getsizeof(s) + int_size * len(s) for s in sets.values())
        total += sys.getsizeof(self._records)
        if self._records:
            axes, *_ = self._records[0]
            per_record = sys.getsizeof(self._records[0]) + sys.getsizeof(axes) + float_size * (len(axes) + 2)
            total += per_record * len(self._records)
        return total
