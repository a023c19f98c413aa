"""Negation parity and contradictions in English and Japanese."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem.policy import Polarity, Policy, content, contradicting_pairs, flag_contradictions, parity


def written(id: str, statement: str, subject: str) -> Policy:
    polarity = Polarity.MITIGATE if parity(statement) else Polarity.REINFORCE
    return Policy(id, polarity, (("type", "x"),), statement, (), (), 1.0, 0.0, None, (), generated=False, subject=subject)


@pytest.mark.parametrize(
    ("text", "odd"),
    [
        ("Deploy on Fridays", 0),
        ("Don't deploy on Fridays", 1),
        ("Never skip the legal review", 1),
        ("Do not ever not review", 0),
        ("We cannot ship without tests", 1),
        ("金曜日にデプロイする", 0),
        ("金曜日にデプロイしない", 1),
        ("金曜日にデプロイしません", 1),
        ("レビューを省略しないでください", 1),
        ("本番での直接編集は禁止", 1),
        ("必ずレビューする", 0),
        ("必ずレビューしない", 1),
        ("まずテストする", 0),
        ("危ない操作を確認する", 0),
    ],
)
def test_parity(text: str, odd: int) -> None:
    """Negation markers are counted modulo two, in English and in Japanese."""
    assert parity(text) == odd


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Always run the migration dry-run", "Never run the migration dry-run"),
        ("Deploy on Fridays.", "Don't deploy on Fridays."),
        ("金曜日にデプロイする", "金曜日にデプロイしない"),
        ("レビューを省略する", "レビューを省略しないでください"),
    ],
)
def test_opposite_statements_on_one_subject_contradict(a: str, b: str) -> None:
    """'Do X' and 'don't X' about the same subject are a contradiction, flagged on both sides."""
    flagged = flag_contradictions([written("p1", a, "deploys"), written("p2", b, "deploys")])
    assert [p.contradicts for p in flagged] == [("p2",), ("p1",)]


@pytest.mark.parametrize(
    ("a", "b", "same_subject"),
    [
        ("Deploy on Fridays", "Don't deploy on Fridays", False),
        ("Deploy on Fridays", "Review on Mondays", True),
        ("金曜日にデプロイする", "月曜日にレビューしない", True),
        ("Don't deploy on Fridays", "Never deploy on Fridays", True),
    ],
)
def test_near_misses_are_not_contradictions(a: str, b: str, same_subject: bool) -> None:
    """Different subjects, different content or equal parity: no contradiction."""
    pa, pb = written("p1", a, "deploys"), written("p2", b, "deploys" if same_subject else "reviews")
    assert contradicting_pairs([pa, pb]) == []


def test_mined_mitigate_and_reinforce_on_one_cause_contradict() -> None:
    """Mined policies contradict exactly when they pull opposite ways on the same cause."""
    cause = (("actor", "kim"), ("type", "launch"))
    m = Policy("m", Polarity.MITIGATE, cause, "Avoid it", ("e1", "e2"), (), 0.7, 0.0, None, ())
    r = Policy("r", Polarity.REINFORCE, cause, "Repeat it", ("e3", "e4"), (), 0.7, 0.0, None, ())
    other = Policy("o", Polarity.REINFORCE, (("type", "launch"),), "Repeat", ("e3", "e4"), (), 0.7, 0.0, None, ())
    assert contradicting_pairs([m, r, other]) == [("m", "r")]


@given(st.text(max_size=80))
def test_never_raises_on_any_text(text: str) -> None:
    """parity and content accept any text."""
    assert parity(text) in (0, 1)
    assert isinstance(content(text), frozenset)
