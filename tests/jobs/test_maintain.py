"""Schedules, ``maintain`` and its registry of jobs, and the in-process scheduler."""

from __future__ import annotations

import threading
from datetime import datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.errors import CueTypeError, InvalidArgumentError, ReadOnlyError
from cuemem.jobs import DEFAULT_JOBS, Daily, Job, Scheduler, Weekly

UTC = timezone.utc


def at(day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(2026, 6, day, hour, minute, tzinfo=UTC)  # 2026-06-07 is a Sunday


def test_daily_is_due_from_its_hour_on() -> None:
    """Run at 03:00 on the 1st: not due at 02:59:59 on the 2nd, due at 03:00 exactly."""
    d = Daily(time(3))
    last = at(1, 3)
    assert not d.due(last, at(2, 3) - timedelta(seconds=1))
    assert d.due(last, at(2, 3))
    assert d.due(None, at(1, 0))
    assert d.next_after(last, at(1, 12)) == at(2, 3)


def test_a_late_run_is_not_run_again_the_same_day() -> None:
    """Run late at 23:00: due again at the next 03:00, not before."""
    d = Daily(time(3))
    assert not d.due(at(1, 23), at(2, 2, 59))
    assert d.due(at(1, 23), at(2, 3))


def test_weekly_is_due_on_its_weekday() -> None:
    """Sunday 04:00: a run on Monday is due again the next Sunday at 04:00 exactly."""
    w = Weekly(6, time(4))
    assert at(7).weekday() == 6
    assert not w.due(at(1, 12), at(7, 3, 59))
    assert w.due(at(1, 12), at(7, 4))
    assert not w.due(at(7, 4), at(14, 3, 59))
    assert w.next_after(at(7, 4), at(8)) == at(14, 4)


@given(st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)))
def test_latest_is_a_scheduled_instant_within_one_period(now: datetime) -> None:
    """The latest instant is at or before now, less than a period before, on the schedule."""
    for s in (Daily(time(3)), Weekly(2, time(4, 30))):
        latest = s.latest(now)
        assert latest <= now < latest + s.period
        assert latest.time() == s.at
    assert Weekly(2, time(4, 30)).latest(now).weekday() == 2


def test_schedules_refuse_bad_input() -> None:
    """A bad weekday, an aware time of day or a naive now is a typed error."""
    with pytest.raises(InvalidArgumentError):
        Weekly(7)
    with pytest.raises(InvalidArgumentError):
        Daily(time(3, tzinfo=UTC))
    with pytest.raises(CueTypeError):
        Daily().due(None, datetime(2026, 1, 1))


def test_maintain_runs_what_is_due_and_remembers_it(tmp_path: Path) -> None:
    """The first call runs every job; the next day only the daily ones; last runs survive a reopen."""
    with Memory.open(tmp_path, fsync="never") as mem:
        first = mem.maintain(now=at(3, 5))   # a Wednesday
        assert [name for name, _ in first.ran] == ["expire", "consolidate", "distill", "policies", "dedupe"]
        second = mem.maintain(now=at(4, 5))
        assert [name for name, _ in second.ran] == ["expire", "consolidate", "dedupe"] and second.not_due == ("distill", "policies")
        assert mem.maintain(now=at(4, 6)).ran == ()
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.last_run("consolidate") == at(4, 5) and mem.last_run("distill") == at(3, 5)
        assert mem.next_due(now=at(4, 6)) == at(5, 2)
        # Sunday 04:00: distillation is due, the policies (05:00) not yet.
        assert [name for name, _ in mem.maintain(now=at(7, 4)).ran] == ["expire", "consolidate", "distill", "dedupe"]


