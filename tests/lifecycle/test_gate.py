"""The write gate: trust by origin, the approval queue under the high profile, decisions and their expiry."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.errors import ApprovalError, ApprovalExpiredError, CueTypeError, InvalidArgumentError, NotFoundError, ReadOnlyError, SchemaError
from cuemem.lifecycle.gate import Action, Current, judge
from cuemem.lifecycle.profiles import PROFILES, Trust
from cuemem.schema import Kind, Origin, Tier

UTC = timezone.utc
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
TICK = timedelta(microseconds=1)


def verdict(origin: Origin = Origin.USER, profile: str = "medium", kind: Kind = Kind.SEMANTIC, current: Current | None = None,
            tags: tuple[str, ...] = (), confidence: float = 0.9, text: str = "x is a y"):  # type: ignore[no-untyped-def]
    return judge(tier=Tier.LONG, kind=kind, tags=tags, origin=origin, confidence=confidence, subject="u/x", current=current,
                 narrative=text, profile=PROFILES[profile])


def test_trust_is_ordered_user_over_model() -> None:
    """A user's utterance is trusted most, model inference and external content least."""
    assert Trust.of(Origin.USER) > Trust.of(Origin.JOB) > Trust.of(Origin.AGENT) > Trust.of(Origin.EXTERNAL)


@pytest.mark.parametrize(
    ("origin", "profile", "tier"),
    [(Origin.USER, "high", Tier.LONG), (Origin.AGENT, "low", Tier.LONG), (Origin.AGENT, "medium", Tier.SHORT),
     (Origin.JOB, "high", Tier.LONG), (Origin.EXTERNAL, "low", Tier.SHORT)],
)
def test_an_origin_trusted_too_little_writes_short_term(origin: Origin, profile: str, tier: Tier) -> None:
    """Long-term needs the profile's trust; below it the write lands short-term."""
    assert verdict(origin, profile).tier is tier


def test_stored_confidence_is_capped_by_trust() -> None:
    """Model inference cannot store more confidence than its trust."""
    assert verdict(Origin.AGENT, "low", confidence=0.95).confidence == Trust.AGENT.value
    assert verdict(Origin.USER, confidence=0.8).confidence == 0.8


def test_the_rules_of_the_gate() -> None:
    """Sensitive under high queues; lower confidence queues for review; repeats write nothing."""
    cur = Current("ep-old", 0.9, "X is a Z.")
    assert verdict(kind=Kind.PREFERENCE, profile="high").action is Action.QUEUE
    assert verdict(kind=Kind.PREFERENCE, profile="high").reason == "sensitive"
    assert verdict(kind=Kind.SEMANTIC, profile="high").action is Action.WRITE
    assert verdict(tags=("sensitive",), profile="high").reason == "sensitive"
    assert verdict(kind=Kind.PREFERENCE, profile="medium").action is Action.WRITE
    low = verdict(current=cur, confidence=0.5)
    assert (low.action, low.reason, low.supersedes) == (Action.QUEUE, "conflict", "ep-old")
    assert verdict(current=cur, confidence=0.9).action is Action.SUPERSEDE
    assert verdict(current=cur, text="x is  a z").action is Action.REPEAT


def test_sensitive_long_term_writes_wait_under_the_high_profile(tmp_path: Path) -> None:
    """A preference under high is queued, not recalled, until approved; a definition is written at once."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        (pref,) = mem.observe("My favorite editor is vim.", now=T0)
        (defn,) = mem.observe("Cuemem is a memory engine.", now=T0)
        assert pref not in mem and defn in mem
        (item,) = mem.approvals()
        assert (item.id, item.reason, item.episode.narrative, item.expires_at) == (pref, "sensitive", "My favorite editor is vim.", T0 + timedelta(days=7))
        assert not item.episode.reviewed
        assert mem.approve(pref, now=T0 + timedelta(days=1)) == pref
        assert pref in mem and mem.get(pref).reviewed and mem.approvals() == []
        assert mem.history("favorite editor")[0].id == pref


def test_under_medium_nothing_waits(tmp_path: Path) -> None:
    """The medium profile has no approval queue."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (pref,) = mem.observe("My favorite editor is vim.", now=T0)
        assert pref in mem and mem.approvals() == []


def test_reject_drops_the_write_but_the_journal_keeps_it(tmp_path: Path) -> None:
    """A rejected write is never recalled; its approval and decision are journaled."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        (pref,) = mem.observe("My favorite editor is vim.", now=T0)
        mem.reject(pref, now=T0 + timedelta(hours=1))
        assert pref not in mem and mem.approvals() == [] and mem.history("favorite editor") == []
        with pytest.raises(ApprovalError, match="already rejected"):
            mem.approve(pref, now=T0 + timedelta(hours=2))
    ops = [json.loads(line) for seg in sorted((tmp_path / "journal").glob("*.jsonl")) for line in seg.read_text().splitlines()]
    assert [(o["op"], o.get("verdict")) for o in ops] == [("approval", None), ("decision", "rejected")]


def test_approvals_expire_at_their_exact_instant(tmp_path: Path) -> None:
    """Approvable one microsecond before expiry, refused at it; expire() records the lapse."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        (a,) = mem.observe("My favorite editor is vim.", now=T0)
        (b,) = mem.observe("My favorite shell is zsh.", now=T0)
        end = T0 + timedelta(days=7)
        assert [x.id for x in mem.approvals(now=end - TICK)] == [a, b] and mem.approvals(now=end) == []
        assert mem.approve(a, now=end - TICK) == a
        with pytest.raises(ApprovalExpiredError):
            mem.approve(b, now=end)
        with pytest.raises(ApprovalExpiredError):
            mem.reject(b, now=end)
        assert mem.expire(now=end - TICK).approvals_expired == []
        assert mem.expire(now=end).approvals_expired == [b]
        with pytest.raises(ApprovalError, match="already expired"):
            mem.approve(b, now=end - TICK)
        assert b not in mem and mem.approvals() == []


