"""The demo's synthetic year: determinism, order, value ranges, vocabulary and storylines."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import statistics
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem.lab.demo import DEMO_NOW, generate_year, now_after
from cuemem.lab.demo import phrases
from cuemem.lab.demo.year import SALIENCE_AXES, USER_IDS
from cuemem.errors import CueTypeError, InvalidArgumentError
from cuemem.memory import Memory
from cuemem.timecues import resolve_time_cue

N = 3_000
KEYS = {
    "id",
    "user_id",
    "type",
    "narrative",
    "outcome",
    "actors",
    "occurred_at",
    "importance",
    "risk",
    "salience",
    "confidence",
    "subject",
    "tags",
}
SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
CAST = set(phrases.PEOPLE) | set(phrases.COMPANIES)


@pytest.fixture(scope="module")
def year() -> list[dict[str, Any]]:
    """A few thousand episodes of the default year and seed."""
    return list(generate_year(episodes=N))


def check_episode(e: dict[str, Any], users: int) -> None:
    """Asserts one episode has the documented keys, types and ranges."""
    assert set(e) == KEYS
    assert e["user_id"] in USER_IDS[:users]
    assert e["type"] in phrases.TYPES
    assert isinstance(e["narrative"], str) and e["narrative"].strip() and "{" not in e["narrative"]
    assert (e["outcome"] is None) == (e["type"] == "note")
    assert e["outcome"] in (None, "positive", "negative", "pending")
    assert isinstance(e["actors"], list) and 1 <= len(e["actors"]) <= 3
    assert len(set(e["actors"])) == len(e["actors"])
    assert all(a in CAST and a in e["narrative"] for a in e["actors"])
    assert isinstance(e["occurred_at"], str) and date.fromisoformat(e["occurred_at"]).isoformat() == e["occurred_at"]
    for value in (e["importance"], e["risk"], e["confidence"], *e["salience"].values()):
        assert isinstance(value, float) and 0.0 <= value <= 1.0
    assert e["confidence"] >= 0.4
    assert tuple(e["salience"]) == SALIENCE_AXES
    assert isinstance(e["subject"], str) and SLUG.fullmatch(e["subject"])
    assert isinstance(e["tags"], list) and len(e["tags"]) <= 3 and len(set(e["tags"])) == len(e["tags"])
    assert set(e["tags"]) <= set(phrases.TAGS)


def test_same_seed_same_episodes() -> None:
    """The same seed gives identical dicts; another seed gives other ones."""
    first = list(generate_year(episodes=500, seed=11))
    assert first == list(generate_year(episodes=500, seed=11))
    assert first != list(generate_year(episodes=500, seed=12))


def _digest_in_subprocess(hash_seed: str) -> str:
    code = (
        "import hashlib, json; from cuemem.lab.demo import generate_year; "
        "print(hashlib.sha256(json.dumps(list(generate_year(episodes=300, seed=5))).encode()).hexdigest())"
    )
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def test_same_seed_same_episodes_across_processes() -> None:
    """String hashing differs between processes, yet the same seed gives the same episodes."""
    here = hashlib.sha256(json.dumps(list(generate_year(episodes=300, seed=5))).encode()).hexdigest()
    assert _digest_in_subprocess("1") == _digest_in_subprocess("2") == here


def test_every_episode_is_well_formed(year: list[dict[str, Any]]) -> None:
    """Every episode has the documented keys, types and ranges."""
    assert len(year) == N
    for e in year:
        check_episode(e, users=5)


def test_chronological_with_sequential_ids(year: list[dict[str, Any]]) -> None:
    """Episodes come in time order within the year, numbered from ep-0000000."""
    assert [e["id"] for e in year] == [f"ep-{i:07d}" for i in range(N)]
    days = [e["occurred_at"] for e in year]
    assert days == sorted(days)
    assert days[0] >= "2025-01-01" and days[-1] <= "2025-12-31"
    assert all(date.fromisoformat(d) < DEMO_NOW.date() for d in days)


@given(
    episodes=st.integers(min_value=0, max_value=250),
    users=st.integers(min_value=1, max_value=len(USER_IDS)),
    start=st.dates(min_value=date(2000, 1, 1), max_value=date(2100, 1, 1)),
    days=st.integers(min_value=1, max_value=90),
    seed=st.integers(),
)
def test_any_arguments_give_exactly_the_episodes_asked(
    episodes: int, users: int, start: date, days: int, seed: int
) -> None:
    """Any valid arguments yield exactly ``episodes`` well-formed episodes, in order, within the span."""
    out = list(generate_year(episodes=episodes, users=users, start=start, days=days, seed=seed))
    assert len(out) == episodes
    last = (start + timedelta(days=days - 1)).isoformat()
    assert all(start.isoformat() <= e["occurred_at"] <= last for e in out)
    assert [e["occurred_at"] for e in out] == sorted(e["occurred_at"] for e in out)
    for e in out:
        check_episode(e, users)


def test_vocabulary_sizes() -> None:
    """The cast, companies, types, tags and templates have the documented sizes."""
    assert len(phrases.PEOPLE) == len(set(phrases.PEOPLE)) == 300
    assert len(phrases.COMPANIES) == len(set(phrases.COMPANIES)) == 80
    assert not set(phrases.PEOPLE) & set(phrases.COMPANIES)
    assert len(phrases.TYPES) == 12
    assert 10 <= len(phrases.TAGS) == len(set(phrases.TAGS)) <= 20
    steps = [s for story in phrases.STORYLINES for s in (*story.opening, *story.middle, story.won, story.lost)]
    assert len(phrases.STANDALONE) + len(steps) >= 40
    assert {t.type for t in phrases.STANDALONE} == set(phrases.TYPES)
    texts: list[phrases.Template | phrases.Step] = [*phrases.STANDALONE, *steps]
    for text in texts:
        assert text.type in phrases.TYPES and set(text.tags) <= set(phrases.TAGS)
        assert 1 <= len(text.actor_slots) <= 3, text.text
    for story in phrases.STORYLINES:
        assert story.won.outcome == "positive" and story.lost.outcome == "negative"


def test_all_types_and_users_occur(year: list[dict[str, Any]]) -> None:
    """Every type and each of the requested users appears, weekdays far busier than weekends."""
    assert {e["type"] for e in year} == set(phrases.TYPES)
    assert {e["user_id"] for e in year} == set(USER_IDS[:5])
    weekday = Counter(date.fromisoformat(e["occurred_at"]).weekday() < 5 for e in year)
    assert weekday[True] / 5 > 3 * weekday[False] / 2


def test_actors_are_zipf_like(year: list[dict[str, Any]]) -> None:
    """A few actors recur a lot while most appear rarely."""
    counts = Counter(a for e in year for a in e["actors"])
    ranked = [c for _, c in counts.most_common()]
    assert ranked[0] >= 20 * statistics.median(ranked)
    assert len(counts) >= 150


def test_storylines_recur_and_resolve(year: list[dict[str, Any]]) -> None:
    """Subjects recur per user over weeks, pending episodes first, some ending won or lost."""
    by_key: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for e in year:
        by_key[e["user_id"], e["subject"]].append(e)
    recurring = {k: v for k, v in by_key.items() if len(v) >= 3}
    assert len(recurring) >= 100
    resolved = 0
    for episodes in recurring.values():
        first, last = episodes[0], episodes[-1]
        weeks = date.fromisoformat(last["occurred_at"]) - date.fromisoformat(first["occurred_at"])
        ended = last["type"] in ("deal", "hire", "release") and last["outcome"] in ("positive", "negative")
        resolved += first["outcome"] == "pending" and ended and weeks >= timedelta(days=7)
    assert resolved >= 60


def test_deals_after_a_legal_review_are_lost_more_often() -> None:
    """The planted pattern: a deal story with a legal review ends lost more often than one without."""
    ended: dict[bool, list[bool]] = {True: [], False: []}
    legal: dict[tuple[str, str], bool] = defaultdict(bool)
    for e in generate_year(episodes=20_000, seed=3):
        key = (e["user_id"], e["subject"])
        if e["narrative"].startswith("Legal review of the"):
            legal[key] = True
        elif e["type"] == "deal" and e["narrative"].startswith(("Lost the", f"{e['actors'][0]} signed the")):
            ended[legal.pop(key, False)].append(e["outcome"] == "negative")
    assert min(len(v) for v in ended.values()) >= 100
    assert statistics.fmean(ended[True]) > statistics.fmean(ended[False]) + 0.1


def test_risk_and_salience_follow_type_and_outcome(year: list[dict[str, Any]]) -> None:
    """Incidents and deals are riskier, a few percent reach 0.7; negatives stir, pendings call for action."""

    def mean(key: str, **where: Any) -> float:
        rows = [e for e in year if all(e[k] == v for k, v in where.items())]
        return statistics.fmean(e["salience"][key] if key in SALIENCE_AXES else e[key] for e in rows)

    risky = sum(e["risk"] >= 0.7 for e in year) / len(year)
    assert 0.005 <= risky <= 0.1
    assert mean("risk", type="incident") > mean("risk", type="meeting") > mean("risk", type="note")
    assert mean("risk", type="deal") > mean("risk", type="email")
    assert mean("affect", outcome="negative") > mean("affect", outcome="positive")
    assert mean("actionability", outcome="pending") > mean("actionability", outcome="positive")
    assert mean("urgency", type="incident") > mean("urgency", type="note")
    assert 0.8 <= sum(e["confidence"] >= 0.8 for e in year) / len(year) < 1.0


def test_demo_now_follows_the_year(year: list[dict[str, Any]]) -> None:
    """DEMO_NOW is midnight UTC after the last day; relative cues at it land on generated days."""
    assert DEMO_NOW == datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert now_after(date(2024, 2, 28), 2) == datetime(2024, 3, 1, tzinfo=timezone.utc)
    days = {e["occurred_at"] for e in year}
    assert len(set(resolve_time_cue("last week", now=DEMO_NOW)) & days) >= 3  # quiet Christmas week
    (month,) = resolve_time_cue("last month", now=DEMO_NOW)
    assert any(d.startswith(month) for d in days)


def test_episodes_are_remember_keyword_arguments() -> None:
    """Every key is a keyword parameter of Memory.remember."""
    parameters = inspect.signature(Memory.remember).parameters
    assert KEYS <= set(parameters)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"episodes": -1}, InvalidArgumentError),
        ({"episodes": 1.5}, CueTypeError),
        ({"episodes": True}, CueTypeError),
        ({"users": 0}, InvalidArgumentError),
        ({"users": len(USER_IDS) + 1}, InvalidArgumentError),
        ({"days": 0}, InvalidArgumentError),
        ({"start": "2025-01-01"}, CueTypeError),
        ({"start": date(9999, 12, 1), "days": 365}, InvalidArgumentError),
        ({"seed": "7"}, CueTypeError),
    ],
)
def test_bad_arguments_raise_at_the_call(kwargs: dict[str, Any], error: type[Exception]) -> None:
    """Bad arguments raise a typed error when called, before any episode is asked for."""
    with pytest.raises(error):
        generate_year(**kwargs)
