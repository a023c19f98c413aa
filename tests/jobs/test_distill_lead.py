"""Recall's ordering with abstractions first, and the item view jobs read."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cuemem.jobs import ConsolidationConfig, DistillationConfig, Item
from cuemem.home.recall import lead_with_abstractions
from cuemem.errors import InvalidArgumentError
from cuemem.schema import Episode


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


def test_item_of_an_episode_keeps_what_jobs_need() -> None:
    """An item read from an episode carries its axes in AXES order, dates and flags."""
    e = Episode.create("x", id="e1", recorded_at=datetime(2026, 1, 2, tzinfo=timezone.utc), salience={"urgency": 0.5},
                       importance=0.25, tier="short", kind="preference", subject="s", taint=True)
    it = Item.of(e)
    assert (it.axes[0], it.axes[1], it.peak, it.tier, it.kind, it.subject, it.taint) == (0.25, 0.5, 0.5, "short", "preference", "s", True)


@given(st.dictionaries(st.sampled_from(["min_occurrences", "salience_floor", "min_confidence", "key_chars"]),
                       st.one_of(st.integers(-3, 5), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3), st.none())))
def test_consolidation_config_is_valid_or_refused(values: dict[str, object]) -> None:
    """Whatever a user passes, the config is built valid or refused with a typed error."""
    try:
        c = ConsolidationConfig(**values)  # type: ignore[arg-type]
    except InvalidArgumentError:
        return
    assert c.min_occurrences >= 1 and 0 <= c.salience_floor <= 1 and 0 <= c.min_confidence <= 1


@given(st.dictionaries(st.sampled_from(["floor", "min_age_days", "max_sources", "sample"]),
                       st.one_of(st.integers(-3, 5), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3), st.none())))
def test_distillation_config_is_valid_or_refused(values: dict[str, object]) -> None:
    """Whatever a user passes, the config is built valid or refused with a typed error."""
    try:
        c = DistillationConfig(**values)  # type: ignore[arg-type]
    except InvalidArgumentError:
        return
    assert 0 <= c.floor <= 1 and c.min_age_days >= 0 and c.max_sources >= 1 and c.sample >= 1
