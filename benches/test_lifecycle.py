"""The life-cycle's write path: extraction, one observed fact, TTL expiry, stale-aware recall.

Groups: "extract" (a mixed English/Japanese paragraph of seven sentences),
"observe" (one versioned fact per call, fsync never), "expire" (the pure TTL pass over
100k live short-term records, half of them due), "recall stale" (recall with and
without ``exclude_stale`` on a home where stale hits rank first).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory, extract
from cuemem.lifecycle.profiles import PROFILES
from cuemem.home.state import ShortItem
from cuemem.lifecycle.tiers import expire

T0 = datetime(2026, 6, 1, tzinfo=timezone.utc)
PARAGRAPH = (
    "Hi! My favorite editor is vim. Here PR means pull request. The build is red. "
    "Cuemem is a memory engine. 私の好きな色は青です。ありがとう。"
)


@pytest.mark.benchmark(group="extract")
def test_extract_a_paragraph(benchmark: Any) -> None:
    """Seven sentences classified (two dropped)."""
    got = benchmark(extract, PARAGRAPH, now=T0)
    assert len(got) == 5


@pytest.mark.benchmark(group="observe")
def test_observe_one_versioned_fact(benchmark: Any, tmp_path: Path) -> None:
    """Each call supersedes the current version of one of 20 subjects."""
    serial = count()
    with Memory.open(tmp_path, fsync="never") as mem:

        def once() -> list[str]:
            i = next(serial)
            return mem.observe(f"My setting{i % 20} is value{i}.", now=T0 + timedelta(seconds=i))

        benchmark(once)
        for _ in range(20):  # each subject written again (the timed rounds may be one, as with --benchmark-disable)
            once()
        assert len(mem.history("setting0")) > 1


@pytest.mark.benchmark(group="expire")
def test_expire_100k_short_term_records(benchmark: Any) -> None:
    """The pure TTL pass: 100k records, half past the 14-day default."""
    items = [ShortItem(f"ep-{i}", (T0 + timedelta(seconds=i)).isoformat(), "note", "episodic") for i in range(100_000)]
    plan = benchmark(expire, items, {}, now=T0 + timedelta(days=14, seconds=50_000), profile=PROFILES["medium"])
    assert len(plan.short) == 50_001


@pytest.mark.benchmark(group="recall stale")
@pytest.mark.parametrize("exclude_stale", [False, True])
def test_recall_with_stale_hits_first(benchmark: Any, tmp_path: Path, exclude_stale: bool) -> None:
    """k=10 over 2,000 memories whose 100 most salient are stale preferences."""
    with Memory.open(tmp_path, fsync="never") as mem:
        for i in range(100):
            mem.remember(f"old preference {i}", kind="preference", importance=0.9, confidence=0.8, tags=["t"], now=T0)
        for i in range(1_900):
            mem.remember(f"event {i}", importance=0.1, tags=["t"], now=T0)
        later = T0 + timedelta(days=300)
        result = benchmark(mem.recall, {"tag": "t"}, k=10, now=later, exclude_stale=exclude_stale)
        assert len(result.hits) == 10
