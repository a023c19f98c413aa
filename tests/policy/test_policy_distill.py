"""distill_policies on hand-built histories with known answers, and its properties."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cuemem.errors import CueTypeError, InvalidArgumentError, InvalidIdError, UnknownDimensionError
from cuemem.policy import Polarity, Policy, PolicyBook, cause_key, confidence, distill_policies, policy_id
from cuemem.schema import Episode

T = datetime(2026, 6, 1, tzinfo=timezone.utc)
_n = iter(range(10**9))


def ep(outcome: str | None, type: str, actors: Sequence[str] = (), tags: Sequence[str] = (), *, importance: float = 0.0,
       day: int = 1, subject: str | None = None, taint: bool = False) -> Episode:
    i = next(_n)
    return Episode.create(f"episode {i}", id=f"ep-{i}", type=type, actors=list(actors), tags=list(tags), outcome=outcome,
                          recorded_at=T, occurred_at=date(2026, 5, day), importance=importance, subject=subject, taint=taint)


def causes(policies: list[Policy], polarity: Polarity) -> set[tuple[tuple[str, str], ...]]:
    return {p.cause for p in policies if p.polarity is polarity}


def test_confidence_formula_on_hand_computed_cases() -> None:
    """confidence = min(1, count/(count+1) + salienceSum/(count*4)), exactly."""
    assert confidence(2, 0.0) == pytest.approx(2 / 3)
    assert confidence(2, 1.0) == pytest.approx(2 / 3 + 1 / 8)
    assert confidence(4, 0.6) == pytest.approx(0.8 + 0.6 / 16)
    assert confidence(3, 12.0) == 1.0


def test_single_cause() -> None:
    """Three failed Acme deals among unrelated noise give one mitigate policy on exactly that cause."""
    bad = [ep("negative", "deal", ["acme"], day=d) for d in (3, 9, 20)]
    noise = [ep("negative", "meeting", ["kim"]), ep("positive", "call", ["lee"]), ep(None, "deal", ["acme"])]
    got = distill_policies(bad + noise)
    assert [(p.polarity, p.cause) for p in got] == [(Polarity.MITIGATE, (("actor", "acme"), ("type", "deal")))]
    (p,) = got
    assert p.evidence == tuple(e.id for e in bad)
    assert p.counter_examples == ()
    assert p.span == (date(2026, 5, 3), date(2026, 5, 20))
    assert p.scope == ("default",)
    assert p.confidence == pytest.approx(confidence(3, 0.0))


def test_nested_causes_keep_the_more_precise_inner_cause() -> None:
    """Deals fail 4 of 6 times, Acme deals 3 of 3: both causes are kept, each with its counter-examples."""
    acme = [ep("negative", "deal", ["acme"]) for _ in range(3)]
    globex = [ep("negative", "deal", ["globex"])]
    good = [ep("positive", "deal", ["initech"]) for _ in range(2)]
    got = distill_policies(acme + globex + good)
    by_cause = {p.cause: p for p in got if p.polarity is Polarity.MITIGATE}
    assert set(by_cause) == {(("type", "deal"),), (("actor", "acme"), ("type", "deal"))}
    assert by_cause[(("type", "deal"),)].counter_examples == tuple(e.id for e in good)
    assert by_cause[(("actor", "acme"), ("type", "deal"))].counter_examples == ()
    assert causes(got, Polarity.REINFORCE) == {(("actor", "initech"), ("type", "deal"))}


def test_a_superset_that_explains_nothing_more_is_dropped() -> None:
    """Acme fails every time; 'Acme and deal' is no more precise, so only 'Acme' is kept."""
    history = [ep("negative", "deal", ["acme"]) for _ in range(2)] + [ep("negative", "call", ["acme"]) for _ in range(2)]
    history += [ep("positive", "deal", ["globex"])]
    assert causes(distill_policies(history), Polarity.MITIGATE) == {(("actor", "acme"),)}


def test_conflicting_evidence_gives_both_policies_flagged() -> None:
    """Kim's launches went well twice and badly twice: mitigate and reinforce, contradicting each other."""
    history = [ep("negative", "launch", ["kim"]) for _ in range(2)] + [ep("positive", "launch", ["kim"]) for _ in range(2)]
    got = distill_policies(history)
    assert len(got) == 2
    m, r = sorted(got, key=lambda p: p.polarity.value)
    assert (m.polarity, r.polarity) == (Polarity.MITIGATE, Polarity.REINFORCE)
    assert m.cause == r.cause == (("actor", "kim"), ("type", "launch"))
    assert m.contradicts == (r.id,) and r.contradicts == (m.id,)
    assert m.counter_examples == r.evidence
    verdict = PolicyBook(got).judge({"type": ["launch"], "actor": ["kim"]})
    assert [set(p.id for p in g) for g in verdict.conflicts] == [{m.id, r.id}]


def test_noise_below_support_gives_nothing() -> None:
    """Every cause seen once (min_support 2) yields no policy; with min_support 1 they appear."""
    history = [ep("negative", f"t{i}", [f"a{i}"]) for i in range(5)]
    assert distill_policies(history) == []
    assert len(distill_policies(history, min_support=1)) == 5


def test_same_input_same_ids_and_content() -> None:
    """Distilling the same episodes twice, in the same order, gives equal policies."""
    history = [ep("negative", "deal", ["acme"], ["late"]) for _ in range(3)] + [ep("positive", "deal", ["acme"])]
    assert distill_policies(history) == distill_policies(list(history))


def test_taint_propagates_to_the_policy() -> None:
    """A policy resting on a tainted episode is tainted."""
    history = [ep("negative", "deal", ["acme"]), ep("negative", "deal", ["acme"], taint=True)]
    (p,) = distill_policies(history)
    assert p.taint


