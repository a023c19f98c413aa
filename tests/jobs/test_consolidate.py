"""Consolidation: the pure function and its run through a home."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.errors import CueTypeError, InvalidArgumentError, ReadOnlyError
from cuemem.jobs import ConsolidationConfig, Item, consolidate, group_key
from cuemem.jobs.consolidate import promotion_id
from cuemem.lifecycle.profiles import PROFILES
from cuemem.salience import AXES

NOW = datetime(2026, 6, 10, 3, tzinfo=timezone.utc)
T = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)


def item(id: str, text: str = "prefers dark mode", *, subject: str | None = None, user: str = "u", conf: float = 1.0,
         peak: float = 0.1, axis: str = "novelty", days_ago: float = 1.0, tier: str = "short", kind: str = "preference",
         taint: bool = False, actors: tuple[str, ...] = ()) -> Item:
    axes = [0.0] * 7
    axes[AXES.index(axis)] = peak
    recorded = NOW - timedelta(days=days_ago)
    return Item(id, text, user, "note", None, actors, subject, (), kind, tier, "raw", tuple(axes), conf,
                recorded.date(), recorded, taint)


def test_repetition_promotes_a_group_of_two() -> None:
    """Two items on one subject are merged into one long-term record citing both."""
    a = item("a", "prefers dark mode", subject="theme", conf=0.5, peak=0.2, days_ago=2)
    b = item("b", "prefers dark mode in the editor", subject="theme", conf=0.9, peak=0.3, axis="affect")
    (p,) = consolidate([b, a], NOW)
    assert p.routes == ("repetition",)
    assert p.sources == ("a", "b")
    assert p.narrative == "prefers dark mode\nprefers dark mode in the editor"
    assert p.salience["novelty"] == 0.2 and p.salience["affect"] == 0.3
    assert p.confidence == pytest.approx(0.7)
    assert p.subject == "theme" and p.key == ("u", "subject:theme")
    assert p.id == promotion_id(["b", "a"])


def test_intensity_promotes_a_single_item_at_the_floor() -> None:
    """One item whose strongest axis reaches 0.8 is promoted alone; 0.79 is not."""
    assert [p.routes for p in consolidate([item("a", peak=0.8, axis="urgency")], NOW)] == [("intensity",)]
    assert consolidate([item("a", peak=0.79, axis="urgency")], NOW) == []


def test_both_routes_are_reported_together() -> None:
    """A repeated group with an intense member names both routes."""
    (p,) = consolidate([item("a", peak=0.9), item("b")], NOW)
    assert p.routes == ("repetition", "intensity")


def test_without_subject_items_group_by_their_first_60_characters() -> None:
    """Case and spacing do not split a group; a difference after 60 characters does not either."""
    head = "x" * 60
    a, b = item("a", head + " one"), item("b", head.upper() + "  two")
    assert group_key(a) == group_key(b)
    assert len(consolidate([a, b], NOW)) == 1
    assert consolidate([item("a", "alpha"), item("b", "beta")], NOW) == []


def test_groups_never_mix_users() -> None:
    """The same subject of two users gives no repetition."""
    assert consolidate([item("a", subject="s", user="u1"), item("b", subject="s", user="u2")], NOW) == []


def test_low_confidence_items_take_no_part() -> None:
    """A member below min_confidence neither counts as a repetition nor joins the sources."""
    assert consolidate([item("a", subject="s"), item("b", subject="s", conf=0.39)], NOW) == []
    (p,) = consolidate([item("a", subject="s"), item("b", subject="s", conf=0.4)], NOW)
    assert p.sources == ("a", "b")


def test_ttl_expiry_at_the_exact_boundary() -> None:
    """An item recorded exactly its TTL before now has expired; a microsecond later it is live."""
    expired = item("a", peak=0.9, days_ago=14, kind="semantic")  # the default TTL of a semantic item: 14 days
    assert consolidate([expired], NOW) == []
    live = expired._replace(recorded_at=expired.recorded_at + timedelta(microseconds=1))
    assert len(consolidate([live], NOW)) == 1


def test_the_default_ttl_is_the_profiles() -> None:
    """Without a hook, a preference lives 7 days and a price 30 minutes, as the medium profile says."""
    week = item("a", peak=0.9, days_ago=7)
    assert consolidate([week], NOW) == [] and len(consolidate([week._replace(recorded_at=week.recorded_at + timedelta(microseconds=1))], NOW)) == 1
    price = item("p", peak=0.9, days_ago=0, kind="semantic")._replace(type="price", recorded_at=NOW - timedelta(minutes=30))
    assert consolidate([price], NOW) == []


def test_the_ttl_hook_decides_per_kind() -> None:
    """A hook that keeps preferences forever lets an old preference be promoted."""
    old = item("a", peak=0.9, days_ago=400)
    config = ConsolidationConfig(ttl=lambda type, kind: None if kind == "preference" else timedelta(days=14))
    assert len(consolidate([old], NOW, config)) == 1
    assert consolidate([old._replace(kind="episodic")], NOW, config) == []


def test_other_tiers_and_future_items_are_ignored() -> None:
    """Long-term items and items recorded after now are not consolidated."""
    assert consolidate([item("a", peak=0.9, tier="long"), item("b", peak=0.9, days_ago=-1)], NOW) == []


def test_taint_and_actors_are_carried() -> None:
    """A tainted member taints the record; actors are the union, first seen first."""
    (p,) = consolidate([item("a", subject="s", actors=("kim",)), item("b", subject="s", taint=True, actors=("ana", "kim"))], NOW)
    assert p.taint and p.actors == ("kim", "ana")


def test_config_defaults_and_validation() -> None:
    """The defaults are the documented ones; thresholds outside their domain are refused."""
    c = ConsolidationConfig()
    assert (c.min_occurrences, c.salience_floor, c.min_confidence, c.key_chars) == (2, 0.8, 0.4, 60)
    for bad in ({"min_occurrences": 0}, {"salience_floor": 1.5}, {"min_confidence": -0.1}, {"min_occurrences": True}, {"ttl": 3}):
        with pytest.raises(InvalidArgumentError):
            ConsolidationConfig(**bad)  # type: ignore[arg-type]


def test_bad_input_is_refused() -> None:
    """A naive now or a non-item is a typed error."""
    with pytest.raises(CueTypeError):
        consolidate([item("a")], datetime(2026, 1, 1))
    with pytest.raises(CueTypeError):
        consolidate(["a"], NOW)  # type: ignore[list-item]


items_strategy = st.lists(
    st.builds(
        item,
        st.text(alphabet="abcdefgh", min_size=1, max_size=6),
        st.sampled_from(["x", "x y", "X", "long text " * 10]),
        subject=st.sampled_from([None, "s", "t"]),
        user=st.sampled_from(["u", "v"]),
        conf=st.floats(0, 1),
        peak=st.floats(0, 1),
        days_ago=st.floats(-2, 20),
    ),
    max_size=30,
    unique_by=lambda it: it.id,
)


@given(items_strategy)
def test_promotions_partition_the_eligible_items(items: list[Item]) -> None:
    """Every source is an eligible item of the group's key, each item in at most one promotion,
    and the result does not depend on the order of the input."""
    plan = consolidate(items, NOW)
    seen: list[str] = []
    by_id = {it.id: it for it in items}
    for p in plan:
        assert p.sources and len(p.sources) >= 2 or max(by_id[s].peak for s in p.sources) >= 0.8
        for s in p.sources:
            assert group_key(by_id[s]) == p.key and by_id[s].confidence >= 0.4
        seen.extend(p.sources)
    assert len(seen) == len(set(seen))
    assert consolidate(list(reversed(items)), NOW) == plan


#: Every type and kind lives 14 days (the profile gives preferences 7).
_FORTNIGHT = ConsolidationConfig(ttl=lambda type, kind: timedelta(days=14))


def _short(mem: Memory, text: str, day: int, **kw: object) -> str:
    at = datetime(2026, 6, day, 9, tzinfo=timezone.utc)
    return mem.remember(text, tier="short", kind="preference", now=at, **kw)  # type: ignore[arg-type]


def test_memory_consolidate_writes_long_term_records(tmp_path: Path) -> None:
    """The run writes one long-term record per promotion, journals itself, and does not repeat."""
    with Memory.open(tmp_path, fsync="never") as mem:
        a = _short(mem, "prefers tea", 1, subject="drink")
        b = _short(mem, "prefers green tea", 2, subject="drink")
        c = _short(mem, "furious about the outage", 3, salience={"affect": 0.95})
        d = _short(mem, "mentioned the weather", 3)
        report = mem.consolidate(now=NOW, config=_FORTNIGHT)  # every kind lives 14 days
        assert (report.considered, report.sources, report.by_repetition, report.by_intensity) == (4, 3, 1, 1)
        records = [mem.get(i) for i in report.promoted]
        assert {r.sources for r in records} == {(a, b), (c,)}
        assert all(r.tier.value == "long" and r.origin.value == "job" and "generated" in r.tags for r in records)
        merged = next(r for r in records if r.subject == "drink")
        assert merged.narrative == "prefers tea\nprefers green tea" and merged.kind.value == "preference"
        assert merged.occurred_at == date(2026, 6, 2)
        again = mem.consolidate(now=NOW + timedelta(days=1), config=_FORTNIGHT)
        assert again.promoted == () and again.considered == 1
        assert d in mem and mem.get(a).tier.value == "short"
    with Memory.open(tmp_path) as mem:
        assert mem._home.indexes.jobs["consolidate"]["ran_at"] == (NOW + timedelta(days=1)).isoformat()
        citers = list(mem._home.indexes.citers)
        mem.rebuild()
        assert list(mem._home.indexes.citers) == citers


def test_memory_consolidate_follows_the_profile_ttl_of_each_kind(tmp_path: Path) -> None:
    """Without a config, the handle's profile sets the TTLs: week-old preferences have expired, notes have not."""
    with Memory.open(tmp_path, fsync="never") as mem:  # medium: preferences 7 days, the rest 14
        for day in (1, 2):
            _short(mem, "prefers tea", day, subject="drink")
            mem.remember("standup moved to 10:00", tier="short", subject="standup", now=datetime(2026, 6, day, 9, tzinfo=timezone.utc))
        report = mem.consolidate(now=NOW)
        assert report.by_repetition == 1 and [mem.get(i).subject for i in report.promoted] == ["standup"]