def test_maintain_promotes_and_distills_through_the_jobs(tmp_path: Path) -> None:
    """What maintain runs writes what the jobs write."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("furious about the outage", tier="short", salience={"affect": 0.9}, now=at(1, 9))
        report = mem.maintain(now=at(2, 5))
        ran = dict(report.ran)
        assert list(ran) == ["expire", "consolidate", "distill", "policies", "dedupe"] and len(ran["consolidate"].promoted) == 1


def test_a_registry_entry_adds_a_job(tmp_path: Path) -> None:
    """A custom job runs on its schedule; maintain journals its run, which is its last run."""
    calls: list[datetime] = []

    def audit(mem: Memory, now: datetime) -> str:
        calls.append(now)
        return "audited nothing"

    jobs = (*DEFAULT_JOBS, Job("audit", Daily(time(2)), audit))
    with Memory.open(tmp_path, fsync="never") as mem:
        report = mem.maintain(now=at(3, 5), jobs=jobs)
        assert report.ran[-1] == ("audit", "audited nothing")
        mem.maintain(now=at(3, 6), jobs=jobs)
        assert calls == [at(3, 5)]
        mem.rebuild()
        assert mem.last_run("audit") == at(3, 5) and mem.last_run("never") is None


def test_maintain_refuses_bad_registries(tmp_path: Path) -> None:
    """Non-jobs or duplicate names are refused; a read-only handle cannot maintain."""
    with Memory.open(tmp_path, fsync="never") as mem:
        with pytest.raises(InvalidArgumentError):
            mem.maintain(now=at(1), jobs=["consolidate"])  # type: ignore[list-item]
        with pytest.raises(InvalidArgumentError):
            mem.maintain(now=at(1), jobs=(DEFAULT_JOBS[0], DEFAULT_JOBS[0]))
        with pytest.raises(InvalidArgumentError):
            mem.maintain(now=at(1), jobs=5)  # type: ignore[arg-type]
        assert mem._home.indexes.jobs == {}
        with Memory.open(tmp_path, read_only=True) as reader, pytest.raises(ReadOnlyError):
            reader.maintain(now=at(1))


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def test_scheduler_tick_runs_due_jobs_at_the_clocks_time(tmp_path: Path) -> None:
    """tick() maintains at the clock's now and reports; seconds_until_due counts to the next job."""
    clock = FakeClock(at(3, 5))
    reports: list[Any] = []
    with Memory.open(tmp_path, fsync="never") as mem:
        scheduler = Scheduler(mem, clock=clock, on_report=reports.append)
        assert len(scheduler.tick().ran) == 5
        assert scheduler.tick().ran == () and len(reports) == 1
        assert scheduler.seconds_until_due() == pytest.approx(21 * 3600)
        clock.now = at(4, 3)
        assert [n for n, _ in scheduler.tick().ran] == ["expire", "consolidate"]


def test_scheduler_thread_runs_and_stops(tmp_path: Path) -> None:
    """The background thread runs the due jobs once and stops on request."""
    done = threading.Event()
    with Memory.open(tmp_path, fsync="never") as mem:
        with Scheduler(mem, clock=FakeClock(at(3, 5)), max_sleep=0.01, on_report=lambda r: done.set()) as scheduler:
            assert done.wait(10)
        assert scheduler._thread is not None and not scheduler._thread.is_alive()
        assert mem.last_run("distill") == at(3, 5)


def test_scheduler_reports_errors_and_keeps_going(tmp_path: Path) -> None:
    """A job that raises is reported to on_error; the thread survives."""
    errors: list[BaseException] = []
    seen = threading.Event()

    def broken(mem: Memory, now: datetime) -> None:
        raise RuntimeError("boom")

    def record(exc: BaseException) -> None:
        errors.append(exc)
        seen.set()

    with Memory.open(tmp_path, fsync="never") as mem:
        with Scheduler(mem, jobs=(Job("broken", Daily(), broken),), clock=FakeClock(at(3)), max_sleep=0.01, on_error=record) as s:
            assert seen.wait(10)
            assert s._thread is not None and s._thread.is_alive()
        assert isinstance(errors[0], RuntimeError)
    with pytest.raises(InvalidArgumentError):
        Scheduler(mem, max_sleep=0)


def test_a_scheduler_without_an_error_handler_logs_failures(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A failing job is counted and logged on cuemem.jobs; the thread keeps running."""
    import logging
    import time as _time

    def boom(mem: Memory, now: datetime) -> str:
        raise InvalidArgumentError("this job always fails")

    jobs = (Job("boom", Daily(time(0)), boom),)
    with Memory.open(tmp_path, fsync="never") as mem, caplog.at_level(logging.WARNING, logger="cuemem.jobs"):
        scheduler = Scheduler(mem, jobs=jobs, clock=lambda: at(3, 5), max_sleep=0.01).start()
        deadline = _time.monotonic() + 5
        while scheduler.errors < 2 and _time.monotonic() < deadline:
            _time.sleep(0.01)
        scheduler.stop()
    assert scheduler.errors >= 2 and any("maintenance job failed" in r.getMessage() for r in caplog.records)
