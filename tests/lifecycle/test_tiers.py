"""Tiers: working memory per turn, TTL expiry at exact boundaries, per-kind TTLs, capacity, the profile table."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.errors import CueTypeError, InvalidArgumentError, ReadOnlyError
from cuemem.lifecycle.profiles import PROFILES, Profile, profile
from cuemem.home.state import ShortItem
from cuemem.lifecycle.tiers import beyond_capacity, expire, expires_at

import numpy as np

UTC = timezone.utc
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
TICK = timedelta(microseconds=1)
MEDIUM = PROFILES["medium"]


def item(type: str = "note", kind: str = "episodic", at: datetime = T0, id: str = "ep-1") -> ShortItem:
    return ShortItem(id, at.isoformat(), type, kind)


@pytest.mark.parametrize(
    ("type", "kind", "ttl"),
    [("note", "episodic", timedelta(days=14)), ("price", "semantic", timedelta(minutes=30)), ("note", "preference", timedelta(days=7))],
)
def test_ttl_expiry_is_exact_at_the_boundary(type: str, kind: str, ttl: timedelta) -> None:
    """Live one microsecond before recorded_at + ttl, expired at it and after."""
    it = item(type, kind)
    assert expires_at(it, MEDIUM) == T0 + ttl
    assert expire([it], {}, now=T0 + ttl - TICK, profile=MEDIUM).short == []
    assert expire([it], {}, now=T0 + ttl, profile=MEDIUM).short == ["ep-1"]
    assert expire([it], {}, now=T0 + 10 * ttl, profile=MEDIUM).short == ["ep-1"]


def test_immutable_attributes_never_expire() -> None:
    """Type ``attribute`` has no TTL."""
    assert expires_at(item("attribute"), MEDIUM) is None
    assert expire([item("attribute")], {}, now=T0 + timedelta(days=10_000), profile=MEDIUM).short == []


def test_the_default_ttl_follows_the_profile() -> None:
    """30 days low, 14 medium, 7 high."""
    assert [PROFILES[p].ttl("note", "episodic") for p in ("low", "medium", "high")] == [timedelta(days=d) for d in (30, 14, 7)]


def test_approvals_expire_at_their_instant() -> None:
    """An approval is live before expires_at and lapsed at it."""
    pending = {"ep-a": {"expires_at": (T0 + timedelta(days=7)).isoformat()}}
    assert expire([], pending, now=T0 + timedelta(days=7) - TICK, profile=MEDIUM).approvals == []
    assert expire([], pending, now=T0 + timedelta(days=7), profile=MEDIUM).approvals == ["ep-a"]


def test_memory_expire_retires_short_term_records_and_journals_it(tmp_path: Path) -> None:
    """Short-term records leave recall at their TTL; the journal keeps them; a rebuild agrees."""
    with Memory.open(tmp_path, fsync="never") as mem:
        note = mem.remember("the cache is warm", tier="short", now=T0)
        price = mem.remember("a latte costs 4 euros", tier="short", type="price", now=T0)
        attr = mem.remember("Kim was born in Osaka", tier="short", type="attribute", now=T0)
        long = mem.remember("we ship on Fridays", now=T0)
        r = mem.expire(now=T0 + timedelta(minutes=30) - TICK)
        assert (r.expired, r.changed) == ([], 0)
        assert mem.expire(now=T0 + timedelta(minutes=30)).expired == [price]
        assert mem.expire(now=T0 + timedelta(days=14) - TICK).expired == []
        assert mem.expire(now=T0 + timedelta(days=14)).expired == [note]
        assert mem.expire(now=T0 + timedelta(days=400), allow_clock_jump=True).expired == []  # a year past the home's clock
        live = {h.id for h in mem.recall({"user": "default"}, k=10, now=T0).hits}
        assert live == {attr, long} and mem.get(price).narrative == "a latte costs 4 euros"
        before = mem._home.indexes.lifecycle.to_json()
        mem.rebuild()
        assert mem._home.indexes.lifecycle.to_json() == before
        assert {h.id for h in mem.recall({"user": "default"}, k=10, now=T0).hits} == live
    ops = [json.loads(line) for seg in sorted((tmp_path / "journal").glob("*.jsonl")) for line in seg.read_text().splitlines()]
    assert [(o["ids"], o["reason"]) for o in ops if o["op"] == "retire"] == [([price], "ttl"), ([note], "ttl")]


def test_short_term_ttl_is_the_profiles(tmp_path: Path) -> None:
    """Under the high profile a short-term note expires after 7 days."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        eid = mem.remember("the cache is warm", tier="short", now=T0)
        assert mem.expire(now=T0 + timedelta(days=7) - TICK).expired == []
        assert mem.expire(now=T0 + timedelta(days=7)).expired == [eid]


def test_working_memory_lasts_one_turn(tmp_path: Path) -> None:
    """Utterances are held per turn, never journaled, and gone at end_turn."""
    with Memory.open(tmp_path, fsync="never") as mem:
        ids = mem.observe("The build is red. The deploy is blocked.", now=T0)
        assert ids == ["wm-1", "wm-2"] and [w.text for w in mem.working()] == ["The build is red.", "The deploy is blocked."]
        assert len(mem) == 0
        assert mem.end_turn() == 2 and mem.working() == [] and mem.end_turn() == 0
    with Memory.open(tmp_path) as mem:
        assert mem.working() == [] and len(mem) == 0


