"""Threads: the memories of one conversation, session or ticket, in the order written.

A memory written with ``thread=...`` sits in that thread's cue posting list; rows are
numbered in journal order, so the posting list is the thread in write order. Text
recall needs, for a pool of rows, their threads and their live neighbours — kept in
the core (``_core.Threads``, a doubly linked list over rows, which also spreads a
pool's scores along it). :class:`Threads` builds it from the cue index on first use
(a home that never asks builds nothing), then keeps it in step: rows appended as
they are written, unlinked as they are retired, so a neighbour is always the
nearest live memory of the thread. It is a cache of the cue index, never saved.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .. import _core
from ..index import CueIndex

__all__ = ["Threads"]


class Threads:
    """The home's threads, built lazily (see the module docs)."""

    def __init__(self) -> None:
        self._core: _core.Threads | None = None

    def ensure(self, cues: CueIndex) -> _core.Threads:
        """The core's threads, built from the cue index's ``thread`` postings once."""
        if self._core is None:
            self._core = _core.Threads.from_cues(cues._inner, "thread")
        return self._core

    def append(self, names: Sequence[str], rows: npt.NDArray[np.uint32]) -> None:
        """Links new rows (``rows[i]`` in thread ``names[i]``), once built."""
        if self._core is not None and names:
            self._core.append(rows, list(names))

    def remove(self, rows: npt.NDArray[np.uint32]) -> None:
        """Unlinks retired rows, once built."""
        if self._core is not None and len(rows):
            self._core.remove(rows)