def test_recall_shows_the_consolidated_record_first(tmp_path: Path) -> None:
    """Recalling a short-term item puts the long-term record built on it right before it."""
    with Memory.open(tmp_path, fsync="never") as mem:
        a = _short(mem, "prefers tea", 1, subject="drink", salience={"urgency": 0.5})
        b = _short(mem, "prefers green tea", 2, subject="drink")
        (lt,) = mem.consolidate(now=NOW, config=_FORTNIGHT).promoted
        hits = [h.id for h in mem.recall({"tier": "short"}, now=NOW, k=5).hits]
        assert hits == [lt, a, b]
        assert [h.id for h in mem.recall({"tier": "short"}, now=NOW, k=1).hits] == [lt]


def test_memory_consolidate_refuses_bad_input(tmp_path: Path) -> None:
    """A wrong config type or a read-only handle is refused and nothing is written."""
    with Memory.open(tmp_path, fsync="never") as mem:
        _short(mem, "prefers tea", 1, salience={"affect": 0.9})
        before = len(mem)
        with pytest.raises(InvalidArgumentError):
            mem.consolidate(now=NOW, config="strict")  # type: ignore[arg-type]
        with pytest.raises(CueTypeError):
            mem.consolidate(now=20260610)  # type: ignore[arg-type]
        assert len(mem) == before and "consolidate" not in mem._home.indexes.jobs
        with Memory.open(tmp_path, read_only=True) as reader, pytest.raises(ReadOnlyError):
            reader.consolidate(now=NOW)


def test_citers_of_a_fresh_home_are_empty(tmp_path: Path) -> None:
    """Nothing cites anything before a job runs."""
    with Memory.open(tmp_path, fsync="never") as mem:
        _short(mem, "x", 1)
        assert np.all(np.frombuffer(mem._home.indexes.citers, dtype=np.int64) < 0)


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
        rows = [mem._home.indexes.row_of[i] for i in (a, b)]
        assert all(mem._home.indexes.citers[r] == -1 for r in rows)
        live_citers = list(mem._home.indexes.citers)
        mem.rebuild()
        assert list(mem._home.indexes.citers) == live_citers
