"""The home's clock (home/clock.py): destructive work at a ``now`` far past it must be acknowledged."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuemem import ClockError, CueTypeError, Memory
from cuemem.cli import main

T0 = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)
FAR = datetime(2099, 1, 1, tzinfo=timezone.utc)


def _home(path: Path) -> Memory:
    mem = Memory.open(path, fsync="never")
    mem.remember("the cache is warm", tier="short", now=T0)
    mem.remember("we ship on Fridays", now=T0)
    return mem


def test_a_leap_of_decades_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    """expire, consolidate, distill and maintain at 2099 raise ClockError; the journal and every recall are unchanged."""
    with _home(tmp_path) as mem:
        journal = sorted((tmp_path / "journal").glob("*.jsonl"))[-1]
        before = journal.read_bytes()
        for call in (mem.expire, mem.consolidate, mem.distill, mem.maintain):
            with pytest.raises(ClockError, match="allow_clock_jump"):
                call(now=FAR)
        assert journal.read_bytes() == before
        assert mem.recall({"tier": "short"}, now=T0).total == 1 and mem.last_run("expire") is None


def test_an_acknowledged_leap_runs_and_moves_the_clock(tmp_path: Path) -> None:
    """With allow_clock_jump the run happens; a later run near it needs no acknowledgement."""
    with _home(tmp_path) as mem:
        report = mem.maintain(now=T0 + timedelta(days=800), allow_clock_jump=True)
        assert "expire" in [name for name, _ in report.ran]
        assert mem.recall({"tier": "short"}, now=T0).total == 0
        mem.maintain(now=T0 + timedelta(days=801))  # the run journaled itself: the clock moved


def test_a_year_of_ordinary_use_needs_no_acknowledgement(tmp_path: Path) -> None:
    """A now within a year of the last record, and any now before it, pass."""
    with _home(tmp_path) as mem:
        mem.expire(now=T0 + timedelta(days=365))
        mem.expire(now=T0 - timedelta(days=30))
        with pytest.raises(CueTypeError):
            mem.expire(now=T0, allow_clock_jump="yes")  # type: ignore[arg-type]


def test_the_cli_refuses_and_accepts_with_the_flag(tmp_path: Path) -> None:
    """``cuemem maintain --now 2099-01-01`` fails naming the flag; with ``--allow-clock-jump`` it runs."""
    _home(tmp_path).close()
    refused = CliRunner().invoke(main, ["maintain", "--home", str(tmp_path), "--now", "2099-01-01"])
    assert refused.exit_code == 1 and "allow-clock-jump" in refused.output.replace("_", "-")
    ran = CliRunner().invoke(main, ["maintain", "--home", str(tmp_path), "--now", "2099-01-01", "--allow-clock-jump"])
    assert ran.exit_code == 0, ran.output


def test_the_clock_reads_past_a_last_memory_that_was_erased(tmp_path: Path) -> None:
    """Forgetting the home's latest record (a consolidated one) leaves consolidate and
    maintain running, now and after a reopen: the clock is the latest record forget left."""
    with Memory.open(tmp_path, fsync="never") as mem:
        for _ in range(3):
            mem.remember("Acme renewal call went well", tier="short", subject="acme-renewal", now=T0)
        promoted = mem.consolidate(now=T0 + timedelta(days=3)).promoted
        assert len(promoted) == 1
        mem.forget(promoted[0], now=T0 + timedelta(days=4))
        assert mem.consolidate(now=T0 + timedelta(days=5)).promoted == ()
        mem.maintain(now=T0 + timedelta(days=6))
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.maintain(now=T0 + timedelta(days=7))
        assert mem.last_run("consolidate") == T0 + timedelta(days=7)


def test_update_and_forget_refuse_a_now_before_the_record_and_change_nothing(tmp_path: Path) -> None:
    """A 1970 now against a 2026 record: update and forget (dry run too) are a ClockError; the record stays as it was."""
    past = datetime(1970, 1, 2, tzinfo=timezone.utc)
    with _home(tmp_path) as mem:
        (eid,) = [i for i in mem.ids() if mem.get(i).narrative == "we ship on Fridays"]
        for call in (lambda: mem.update(eid, "we ship on Mondays", now=past), lambda: mem.forget(eid, now=past),
                     lambda: mem.forget(eid, dry_run=True, now=T0 - timedelta(seconds=1))):
            with pytest.raises(ClockError, match="before"):
                call()
        assert mem.get(eid).narrative == "we ship on Fridays" and len(mem) == 2
        assert mem.update(eid, "we ship on Mondays", now=T0) in mem
