"""Dedupe (jobs/dedupe.py and its run in jobs/home.py): near-duplicates proposed, conservatively, never merged."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.errors import InvalidArgumentError
from cuemem.jobs.dedupe import DedupeConfig, clusters, compare, words

UTC = timezone.utc
T0 = datetime(2026, 6, 1, 9, tzinfo=UTC)
CONFIG = DedupeConfig()


def _stored(id: str, narrative: str, **fields: Any) -> dict[str, Any]:
    """A stored episode as the journal holds it (the fields dedupe reads)."""
    base = {"id": id, "narrative": narrative, "user_id": "default", "kind": "episodic", "type": "note", "outcome": None,
            "subject": None, "tier": "long", "level": "raw", "sources": [], "taint": False, "reviewed": True}
    return {**base, **fields}


def test_the_same_words_are_duplicates_with_the_evidence_spelled_out() -> None:
    """Case and punctuation aside, the same sentence matches; the evidence says what was compared."""
    m = compare(_stored("a", "Acme asked for a 12% discount."), _stored("b", "acme asked for a 12% DISCOUNT"), CONFIG)
    assert m is not None and (m.first, m.second, m.overlap) == ("a", "b", 1.0)
    assert "same numbers ['12']" in m.evidence and "same negation" in m.evidence


@pytest.mark.parametrize("first, second, fields", [
    ("Acme asked for a 12% discount on the plan", "Acme asked for a 15% discount on the plan", {}),  # another number
    ("We always deploy on Friday afternoons here", "We never deploy on Friday afternoons here", {}),  # negation
    ("Acme asked for a discount on the plan", "Acme asked for a discount on the plan", {"user_id": "bob"}),  # another user
    ("Acme asked for a discount on the plan", "Acme asked for a discount on the plan", {"outcome": "negative"}),
    ("Acme asked for a discount on the plan", "Acme asked for a discount on the plan", {"subject": "other"}),
    ("Acme asked for a discount on the plan", "Acme asked for a discount on the plan", {"sources": ["a"]}),  # derived
    ("Acme asked for a discount on the plan", "Acme asked for a discount on the plan", {"taint": True}),
    ("Acme asked for a discount on the plan", "Acme asked for a discount on the plan", {"level": "summary"}),
    ("Acme asked for a discount on the plan", "Acme asked for a discount on the plan", {"kind": "semantic", "subject": "x"}),
    ("ok then", "ok then", {}),  # too few words to judge
    ("Acme asked for a discount on the annual plan", "Acme asked Globex about the annual plan", {}),  # alike, not the same
])
def test_what_is_not_a_duplicate(first: str, second: str, fields: dict[str, Any]) -> None:
    """Every condition must hold: numbers, negation, user, outcome, subject, raw and underived, enough shared words."""
    subject = {"subject": "s"} if "subject" in fields else {}
    assert compare(_stored("a", first, **subject), _stored("b", second, **fields), CONFIG) is None


def test_a_common_subject_lowers_the_bar_but_never_to_nothing() -> None:
    """Same subject: 60% of words suffice; without one the bar is 85%."""
    a = _stored("a", "the release train leaves every second tuesday", subject="releases")
    b = _stored("b", "the release train leaves every second tuesday at noon", subject="releases")
    assert compare(a, b, CONFIG) is not None
    assert compare({**a, "subject": None}, {**b, "subject": None}, CONFIG) is None


@given(st.text(min_size=1, max_size=60), st.integers(0, 999), st.integers(0, 999))
def test_memories_whose_numbers_differ_are_never_duplicates(text: str, x: int, y: int) -> None:
    """Whatever the words, two different numbers keep two memories apart."""
    a, b = _stored("a", f"{text} paid {x} euros for it"), _stored("b", f"{text} paid {y} euros for it")
    assert (compare(a, b, CONFIG) is None) == (x != y) or len(words(a["narrative"])) < CONFIG.min_words


def test_clusters_keep_the_earliest_first() -> None:
    """Union-find joins matches; each group lists its earliest member first."""
    ms = [compare(_stored(x, "same words in this sentence"), _stored(y, "same words in this sentence"), CONFIG) for x, y in
          (("b", "c"), ("a", "b"), ("d", "e"))]
    order = {k: i for i, k in enumerate("abcde")}
    assert clusters([m for m in ms if m is not None], order) == [["a", "b", "c"], ["d", "e"]]


def test_a_bad_config_is_refused() -> None:
    """Thresholds outside (0, 1] and counts below 1 are InvalidArgumentErrors."""
    for bad in (dict(min_overlap=0), dict(same_subject_overlap=1.5), dict(neighbours=0), dict(min_words=True)):
        with pytest.raises(InvalidArgumentError):
            DedupeConfig(**bad)  # type: ignore[arg-type]


def test_the_run_proposes_and_checks_only_what_is_new(tmp_path: Path) -> None:
    """Duplicates among the home are proposed once, merged never; the next run checks only newer memories."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        for i in range(30):
            mem.remember(f"unrelated note number {i} about topic {i * 7}", now=T0)
        a = mem.remember("The office moves to Lyon in September", now=T0)
        b = mem.remember("the office moves to lyon in september!", now=T0 + timedelta(hours=2))
        c = mem.remember("The office moves to Paris in September", now=T0 + timedelta(hours=3))  # not the same fact
        first = mem.dedupe(now=T0 + timedelta(days=1))
        assert first.checked == 33 and len(first.proposed) == 1
        (p,) = mem.proposals()
        assert [s.id for s in p.sources] == [a, b] and c not in {s.id for s in p.sources}
        assert {a, b, c} <= set(mem.ids()) and len(mem) == 33  # nothing merged
        again = mem.dedupe(now=T0 + timedelta(days=2))
        assert (again.checked, again.proposed) == (0, ())
        d = mem.remember("The office moves to Lyon in September.", now=T0 + timedelta(days=3))
        third = mem.dedupe(now=T0 + timedelta(days=4))
        assert third.checked == 1 and third.proposed == ()  # a and b wait for a decision: d waits too
        mem.reject(p.id, now=T0 + timedelta(days=4))
        e = mem.remember("the office moves to Lyon in September", now=T0 + timedelta(days=5))
        fourth = mem.dedupe(now=T0 + timedelta(days=6))
        assert fourth.checked == 2 and len(fourth.proposed) == 1  # d looked at again, with e
        (q,) = mem.proposals(pending_only=True)
        assert [s.id for s in q.sources] == [a, d, e]  # b's merge with a was rejected: not proposed again


