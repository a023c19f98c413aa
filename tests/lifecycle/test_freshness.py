"""Freshness: confidence decaying by age and kind, stale marks in recall and leaving stale hits out."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.errors import CueTypeError
from cuemem.lifecycle.freshness import HALF_LIVES_DAYS, freshness
from cuemem.schema import Kind

UTC = timezone.utc
T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAY = timedelta(days=1)


@given(st.floats(0, 1), st.sampled_from(list(Kind)), st.floats(-100, 5_000))
def test_freshness_halves_every_half_life_of_its_kind(confidence: float, kind: Kind, days: float) -> None:
    """Against the closed form: confidence * 0.5 ** (age / half-life); no decay before recording or for episodes."""
    got = freshness(confidence, kind, T0, T0 + timedelta(days=days))
    half = HALF_LIVES_DAYS[kind]
    want = confidence if half is None else confidence * math.pow(2.0, -max(days, 0.0) / half)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12) and 0.0 <= got <= confidence


def test_faster_kinds_go_stale_sooner() -> None:
    """After a year a preference has lost more than a semantic fact; an episode nothing."""
    year = T0 + 365 * DAY
    assert freshness(1.0, Kind.PREFERENCE, T0, year) < freshness(1.0, Kind.SEMANTIC, T0, year) < freshness(1.0, Kind.EPISODIC, T0, year) == 1.0


def test_recall_marks_stale_hits_by_the_profiles_threshold(tmp_path: Path) -> None:
    """A preference (confidence 0.95) turns stale when its freshness passes below 0.75 under medium, 0.85 under high."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (eid,) = mem.observe("My favorite editor is vim.", now=T0)
    # 0.95 * 0.5 ** (d / 180) < 0.75  <=>  d > 180 * log2(0.95 / 0.75)
    edge = 180 * math.log2(0.95 / 0.75)
    for profile, threshold in (("medium", 0.75), ("high", 0.85)):
        with Memory.open(tmp_path, read_only=True, profile=profile) as mem:
            for days in (1.0, edge - 0.01, edge + 0.01, 400.0):
                (hit,) = mem.recall({"subject": "favorite editor"}, now=T0 + timedelta(days=days)).hits
                assert hit.id == eid and hit.stale == (hit.freshness < threshold)
                assert hit.freshness == pytest.approx(0.95 * 0.5 ** (days / 180))
    with Memory.open(tmp_path, read_only=True) as mem:
        assert not mem.recall({"subject": "favorite editor"}, now=T0 + timedelta(days=edge - 0.01)).hits[0].stale
        assert mem.recall({"subject": "favorite editor"}, now=T0 + timedelta(days=edge + 0.01)).hits[0].stale


def test_exclude_stale_leaves_stale_hits_out_and_still_fills_k(tmp_path: Path) -> None:
    """Stale hits ranked first are skipped; recall looks further down to return k fresh ones."""
    with Memory.open(tmp_path, fsync="never") as mem:
        stale = [mem.remember(f"old fact {i}", kind="preference", importance=0.9, confidence=0.8, tags=["t"], now=T0) for i in range(12)]
        fresh = [mem.remember(f"event {i}", importance=0.1, tags=["t"], now=T0) for i in range(3)]
        later = T0 + 200 * DAY
        everything = mem.recall({"tag": "t"}, k=15, now=later)
        assert {h.id for h in everything.hits if h.stale} == set(stale)
        got = mem.recall({"tag": "t"}, k=3, now=later, exclude_stale=True)
        assert [h.id for h in got.hits] == [h.id for h in everything.hits if not h.stale][:3]
        assert set(h.id for h in got.hits) == set(fresh) and not any(h.stale for h in got.hits)
        assert len(mem.recall({"tag": "t"}, k=10, now=later, exclude_stale=True).hits) == 3
        with pytest.raises(CueTypeError):
            mem.recall({"tag": "t"}, now=later, exclude_stale="yes")  # type: ignore[arg-type]


def test_text_recall_marks_and_excludes_stale_hits_too(tmp_path: Path) -> None:
    """A text recall's hits carry freshness; exclude_stale looks past stale ones to fill k."""
    with Memory.open(tmp_path, fsync="never") as mem:
        stale = [mem.remember(f"the deploy checklist, old fact {i}", kind="preference", importance=0.9, confidence=0.8, now=T0)
                 for i in range(6)]
        fresh = [mem.remember(f"the deploy checklist, event {i}", importance=0.1, now=T0) for i in range(2)]
        later = T0 + 200 * DAY
        everything = mem.recall(text="deploy checklist", k=8, now=later)
        assert {h.id for h in everything.hits if h.stale} == set(stale)
        got = mem.recall(text="deploy checklist", k=2, now=later, exclude_stale=True)
        assert {h.id for h in got.hits} == set(fresh) and not any(h.stale for h in got.hits)


def test_a_short_term_record_past_its_ttl_is_stale_before_expire_runs(tmp_path: Path) -> None:
    """Freshness 0 from recorded_at + TTL on; exclude_stale leaves it out."""
    with Memory.open(tmp_path, fsync="never") as mem:
        eid = mem.remember("a latte costs 4 euros", tier="short", type="price", tags=["p"], now=T0)
        (hit,) = mem.recall({"tag": "p"}, now=T0 + timedelta(minutes=30) - timedelta(microseconds=1)).hits
        assert hit.id == eid and not hit.stale and hit.freshness == 1.0
        (hit,) = mem.recall({"tag": "p"}, now=T0 + timedelta(minutes=30)).hits
        assert hit.stale and hit.freshness == 0.0
        assert mem.recall({"tag": "p"}, now=T0 + timedelta(minutes=30), exclude_stale=True).hits == []