def test_bad_input_is_refused() -> None:
    """Non-episodes, repeated ids, bad numbers and unknown dimensions are typed errors."""
    e = ep("negative", "deal")
    with pytest.raises(CueTypeError):
        distill_policies([e, "not an episode"])  # type: ignore[list-item]
    with pytest.raises(InvalidIdError):
        distill_policies([e, e])
    with pytest.raises(InvalidArgumentError):
        distill_policies([e], min_support=0)
    with pytest.raises(UnknownDimensionError):
        distill_policies([e], dimensions=("time",))


_TYPES = ["deal", "call", "launch"]
_ACTORS = ["acme", "globex", "kim", "lee"]
_TAGS = ["late", "legal", "q3"]


@st.composite
def histories(draw: st.DrawFn) -> list[Episode]:
    n = draw(st.integers(0, 14))
    out = []
    for _ in range(n):
        out.append(ep(
            draw(st.sampled_from(["negative", "positive", None])), draw(st.sampled_from(_TYPES)),
            draw(st.lists(st.sampled_from(_ACTORS), max_size=2, unique=True)),
            draw(st.lists(st.sampled_from(_TAGS), max_size=2, unique=True)),
            importance=draw(st.sampled_from([0.0, 0.5, 0.9])),
        ))
    return out


@settings(max_examples=60, deadline=None)
@given(histories(), st.integers(1, 3))
def test_no_policy_below_minimum_support_and_evidence_holds_the_cause(history: list[Episode], min_support: int) -> None:
    """Every policy has at least min_support episodes, each with the right outcome and every cue of the cause."""
    by_id = {e.id: e for e in history}
    for p in distill_policies(history, min_support=min_support):
        assert p.support >= min_support
        assert p.subject == cause_key(p.cause) and p.id == policy_id(p.polarity, p.cause)
        want = "negative" if p.polarity is Polarity.MITIGATE else "positive"
        for eid in p.evidence:
            e = by_id[eid]
            cues = {("type", e.type), *(("actor", a) for a in e.actors), *(("tag", t) for t in e.tags)}
            assert e.outcome is not None and e.outcome.value == want
            assert set(p.cause) <= cues


@settings(max_examples=60, deadline=None)
@given(histories())
def test_an_unrelated_episode_changes_nothing(history: list[Episode]) -> None:
    """Adding an outcome episode that shares no cue with the others leaves the policies as they were."""
    before = distill_policies(history)
    after = distill_policies([*history, ep("negative", "unrelated-type", ["nobody-else"], ["own-tag"])])
    assert after == before


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.sampled_from([0.0, 0.3, 0.7, 1.0]))
def test_confidence_grows_with_count_at_fixed_mean_salience(n: int, importance: float) -> None:
    """One more supporting episode of the same salience never lowers confidence."""
    def conf(k: int) -> float:
        (p,) = distill_policies([ep("negative", "deal", ["acme"], importance=importance) for _ in range(k)])
        return p.confidence

    assert conf(n + 1) >= conf(n)
    assert conf(n + 1) > conf(n) or conf(n) == 1.0


@settings(max_examples=60, deadline=None)
@given(histories(), st.lists(st.sampled_from([("type", t) for t in _TYPES] + [("actor", a) for a in _ACTORS] + [("tag", t) for t in _TAGS]), max_size=5))
def test_judge_returns_exactly_the_policies_whose_cause_holds(history: list[Episode], cues: list[tuple[str, str]]) -> None:
    """judge never returns a policy whose cause fails, and misses none whose cause holds."""
    policies = distill_policies(history, min_support=1)
    situation: dict[str, list[str]] = {}
    for d, v in cues:
        situation.setdefault(d, []).append(v)
    got = PolicyBook(policies).judge(situation)
    assert {p.id for p in got.policies} == {p.id for p in policies if p.applies(situation)}
    assert all(p.applies(situation) for p in got.policies)


def test_a_policy_book_refuses_what_is_not_a_policy() -> None:
    """PolicyBook raises a typed error for an item that is not a Policy."""
    with pytest.raises(CueTypeError):
        PolicyBook(["not a policy"])  # type: ignore[list-item]


def test_a_policy_without_a_cause_applies_nowhere_however_big_the_book() -> None:
    """Judging never returns a cause-less policy, on the dict path and on the numpy path."""
    empty = Policy("pol-empty", Polarity.MITIGATE, (), "Be careful.", (), (), 1.0, 0.0, None, (), generated=False, subject="care")
    for n in (3, 600):
        book = PolicyBook([empty, *(Policy(f"pol-{i}", Polarity.MITIGATE, (("actor", "acme"),), f"Avoid acme {i}", ("e1", "e2"),
                                              (), 0.5, 0.0, None, ()) for i in range(n))])
        got = {p.id for p in book.judge({"actor": ["acme"]}).policies}
        assert "pol-empty" not in got and len(got) == n


def test_items_as_stored_mine_what_their_episodes_mine() -> None:
    """distill_items over the stored form of episodes gives exactly distill_policies' policies."""
    from cuemem.home.items import Item
    from cuemem.policy.distill import distill_items

    history = [
        Episode.create(f"deal {i}", id=f"e{i}", recorded_at=datetime(2026, 1, 1 + i, tzinfo=timezone.utc), type="deal",
                       actors=["Acme" if i % 2 else "Globex"], tags=["legal"] if i % 3 else [], outcome="negative" if i % 4 else "positive",
                       importance=0.1 * (i % 7), taint=i == 5, user_id="u-a" if i % 5 else "u-b")
        for i in range(12)
    ]
    mined = distill_policies(history, namespace="u-a")
    assert mined and distill_items([Item.of_json(e.to_json()) for e in history], namespace="u-a") == mined
