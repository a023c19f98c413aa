"""The cue index: per dimension, a roaring posting list per value."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Union

import numpy as np
import numpy.typing as npt

from pyroaring import BitMap

from . import _arrays, _scalars
from ._core import CueIndex as _CueIndex
from ._core import IndexStats, Pruned
from .errors import CueTypeError

__all__ = ["ClosedSets", "CueIndex", "CueSet", "Cues", "IndexStats", "Pruned"]

#: A cue mapping: dimension -> one value or several (a union within the dimension).
Cues = Mapping[str, Union[str, Sequence[str]]]


@dataclass(frozen=True, slots=True)
class CueSet:
    """A combination of cues found by :meth:`CueIndex.closed_sets`."""

    #: ``(dimension, value)`` pairs, by dimension in the order asked, then by value.
    cues: tuple[tuple[str, str], ...]
    #: Rows of ``within`` carrying every cue, ascending.
    support: npt.NDArray[np.uint32]
    #: Rows of ``against`` carrying every cue, ascending.
    counter: npt.NDArray[np.uint32]


@dataclass(frozen=True, slots=True)
class ClosedSets:
    """Closed cue sets in columns (:meth:`CueIndex.closed_set_columns`).

    Set ``i`` names the cues ``vocabulary[j]`` for ``j`` in ``cues[cue_ends[i-1]:cue_ends[i]]``
    (ascending: by dimension in the order asked, then by value), and its support and
    counter rows are the same slices of ``support`` and ``counter``.
    """

    vocabulary: list[tuple[str, str]]
    cues: npt.NDArray[np.uint32]
    cue_ends: npt.NDArray[np.uint64]
    support: npt.NDArray[np.uint32]
    support_ends: npt.NDArray[np.uint64]
    counter: npt.NDArray[np.uint32]
    counter_ends: npt.NDArray[np.uint64]

    def __len__(self) -> int:
        return len(self.cue_ends)

    def sets(self) -> list[CueSet]:
        """One :class:`CueSet` per set (its rows are views into the columns)."""
        out = []
        c0 = s0 = k0 = 0
        for c1, s1, k1 in zip(self.cue_ends.tolist(), self.support_ends.tolist(), self.counter_ends.tolist()):
            cues = tuple(self.vocabulary[i] for i in self.cues[c0:c1].tolist())
            out.append(CueSet(cues, self.support[s0:s1], self.counter[k0:k1]))
            c0, s0, k0 = c1, s1, k1
        return out


class CueIndex:
    """Dimension -> value -> posting list of dense ``uint32`` rows.

    Dimensions are fixed at construction. A query intersects the per-dimension lists
    smallest first, so its cost follows the most selective cue.

    Example:
        >>> import numpy as np
        >>> idx = CueIndex(["actor", "type"])
        >>> idx.insert("actor", "acme", np.array([1, 2, 3], dtype=np.uint32))
        >>> idx.insert("type", "deal", np.array([2, 3, 4], dtype=np.uint32))
        >>> res = idx.prune({"actor": "acme", "type": "deal"})
        >>> res.rows.tolist(), res.examined, res.full_scan
        ([2, 3], 3, 4)

    Raises:
        InvalidDimensionError: a dimension name is empty or repeated.
    """

    __slots__ = ("_inner",)

    def __init__(self, dimensions: Sequence[str]) -> None:
        if isinstance(dimensions, str):
            raise CueTypeError("dimensions must be a list of names, not one string")
        self._inner = _CueIndex(_arrays.strings(list(dimensions) if isinstance(dimensions, Sequence) else dimensions, "dimensions"))

    @classmethod
    def _wrap(cls, inner: _CueIndex) -> CueIndex:
        obj = cls.__new__(cls)
        obj._inner = inner
        return obj

    def dimensions(self) -> list[str]:
        """The declared dimensions, in declaration order."""
        return self._inner.dimensions()

    def values(self, dimension: str, start: str | None = None) -> list[str]:
        """Values of ``dimension`` with at least one row, sorted; those from ``start`` on
        (``>= start``), when given.

        Raises:
            UnknownDimensionError: ``dimension`` was not declared.
            CueTypeError: ``start`` is not a string. InvalidArgumentError: it holds a lone surrogate.
        """
        return self._inner.values(_arrays.string(dimension, "dimension"), None if start is None else _arrays.string(start, "start"))

    def insert(self, dimension: str, value: str, rows: Any) -> None:
        """Adds ``rows`` to the posting list of ``value`` in ``dimension``.

        Raises:
            UnknownDimensionError: ``dimension`` was not declared.
            CueTypeError: ``rows`` is not a uint32 array or a sequence of ints.
            InvalidValueError: ``value`` is empty.
        """
        self._inner.insert(_arrays.string(dimension, "dimension"), _arrays.string(value, "value"), _arrays.rows(rows))

    def insert_column(self, dimension: str, values: Sequence[str], codes: Any, rows: Any) -> None:
        """Dictionary-encoded batch insert: row ``rows[i]`` gets ``values[codes[i]]``.

        A multi-valued dimension (several actors per memory) repeats the row.
        Everything is validated before anything changes.

        Raises:
            UnknownDimensionError: ``dimension`` was not declared.
            CueTypeError: ``values`` is one string rather than a list of them.
            ShapeError: ``codes`` and ``rows`` differ in length.
            InvalidValueError: a code has no value, or a value is empty.
        """
        if isinstance(values, str):
            raise CueTypeError("values must be a list of strings, not one string")
        self._inner.insert_column(_arrays.string(dimension, "dimension"), _arrays.strings(values, "values"), _arrays.rows(codes, "codes"), _arrays.rows(rows))

    def insert_values(self, dimension: str, values: Sequence[str], rows: Any) -> None:
        """Batch insert with one value per posting: row ``rows[i]`` gets ``values[i]``.

        Raises:
            UnknownDimensionError: ``dimension`` was not declared.
            ShapeError: ``values`` and ``rows`` differ in length.
            InvalidValueError: a value is empty.
        """
        self._inner.insert_values(_arrays.string(dimension, "dimension"), _arrays.strings(values, "values"), _arrays.rows(rows))

    def withdraw(self, dimension: str, value: str, rows: Any) -> None:
        """Removes ``rows`` from the posting list of ``value`` in ``dimension`` only (they stay live).

        Raises:
            UnknownDimensionError: ``dimension`` was not declared.
            CueTypeError: ``rows`` is not a uint32 array or a sequence of ints.
        """
        self._inner.withdraw(_arrays.string(dimension, "dimension"), _arrays.string(value, "value"), _arrays.rows(rows))

    def remove(self, rows: Any) -> None:
        """Removes ``rows`` from every posting list and from the live rows."""
        self._inner.remove(_arrays.rows(rows))

    def prune(self, cues: Cues, exclude: Cues | None = None) -> Pruned:
        """Rows carrying every cue (one of the values per dimension) and none of ``exclude``.

        An empty ``cues`` mapping starts from every live row (a scan).

        Raises:
            UnknownDimensionError: a cue names an undeclared dimension.
            CueTypeError: a cue value is not a string or a list of strings.
            InvalidArgumentError: a cue has an empty list of values.
        """
        return self._inner.prune(cues, exclude)

    def count(self, cues: Cues, exclude: Cues | None = None) -> int:
        """How many rows :meth:`prune` would return, without materializing them."""
        return self._inner.count(cues, exclude)

    def admits(self, cues: Cues, rows: Any, exclude: Cues | None = None) -> npt.NDArray[np.bool_]:
        """Whether each of ``rows`` is live and one :meth:`prune` would return (a membership
        test: no posting list crosses to Python).

        Raises:
            UnknownDimensionError, CueTypeError, InvalidArgumentError: as :meth:`prune`.
        """
        return self._inner.admits(cues, _arrays.rows(rows), exclude)

    def closed_sets(
        self,
        dimensions: Sequence[str],
        within: Any,
        against: Any = None,
        *,
        min_support: int = 2,
        max_depth: int = 3,
        productive: bool = False,
    ) -> list[CueSet]:
        """Every closed combination of cues from ``dimensions`` shared by at least
        ``min_support`` rows of ``within``, with its counter-examples in ``against``.

        A combination is closed when no further cue can join it without losing a
        supporting row, so each stands for all its subsets of equal support. Supports
        are counted by intersecting posting lists in the core. ``max_depth`` bounds the
        cues added by search beyond those all of ``within`` shares; closure may add
        more. ``within`` and ``against`` are uint32 arrays or pyroaring bitmaps. With
        ``productive``, a combination is dropped when a smaller one kept inside it is at
        least as precise (share of its rows in ``within`` rather than ``against``).

        Example:
            >>> ix = CueIndex(["type", "actor"])
            >>> ix.insert("type", "deal", [0, 1, 2]); ix.insert("actor", "acme", [0, 1])
            >>> [(s.cues, s.support.tolist(), s.counter.tolist()) for s in ix.closed_sets(["type", "actor"], [0, 1], [2])]
            [((('type', 'deal'), ('actor', 'acme')), [0, 1], [])]

        Raises:
            UnknownDimensionError: a dimension the index does not have.
            InvalidArgumentError: ``min_support`` or ``max_depth`` below 1.
        """
        return self.closed_set_columns(
            dimensions, within, against, min_support=min_support, max_depth=max_depth, productive=productive
        ).sets()

    def closed_set_columns(
        self,
        dimensions: Sequence[str],
        within: Any,
        against: Any = None,
        *,
        min_support: int = 2,
        max_depth: int = 3,
        productive: bool = False,
    ) -> ClosedSets:
        """:meth:`closed_sets` as flat columns with offsets: no object per set, for
        callers that aggregate over many sets with numpy. Same arguments and errors."""
        dims = _arrays.strings(dimensions, "dimensions")
        within_rows = _arrays.rows(within, "within")
        against_rows = None if against is None else _arrays.rows(against, "against")
        productive = _scalars.boolean(productive, "productive")
        vocabulary, (cues, cue_ends), (support, support_ends), (counter, counter_ends) = self._inner.closed_sets(
            dims, within_rows, against_rows, _scalars.count(min_support, "min_support"), _scalars.count(max_depth, "max_depth"),
            productive,
        )
        return ClosedSets(vocabulary, cues, cue_ends, support, support_ends, counter, counter_ends)

    def posting(self, dimension: str, value: str) -> BitMap:
        """The posting list of ``value`` as a ``pyroaring.BitMap`` (empty if never written)."""
        return self._inner.posting(_arrays.string(dimension, "dimension"), _arrays.string(value, "value"))

    def live(self) -> BitMap:
        """Rows written and not removed, as a ``pyroaring.BitMap``."""
        return self._inner.live()

    def stats(self) -> IndexStats:
        """Rows, dimensions, values, postings and approximate resident bytes."""
        return self._inner.stats()

    def to_bytes(self) -> bytes:
        """The canonical file image (same postings -> same bytes)."""
        return self._inner.to_bytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> CueIndex:
        """Reads an image made by :meth:`to_bytes`.

        Raises:
            CorruptIndexError: the bytes are truncated, damaged or not an index.
            UnsupportedVersionError: written by an incompatible format version.
        """
        return cls._wrap(_CueIndex.from_bytes(_arrays.data(data, "data")))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the index to ``path`` atomically.

        Raises:
            StorageError: the file could not be written.
        """
        self._inner.save(_arrays.path(path))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CueIndex:
        """Reads an index saved by :meth:`save`.

        Raises:
            StorageError: the file could not be read.
            CorruptIndexError: the file is damaged.
        """
        return cls._wrap(_CueIndex.load(_arrays.path(path)))

    def __len__(self) -> int:
        return len(self._inner)

    def __repr__(self) -> str:
        return repr(self._inner)

