"""``maintain``: run whichever registered jobs are due, in registry order.

The registry is a tuple of :class:`Job` entries — a name, a schedule and what to run
— so adding a job (say, expiring short-term items) is one entry. Each job's last run
is the ``ran_at`` of its latest ``job`` record in the journal, so the schedule
survives restarts and a rebuild, and ``maintain`` from cron and from an embedded
scheduler agree on what is due.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, time
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError
from .reports import MaintenanceReport
from .schedule import Daily, Schedule, Weekly

if TYPE_CHECKING:
    from ..memory import Memory

__all__ = ["DEFAULT_JOBS", "Job", "last_run", "maintain"]


@dataclass(frozen=True)
class Job:
    """One maintenance job.

    Attributes:
        name: Its name; also the ``job`` of its journal records.
        schedule: When it is due.
        run: ``run(memory, now)`` does the work, journals a ``job`` record named
            ``name``, and returns its report.
    """

    name: str
    schedule: Schedule
    run: Callable[[Memory, datetime], Any]


def _consolidate(mem: Memory, now: datetime) -> Any:
    return mem.consolidate(now=now)


def _distill(mem: Memory, now: datetime) -> Any:
    return mem.distill(now=now)


#: The jobs ``maintain`` runs by default: consolidation daily at 03:00 UTC, then
#: distillation weekly on Sunday at 04:00 UTC.
DEFAULT_JOBS: tuple[Job, ...] = (
    Job("consolidate", Daily(time(3, 0)), _consolidate),
    Job("distill", Weekly(6, time(4, 0)), _distill),
)


def last_run(mem: Memory, name: str) -> datetime | None:
    """When job ``name`` last ran in this home (from the journal), or None."""
    record = mem._indexes.jobs.get(name)
    if record is None:
        return None
    return datetime.fromisoformat(str(record["ran_at"]))


def maintain(mem: Memory, now: datetime, jobs: Sequence[Job] = DEFAULT_JOBS) -> MaintenanceReport:
    """Runs every job of ``jobs`` that is due at ``now``, in order; reports what ran.

    Raises:
        InvalidArgumentError: ``jobs`` holds something other than a :class:`Job`, or
            two jobs share a name.
    """
    if not all(isinstance(j, Job) for j in jobs):
        raise InvalidArgumentError("jobs must be a sequence of Job entries")
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"job names must be unique, got {names}")
    ran: list[tuple[str, Any]] = []
    not_due: list[str] = []
    for job in jobs:
        if job.schedule.due(last_run(mem, job.name), now):
            ran.append((job.name, job.run(mem, now)))
        else:
            not_due.append(job.name)
    return MaintenanceReport(ran_at=now, ran=tuple(ran), not_due=tuple(not_due))


def next_due(mem: Memory, now: datetime, jobs: Sequence[Job] = DEFAULT_JOBS) -> datetime:
    """The earliest instant at or after ``now`` when one of ``jobs`` is due."""
    return min(j.schedule.next_after(last_run(mem, j.name), now) for j in jobs)
