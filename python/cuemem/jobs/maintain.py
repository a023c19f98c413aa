"""``maintain``: run whichever registered jobs are due, in registry order.

The registry is a tuple of :class:`Job` entries — a name, a schedule and what to run
— so adding a job (say, expiring short-term items) is one entry. Each job's last run
is the ``ran_at`` of its latest ``job`` record in the journal, so the schedule
survives restarts and a rebuild, and ``maintain`` from cron and from an embedded
scheduler agree on what is due.
"""

from __future__ import annotations

import logging

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, time
from typing import TYPE_CHECKING, Any, Protocol

from .. import _scalars
from ..errors import InvalidArgumentError
from ..home.clock import TimeArg, edge_now
from ..home.results import PolicyReport
from ..lifecycle.tiers import ExpiryReport
from ..store import records as rec
from .reports import ConsolidationReport, DedupeReport, DistillationReport, MaintenanceReport, RunReport
from .schedule import Daily, Schedule, Weekly

if TYPE_CHECKING:
    from ..home.home import Home
    from ..home.scope import Reach

__all__ = ["DEFAULT_JOBS", "Job", "Maintained", "due", "last_run", "maintain", "maintenance", "next_due", "registered", "registry"]

_log = logging.getLogger("cuemem.jobs")


@dataclass(frozen=True)
class Job:
    """One maintenance job.

    Attributes:
        name: Its name; also the ``job`` of its journal records.
        schedule: When it is due.
        run: ``run(memory, now)`` does the work on the :class:`~cuemem.Memory` being
            maintained and returns its report. A run that journals no ``job`` record
            named ``name`` itself gets one from :func:`maintain` (its counts when the
            report is a :class:`RunReport`).
    """

    name: str
    schedule: Schedule
    run: Callable[[Any, datetime], Any]


class Maintained(Protocol):
    """What the default jobs run on: the handle's maintenance calls (a :class:`~cuemem.Memory` has them)."""

    def expire(self, *, now: datetime) -> ExpiryReport:
        """Retires what has expired at ``now``."""
        ...

    def consolidate(self, *, now: datetime) -> ConsolidationReport:
        """Promotes what repeated in short-term memory."""
        ...

    def distill(self, *, now: datetime) -> DistillationReport:
        """Summarizes a rung of the ladder."""
        ...

    def distill_policies(self, *, now: datetime) -> PolicyReport:
        """Distils policies from outcomes."""
        ...

    def dedupe(self, *, now: datetime) -> DedupeReport:
        """Proposes merges of near-duplicates."""
        ...


def _consolidate(mem: Maintained, now: datetime) -> Any:
    return mem.consolidate(now=now)


def _distill(mem: Maintained, now: datetime) -> Any:
    return mem.distill(now=now)


def _expire(mem: Maintained, now: datetime) -> RunReport:
    report = mem.expire(now=now)
    counts = {"expired": len(report.expired), "approvals_expired": len(report.approvals_expired), "over_capacity": len(report.over_capacity)}
    return RunReport("expire", now, counts, report)


def _dedupe(mem: Maintained, now: datetime) -> Any:
    return mem.dedupe(now=now)


def _policies(mem: Maintained, now: datetime) -> RunReport:
    report = mem.distill_policies(now=now)
    counts = {"written": len(report.written), "unchanged": len(report.unchanged), "retired": len(report.retired)}
    if report.proposed:
        counts["proposed"] = len(report.proposed)
    return RunReport("policies", now, counts, report)


#: The jobs ``maintain`` runs by default, in this order when several are due: expiry
#: of short-term records and approvals daily at 02:00 UTC, consolidation daily at
#: 03:00, distillation weekly on Sunday at 04:00, the ladder's top rung — policies
#: from outcomes — weekly on Sunday at 05:00, and dedupe (which proposes merges of
#: near-duplicates, never merges: :mod:`cuemem.jobs.dedupe`) daily at 03:30.
DEFAULT_JOBS: tuple[Job, ...] = (
    Job("expire", Daily(time(2, 0)), _expire),
    Job("consolidate", Daily(time(3, 0)), _consolidate),
    Job("distill", Weekly(6, time(4, 0)), _distill),
    Job("policies", Weekly(6, time(5, 0)), _policies),
    Job("dedupe", Daily(time(3, 30)), _dedupe),
)


