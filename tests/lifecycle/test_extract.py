"""Heuristic extraction: a table of English and Japanese utterances, near misses, user patterns, any text."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cuemem
from cuemem import Candidate, extract
from cuemem.errors import CueTypeError, InvalidArgumentError
from cuemem.lifecycle.extract import classify, sentences, subject_key
from cuemem.lifecycle.patterns import DEFAULT_PATTERNS, RULES, Category, Pattern
from cuemem.schema import Kind, Tier

NOW = datetime(2026, 6, 15, 9, 0, tzinfo=timezone.utc)

#: (utterance, expected category, expected subject or None). Near misses are marked.
TABLE: list[tuple[str, Category, str | None]] = [
    # English preferences and decisions
    ("I prefer tea over coffee.", Category.PREFERENCE, "tea"),
    ("We really prefer short meetings", Category.PREFERENCE, "short meetings"),
    ("I'd rather work from home than commute.", Category.PREFERENCE, "work from home"),
    ("My favorite editor is vim.", Category.PREFERENCE, "favorite editor"),
    ("Our default branch is main", Category.PREFERENCE, "default branch"),
    ("I hate long emails.", Category.PREFERENCE, "long emails"),
    ("I always use dark mode", Category.PREFERENCE, "dark mode"),
    ("We decided to use Postgres for the store.", Category.DECISION, "use Postgres for the store"),
    ("The team has agreed on weekly releases.", Category.DECISION, "weekly releases"),
    ("Let's go with the blue logo", Category.DECISION, "blue logo"),
    ("The decision is to ship on Friday.", Category.DECISION, "ship on Friday"),
    # English definitions
    ("Cuemem is a memory engine for agents.", Category.DEFINITION, "Cuemem"),
    ("A roaring bitmap is a compressed set of integers.", Category.DEFINITION, "roaring bitmap"),
    ("TTL means time to live.", Category.DEFINITION, "TTL"),
    ("SLO stands for service level objective", Category.DEFINITION, "SLO"),
    # English disambiguation
    ("Here PR means pull request.", Category.DISAMBIGUATION, "PR"),
    ("In this thread, 'the box' refers to the staging server.", Category.DISAMBIGUATION, "box"),
    ("When I say Alice, I mean the billing service.", Category.DISAMBIGUATION, "Alice"),
    # English small talk: dropped
    ("Hi!", Category.GREETING, None),
    ("Good morning, everyone", Category.GREETING, None),
    ("How are you?", Category.GREETING, None),
    ("Thanks!", Category.ACKNOWLEDGEMENT, None),
    ("OK, got it.", Category.ACKNOWLEDGEMENT, None),
    ("Sounds good", Category.ACKNOWLEDGEMENT, None),
    # English near misses: look like a class, are not
    ("Do you prefer tea?", Category.UTTERANCE, None),
    ("Is Redis a database?", Category.UTTERANCE, None),
    ("This is a test.", Category.UTTERANCE, None),
    ("The meeting is at 3pm.", Category.UTTERANCE, None),
    ("Hi-fi gear is expensive", Category.UTTERANCE, None),
    ("Thanks to the cache, latency dropped.", Category.UTTERANCE, None),
    ("My code is not ready", Category.UTTERANCE, None),
    ("They decided nothing yet", Category.UTTERANCE, None),
    ("Here is the report.", Category.UTTERANCE, None),
    # Japanese preferences and decisions
    ("私の好きな色は青です。", Category.PREFERENCE, "好きな色"),
    ("僕の趣味は釣りです", Category.PREFERENCE, "趣味"),
    ("猫が好きです。", Category.PREFERENCE, "猫"),
    ("私は紅茶の方がいいです", Category.PREFERENCE, "紅茶"),
    ("来週リリースすることにしました。", Category.DECISION, "来週リリースする"),
    ("データベースはPostgresに決めました", Category.DECISION, "データベースはPostgres"),
    # Japanese definitions
    ("Cuememはメモリエンジンである。", Category.DEFINITION, "Cuemem"),
    ("TCPとは通信プロトコルです。", Category.DEFINITION, "TCP"),
    ("SLOはサービスレベル目標のことです", Category.DEFINITION, "SLO"),
    # Japanese disambiguation
    ("ここでのPRはプルリクエストのことです。", Category.DISAMBIGUATION, "PR"),
    ("この会話での「箱」はステージングサーバーを指します", Category.DISAMBIGUATION, "箱"),
    ("ここで本番と言うのはリージョンAのことです", Category.DISAMBIGUATION, "本番"),
    # Japanese small talk: dropped
    ("こんにちは！", Category.GREETING, None),
    ("おはようございます。", Category.GREETING, None),
    ("ありがとうございます。", Category.ACKNOWLEDGEMENT, None),
    ("了解です", Category.ACKNOWLEDGEMENT, None),
    # Japanese near misses
    ("今日は雨です。", Category.UTTERANCE, None),
    ("私はエンジニアです", Category.UTTERANCE, None),
    ("紅茶が好きですか？", Category.UTTERANCE, None),
    ("ここでは待ちます", Category.UTTERANCE, None),
    ("ありがとうと言われた", Category.UTTERANCE, None),
    ("Cuememはメモリエンジンではない", Category.UTTERANCE, None),
]


def test_the_table_is_big_enough_and_covers_every_category_in_both_languages() -> None:
    """At least 40 utterances; each category in English and Japanese."""
    assert len(TABLE) >= 40
    ja = {c for text, c, _ in TABLE if any(ord(ch) > 0x3000 for ch in text)}
    en = {c for text, c, _ in TABLE if all(ord(ch) < 0x3000 for ch in text)}
    assert ja == en == set(Category)


@pytest.mark.parametrize(("text", "category", "subject"), TABLE, ids=[t for t, _, _ in TABLE])
def test_each_utterance_gets_its_class_and_subject(text: str, category: Category, subject: str | None) -> None:
    """Every row: the expected class, subject, tier and salience; small talk yields nothing."""
    got = extract(text, now=NOW)
    if RULES[category].tier is None:
        assert got == []
        return
    (c,) = got
    assert (c.category, c.subject) == (category, subject)
    assert (c.tier, c.kind, c.salience, c.confidence) == (
        RULES[category].tier, RULES[category].kind, RULES[category].salience, RULES[category].confidence,
    )
    assert c.text == text.strip() and c.at == NOW


def test_the_issue_classes_land_in_their_tiers_with_their_salience() -> None:
    """Preferences/decisions long-term at 0.8, definitions long-term at 0.65, disambiguations short-term."""
    assert (RULES[Category.PREFERENCE].tier, RULES[Category.PREFERENCE].salience) == (Tier.LONG, 0.8)
    assert (RULES[Category.DECISION].tier, RULES[Category.DECISION].salience) == (Tier.LONG, 0.8)
    assert (RULES[Category.DEFINITION].tier, RULES[Category.DEFINITION].salience) == (Tier.LONG, 0.65)
    assert RULES[Category.DISAMBIGUATION].tier is Tier.SHORT
    assert RULES[Category.PREFERENCE].kind is Kind.PREFERENCE


def test_a_text_is_split_into_sentences_and_each_is_classified() -> None:
    """Mixed text: small talk dropped, the rest in order; numbers with dots stay whole."""
    text = "Hello! Version 3.5 is the stable release. ここでのPRはプルリクエストのことです。ありがとう\nI prefer tabs."
    assert sentences(text) == ["Hello!", "Version 3.5 is the stable release.", "ここでのPRはプルリクエストのことです。", "ありがとう", "I prefer tabs."]
    got = [(c.category, c.subject) for c in extract(text, now=NOW)]
    assert got == [(Category.DEFINITION, "Version 3.5"), (Category.DISAMBIGUATION, "PR"), (Category.PREFERENCE, "tabs")]


def test_session_is_carried_and_validated() -> None:
    """The session labels every candidate; blank or non-string sessions are refused."""
    (c,) = extract("Here PR means pull request", now=NOW, session=" chat-7 ")
    assert c.session == "chat-7"
    with pytest.raises(InvalidArgumentError):
        extract("x", now=NOW, session="  ")
    with pytest.raises(CueTypeError):
        extract("x", now=NOW, session=7)  # type: ignore[arg-type]


def test_a_date_now_is_its_midnight_utc() -> None:
    """``now`` may be a date."""
    (c,) = extract("I prefer tea", now=date(2026, 6, 15))
    assert c.at == datetime(2026, 6, 15, tzinfo=timezone.utc)


@pytest.mark.parametrize("bad", [None, 3, b"I prefer tea", ["I prefer tea"]])
def test_text_that_is_not_a_string_is_refused(bad: object) -> None:
    """Non-string text raises CueTypeError."""
    with pytest.raises(CueTypeError):
        extract(bad, now=NOW)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [None, "2026-06-15", 1_780_000_000])
def test_now_must_be_a_time(bad: object) -> None:
    """``now`` must be a date or datetime."""
    with pytest.raises(CueTypeError):
        extract("I prefer tea", now=bad)  # type: ignore[arg-type]


def test_users_extend_the_table_ahead_of_the_defaults() -> None:
    """A user pattern is tried first and yields its own class and subject."""
    price = Pattern("price", Category.DEFINITION, "en", r"^(?P<subject>[\w ]+?) costs \S.*$")
    table = (price, *DEFAULT_PATTERNS)
    (c,) = extract("A latte costs 4 euros.", now=NOW, patterns=table)
    assert (c.category, c.subject, c.pattern) == (Category.DEFINITION, "latte", "price")
    assert extract("A latte costs 4 euros.", now=NOW)[0].category is Category.UTTERANCE


def test_bad_patterns_are_refused_when_built_or_passed() -> None:
    """A regex that does not compile, an unknown category, or a table of non-patterns: typed errors."""
    with pytest.raises(InvalidArgumentError):
        Pattern("broken", Category.DEFINITION, "en", r"(unclosed")
    with pytest.raises(InvalidArgumentError):
        Pattern("odd", "gossip", "en", r"x")  # type: ignore[arg-type]
    with pytest.raises(CueTypeError):
        extract("x", now=NOW, patterns=["^x$"])  # type: ignore[list-item]
    with pytest.raises(CueTypeError):
        extract("x", now=NOW, patterns="^x$")  # type: ignore[arg-type]


def test_questions_match_only_patterns_that_allow_them() -> None:
    """A question is never a preference; a greeting may be a question."""
    assert classify("Do you prefer tea?")[0] is None
    pattern, _ = classify("How are you?")
    assert pattern is not None and pattern.category is Category.GREETING


def test_subject_keys_ignore_case_and_spacing() -> None:
    """Versions group under one key whatever the case and spacing."""
    assert subject_key("Favorite  Editor") == subject_key(" favorite editor ") == "favorite editor"


def test_the_package_exports_extract_and_candidate() -> None:
    """``cuemem.extract`` and ``cuemem.Candidate`` are public."""
    assert cuemem.extract is extract and cuemem.Candidate is Candidate
    assert "extract" in cuemem.__all__ and "Candidate" in cuemem.__all__


@given(st.text(max_size=400))
def test_any_text_never_raises_and_every_candidate_is_well_formed(text: str) -> None:
    """Arbitrary text: no exception; candidates have a tier, a kind and unit numbers."""
    for c in extract(text, now=NOW, session="s"):
        assert c.tier in (Tier.LONG, Tier.SHORT, Tier.WORKING) and isinstance(c.kind, Kind)
        assert 0.0 <= c.salience <= 1.0 and 0.0 <= c.confidence <= 1.0
        assert c.text.strip() == c.text and c.text
        assert c.subject is None or (c.subject.strip() == c.subject and c.subject)


@given(st.lists(st.sampled_from([t for t, _, _ in TABLE] + ["。", "!", "\n", " ", "?", "は", "I prefer", "とは"]), max_size=12))
def test_spliced_utterances_never_raise(parts: list[str]) -> None:
    """Fragments of the table glued together in any order: no exception."""
    extract("".join(parts), now=NOW)
    extract(" ".join(parts), now=NOW)
