"""A year simulated: a scripted stream of memories over 365 days, maintenance on its schedule."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from cuemem import Memory
from cuemem.schema import Level

START = date(2026, 1, 1)
DAYS = 365


@dataclass
class Year:
    """What the simulation wrote and what the jobs did."""

    home: Path
    urgent: dict[str, date] = field(default_factory=dict)
    important: dict[str, date] = field(default_factory=dict)
    protected: dict[str, date] = field(default_factory=dict)
    repeated: list[str] = field(default_factory=list)
    intense: list[str] = field(default_factory=list)
    noise: list[str] = field(default_factory=list)
    abstracted_on: dict[str, date] = field(default_factory=dict)
    by_repetition: int = 0
    by_intensity: int = 0
    journal_at_midyear: bytes = b""
    end: datetime = datetime(2026, 12, 31, 12, tzinfo=timezone.utc)


def _journal_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))


def simulate(home: Path) -> Year:
    """Writes the scripted stream and runs ``maintain`` every morning at 05:00 UTC."""
    year = Year(home)
    with Memory.open(home, fsync="never") as mem:
        for d in range(DAYS):
            day = START + timedelta(days=d)
            morning = datetime.combine(day, time(5), tzinfo=timezone.utc)
            report = mem.maintain(now=morning)
            for name, job in report.ran:
                if name == "consolidate":
                    year.by_repetition += job.by_repetition
                    year.by_intensity += job.by_intensity
                for rung in getattr(job, "rungs", ()):
                    for source in mem.get(rung).sources:
                        year.abstracted_on.setdefault(source, day)
            at = datetime.combine(day, time(9), tzinfo=timezone.utc)
            eid = mem.remember(f"ops blocker {d}: the build queue is stuck", actors=["ops"], type="incident",
                               salience={"urgency": 0.9}, now=at)
            year.urgent[eid] = day
            if d % 7 == 0:
                eid = mem.remember(f"architecture decision {d}: keep the journal append-only", actors=["kim"],
                                   type="decision", importance=0.6, subject="architecture", now=at)
                year.important[eid] = day
            if d % 30 == 0:
                eid = mem.remember(f"security review {d}: rotate the signing keys", type="review", risk=0.8, now=at)
                year.protected[eid] = day
            if d % 30 == 0:
                for repeat in range(2):
                    year.repeated.append(mem.remember(f"prefers dark mode (said on day {d}, take {repeat})", tier="short",
                                                      kind="preference", subject=f"theme-{d}", now=at + timedelta(hours=repeat)))
            if d % 30 == 15:
                year.intense.append(mem.remember(f"furious about outage {d}", tier="short", salience={"affect": 0.9}, now=at))
            if d % 5 == 2:
                year.noise.append(mem.remember(f"passing remark number {d} about lunch", tier="short", salience={"novelty": 0.2}, now=at))
            if d == DAYS // 2:
                year.journal_at_midyear = _journal_bytes(home)
    return year


@pytest.fixture(scope="module")
def year(tmp_path_factory: pytest.TempPathFactory) -> Year:
    return simulate(tmp_path_factory.mktemp("year"))


def test_nothing_is_deleted_from_the_journal(year: Year) -> None:
    """The mid-year journal is a prefix of the final one, and every written memory is still there."""
    assert _journal_bytes(year.home).startswith(year.journal_at_midyear)
    with Memory.open(year.home, read_only=True) as mem:
        for eid in [*year.urgent, *year.important, *year.protected, *year.repeated, *year.intense, *year.noise]:
            assert eid in mem


def test_protected_memories_never_decay_and_are_never_abstracted(year: Year) -> None:
    """Risk 0.8 memories keep their score all year and no rung cites them."""
    with Memory.open(year.home, read_only=True) as mem:
        table = mem._home.indexes.salience
        for eid, day in year.protected.items():
            assert eid not in year.abstracted_on
            row = mem._home.indexes.row_of[eid]
            then = datetime.combine(day, time(12), tzinfo=timezone.utc)
            assert table.composite([row], now=year.end)[0] == table.composite([row], now=then)[0]


def test_urgency_driven_memories_are_abstracted_within_weeks(year: Year) -> None:
    """Every urgent memory older than five weeks is abstracted, each within four weeks."""
    old = {e: d for e, d in year.urgent.items() if (year.end.date() - d).days > 35}
    assert len(old) > 300
    for eid, day in old.items():
        assert eid in year.abstracted_on, eid
        assert 7 <= (year.abstracted_on[eid] - day).days <= 28


def test_importance_driven_memories_are_kept_for_months(year: Year) -> None:
    """Importance 0.6 memories stay raw for over four months, then are abstracted."""
    waits = [(year.abstracted_on[e] - d).days for e, d in year.important.items() if e in year.abstracted_on]
    assert waits and min(waits) >= 120
    early = [e for e, d in year.important.items() if d < START + timedelta(days=150)]
    assert early and all(e in year.abstracted_on for e in early)
    late = [e for e, d in year.important.items() if (year.end.date() - d).days < 120]
    assert late and not any(e in year.abstracted_on for e in late)


def test_both_consolidation_routes_fire(year: Year) -> None:
    """Repeated subjects and intense single items are promoted; one-off low remarks are not."""
    assert year.by_repetition == len(year.repeated) // 2
    assert year.by_intensity == len(year.intense)
    with Memory.open(year.home, read_only=True) as mem:
        citers = np.frombuffer(mem._home.indexes.citers, dtype=np.int64)
        for eid in year.repeated + year.intense:
            long_term = mem._home.indexes.ids[citers[mem._home.indexes.row_of[eid]]]
            assert mem.get(long_term).tier.value == "long" and eid in mem.get(long_term).sources
        assert all(citers[mem._home.indexes.row_of[e]] < 0 for e in year.noise)


def test_every_rung_cites_its_sources(year: Year) -> None:
    """Each rung is a generated note and a record whose sources exist and lead back to it."""
    with Memory.open(year.home, read_only=True) as mem:
        notes = {n.id: n for n in mem.notes()}
        rungs = [eid for eid in mem.ids() if mem.get(eid).level is not Level.RAW]
        assert len(rungs) > 20
        levels = {mem.get(r).level for r in rungs}
        assert {Level.SUMMARY, Level.PATTERN} <= levels
        citers = np.frombuffer(mem._home.indexes.citers, dtype=np.int64)
        for rid in rungs:
            record, note = mem.get(rid), notes[rid]
            assert note.generated and note.level is record.level and note.sources == record.sources
            assert record.sources and record.origin.value == "job"
            for source in record.sources:
                assert mem._home.indexes.ids[citers[mem._home.indexes.row_of[source]]] == rid
        raw = [e for e in year.abstracted_on if not e.startswith("rung-")]
        summaries = [r for r in rungs if mem.get(r).level is Level.SUMMARY]
        assert len(summaries) < len(raw) // 3


def test_running_twice_gives_identical_output(year: Year, tmp_path: Path) -> None:
    """The same script and the same instants give the same journal and notes, byte for byte."""
    again = simulate(tmp_path / "again")
    assert _journal_bytes(again.home) == _journal_bytes(year.home)
    first = {p.name: p.read_bytes() for p in (year.home / "notes").glob("*.md")}
    second = {p.name: p.read_bytes() for p in (again.home / "notes").glob("*.md")}
    assert first == second and first
    assert again.abstracted_on == year.abstracted_on


def test_a_rebuild_of_the_year_gives_the_same_state(year: Year, tmp_path: Path) -> None:
    """Rebuilding a copy of the year's home from its journal gives the same citing map, notes and job runs."""
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(year.home, copy)
    with Memory.open(copy, fsync="never") as mem:
        before = (list(mem._home.indexes.citers), dict(mem._home.indexes.notes), dict(mem._home.indexes.jobs), mem.ids())
        mem.rebuild()
        assert (list(mem._home.indexes.citers), dict(mem._home.indexes.notes), dict(mem._home.indexes.jobs), mem.ids()) == before