def last_run(home: Home, name: str) -> datetime | None:
    """When job ``name`` last ran in this home (from the journal), or None."""
    record = home.last_run(name)
    if record is None:
        return None
    return datetime.fromisoformat(str(record["ran_at"]))


def registry(jobs: object) -> tuple[Job, ...]:
    """``jobs`` as a registry: a list or tuple of :class:`Job` entries with distinct names.

    Raises:
        InvalidArgumentError: anything else.
    """
    if not isinstance(jobs, (list, tuple)):
        raise InvalidArgumentError(f"jobs must be a list or tuple of Job entries, got {type(jobs).__name__}")
    if not all(isinstance(j, Job) for j in jobs):
        raise InvalidArgumentError("jobs must be a sequence of Job entries")
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"job names must be unique, got {names}")
    return tuple(jobs)


def registered(jobs: object) -> tuple[Job, ...]:
    """The jobs a call names: ``jobs`` as a :func:`registry`, or :data:`DEFAULT_JOBS` for None."""
    return DEFAULT_JOBS if jobs is None else registry(jobs)


def maintenance(mem: object, home: Home, *, now: TimeArg, jobs: object, allow_clock_jump: object, reach: Reach) -> MaintenanceReport:
    """``Memory.maintain``: :func:`maintain` at ``now`` read at the edge, the leap past the
    home's clock checked once and acknowledged for every job of the run.

    Raises:
        ReadOnlyError: the handle is read-only. ScopeError: a scoped reach (home-wide work).
        InvalidArgumentError: a bad registry. ClockError: an unacknowledged leap; no job runs.
    """
    home.check_writable()
    reach.home_wide("maintain")
    at, chosen = edge_now(now), registered(jobs)
    home.clock.check(at, allow_jump=_scalars.boolean(allow_clock_jump, "allow_clock_jump"), what="maintain")
    with home.clock.acknowledged(at):
        return maintain(mem, home, at, chosen)


def due(home: Home, now: TimeArg, jobs: object) -> datetime:
    """``Memory.next_due``: :func:`next_due` of the jobs a call names, after ``now`` read at the edge.

    Raises:
        InvalidArgumentError: a bad or empty registry.
    """
    chosen = registered(jobs)
    if not chosen:
        raise InvalidArgumentError("next_due needs at least one job")
    return next_due(home, edge_now(now), chosen)


def maintain(mem: object, home: Home, now: datetime, jobs: Sequence[Job] = DEFAULT_JOBS) -> MaintenanceReport:
    """Runs every job of ``jobs`` (a checked registry, :func:`registry`) that is due at
    ``now``, in order, each on ``mem`` (the handle its ``run`` takes); reports what ran.

    Raises:
        InvalidArgumentError: a :class:`RunReport` whose counts are not whole numbers.
    """
    ran: list[tuple[str, Any]] = []
    not_due: list[str] = []
    for job in jobs:
        if job.schedule.due(last_run(home, job.name), now):
            report = job.run(mem, now)
            if last_run(home, job.name) != now:  # the run journaled nothing of itself
                home.commit([rec.job(job.name, now, _counts(job.name, report))])
            ran.append((job.name, report))
            _log.info("%s: job %s ran at %s: %s", home.root, job.name, now.isoformat(), _counts(job.name, report))
        else:
            not_due.append(job.name)
    return MaintenanceReport(ran_at=now, ran=tuple(ran), not_due=tuple(not_due))


def next_due(home: Home, now: datetime, jobs: Sequence[Job] = DEFAULT_JOBS) -> datetime:
    """The earliest instant at or after ``now`` when one of ``jobs`` is due.

    ``jobs`` is a checked, non-empty registry (:func:`registry`).
    """
    return min(j.schedule.next_after(last_run(home, j.name), now) for j in jobs)


def _counts(name: str, report: Any) -> dict[str, int]:
    """A run report's counts as the journal keeps them (names to whole numbers).

    Raises:
        InvalidArgumentError: a :class:`RunReport` whose counts are not names to whole numbers.
    """
    if not isinstance(report, RunReport):
        return {}
    try:
        counts = {str(k): operator.index(v) for k, v in dict(report.counts).items()}
    except (TypeError, ValueError) as exc:
        raise InvalidArgumentError(f"job {name!r} reported counts that are not names to whole numbers: {exc}") from None
    return counts