def test_a_sentence_repeated_in_a_turn_is_promoted_to_short_term(tmp_path: Path) -> None:
    """The second time the same utterance is held it is written short-term, once."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (held,) = mem.observe("The build is red.", now=T0, session="s1")
        (promoted,) = mem.observe("the build is  red", now=T0 + timedelta(minutes=1), session="s1")
        assert held.startswith("wm-") and promoted in mem
        record = mem.get(promoted)
        assert (record.tier.value, record.tags) == ("short", ("session:s1",))
        assert mem.observe("The build is red.", now=T0 + timedelta(minutes=2), session="s1") == [held]
        assert mem.working()[0].count == 3


def test_disambiguations_are_short_term_and_scoped_to_the_session(tmp_path: Path) -> None:
    """A disambiguation is a short-term record tagged with its session."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (eid,) = mem.observe("Here PR means pull request.", now=T0, session="chat-9")
        record = mem.get(eid)
        assert (record.tier.value, record.subject, record.tags) == ("short", "PR", ("session:chat-9",))
        assert [h.id for h in mem.recall({"tag": "session:chat-9"}, now=T0).hits] == [eid]


def test_the_long_term_capacity_retires_the_least_salient(tmp_path: Path) -> None:
    """Beyond the per-user capacity, the least salient long-term records retire at expire."""
    with Memory.open(tmp_path, fsync="never", profile=replace(MEDIUM, long_term_capacity=2)) as mem:
        low = mem.remember("minor", importance=0.1, now=T0)
        mem.remember("major", importance=0.9, now=T0)
        mem.remember("middle", importance=0.5, now=T0)
        other = mem.remember("someone else's", importance=0.0, user_id="bob", now=T0)
        report = mem.expire(now=T0)
        assert report.over_capacity == [low] and other in {h.id for h in mem.recall({"user": "bob"}, now=T0).hits}
        assert mem.expire(now=T0).over_capacity == []


def test_beyond_capacity_orders_by_salience_then_row() -> None:
    """The least salient go first; ties go to the older row."""
    rows = np.array([7, 3, 5, 9], dtype=np.uint32)
    scores = np.array([0.2, 0.5, 0.2, 0.9], dtype=np.float32)
    assert beyond_capacity(rows, scores, 1) == [5, 7, 3] and beyond_capacity(rows, scores, 4) == []


def test_expire_needs_a_writable_handle(tmp_path: Path) -> None:
    """A read-only handle may not expire."""
    Memory.open(tmp_path).close()
    with Memory.open(tmp_path, read_only=True) as mem, pytest.raises(ReadOnlyError):
        mem.expire(now=T0)


def test_the_profile_table_is_documented_and_ordered() -> None:
    """Low < medium < high in trust, approvals and stale thresholds (0.70-0.85)."""
    low, med, high = (PROFILES[p] for p in ("low", "medium", "high"))
    assert low.long_term_trust < med.long_term_trust < high.long_term_trust
    assert (low.approval, med.approval, high.approval) == (False, False, True)
    assert (low.stale_below, med.stale_below, high.stale_below) == (0.7, 0.75, 0.85)
    assert (med.min_occurrences, med.salience_floor, med.min_confidence, med.distill_floor) == (2, 0.8, 0.4, 0.35)
    assert all(p.max_live_versions == 5 for p in (low, med, high))
    import cuemem.lifecycle.profiles as module

    assert module.__doc__ is not None and "stale below freshness" in module.__doc__


@pytest.mark.parametrize(
    "change",
    [dict(long_term_trust=1.5), dict(short_ttl=timedelta(0)), dict(max_live_versions=0), dict(stale_below=float("nan")),
     dict(kind_ttls={"price": timedelta(seconds=-1)}), dict(long_term_capacity=True)],
)
def test_bad_profiles_are_refused(change: dict[str, object]) -> None:
    """Out-of-range thresholds and TTLs raise InvalidArgumentError."""
    with pytest.raises(InvalidArgumentError):
        replace(MEDIUM, **change)  # type: ignore[arg-type]


def test_profiles_by_name_and_bad_names(tmp_path: Path) -> None:
    """A name or a Profile; an unknown name or type is refused before anything is created."""
    assert profile("high") is PROFILES["high"] and isinstance(profile(MEDIUM), Profile)
    with pytest.raises(InvalidArgumentError):
        Memory.open(tmp_path / "h", profile="extreme")
    with pytest.raises(CueTypeError):
        Memory.open(tmp_path / "h", profile=3)  # type: ignore[arg-type]
    assert not (tmp_path / "h").exists()
    with Memory.open(tmp_path / "h", profile="high") as mem:
        assert mem.profile is PROFILES["high"]


def test_keep_promotes_a_working_item_to_short_term(tmp_path: Path) -> None:
    """keep(wm-id) writes the held sentence short-term; an unknown id is NotFoundError."""
    from cuemem.errors import NotFoundError

    with Memory.open(tmp_path, fsync="never") as mem:
        (held,) = mem.observe("The build is red.", now=T0, session="s2")
        eid = mem.keep(held, now=T0 + timedelta(minutes=5))
        record = mem.get(eid)
        assert (record.narrative, record.tier.value, record.tags, record.recorded_at) == (
            "The build is red.", "short", ("session:s2",), T0 + timedelta(minutes=5))
        mem.end_turn()
        with pytest.raises(NotFoundError):
            mem.keep(held, now=T0)
