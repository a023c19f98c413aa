"""The memories a view of ``MEMORY.md`` shows (:mod:`.memory_md`), ranked, and kept ranked
from draw to draw.

The rule (:meth:`Ranking.lines`): of the live long-term memories in scope of the kinds a view
draws (:data:`.memory_lines.KINDS`), reviewed and untainted, leave out every superseded
version; rank the rest by worth — composite salience decayed to midnight (UTC) of the latest
day one of them occurred on, never the wall clock — a tie going to the later row, as every
top-k of the core; take the first ``limit``; and give their lines (a rung has none) in the
view's :func:`~.memory_lines.order`.

A :class:`Ranking` keeps a prefix of that ranking, longer than its limit. Rows are only ever
appended to a home, and a row's score at a day depends on the row and on the salience table's
:meth:`score key <cuemem.salience.SalienceTable.score_key>` alone. So while no row the home
holds changed in place but for being retired (:attr:`Home.rows_edited
<cuemem.home.home.Home.rows_edited>`: a rebuild, an erasure, an acceptance), no forget ran (the
one change that may make a superseded version current again) and the day and the score key
stand, the next draw follows what happened since: the candidates among the rows appended are
scored alone and placed if they rank before the prefix's end, and the versions superseded and
the records retired since are taken out of it —
the same lines a draw afresh gives, at a cost that does not grow with the home. Anything else,
or a prefix that superseded versions emptied below the limit, is drawn afresh.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterator
from datetime import datetime, timezone

import numpy as np
import numpy.typing as npt

from ..home.cues import QUARANTINED, TAINTED
from ..home.home import Home
from .memory_lines import KINDS, MemoryLine, order, sort_lines

__all__ = ["Ranking"]

#: How many limits long a ranking is drawn: what superseded versions may take out of it before it is drawn again.
_DRAWN = 2
#: How many limits long a kept ranking may grow before what it holds past :data:`_DRAWN` limits is let go.
_LONGEST = 4
#: The most rows appended, or versions superseded and records retired, a kept ranking follows one
#: by one: past it (an import), the core ranks the scope afresh for less than that Python costs.
_FOLLOWED = 4096

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

#: A line drawer: the line of a row at a worth (a float32 value), or None (not one to show).
LineOf = Callable[[int, float], MemoryLine | None]


class Ranking:
    """The first ``limit`` memories of ``user``'s scope (None: every user) a view shows, kept
    ranked from draw to draw (see the module docstring)."""

    def __init__(self, user: str | None, limit: int) -> None:
        self.limit = limit
        self._cues: dict[str, list[str]] = {"tier": ["long"], "kind": KINDS}
        if user is not None:
            self._cues["user"] = [user]
        self._held = {"trust": [QUARANTINED, TAINTED]}
        self._latest: str | None = None  # the latest day (YYYY-MM-DD) a memory in scope occurred on, when last asked
        #: What the kept ranking holds for (None: nothing kept): see :meth:`_stamp`.
        self._at: tuple[object, ...] | None = None
        self._rows = 0  # the home's rows when it was last brought up to date
        self._superseded = 0  # the home's superseded versions then
        self._retired = 0  # and its retired records
        self._keys: list[tuple[float, int]] = []  # (-worth, -row) of the best current candidates, ascending
        self._worth: dict[int, float] = {}  # row -> worth, of the rows in _keys
        self._complete = False  # whether _keys holds every current candidate
        self._shown: dict[int, MemoryLine | None] = {}  # row -> its line, of the first `limit` rows of _keys
        self._order: list[tuple[float, str]] = []  # order() of those lines, ascending
        self._lines: list[MemoryLine] = []  # those lines, in that order

    def lines(self, home: Home, line_of: LineOf) -> list[MemoryLine]:
        """The lines of the first ``limit`` memories of the ranking, in the view's order
        (``line_of(row, worth)`` draws one: a line of the same row at the same worth is the same)."""
        self._latest = _latest_day(home, self._cues, self._held, self._latest)
        day = _EPOCH if self._latest is None else datetime.fromisoformat(self._latest).replace(tzinfo=timezone.utc)
        at = self._stamp(home, day)
        if at != self._at or not self._follow(home, day, line_of):
            self._draw(home, day, line_of)
            self._at = at
        return list(self._lines)

    @staticmethod
    def _stamp(home: Home, day: datetime) -> tuple[object, ...]:
        """What a kept ranking holds only while it stands (see the module docstring)."""
        return home.rows_edited, len(home.lifecycle.receipts), day, home.salience.score_key(day)

    def _draw(self, home: Home, day: datetime, line_of: LineOf) -> None:
        """Ranks the scope afresh."""
        rows = home.select(self._cues, exclude=self._held)
        ranked, self._complete = _current(home, rows, day, _DRAWN * self.limit)
        self._keys = [(-worth, -row) for row, worth in ranked]
        self._worth = dict(ranked)
        self._rows, self._superseded, self._retired = len(home), len(home.lifecycle.superseded_by), len(home.lifecycle.retired)
        top = ranked[: self.limit]
        self._shown = {row: line_of(row, worth) for row, worth in top}
        lines = [line for line in self._shown.values() if line is not None]
        if any(a[1] == b[1] for a, b in zip(top, top[1:])):  # the ranking broke a tie by row, the view breaks it by pointer
            sort_lines(lines)
        self._lines, self._order = lines, [order(line) for line in lines]

    def _follow(self, home: Home, day: datetime, line_of: LineOf) -> bool:
        """Brings the kept ranking up to the home: the versions superseded and the records
        retired since leave it, the candidates among the rows appended since join it. False
        when it then holds less than ``limit`` memories of a ranking it does not hold whole
        (it is drawn afresh)."""
        lifecycle = home.lifecycle
        superseded, retired = lifecycle.superseded_by, lifecycle.retired
        grown = (len(superseded) - self._superseded, len(retired) - self._retired, len(home) - self._rows)
        if min(grown) < 0 or sum(grown) > _FOLLOWED:
            return False  # (fewer: only a forget takes ids out of either, and it draws afresh)
        # While no forget runs, ids are only added to either: the newest are the last.
        gone = [*_newest(superseded, self._superseded), *_newest(retired, self._retired)]
        self._superseded, self._retired = len(superseded), len(retired)
        if gone:
            for row in home.rows_of(gone).tolist():
                worth = self._worth.pop(row, None)
                if worth is not None:
                    self._take_out(row, worth, line_of)
        rows = len(home)
        if rows > self._rows:
            fresh = range(self._rows, rows)
            self._rows = rows
            joined = [row for row, ok in zip(fresh, home.admits(self._cues, fresh, self._held)) if ok and home.id_at(row) not in superseded]
            if joined:
                top = home.salience.top_k(np.array(joined, dtype=np.uint32), day, len(joined))
                for row, worth in zip(top.rows.tolist(), top.scores.tolist()):
                    self._put(row, worth, line_of)
        return self._complete or len(self._keys) >= self.limit

    def _put(self, row: int, worth: float, line_of: LineOf) -> None:
        """Places a new candidate, unless it ranks past the end of a prefix (a later draw finds it)."""
        keys, key = self._keys, (-worth, -row)
        if not self._complete and (not keys or key > keys[-1]):
            return
        at = bisect.bisect_left(keys, key)
        keys.insert(at, key)
        self._worth[row] = worth
        if at < self.limit:
            self._show(row, worth, line_of)
            if len(keys) > self.limit:
                self._hide(-keys[self.limit][1])
        if len(keys) > _LONGEST * self.limit:
            for _, past in keys[_DRAWN * self.limit :]:
                del self._worth[-past]
            del keys[_DRAWN * self.limit :]
            self._complete = False

    def _take_out(self, row: int, worth: float, line_of: LineOf) -> None:
        """Takes a row out of the kept ranking (a version superseded, a record retired)."""
        keys = self._keys
        at = bisect.bisect_left(keys, (-worth, -row))
        del keys[at]
        if at < self.limit:
            self._hide(row)
            if len(keys) >= self.limit:  # the next one in moves up
                less, before = keys[self.limit - 1]
                self._show(-before, -less, line_of)

    def _show(self, row: int, worth: float, line_of: LineOf) -> None:
        line = self._shown[row] = line_of(row, worth)
        if line is not None:
            at = bisect.bisect_left(self._order, key := order(line))
            self._order.insert(at, key)
            self._lines.insert(at, line)

    def _hide(self, row: int) -> None:
        line = self._shown.pop(row)
        if line is not None:
            at = bisect.bisect_left(self._order, order(line))
            del self._order[at]
            del self._lines[at]


def _newest(ids: dict[str, str], known: int) -> Iterator[str]:
    """The keys of ``ids`` past the first ``known`` (an insertion-ordered dict only added to)."""
    return itertools.islice(reversed(ids), len(ids) - known)


def _current(home: Home, rows: npt.NDArray[np.uint32], day: datetime, limit: int) -> tuple[list[tuple[int, float]], bool]:
    """The ``limit`` best of ``rows`` at ``day`` that are no superseded version, best first,
    with their worth; and whether that is every one of them.

    The ranking is one total order, so a longer top is a longer prefix of it: the top is
    asked again, twice as long, only while superseded versions crowd it — never are all
    of a home's superseded versions looked up at a draw.
    """
    if not len(rows):
        return [], True
    superseded, id_at = home.lifecycle.superseded_by, home.id_at
    want = min(len(rows), limit)
    while True:
        top = home.salience.top_k(rows, day, want)
        best = [(row, worth) for row, worth in zip(top.rows.tolist(), top.scores.tolist()) if id_at(row) not in superseded]
        if len(best) >= limit or want == len(rows):
            return best[:limit], want == len(rows) and len(best) <= limit
        want = min(len(rows), 2 * want)


def _latest_day(home: Home, cues: dict[str, list[str]], held: dict[str, list[str]], since: str | None) -> str | None:
    """The latest day (a ``YYYY-MM-DD`` time bucket) a memory matching ``cues`` occurred on, or
    None. ``since``, a day such a memory occurred on when last asked: the buckets from it on are
    looked at first, then, if none of them holds such a memory any more, every bucket."""
    if since is not None and (day := _latest_of(home, cues, held, home.values("time", since))) is not None:
        return day
    return _latest_of(home, cues, held, home.values("time"))


def _latest_of(home: Home, cues: dict[str, list[str]], held: dict[str, list[str]], buckets: list[str]) -> str | None:
    """The latest of the day ``buckets`` (sorted: a day's ``YYYY-MM-DD`` in the order of days)
    holding a memory matching ``cues``, or None."""
    for day in reversed(buckets):
        if len(day) == 10 and home.count({**cues, "time": [day]}, exclude=held):
            return day
    return None
