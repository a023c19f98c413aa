"""Dedupe (jobs/dedupe.py and its run in jobs/home.py): near-duplicates proposed, conservatively, never merged."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.errors import InvalidArgumentError
from cuemem.jobs.dedupe import RULE, DedupeConfig, clusters, compare, content_words, names, why, words
from cuemem.jobs.home import _PAIRWISE_LIMIT

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


def test_a_common_subject_lowers_the_bar_for_facts_never_for_events() -> None:
    """Two facts of one subject: 60% of content words suffice; without one, or for two events, the bar is 85%."""
    a = _stored("a", "the release train leaves every second tuesday", subject="releases", kind="semantic", tier="short")
    b = _stored("b", "the release train leaves every second tuesday at noon from platform", subject="releases", kind="semantic",
                tier="short")
    m = compare(a, b, CONFIG)
    assert m is not None and m.overlap == 5 / 7 and "the same fact: semantic, subject 'releases'" in m.evidence
    assert compare({**a, "subject": None}, {**b, "subject": None}, CONFIG) is None
    assert compare({**a, "kind": "episodic"}, {**b, "kind": "episodic"}, CONFIG) is None  # a storyline's events are many


@given(st.text(min_size=1, max_size=60), st.integers(0, 999), st.integers(0, 999))
@example("0/A0\u3400", 0, 0)  # a name holding a CJK character is split as its words are
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
    """Duplicate facts among the home are proposed once, merged never; the next run checks only newer memories.

    Facts (kind semantic), since a fact said again another day is the same fact; the same
    words as events of different days are never duplicates (the test below).
    """
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        for i in range(30):
            mem.remember(f"unrelated note number {i} about topic {i * 7}", now=T0)
        a = mem.remember("The office moves to Lyon in September", kind="semantic", now=T0)
        b = mem.remember("the office moves to lyon in september!", kind="semantic", now=T0 + timedelta(hours=2))
        c = mem.remember("The office moves to Paris in September", kind="semantic", now=T0 + timedelta(hours=3))  # not the same fact
        first = mem.dedupe(now=T0 + timedelta(days=1))
        assert first.checked == 33 and len(first.proposed) == 1
        (p,) = mem.proposals()
        assert [s.id for s in p.sources] == [a, b] and c not in {s.id for s in p.sources}
        assert {a, b, c} <= set(mem.ids()) and len(mem) == 33  # nothing merged
        again = mem.dedupe(now=T0 + timedelta(days=2))
        assert (again.checked, again.proposed) == (0, ())
        d = mem.remember("The office is moving to Lyon in September.", kind="semantic", now=T0 + timedelta(days=3))
        third = mem.dedupe(now=T0 + timedelta(days=4))
        assert third.checked == 1 and third.proposed == ()  # a and b wait for a decision: d waits too
        mem.reject(p.id, now=T0 + timedelta(days=4))
        e = mem.remember("the office moves to Lyon in September", kind="semantic", now=T0 + timedelta(days=5))
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


# -- the same event or the same fact (issue 28) ------------------------------------------

EVENT = {"occurred_at": "2026-06-01", "actors": ["Jonas Silva"], "type": "email"}


@pytest.mark.parametrize("other", [
    {"occurred_at": "2026-06-08"},  # another day
    {"actors": ["Aisha Shah"]},  # another actor
    {"actors": []},  # actors said of one only
    {"thread": "pilot"},  # a thread of one only
])
def test_events_of_another_day_actor_or_thread_are_never_duplicates(other: dict[str, Any]) -> None:
    """The same words are two events when the day, the actors or the thread differ."""
    text = "Jonas Silva from Globex reached out about the pilot and asked for a demo"
    a = _stored("a", text, **EVENT)
    assert compare(a, _stored("b", text, **EVENT), CONFIG) is not None
    assert compare(a, _stored("b", text, **{**EVENT, **other}), CONFIG) is None


def test_the_same_event_is_judged_whatever_the_order_of_its_actors() -> None:
    """Actors are a set: their order and case say nothing."""
    a = _stored("a", "Priya is on vacation until the 14th", **{**EVENT, "actors": ["Priya Nair", "Omar Haddad"]})
    b = _stored("b", "Priya is on vacation until the 14th.", **{**EVENT, "actors": ["omar haddad", "Priya  Nair"]})
    assert compare(a, b, CONFIG) is not None


def test_a_name_in_one_only_keeps_two_memories_apart() -> None:
    """With no actors given, the names the texts carry tell two people (or places) apart."""
    a = _stored("a", "Met with Jonas Silva from Globex about the pilot and the demo")
    b = _stored("b", "Met with Aisha Shah from Globex about the pilot and the demo")
    assert compare(a, b, CONFIG) is None
    assert compare(_stored("a", "The office moves to Lyon in September", kind="semantic"),
                   _stored("b", "The office moves to Lyon in October", kind="semantic"), CONFIG) is None
    assert names("Met Jonas Silva. Then I left: Globex waits") == {"jonas", "silva"}  # first words of sentences, "I": grammar


def test_a_fact_said_again_another_day_is_the_same_fact() -> None:
    """Facts and preferences are not tied to a day: restated, reworded, they are duplicates; the evidence says why."""
    a = _stored("a", "The production cluster runs in eu-west-1.", kind="semantic", occurred_at="2026-03-02")
    b = _stored("b", "Our production cluster is running in eu-west-1", kind="semantic", occurred_at="2026-05-20")
    m = compare(a, b, CONFIG)
    assert m is not None and m.overlap == 1.0 and "the same fact: semantic, no subject" in m.evidence
    assert compare({**a, "kind": "episodic"}, {**b, "kind": "episodic"}, CONFIG) is None  # as events: two days


def test_rewording_keeps_what_is_said() -> None:
    """Function words, order and inflection aside, the content words are compared."""
    assert content_words("The office is moving to Lyon in September") == content_words("the office moves to Lyon in September.")
    assert content_words("Rolled back the releases") == content_words("release was rolled back")
    assert content_words("Acme asked for a discount") != content_words("Acme asked for a refund")


def test_the_why_of_a_merge_states_the_rule_for_its_group() -> None:
    """An event's merge says the day, actors and thread agree; a fact's says the subject; both state the rule."""
    event = why(_stored("a", "x", **EVENT), ["b"])
    assert "the same event — email of 2026-06-01, with the same actors, in the same thread" in event and RULE in event
    fact = why(_stored("a", "x", kind="preference", subject="report-format", tier="short"), ["b", "c"])
    assert "b, c say what a says about the same fact — preference, of the subject 'report-format'" in fact


def test_templated_look_alikes_of_other_days_and_people_are_not_proposed(tmp_path: Path) -> None:
    """A home of templated emails and recurring stand-ups proposes only the one event written twice."""
    people = ["Jonas Silva", "Aisha Shah", "Lucas Park", "Mei Chen"]
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        for day in range(10):
            at = T0 + timedelta(days=day)
            for who in people:
                mem.remember(f"{who} from Globex reached out about the pilot and asked for a demo", actors=[who], type="email", now=at)
            mem.remember("Standup: working on the billing migration, no blockers", actors=["Kim Lee"], type="standup", now=at)
        again = mem.remember("Standup: working on the billing migration - no blockers.", actors=["Kim Lee"], type="standup",
                             now=T0 + timedelta(days=9, hours=2))
        report = mem.dedupe(now=T0 + timedelta(days=10))
        (p,) = mem.proposals()
        assert report.checked == 51 and report.proposed == (p.id,) and p.sources[1].id == again
        assert "the same event — standup of 2026-06-10" in p.why


def test_a_later_run_finds_the_older_memories_of_the_same_event(tmp_path: Path) -> None:
    """A memory of an event written days later is compared with the older ones of that day (found by their cues)."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        a = mem.remember("Deployed the billing hotfix to production at 16:40", type="deploy", now=T0)
        mem.remember("Deployed the search hotfix to production at 16:40", type="deploy", now=T0)
        assert mem.dedupe(now=T0 + timedelta(hours=12)).proposed == ()
        b = mem.remember("deployed the billing hotfix to production at 16:40.", type="deploy", occurred_at=T0.date(),
                         now=T0 + timedelta(days=3))
        report = mem.dedupe(now=T0 + timedelta(days=3, hours=1))
        (p,) = mem.proposals()
        assert report.checked == 1 and [s.id for s in p.sources] == [a, b]


def test_a_group_too_large_to_compare_pair_by_pair_asks_the_text_index(tmp_path: Path) -> None:
    """Over the pairwise limit, each new memory of one identity is compared with its best text matches: the duplicate is found."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        for i in range(_PAIRWISE_LIMIT + 10):
            mem.remember(f"sensor reading {i} logged for bay {i * 3}", now=T0)
        a = mem.remember("The loading bay door was left open overnight", now=T0)
        b = mem.remember("the loading bay door was left open overnight!", now=T0 + timedelta(hours=1))
        report = mem.dedupe(now=T0 + timedelta(days=1))
        (p,) = mem.proposals()
        assert report.compared < (_PAIRWISE_LIMIT + 12) * 6 and [s.id for s in p.sources] == [a, b]
