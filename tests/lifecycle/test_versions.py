"""Versions on a real home: supersede chains, conflicts to review, the live bound, ``as_of`` at its boundaries."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.errors import CueTypeError, SchemaError, ScopeError
from cuemem.home.state import VersionEntry
from cuemem.lifecycle.versions import as_of, beyond_bound, validity

UTC = timezone.utc
T0 = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def day(n: float) -> datetime:
    return T0 + n * DAY


def journal_ops(home: Path) -> list[str]:
    return [json.loads(line)["op"] for seg in sorted((home / "journal").glob("*.jsonl")) for line in seg.read_text().splitlines()]


def test_a_new_fact_supersedes_the_old(tmp_path: Path) -> None:
    """The old version gets valid_to = the new one's valid_from and superseded_by; the new one is current."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (old,) = mem.observe("My favorite editor is vim.", now=day(0))
        (new,) = mem.observe("My favorite editor is emacs.", now=day(3))
        first, second = mem.history("favorite editor")
        assert (first.id, second.id) == (old, new)
        assert first.valid_to == second.valid_from == day(3) and first.superseded_by == new and not first.current
        assert second.valid_to is None and second.superseded_by is None and second.current
        assert mem.get(new).supersedes == old and mem.get(old).valid_to is None  # the stored record is never rewritten
    assert journal_ops(tmp_path).count("version") == 2


def test_a_chain_of_versions_and_history_by_any_spelling(tmp_path: Path) -> None:
    """Four facts on one subject form a chain; history finds it whatever the case and spacing."""
    with Memory.open(tmp_path, fsync="never") as mem:
        ids = [mem.observe(f"My favorite editor is {e}.", now=day(i))[0] for i, e in enumerate(["vim", "emacs", "nano", "ed"])]
        chain = mem.history("  FAVORITE   editor ")
        assert [v.id for v in chain] == ids
        assert [v.superseded_by for v in chain] == [*ids[1:], None]
        assert [v.current for v in chain] == [False, False, False, True]
        assert all(a.valid_to == b.valid_from for a, b in zip(chain, chain[1:]))


def test_saying_the_current_fact_again_writes_nothing(tmp_path: Path) -> None:
    """A repetition returns the current id and appends no record."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (first,) = mem.observe("My favorite editor is vim.", now=day(0))
        before = len(journal_ops(tmp_path))
        assert mem.observe("my favorite editor is VIM", now=day(1)) == [first]
        assert len(journal_ops(tmp_path)) == before and len(mem.history("favorite editor")) == 1


def test_lower_confidence_goes_to_review_and_the_old_stays_current(tmp_path: Path) -> None:
    """A less trusted origin's conflicting fact waits in the queue; approving it supersedes."""
    with Memory.open(tmp_path, fsync="never", profile="low") as mem:
        (old,) = mem.observe("Our default branch is main.", now=day(0))
        (queued,) = mem.observe("Our default branch is trunk.", now=day(2), origin="agent")
        (item,) = mem.approvals()
        assert (item.id, item.reason, item.supersedes) == (queued, "conflict", old)
        assert [v.id for v in mem.history("default branch")] == [old] and queued not in mem
        assert mem.as_of("default branch", day(5)).id == old  # type: ignore[union-attr]
        assert mem.approve(queued, now=day(4)) == queued
        old_v, new_v = mem.history("default branch")
        assert new_v.current and new_v.valid_from == day(2) and new_v.adopted_at == day(4) and old_v.valid_to == day(2)
        assert mem.get(queued).reviewed and mem.approvals() == []


def test_equal_confidence_is_adopted(tmp_path: Path) -> None:
    """New confidence equal to the old: adopted at once, no review."""
    with Memory.open(tmp_path, fsync="never", profile="low") as mem:
        mem.observe("Our default branch is main.", now=day(0), origin="agent")
        (new,) = mem.observe("Our default branch is trunk.", now=day(1), origin="agent")
        assert mem.approvals() == [] and mem.history("default branch")[-1].id == new


def test_as_of_is_exact_at_valid_and_known_boundaries(tmp_path: Path) -> None:
    """True from valid_from (inclusive) to the next valid_from (exclusive); known from adoption (inclusive)."""
    with Memory.open(tmp_path, fsync="never", profile="low") as mem:
        (a,) = mem.observe("Our default branch is main.", now=day(0))
        (b,) = mem.observe("Our default branch is trunk.", now=day(10), origin="agent")
        mem.approve(b, now=day(12))  # valid from day 10, known from day 12
        tick = timedelta(microseconds=1)
        assert mem.as_of("default branch", day(0) - tick) is None
        assert mem.as_of("default branch", day(0)).id == a  # type: ignore[union-attr]
        assert mem.as_of("default branch", day(10) - tick).id == a  # type: ignore[union-attr]
        assert mem.as_of("default branch", day(10)).id == b  # type: ignore[union-attr]
        assert mem.as_of("default branch", day(10), known_at=day(12) - tick).id == a  # type: ignore[union-attr]
        assert mem.as_of("default branch", day(10), known_at=day(12)).id == b  # type: ignore[union-attr]
        assert mem.as_of("default branch", day(5), known_at=day(0) - tick) is None
        as_known = mem.as_of("default branch", day(11), known_at=day(11))
        assert as_known is not None and as_known.id == a and as_known.valid_to is None and as_known.current is False
        assert mem.as_of("nothing said about this", day(1)) is None