def test_saying_it_again_after_the_wait_expired_asks_again(tmp_path: Path) -> None:
    """The same write, repeated while its request waits, joins it; repeated after expiry, it is a fresh request."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        (a,) = mem.observe("My favorite editor is vim.", now=T0)
        assert mem.observe("My favorite editor is vim.", now=T0 + timedelta(days=1)) == [a]
        (b,) = mem.observe("My favorite editor is vim.", now=T0 + timedelta(days=8))
        assert b != a
        assert [x.id for x in mem.approvals(now=T0 + timedelta(days=8))] == [b]
        mem.reject(b, now=T0 + timedelta(days=8))


def test_decisions_survive_reopen_and_rebuild(tmp_path: Path) -> None:
    """Pending and decided approvals come back from the cache and from a rebuild."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        (a,) = mem.observe("My favorite editor is vim.", now=T0)
        (b,) = mem.observe("My favorite shell is zsh.", now=T0)
        mem.approve(a, now=T0 + timedelta(hours=1))
    with Memory.open(tmp_path, profile="high") as mem:
        assert [x.id for x in mem.approvals()] == [b]
        mem.rebuild()
        assert [x.id for x in mem.approvals()] == [b] and a in mem
        with pytest.raises(ApprovalError):
            mem.reject(a, now=T0 + timedelta(hours=2))


def test_bad_decisions_change_nothing(tmp_path: Path) -> None:
    """Unknown ids, non-string ids and read-only handles: typed errors, no journal growth."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        mem.observe("My favorite editor is vim.", now=T0)
        size = sum(p.stat().st_size for p in (tmp_path / "journal").glob("*.jsonl"))
        with pytest.raises(NotFoundError):
            mem.approve("ep-nope", now=T0)
        with pytest.raises(CueTypeError):
            mem.reject(42, now=T0)  # type: ignore[arg-type]
        assert sum(p.stat().st_size for p in (tmp_path / "journal").glob("*.jsonl")) == size
    with Memory.open(tmp_path, read_only=True) as mem:
        with pytest.raises(ReadOnlyError):
            mem.approve(mem.approvals()[0].id, now=T0)
        with pytest.raises(ReadOnlyError):
            mem.observe("I prefer tea", now=T0)


def test_observe_validates_origin_and_user(tmp_path: Path) -> None:
    """An unknown origin or a bad user id raises SchemaError and writes nothing."""
    with Memory.open(tmp_path, fsync="never") as mem:
        with pytest.raises(SchemaError):
            mem.observe("I prefer tea", now=T0, origin="oracle")
        with pytest.raises(SchemaError):
            mem.observe("I prefer tea", now=T0, user_id="a b")
        assert len(mem) == 0


def test_observe_returns_one_id_per_stored_sentence(tmp_path: Path) -> None:
    """Greetings drop; long, short and working ids come back in sentence order."""
    with Memory.open(tmp_path, fsync="never") as mem:
        ids = mem.observe("Hi! I prefer tea. Here PR means pull request. The build is red. Thanks!", now=T0, session="s")
        assert len(ids) == 3 and ids[2] == "wm-1"
        assert [mem.get(i).tier.value for i in ids[:2]] == ["long", "short"]
        assert [mem.get(i).origin.value for i in ids[:2]] == ["user", "user"]


def test_a_write_already_waiting_is_not_queued_twice(tmp_path: Path) -> None:
    """Saying a pending fact again returns the waiting item's id."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        (a,) = mem.observe("My favorite editor is vim.", now=T0)
        assert mem.observe("my favorite editor is vim", now=T0 + timedelta(hours=1)) == [a]
        assert [x.id for x in mem.approvals()] == [a]


def test_text_that_is_not_valid_unicode_writes_nothing(tmp_path: Path) -> None:
    """A lone surrogate anywhere in the text: SchemaError before any sentence is written."""
    with Memory.open(tmp_path, fsync="never") as mem:
        with pytest.raises(SchemaError):
            mem.observe("I prefer tea. Cuemem is a memory engine \ud800.", now=T0)
        with pytest.raises(InvalidArgumentError):
            mem.observe("I prefer tea.", now=T0, session="a\nb")
        assert len(mem) == 0 and mem.working() == []


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200), st.sampled_from(["user", "agent", "external"]))
def test_observe_takes_any_text(tmp_path_factory: pytest.TempPathFactory, text: str, origin: str) -> None:
    """Any valid text: no error; every id is a record, a queued write or a working-memory item."""
    home = tmp_path_factory.mktemp("observe")
    with Memory.open(home, fsync="never", profile="high") as mem:
        ids = mem.observe(text, now=T0, origin=origin, session="s")
        pending = {a.id for a in mem.approvals()}
        held = {w.id for w in mem.working()}
        assert all(i in mem or i in pending or i in held for i in ids)


def test_a_queued_write_and_remember_never_share_an_id(tmp_path: Path) -> None:
    """The same sentence remembered at the same instant as a queued write gets another id; approving keeps both rows."""
    with Memory.open(tmp_path, fsync="never", profile="high") as mem:
        (queued,) = mem.observe("I prefer green tea.", now=T0)
        direct = mem.remember("I prefer green tea.", now=T0)
        assert direct != queued
        assert mem.approve(queued, now=T0 + timedelta(hours=1)) == queued
        assert sorted(mem.ids()) == sorted([queued, direct])
        mem.rebuild()
        assert sorted(mem.ids()) == sorted([queued, direct]) and mem._home.indexes.skipped == []
