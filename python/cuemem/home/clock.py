"""The home's own clock: the latest instant its journal records, and a guard for leaps past it.

Logic takes ``now`` as an argument, so one wrong ``now`` — a test's 2099, a clock
set a century ahead — would make maintenance expire every short-term memory and
schedule the next run decades away. Work that retires or rewrites memories by age
(expiry, consolidation, distillation, maintenance) therefore checks ``now`` against
the home's clock — the latest of the last memory's recording time and the last job
run — and refuses a ``now`` more than :data:`MAX_LEAP` past it with a
:class:`~cuemem.errors.ClockError`, unless the call acknowledges the leap
(``allow_clock_jump=True``: a home left alone for more than a year, or a replay of
old data, is a real case). Once such work has run at ``now``, ``now`` is part of
the clock. Reads are never refused: recalling "as of 2099" changes nothing.

A call that acts on something recorded — an update or a forget of a record, a decision
on a queued write or a proposal — refuses a ``now`` before it (:meth:`Clock.not_before`,
the same :class:`~cuemem.errors.ClockError`): nothing is decided before it existed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Protocol

from ..errors import ClockError

if TYPE_CHECKING:
    from ..schema import Episode
    from .indexes import Indexes


class Recorded(Protocol):
    """What a clock reads of its home (a :class:`~cuemem.home.home.Home`): the indexes, a row's record."""

    @property
    def indexes(self) -> Indexes:
        """The home's indexes as they are now."""
        ...

    def episode(self, row: int) -> Episode:
        """The record at ``row``."""
        ...

__all__ = ["MAX_LEAP", "Clock", "Recorded"]

#: The farthest a destructive call's ``now`` may lie past the home's clock unacknowledged.
MAX_LEAP = timedelta(days=366)


class Clock:
    """The clock of one open home (see the module docs)."""

    def __init__(self, home: Recorded) -> None:
        self._home = home
        self._acknowledged: datetime | None = None

    def latest(self) -> datetime | None:
        """The latest instant the journal records: the last memory's recording (the last
        one forget left: an erased record keeps no time) or the last job run."""
        home = self._home
        seen: list[datetime] = []
        ids, erased = home.indexes.ids, home.indexes.lifecycle.erased
        last = next((row for row in range(len(ids) - 1, -1, -1) if ids[row] not in erased), None)
        if last is not None:
            seen.append(home.episode(last).recorded_at)
        for record in home.indexes.jobs.values():
            try:
                seen.append(_utc(datetime.fromisoformat(str(record["ran_at"]))))
            except (KeyError, ValueError):
                continue  # a record cuemem did not write: no clock of its own
        return max(seen, default=None)

    def check(self, at: datetime, *, allow_jump: bool, what: str) -> None:
        """Refuses ``what`` at ``at`` when ``at`` leaps past the clock unacknowledged.

        Raises:
            ClockError: ``at`` is more than :data:`MAX_LEAP` after :meth:`latest`.
        """
        if allow_jump or (self._acknowledged is not None and at <= self._acknowledged):
            return
        latest = self.latest()
        if latest is not None and _utc(at) - latest > MAX_LEAP:
            days = (_utc(at) - latest).days
            raise ClockError(
                f"{what} at {at.isoformat()} is {days} days after this home's latest record ({latest.isoformat()}); "
                "if that clock is right (a home left alone, old data replayed), pass allow_clock_jump=True"
            )

    @staticmethod
    def not_before(at: datetime, then: datetime, what: str) -> None:
        """Refuses ``what`` at ``at`` when ``at`` is before ``then``, the instant of what it
        acts on (a record's recording, a request, a proposal): no call acts before it.

        Raises:
            ClockError: ``at`` is earlier than ``then``.
        """
        if _utc(at) < _utc(then):
            raise ClockError(f"now ({at.isoformat()}) is before {what} was recorded ({then.isoformat()})")

    @contextmanager
    def acknowledged(self, at: datetime) -> Iterator[None]:
        """Within the block, work at ``at`` (or before) passes :meth:`check`: one acknowledgement for a whole run."""
        before = self._acknowledged
        self._acknowledged = at
        try:
            yield
        finally:
            self._acknowledged = before


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(timezone.utc) if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
