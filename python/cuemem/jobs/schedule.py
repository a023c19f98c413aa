"""When jobs are due: calendar schedules in UTC, as pure functions of the last run and ``now``.

A job is due when it has never run, or when a scheduled instant has passed since its
last run: the daily consolidation at 03:00 that ran yesterday at 03:00 is due again
from 03:00 today, however late ``maintain`` is called. Missed instants do not pile
up; one run catches up.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone

from .. import _scalars
from ..errors import CueTypeError, InvalidArgumentError
from ..schema.fields import utc_offset

__all__ = ["Daily", "Schedule", "Weekly"]


def _aware(moment: object, name: str) -> datetime:
    if not isinstance(moment, datetime) or utc_offset(moment, name) is None:
        raise CueTypeError(f"{name} must be an aware datetime, got {moment!r}")
    return moment.astimezone(timezone.utc)


class Schedule(ABC):
    """A calendar rule: the instants a job is due at. Subclasses say which instants."""

    @abstractmethod
    def latest(self, now: datetime) -> datetime:
        """The latest scheduled instant at or before ``now`` (UTC)."""

    def due(self, last: datetime | None, now: datetime) -> bool:
        """Whether a job last run at ``last`` (None: never) is due at ``now``.

        A last run after ``now`` (a clock set far ahead once) makes the job due, so one
        wrong ``now`` never stops maintenance; the next run records the right time.

        Raises:
            CueTypeError: ``now`` or ``last`` is not an aware datetime.
        """
        at = _aware(now, "now")
        if last is None:
            return True
        ran = _aware(last, "last")
        if ran > at:
            return True  # a run recorded after now: one clock was wrong; it must not stop the schedule
        return ran < self.latest(at)

    def next_after(self, last: datetime | None, now: datetime) -> datetime:
        """When a job last run at ``last`` is next due, as seen at ``now`` (``now`` if due)."""
        at = _aware(now, "now")
        if self.due(last, at):
            return at
        return self.latest(at) + self.period

    @property
    @abstractmethod
    def period(self) -> timedelta:
        """The time between two scheduled instants."""


@dataclass(frozen=True)
class Daily(Schedule):
    """Every day at ``at`` (UTC).

    Example:
        >>> from datetime import datetime, timezone
        >>> d = Daily(time(3, 0))
        >>> d.due(datetime(2026, 6, 1, 3, tzinfo=timezone.utc), datetime(2026, 6, 2, 2, 59, tzinfo=timezone.utc))
        False
        >>> d.due(datetime(2026, 6, 1, 3, tzinfo=timezone.utc), datetime(2026, 6, 2, 3, tzinfo=timezone.utc))
        True
    """

    at: time = time(3, 0)

    def __post_init__(self) -> None:
        if not isinstance(self.at, time) or self.at.tzinfo is not None:
            raise InvalidArgumentError(f"at must be a naive time of day (UTC), got {self.at!r}")

    def latest(self, now: datetime) -> datetime:
        at = _aware(now, "now")
        today = datetime.combine(at.date(), self.at, tzinfo=timezone.utc)
        return today if today <= at else today - timedelta(days=1)

    @property
    def period(self) -> timedelta:
        return timedelta(days=1)


@dataclass(frozen=True)
class Weekly(Schedule):
    """Every week on ``weekday`` (0 Monday … 6 Sunday) at ``at`` (UTC)."""

    weekday: int = 6
    at: time = time(4, 0)

    def __post_init__(self) -> None:
        weekday = _scalars.as_int(self.weekday)
        if weekday is None or not 0 <= weekday <= 6:
            raise InvalidArgumentError(f"weekday must be 0 (Monday) to 6 (Sunday), got {self.weekday!r}")
        object.__setattr__(self, "weekday", weekday)
        if not isinstance(self.at, time) or self.at.tzinfo is not None:
            raise InvalidArgumentError(f"at must be a naive time of day (UTC), got {self.at!r}")

    def latest(self, now: datetime) -> datetime:
        at = _aware(now, "now")
        back = (at.weekday() - self.weekday) % 7
        moment = datetime.combine(at.date() - timedelta(days=back), self.at, tzinfo=timezone.utc)
        return moment if moment <= at else moment - timedelta(days=7)

    @property
    def period(self) -> timedelta:
        return timedelta(days=7)
