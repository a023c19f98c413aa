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
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Protocol

from .. import _scalars
from ..errors import ClockError, CueTypeError, InvalidArgumentError
from ..schema.fields import parse_instant, to_datetime, utc_offset

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

__all__ = ["EARLIEST_NOW", "LATEST_NOW", "MAX_LEAP", "Clock", "Recorded", "TimeArg", "edge_now"]

_UTC = timezone.utc

#: The farthest a destructive call's ``now`` may lie past the home's clock unacknowledged.
MAX_LEAP = timedelta(days=366)

#: A time argument (``now`` and the like): a datetime, a date or a string in one of
#: :data:`~cuemem.schema.fields.INSTANT_FORMATS` (the CLI's ``--now`` takes the same).
TimeArg = datetime | date | str | None

#: The instants a ``now`` may name: far enough from ``datetime``'s limits that every
#: job's arithmetic (ages, TTLs, windows) stays in range.
EARLIEST_NOW = datetime(1900, 1, 1, tzinfo=timezone.utc)
LATEST_NOW = datetime(9000, 1, 1, tzinfo=timezone.utc)


def edge_now(now: TimeArg) -> datetime:
    """``now`` as an aware datetime; the wall clock is read here, at the API edge, only.

    Raises:
        CueTypeError: not a datetime, a date or a string.
        SchemaError: a string that is not one of ``INSTANT_FORMATS``, or a datetime whose
            time zone gives no valid offset (names ``now``).
        InvalidArgumentError: before 1900 or from the year 9000 on.
    """
    if now is None:
        return datetime.now(timezone.utc)
    if isinstance(now, datetime) and (now.tzinfo is _UTC or utc_offset(now, "now") is not None):
        at = now  # kept in its own zone: "yesterday" is that zone's yesterday (UTC, the usual one, asks nothing)
    elif isinstance(now, str):
        at = parse_instant(now, "now")  # the one reading of a written time; an offset kept
    elif isinstance(now, date):
        at = to_datetime(now, "now")  # naive: UTC; a date: its midnight UTC
    else:
        raise CueTypeError(f"now must be a datetime, a date or an ISO date string, got {type(now).__name__}")
    try:
        inside = EARLIEST_NOW <= at < LATEST_NOW
    except OverflowError:  # an offset that moves it past datetime's range
        inside = False
    if not inside:
        raise InvalidArgumentError(f"now must lie between {EARLIEST_NOW.date()} and {LATEST_NOW.date()}, got {now!r}")
    return at


def edge_now_or_none(now: TimeArg) -> datetime | None:
    """:func:`edge_now` of a ``now`` that is optional in its own right (None: no instant, not the clock)."""
    return None if now is None else edge_now(now)


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

    def edge(self, now: TimeArg, allow_jump: object, what: str) -> datetime:
        """``now`` read at the edge (:func:`edge_now`), then checked (:meth:`check`): the instant of
        work that retires or rewrites memories by age.

        Raises:
            CueTypeError, SchemaError, InvalidArgumentError: as :func:`edge_now`; ``allow_jump`` not a bool.
            ClockError: as :meth:`check`.
        """
        at = edge_now(now)
        self.check(at, allow_jump=_scalars.boolean(allow_jump, "allow_clock_jump"), what=what)
        return at

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