def test_a_chain_of_near_matches_merges_only_what_matches_the_kept_memory(tmp_path: Path) -> None:
    """A ~ B and B ~ C but not A ~ C: the proposal retires only B (C is left for a later look)."""
    config = DedupeConfig(min_overlap=0.8)
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        a = mem.remember("one two three four five six seven eight nine", now=T0)
        b = mem.remember("one two three four five six seven eight nine ten", now=T0 + timedelta(hours=1))
        c = mem.remember("two three four five six seven eight nine ten eleven", now=T0 + timedelta(hours=2))
        (pid,) = mem.dedupe(now=T0 + timedelta(days=1), config=config).proposed
        (p,) = mem.proposals()
        assert [s.id for s in p.sources] == [a, b] and p.records[0]["ids"] == [b] and c in mem


def test_quarantined_and_other_users_memories_are_never_proposed(tmp_path: Path) -> None:
    """A tainted copy waits for review, not for a merge; the same words of two users are two memories."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mem.remember("The office moves to Lyon in September", user_id="ann", now=T0)
        mem.remember("The office moves to Lyon in September", user_id="bob", now=T0)
        with mem.session("web") as s:
            s.read_external("a page", source="https://example.com", user_id="ann", now=T0)  # a home of two users: whose
            s.remember("The office moves to Lyon in September", user_id="ann", now=T0)
        assert mem.dedupe(now=T0 + timedelta(days=1)).proposed == ()


def test_dedupe_refuses_a_wrong_config_and_a_reader(tmp_path: Path) -> None:
    """A config of the wrong type is refused before anything runs; a read-only handle cannot run it."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        mem.remember("hello there world", now=T0)
        with pytest.raises(InvalidArgumentError):
            mem.dedupe(now=T0, config={"min_overlap": 0.5})  # type: ignore[arg-type]
    with Memory.open(home, read_only=True) as reader, pytest.raises(PermissionError):
        reader.dedupe(now=T0)
