"""Threads: the memories of one conversation, session or ticket, in the order written.

A memory written with ``thread=...`` sits in that thread's cue posting list; rows are
numbered in journal order, so the posting list is the thread in write order. Text
recall needs two things of it for a few rows at a time — which thread a row is in,
and its live neighbours before and after — so :class:`Threads` keeps them as a
doubly linked list over rows, built from the cue index on first use (a home that
never asks builds nothing), extended as rows are appended and unlinked as rows are
retired, so a neighbour is always the nearest live memory of the thread.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from ..index import CueIndex

__all__ = ["NONE", "Threads"]

#: Neighbour or thread of a row that has none.
NONE = -1


class Threads:
    """Thread and live neighbours of each row (see the module docs)."""

    def __init__(self) -> None:
        self._built = False
        #: Thread name -> code.
        self._codes: dict[str, int] = {}
        self._thread = array("i")  # row -> thread code or NONE
        self._prev = array("q")
        self._next = array("q")
        self._last: dict[int, int] = {}  # thread code -> its last live row

    def ensure(self, cues: CueIndex, rows: int) -> None:
        """Builds the lists from the cue index's ``thread`` postings, once."""
        if self._built:
            return
        self._built = True
        names = cues._inner.values("thread")
        if not names:
            return
        self._grow(rows)
        for name in names:
            code = self._code(name)
            members = cues._inner.posting("thread", name).to_array()
            prev = NONE
            for row in members:
                self._thread[row] = code
                self._prev[row] = prev
                if prev != NONE:
                    self._next[prev] = row
                prev = row
            if prev != NONE:
                self._last[code] = prev

    def append(self, start: int, count: int, names: Sequence[str], rows: Sequence[int]) -> None:
        """Links ``count`` rows appended at ``start``; ``names[i]`` is the thread of ``rows[i]``."""
        if not self._built:
            return
        if not names and not len(self._thread):
            return  # still no thread anywhere: nothing to keep
        self._grow(start + count)
        for name, row in zip(names, rows):
            code = self._code(name)
            last = self._last.get(code, NONE)
            self._thread[row] = code
            self._prev[row] = last
            if last != NONE:
                self._next[last] = row
            self._last[code] = row

    def remove(self, rows: Sequence[int]) -> None:
        """Unlinks retired rows: their neighbours become each other's."""
        if not self._built or not len(self._thread):
            return
        for row in rows:
            code = self._thread[row]
            if code == NONE:
                continue
            p, n = self._prev[row], self._next[row]
            if p != NONE:
                self._next[p] = n
            if n != NONE:
                self._prev[n] = p
            elif self._last.get(code) == row:
                if p != NONE:
                    self._last[code] = p
                else:
                    del self._last[code]
            self._thread[row] = NONE
            self._prev[row] = self._next[row] = NONE

    @property
    def any(self) -> bool:
        """Whether any live row belongs to a thread (after :meth:`ensure`)."""
        return bool(self._last)

    def thread(self, row: int) -> int:
        """The thread code of ``row``, or :data:`NONE`."""
        return self._thread[row] if row < len(self._thread) else NONE

    def neighbours(self, row: int) -> tuple[int, int]:
        """The live rows just before and after ``row`` in its thread (:data:`NONE` if none)."""
        if row >= len(self._thread):
            return NONE, NONE
        return self._prev[row], self._next[row]

    def _code(self, name: str) -> int:
        code = self._codes.get(name)
        if code is None:
            code = self._codes[name] = len(self._codes)
        return code

    def _grow(self, rows: int) -> None:
        missing = rows - len(self._thread)
        if missing > 0:
            self._thread.extend(array("i", [NONE]) * missing)
            self._prev.extend(array("q", [NONE]) * missing)
            self._next.extend(array("q", [NONE]) * missing)