def test_live_versions_are_bounded_and_the_journal_keeps_all(tmp_path: Path) -> None:
    """With the default bound 5, the oldest versions leave recall; history and get still have them."""
    with Memory.open(tmp_path, fsync="never") as mem:
        ids = [mem.observe(f"My favorite editor is editor{i}.", now=day(i))[0] for i in range(8)]
        chain = mem.history("favorite editor")
        assert [v.live for v in chain] == [False] * 3 + [True] * 5
        hits = mem.recall({"subject": "favorite editor"}, k=20, now=day(9)).hits
        assert sorted(h.id for h in hits) == sorted(ids[3:])
        assert all(mem.get(i).narrative == f"My favorite editor is editor{n}." for n, i in enumerate(ids))
        assert mem.as_of("favorite editor", day(0.5)).id == ids[0]  # type: ignore[union-attr]
    assert journal_ops(tmp_path).count("remember") == 8 and journal_ops(tmp_path).count("retire") == 3


def test_the_bound_is_the_profiles(tmp_path: Path) -> None:
    """A profile with max_live_versions=2 keeps two live."""
    from dataclasses import replace

    from cuemem.lifecycle.profiles import PROFILES

    with Memory.open(tmp_path, fsync="never", profile=replace(PROFILES["medium"], max_live_versions=2)) as mem:
        for i in range(4):
            mem.observe(f"Our default branch is b{i}.", now=day(i))
        assert [v.live for v in mem.history("default branch")] == [False, False, True, True]


def test_versions_are_per_user(tmp_path: Path) -> None:
    """The same subject of two users: two chains, no supersede across them."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.observe("My favorite editor is vim.", now=day(0), user_id="alice")
        mem.observe("My favorite editor is emacs.", now=day(1), user_id="bob")
        assert len(mem.history("favorite editor", user_id="alice")) == 1 and mem.history("favorite editor", user_id="default") == []
        with pytest.raises(ScopeError):  # two users: a per-user read names one
            mem.history("favorite editor")


def test_rebuild_and_reopen_give_the_same_versions(tmp_path: Path) -> None:
    """The life-cycle state from the cache, from a rebuild and live are equal; recall agrees."""
    with Memory.open(tmp_path, fsync="never", profile="low") as mem:
        for i in range(7):
            mem.observe(f"My favorite editor is e{i}.", now=day(i))
        mem.observe("My favorite editor is zed.", now=day(8), origin="agent")
        live = mem._home.indexes.lifecycle.to_json()
        answer = [h.id for h in mem.recall({"subject": "favorite editor"}, k=20, now=day(9)).hits]
    with Memory.open(tmp_path) as mem:
        assert mem.open_report.index == "loaded" and mem._home.indexes.lifecycle.to_json() == live
        mem.rebuild()
        assert mem._home.indexes.lifecycle.to_json() == live
        assert [h.id for h in mem.recall({"subject": "favorite editor"}, k=20, now=day(9)).hits] == answer
    (tmp_path / "index" / "recipe.json").unlink()
    with Memory.open(tmp_path, read_only=True) as mem:
        assert mem.open_report.index.startswith("rebuilt") and mem._home.indexes.lifecycle.to_json() == live


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    """Non-string or blank subjects and non-times: typed errors."""
    with Memory.open(tmp_path, fsync="never") as mem:
        with pytest.raises(CueTypeError):
            mem.history(3)  # type: ignore[arg-type]
        with pytest.raises(SchemaError):
            mem.history("   ")
        with pytest.raises(SchemaError):
            mem.as_of("x", "yesterday")  # type: ignore[arg-type]
        with pytest.raises(SchemaError):
            mem.as_of("x", day(0), known_at=5)  # type: ignore[arg-type]


def test_beyond_bound_keeps_the_newest() -> None:
    """The oldest beyond the bound, in order; nothing when within it."""
    assert beyond_bound(["a", "b", "c"], 5) == [] and beyond_bound(["a", "b", "c"], 1) == ["a", "b"]


def _oracle(chain: list[tuple[int, int]], t: int, k: int | None) -> int | None:
    """Brute force: of the versions adopted by k, the last adopted whose [from, next known from) holds t."""
    known = [(i, f) for i, (f, a) in enumerate(chain) if k is None or a <= k]
    found = None
    for j, (i, f) in enumerate(known):
        end = known[j + 1][1] if j + 1 < len(known) else None
        if f <= t and (end is None or t < end):
            found = i
    return found


@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 10)), min_size=0, max_size=8),
    st.integers(-2, 60),
    st.one_of(st.none(), st.integers(-2, 60)),
)
def test_as_of_agrees_with_a_brute_force_oracle(steps: list[tuple[int, int]], t: int, k: int | None) -> None:
    """Random chains (adoption never before valid time): ``as_of`` equals the oracle at every T and K."""
    chain = [(f, f + lag) for f, lag in steps]
    chain.sort(key=lambda fa: fa[1])  # adoption order
    entries = [VersionEntry(f"v{i}", day(f).isoformat(), day(a).isoformat()) for i, (f, a) in enumerate(chain)]
    got = as_of(entries, day(t), None if k is None else day(k))
    want = _oracle(chain, t, k)
    assert (got.id if got else None) == (None if want is None else f"v{want}")
    spans = validity(entries)
    assert len(spans) == len(entries)


def test_a_reader_follows_versions_with_refresh(tmp_path: Path) -> None:
    """A read-only handle sees new versions and retirements after refresh."""
    with Memory.open(tmp_path, fsync="never") as writer:
        writer.observe("My favorite editor is vim.", now=day(0))
        with Memory.open(tmp_path, read_only=True) as reader:
            assert len(reader.history("favorite editor")) == 1
            for i in range(6):
                writer.observe(f"My favorite editor is e{i}.", now=day(i + 1))
            reader.refresh()
            assert [v.live for v in reader.history("favorite editor")] == [v.live for v in writer.history("favorite editor")]
            assert reader.recall({"subject": "favorite editor"}, k=20, now=day(9)).total == 5
