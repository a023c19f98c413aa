"""The recall planner (home/query/recall.py): abstractions lead their sources, stale hits page further."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.home.query.recall import lead_with_abstractions

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


@given(st.data())
def test_each_hit_is_preceded_by_its_abstraction(data: st.DataObject) -> None:
    """Every kept hit's citer comes before it, nothing repeats, at most k are kept, hit order holds."""
    n = data.draw(st.integers(1, 30))
    # a record can only cite earlier rows: a row's citer is a later row, or none
    citers = np.array([data.draw(st.sampled_from([-1, *range(r + 1, n)])) for r in range(n)], dtype=np.int64)
    rows = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    k = data.draw(st.integers(1, 40))
    out = lead_with_abstractions(rows, citers, k)
    assert len(out) == len(set(out)) <= k
    for r in out:
        if r in rows and citers[r] >= 0:
            assert citers[r] in out[: out.index(r)]
    hoisted: set[int] = set()  # abstractions (transitively) of hits move up, even when they are hits too
    for r in rows:
        while citers[r] >= 0:
            r = int(citers[r])
            hoisted.add(r)
    kept = [r for r in out if r in rows and r not in hoisted]
    assert kept == [r for r in rows if r in kept]
    if all(citers[r] < 0 for r in rows):
        assert out == rows[:k]


def test_no_citers_leaves_the_ranking_alone() -> None:
    """Without abstractions the ranking is unchanged."""
    assert lead_with_abstractions([3, 1, 2], np.full(4, -1, dtype=np.int64), 10) == [3, 1, 2]


def test_exclude_stale_pages_past_stale_hits_for_cues_and_text(tmp_path: Path) -> None:
    """With exclude_stale both recall kinds return k fresh hits when stale ones rank first."""
    with Memory.open(tmp_path, fsync="never") as mem:
        stale = [mem.remember(f"acme price note {i}", actors=["acme"], kind="semantic", importance=0.9, confidence=0.5,
                              occurred_at=(NOW - timedelta(days=2000)).date(), now=NOW) for i in range(12)]
        fresh = [mem.remember(f"acme price fresh {i}", actors=["acme"], importance=0.1, now=NOW) for i in range(3)]
        cue = mem.recall({"actor": "acme"}, k=3, now=NOW, exclude_stale=True)
        text = mem.recall({"actor": "acme"}, text="acme price", k=3, now=NOW, exclude_stale=True)
        assert {h.id for h in cue.hits} == set(fresh) and {h.id for h in text.hits} == set(fresh)
        assert not any(h.stale for h in cue.hits) and set(stale).isdisjoint(h.id for h in text.hits)
        assert mem.recall({"actor": "acme"}, k=3, now=NOW).hits[0].id in stale  # without it, the stale lead


def test_a_cue_recall_builds_no_hit_until_one_is_read(tmp_path: Path, monkeypatch: object) -> None:
    """Hits are built on first read, once each, with the ids, scores and breakdowns the core ranked."""
    import cuemem.home.query.recall as planner

    built: list[str] = []

    class Counted(planner.Hit):  # type: ignore[misc]
        __slots__ = ()

        def __init__(self, *args: object) -> None:
            super().__init__(*args)  # type: ignore[arg-type]
            built.append(self.id)

    monkeypatch.setattr(planner, "Hit", Counted)  # type: ignore[attr-defined]
    with Memory.open(tmp_path, fsync="never") as mem:
        ids = [mem.remember(f"acme note {i}", actors=["acme"], importance=i / 10, now=NOW) for i in range(5)]
        result = mem.recall({"actor": "acme"}, k=3, now=NOW)
        assert built == [] and len(result.hits) == 3
        assert result.hits.ids == ids[::-1][:3]  # type: ignore[attr-defined]
        top = result.hits[0]
        assert built == [ids[4]] and result.hits[0] is top
        assert top.score == pytest.approx(sum(top.breakdown.values()), rel=1e-5)
        assert [h.id for h in result.hits] == ids[::-1][:3] and len(built) == 3
