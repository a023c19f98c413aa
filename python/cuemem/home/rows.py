"""``Rows``: where a home's rows live in its journal — a row's position, the row of a position,
the journal lines as stored, and the digest of the record that wrote an id.

A :class:`~cuemem.home.home.Home` holds one ``Rows`` as ``home.rows``; a forget finds the
lines it erases here, and a derived record cites its sources by their digests.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from .indexes import record_sha

if TYPE_CHECKING:
    from ..store.journal import Journal, Position
    from .indexes import Indexes

__all__ = ["Rows"]


class Placed(Protocol):
    """What ``Rows`` reads of its home (a :class:`~cuemem.home.home.Home`): the journal, the indexes as they are now."""

    @property
    def journal(self) -> Journal:
        """The home's journal."""

    @property
    def indexes(self) -> Indexes:
        """The home's indexes as they are now (a rebuild replaces them)."""


class Rows:
    """A home's rows in its journal; see the module docstring."""

    def __init__(self, home: Placed) -> None:
        self._home = home

    def grep(self, needles: Sequence[bytes | re.Pattern[bytes]]) -> list[tuple[Position, bytes]]:
        """The journal lines holding any of ``needles`` (see :meth:`Journal.grep
        <cuemem.store.journal.Journal.grep>`), in journal order."""
        return self._home.journal.grep(needles)

    def lines(self, positions: Sequence[Position]) -> list[bytes]:
        """The journal lines starting at ``positions``, as stored."""
        return self._home.journal.lines(positions)

    def position(self, row: int) -> Position:
        """Where row ``row``'s record starts in the journal."""
        return self._home.indexes.position(row)

    def rows_at(self, positions: Sequence[Position]) -> list[int | None]:
        """The row whose record starts at each of ``positions`` (None where none does)."""
        indexes = self._home.indexes
        n = len(indexes)
        if not n or not positions:
            return [None] * len(positions)
        segments = np.frombuffer(indexes.segments, dtype=np.uint64)
        offsets = np.frombuffer(indexes.offsets, dtype=np.uint64)
        keys = (segments << np.uint64(40)) | offsets  # rows are in journal order: the keys ascend
        wanted = np.array([(p.segment << 40) | p.offset for p in positions], dtype=np.uint64)
        at = np.minimum(np.searchsorted(keys, wanted), n - 1)
        hit = keys[at] == wanted
        return [int(a) if h else None for a, h in zip(at.tolist(), hit.tolist())]

    def digest(self, id: str) -> str:
        """The digest of the journal record that wrote record ``id`` (which the home holds)."""
        indexes = self._home.indexes
        row = indexes.row_for(id)
        if row is None:
            raise KeyError(id)
        return record_sha(self._home.journal.read_at(indexes.position(row)))
