"""Clocks that jump (lifecycle/versions.py, lifecycle/service.py): intervals never invert, decisions follow requests."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.errors import InvalidArgumentError
from cuemem.lifecycle.profiles import PROFILES

T = datetime(2026, 6, 1, tzinfo=timezone.utc)


def test_a_clock_going_back_never_gives_a_version_that_ends_before_it_starts(tmp_path: Path) -> None:
    """A version observed at an earlier now: every interval has valid_to >= valid_from; the later knowledge wins."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (first,) = mem.observe("The billing database is a Postgres cluster.", now=T)
        (second,) = mem.observe("The billing database is a MySQL cluster.", now=T - timedelta(days=10))
        for v in mem.history("billing database"):
            assert v.valid_to is None or v.valid_to >= v.valid_from
        now = mem.as_of("billing database", T + timedelta(days=1))
        assert now is not None and now.episode.id == second


def test_an_approval_cannot_be_decided_before_it_was_requested(tmp_path: Path) -> None:
    """approve or reject with a now before the request is refused; the request stays pending."""
    profile = replace(PROFILES["high"])
    with Memory.open(tmp_path, fsync="never", profile=profile) as mem:
        (queued,) = mem.observe("I prefer window seats.", now=T)
        assert [a.id for a in mem.approvals()] == [queued]
        with pytest.raises(InvalidArgumentError, match="before"):
            mem.approve(queued, now=datetime(1970, 1, 2, tzinfo=timezone.utc))
        with pytest.raises(InvalidArgumentError, match="before"):
            mem.reject(queued, now=T - timedelta(seconds=1))
        assert [a.id for a in mem.approvals()] == [queued]
        assert mem.approve(queued, now=T + timedelta(hours=1)) in mem


def test_one_maintain_far_in_the_future_does_not_stop_maintenance(tmp_path: Path) -> None:
    """After maintain(now=2099), the next maintain at the right time runs every job again."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.maintain(now=datetime(2099, 1, 4, 6, tzinfo=timezone.utc))
        report = mem.maintain(now=T)
        assert [name for name, _ in report.ran] == ["expire", "consolidate", "distill", "policies", "dedupe"]
        assert mem.last_run("consolidate") == T
        assert [name for name, _ in mem.maintain(now=T + timedelta(hours=1)).ran] == []
