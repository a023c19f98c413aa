"""Recall against a plain-Python model: random small homes, random cue queries, brute force as the oracle.

For each query the oracle filters the records as written (read back with ``mem.get``)
and ranks them with its own composite: the default weights and half-lives, decay from
``occurred_at`` at 00:00 UTC, protected rows (risk or importance >= 0.7) never
decaying, and the confidence gate ``0.6 + 0.4 * confidence``. ``total`` must equal
the brute-force count and the hits must be the brute-force top k, allowing float ties
at the k-th score.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuemem import AXES, DEFAULT_HALF_LIVES_DAYS, DEFAULT_WEIGHTS, Memory
from cuemem.schema import Episode

UTC = timezone.utc
DAY = 86_400.0
#: Float tolerance between the oracle (float64) and the core (float32 columns).
TOL = 2e-5
#: Examples per property: modest by default, ten times fewer than a thorough profile asks.
EXAMPLES = max(30, settings().max_examples // 10)

ACTORS = ["acme", "globex", "kim", "lee"]
TYPES = ["deal", "bug", "note"]
OUTCOMES = [None, "positive", "negative", "none"]
USERS = ["u-alice", "u-bob"]
SUBJECTS = [None, "renewal", "outage"]
TAGS = ["sales", "ops", "hiring"]
DATES = [date(2025, 12, 30), date(2026, 1, 5), date(2026, 2, 14), date(2026, 2, 15), date(2026, 6, 1)]
NOWS = [datetime(2025, 12, 1, tzinfo=UTC), datetime(2026, 2, 15, 12, tzinfo=UTC), datetime(2026, 3, 1, tzinfo=UTC), datetime(2027, 6, 1, tzinfo=UTC)]
UNITS = st.one_of(st.sampled_from([0.0, 0.2, 0.4, 0.69, 0.7, 0.9, 1.0]), st.floats(0, 1).map(lambda x: round(x, 3)))

#: The values a query may ask for, per dimension (a few that no record carries included).
VOCABULARY: dict[str, list[str]] = {
    "actor": [*ACTORS, "nobody"],
    "user": [*USERS, "u-carol"],
    "type": [*TYPES, "meeting"],
    "outcome": ["positive", "negative", "none", "pending"],
    "time": sorted({b for d in DATES for b in (d.isoformat()[:4], d.isoformat()[:7], d.isoformat())} | {"2024", "2026-03"}),
    "subject": ["renewal", "outage", "pricing"],
    "tag": [*TAGS, "legal"],
    "kind": ["episodic", "semantic"],
    "tier": ["long", "short"],
    "band": ["low", "med", "high"],
}


@st.composite
def episodes(draw: st.DrawFn) -> dict[str, Any]:
    """One random episode as ``remember`` keywords plus ``narrative``."""
    extra = draw(st.dictionaries(st.sampled_from([a for a in AXES if a not in ("importance", "risk")]), UNITS, max_size=3))
    return {
        "narrative": "n",
        "actors": draw(st.lists(st.sampled_from(ACTORS), max_size=3, unique=True)),
        "type": draw(st.sampled_from(TYPES)),
        "outcome": draw(st.sampled_from(OUTCOMES)),
        "user_id": draw(st.sampled_from(USERS)),
        "subject": draw(st.sampled_from(SUBJECTS)),
        "tags": draw(st.lists(st.sampled_from(TAGS), max_size=2, unique=True)),
        "occurred_at": draw(st.sampled_from(DATES)),
        "importance": draw(UNITS),
        "risk": draw(UNITS),
        "confidence": draw(UNITS),
        "salience": extra,
    }


def clauses(min_size: int) -> st.SearchStrategy[dict[str, list[str]]]:
    """1-3 (or 0-1) dimensions, each with a union of 1-2 values."""
    return st.dictionaries(
        st.sampled_from(sorted(VOCABULARY)), st.just(None), min_size=min_size, max_size=3 if min_size else 1
    ).flatmap(
        lambda dims: st.fixed_dictionaries(
            {d: st.lists(st.sampled_from(VOCABULARY[d]), min_size=1, max_size=2, unique=True) for d in dims}
        )
    )


queries = st.fixed_dictionaries(
    {"cues": clauses(1), "exclude": clauses(0), "k": st.integers(1, 8), "now": st.sampled_from(NOWS)}
)


def band(importance: float) -> str:
    """The importance band, by the specification's thresholds."""
    return "high" if importance >= 0.7 else "med" if importance >= 0.4 else "low"


