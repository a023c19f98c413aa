"""An in-process scheduler for embedded agents: a thread that calls ``maintain`` when due.

Agents that never see cron start one next to their :class:`~cuemem.Memory`::

    with Memory.open(home) as mem, Scheduler(mem):
        ...   # the agent runs; jobs run on their schedule in the background

The thread sleeps until the next job is due (re-checking at least every
``max_sleep`` seconds, so a changed clock is noticed), then runs ``maintain`` at the
clock's time. Calls into the memory are serialized with the agent's through a lock
the agent can share (``scheduler.lock``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Protocol

from .. import _scalars
from ..errors import InvalidArgumentError
from .maintain import DEFAULT_JOBS, Job
from .reports import MaintenanceReport

_log = logging.getLogger("cuemem.jobs")

__all__ = ["Maintainer", "Scheduler"]


class Maintainer(Protocol):
    """What a scheduler calls on the memory it maintains (a :class:`~cuemem.Memory`)."""

    def maintain(self, *, now: datetime, jobs: Sequence[Job]) -> MaintenanceReport:
        """Runs the jobs of ``jobs`` due at ``now``."""
        ...

    def next_due(self, *, now: datetime, jobs: Sequence[Job]) -> datetime:
        """The earliest instant at or after ``now`` when one of ``jobs`` is due."""
        ...


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class Scheduler:
    """Runs due jobs of one memory in a background thread.

    Args:
        memory: The (writable) memory to maintain.
        jobs: The registry (default: consolidation daily, distillation weekly).
        clock: Returns the current aware datetime (default: the UTC wall clock); the
            clock is read here only, and its value is passed to the jobs as ``now``.
        max_sleep: Longest wait between two checks, in seconds.
        on_report: Called with each :class:`MaintenanceReport` that ran something.
        on_error: Called with an exception a job raised (the thread keeps running);
            without it the failure is logged on the ``cuemem.jobs`` logger (warning).

    Raises:
        InvalidArgumentError: ``max_sleep`` is not a positive number.
    """

    def __init__(
        self,
        memory: Maintainer,
        *,
        jobs: Sequence[Job] = DEFAULT_JOBS,
        clock: Callable[[], datetime] = _utc_now,
        max_sleep: float = 60.0,
        on_report: Callable[[MaintenanceReport], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
    ) -> None:
        seconds = _scalars.as_real(max_sleep)
        if seconds is None or not 0 < seconds < float("inf"):
            raise InvalidArgumentError(f"max_sleep must be a positive number of seconds, got {max_sleep!r}")
        self.memory = memory
        self.jobs = tuple(jobs)
        self.clock = clock
        self.max_sleep = seconds
        self.on_report = on_report
        self.on_error = on_error
        #: Held while a job runs; hold it to keep the memory to yourself.
        self.lock = threading.Lock()
        self._stop = threading.Event()
        #: Failed ticks so far (each reported to ``on_error``, or logged when there is none).
        self.errors = 0
        self._thread: threading.Thread | None = None

    def tick(self) -> MaintenanceReport:
        """Runs whatever is due now (by the clock), under :attr:`lock`."""
        with self.lock:
            report = self.memory.maintain(now=self.clock(), jobs=self.jobs)
        if report.ran and self.on_report is not None:
            self.on_report(report)
        return report

    def seconds_until_due(self) -> float:
        """Seconds from the clock's now until the next job is due (0 when one is)."""
        now = self.clock()
        with self.lock:
            due = self.memory.next_due(now=now, jobs=self.jobs)
        return max(0.0, (due - now).total_seconds())

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.tick()
                wait = self.seconds_until_due()
            except Exception as exc:  # a failing job must not kill the agent's scheduler
                self.errors += 1
                if self.on_error is not None:
                    self.on_error(exc)
                else:
                    _log.warning("cuemem: a maintenance job failed; retrying in %.0f s", self.max_sleep, exc_info=exc)
                wait = self.max_sleep
            self._stop.wait(min(max(wait, 0.001), self.max_sleep))

    def start(self) -> Scheduler:
        """Starts the thread (a daemon); returns self."""
        if self._thread is None or not self._thread.is_alive():
            self._stop.clear()
            self._thread = threading.Thread(target=self._loop, name="cuemem-maintain", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float | None = None) -> None:
        """Asks the thread to stop and waits for it (up to ``timeout`` seconds)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __enter__(self) -> Scheduler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
