"""Regressions across features: ids shared by the queue and remember, retired records in recall, empty causes."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

from cuemem import Memory
from cuemem.lifecycle.profiles import PROFILES
from cuemem.policy import Polarity, Policy, PolicyBook

T = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)


def test_a_queued_write_and_remember_never_share_an_id(tmp_path: Path) -> None:
    """The same sentence remembered at the same instant as a queued write gets another id; approving keeps both rows."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        (queued,) = mem.observe("I prefer green tea.", now=T)
        direct = mem.remember("I prefer green tea.", now=T)
        assert direct != queued
        assert mem.approve(queued, now=T + timedelta(hours=1)) == queued
        assert sorted(mem.ids()) == sorted([queued, direct])
        mem.rebuild()
        assert sorted(mem.ids()) == sorted([queued, direct]) and mem._indexes.skipped == []


def test_recall_survives_a_retired_abstraction_and_its_sources_are_free_again(tmp_path: Path) -> None:
    """A consolidated record retired for capacity neither breaks recall nor keeps its sources marked as cited."""
    tight = replace(PROFILES["medium"], long_term_capacity=1)
    with Memory.open(tmp_path, fsync="never", profile=tight) as mem:
        mem.remember("the important one", importance=0.9, now=T)
        a = mem.remember("lunch", tier="short", subject="lunch", now=T)
        b = mem.remember("lunch again", tier="short", subject="lunch", now=T + timedelta(hours=1))
        (lt,) = mem.consolidate(now=T + timedelta(hours=2)).promoted
        assert mem.expire(now=T + timedelta(hours=3)).over_capacity == [lt]
        assert sorted(h.id for h in mem.recall({"tier": "short"}, now=T + timedelta(hours=4)).hits) == sorted([a, b])
        rows = [mem._indexes.row_of[i] for i in (a, b)]
        assert all(mem._indexes.citers[r] == -1 for r in rows)
        live_citers = list(mem._indexes.citers)
        mem.rebuild()
        assert list(mem._indexes.citers) == live_citers


def test_text_recall_leaves_retired_records_out(tmp_path: Path) -> None:
    """A short-term record retired by its TTL is gone from text recall too, live and after a rebuild."""
    with Memory.open(tmp_path, fsync="never") as mem:
        gone = mem.remember("zebra crossing repainted", tier="short", now=T)
        kept = mem.remember("zebra at the zoo", now=T)
        later = T + timedelta(days=30)
        assert mem.expire(now=later).expired == [gone]
        assert [h.id for h in mem.recall(text="zebra", now=later).hits] == [kept]
        mem.rebuild()
        assert [h.id for h in mem.recall(text="zebra", now=later).hits] == [kept]


def test_a_policy_without_a_cause_applies_nowhere_however_big_the_book() -> None:
    """Judging never returns a cause-less policy, on the dict path and on the numpy path."""
    empty = Policy("pol-empty", Polarity.MITIGATE, (), "Be careful.", (), (), 1.0, 0.0, None, (), generated=False, subject="care")
    for n in (3, 600):
        book = PolicyBook([empty, *(Policy(f"pol-{i}", Polarity.MITIGATE, (("actor", "acme"),), f"Avoid acme {i}", ("e1", "e2"),
                                              (), 0.5, 0.0, None, ()) for i in range(n))])
        got = {p.id for p in book.judge({"actor": ["acme"]}).policies}
        assert "pol-empty" not in got and len(got) == n


def test_a_deleted_policy_file_is_not_served_from_the_cache_and_retires_cleanly(tmp_path: Path) -> None:
    """A person deletes a policy's note: reopened, the home no longer lists it; distilling again does not crash."""
    with Memory.open(tmp_path) as mem:
        for day in (1, 2, 3):
            mem.remember("acme deal slipped", type="deal", actors=["acme"], outcome="negative", occurred_at=date(2026, 3, day),
                         now=datetime(2026, 3, day, tzinfo=timezone.utc))
        mem.distill_policies(now=T)
        (pid,) = [p.id for p in mem.policies()]
    (tmp_path / "notes" / f"{pid}.md").unlink()
    with Memory.open(tmp_path) as mem:
        assert mem.open_report is not None and mem.policies() == []
        report = mem.distill_policies(min_support=2, now=T + timedelta(days=1))
        assert report.written == [pid] and [p.id for p in mem.policies()] == [pid]