def values(e: Episode) -> dict[str, set[str]]:
    """The cue values of a record, derived here from its fields."""
    day = e.occurred_at.isoformat()
    return {
        "actor": set(e.actors),
        "user": {e.user_id},
        "type": {e.type},
        "outcome": set() if e.outcome is None else {e.outcome.value},
        "time": {day[:4], day[:7], day},
        "subject": set() if e.subject is None else {e.subject},
        "tag": set(e.tags),
        "kind": {e.kind.value},
        "tier": {e.tier.value},
        "band": {band(e.importance)},
    }


def matches(e: Episode, cues: Mapping[str, Sequence[str]], exclude: Mapping[str, Sequence[str]]) -> bool:
    """Every cue dimension shares a value with the record, and no excluded value is carried."""
    v = values(e)
    return all(v[d] & set(want) for d, want in cues.items()) and not any(v[d] & set(out) for d, out in exclude.items())


def composite(e: Episode, now: datetime) -> float:
    """The oracle's decayed, gated composite of a record at ``now``."""
    t = datetime(e.occurred_at.year, e.occurred_at.month, e.occurred_at.day, tzinfo=UTC).timestamp()
    elapsed = max(now.timestamp(), t) - t
    protected = e.risk >= 0.7 or e.importance >= 0.7
    total = 0.0
    for axis in AXES:
        decay = 1.0 if protected else 2.0 ** (-elapsed / (DEFAULT_HALF_LIVES_DAYS[axis] * DAY))
        total += DEFAULT_WEIGHTS[axis] * e.salience[axis] * decay
    return total * (0.6 + 0.4 * e.confidence)


def check_query(mem: Memory, records: dict[str, Episode], q: dict[str, Any]) -> None:
    """``total`` is the brute-force count; the hits are the oracle's top k up to ties."""
    res = mem.recall(q["cues"], k=q["k"], now=q["now"], exclude=q["exclude"] or None)
    matched = {rid: composite(e, q["now"]) for rid, e in records.items() if matches(e, q["cues"], q["exclude"])}
    assert res.total == len(matched)
    hits = [h.id for h in res.hits]
    assert len(hits) == len(set(hits)) == min(q["k"], len(matched))
    assert set(hits) <= set(matched)
    for h in res.hits:
        assert abs(h.score - matched[h.id]) <= TOL, (h.id, h.score, matched[h.id])
    scores = [h.score for h in res.hits]
    assert scores == sorted(scores, reverse=True)
    if hits:
        kth = min(matched[rid] for rid in hits)
        left_out = [rid for rid in matched if rid not in set(hits) and matched[rid] > kth + TOL]
        assert not left_out, f"better than the k-th hit but not returned: {left_out}"


@settings(max_examples=EXAMPLES, suppress_health_check=[HealthCheck.too_slow])
@given(
    home=st.lists(episodes(), min_size=1, max_size=25),
    split=st.integers(0, 25),
    reopen=st.booleans(),
    asked=st.lists(queries, min_size=1, max_size=6),
)
def test_recall_agrees_with_brute_force(home: list[dict[str, Any]], split: int, reopen: bool, asked: list[dict[str, Any]]) -> None:
    """Random homes (imported then remembered), random cue queries: total and top k match the oracle."""
    now = datetime(2026, 6, 15, tzinfo=UTC)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "home"
        mem = Memory.open(path, fsync="never", user="*")
        try:
            ids = mem.import_records(home[:split], now=now).ids
            for item in home[split:]:
                ids.append(mem.remember(item["narrative"], now=now, **{k: v for k, v in item.items() if k != "narrative"}))
            if reopen:
                mem.close()
                mem = Memory.open(path, read_only=True, user="*")
            records = {rid: mem.get(rid) for rid in ids}
            assert len(records) == len(home) == len(mem)
            for q in asked:
                check_query(mem, records, q)
        finally:
            mem.close()
