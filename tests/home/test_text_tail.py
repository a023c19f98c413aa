"""The text index's tail (``home/textindex.py``): rows remembered since the last commit are searched in memory, answering as a commit would."""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuemem import Memory, _core
from cuemem.text import TextWeights

NOW = datetime(2026, 6, 15, tzinfo=timezone.utc)
T = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)
WORDS = ["adoption", "agency", "lunch", "team", "letter", "paperwork", "sync", "thursday", "東京", "会議", "quokka", "the", "said"]
ACTORS = ["kim", "lee", "ana"]
WEIGHTS = [TextWeights(), TextWeights.plain(), TextWeights(salience=0.0, freshness=0.3)]

narratives = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
memories = st.tuples(narratives, st.sampled_from(ACTORS), st.integers(0, 10), st.floats(0.0, 1.0))

Answer = list[tuple[str, float]]


def _remember(mem: Memory, items: list[tuple[str, str, int, float]], start: int) -> None:
    for i, (text, actor, day, importance) in enumerate(items, start):
        mem.remember(text, id=f"m-{i}", actors=[actor], thread=f"t-{i % 3}", occurred_at=T + timedelta(days=day), importance=importance, now=NOW)


def _answers(mem: Memory, queries: list[str]) -> list[Answer]:
    out = []
    for q in queries:
        for weights in WEIGHTS:
            for cues in ({}, {"actor": "kim"}):
                res = mem.recall(cues, text=q, k=6, now=NOW, weights=weights)
                out.append([(h.id, h.score) for h in res.hits])
    return out


def _same(tail: Answer, committed: Answer) -> None:
    """The same ids in the same order, the same scores within float tolerance (a swap
    only between scores equal up to rounding: a float sum taken in another order). An id
    past the committed answer's cut may come in only in a tie with that cut's last score."""
    assert len(tail) == len(committed), (tail, committed)
    scores = dict(committed)
    cut = committed[-1][1] if committed else float("inf")
    for (tid, ts), (cid, cs) in zip(tail, committed):
        assert abs(ts - cs) <= 1e-5 * max(1.0, abs(cs)), (tail, committed)
        assert tid == cid or abs(scores.get(tid, cut) - ts) <= 1e-5 * max(1.0, abs(ts)), (tail, committed)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    committed=st.lists(memories, max_size=12),
    tail=st.lists(memories, min_size=1, max_size=8),
    queries=st.lists(narratives, min_size=1, max_size=3),
)
def test_recall_with_the_tail_in_memory_answers_as_after_a_commit(
    committed: list[tuple[str, str, int, float]], tail: list[tuple[str, str, int, float]], queries: list[str]
) -> None:
    """Text recalls right after remembers (the tail searched in memory) give the ids, order and scores they give once committed."""
    with tempfile.TemporaryDirectory() as tmp, Memory.open(Path(tmp) / "home", fsync="never") as mem:
        _remember(mem, committed, 0)
        mem.save_index()
        _remember(mem, tail, len(committed))
        before = _answers(mem, queries)
        mem.save_index()
        after = _answers(mem, queries)
        for b, a in zip(before, after):
            _same(b, a)


@pytest.mark.embedded_only("a directory's reader sees the text index's last commit (a shared home's reader sees every acknowledged write)")
def test_a_recall_right_after_a_remember_finds_it_without_a_commit(tmp_path: Path) -> None:
    """A remembered memory is found at once; a reader sees it only once the writer commits (save_index)."""
    home = tmp_path / "home"
    with Memory.open(home, fsync="never") as mem:
        mem.remember("the quokka signed the lease", id="first", now=NOW)
        mem.save_index()
        mem.remember("a second quokka arrived", id="second", now=NOW)
        assert [h.id for h in mem.recall(text="quokka", now=NOW).hits] == ["second", "first"]
        with Memory.open(home, read_only=True) as reader:
            assert [h.id for h in reader.recall(text="quokka", now=NOW).hits] == ["first"]
            mem.save_index()
            reader.refresh()
            assert {h.id for h in reader.recall(text="quokka", now=NOW).hits} == {"first", "second"}


def test_past_the_tail_bound_a_recall_commits_and_still_finds_everything(tmp_path: Path) -> None:
    """More rows than the tail holds, remembered without a recall between: the next recall commits them and finds them all."""
    n = _core.TextIndex.tail_limit + 5
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        mem.import_records(({"narrative": f"wombat number {i}", "id": f"w-{i}"} for i in range(n)), now=NOW)
        mem.remember("one more wombat", id="last", now=NOW)
        assert len(mem.recall(text="wombat", k=n + 1, now=NOW).hits) == n + 1
        with Memory.open(tmp_path / "home", read_only=True) as reader:
            assert len(reader.recall(text="wombat", k=n + 1, now=NOW).hits) == n + 1


def test_a_forgotten_memory_leaves_the_tail_at_once(tmp_path: Path) -> None:
    """Forget right after remember: neither recall nor the index's terms keep what was erased."""
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        mem.remember("lunch with the team", id="keep", now=NOW)
        mem.save_index()
        mem.remember("the zebrafish secret", id="gone", now=NOW)
        mem.remember("lunch again", id="also", now=NOW)
        assert [h.id for h in mem.recall(text="zebrafish", now=NOW).hits] == ["gone"]
        mem.forget("gone", now=NOW)
        assert mem.recall(text="zebrafish", now=NOW).hits == []
        assert [h.id for h in mem.recall(text="lunch", now=NOW).hits] == ["also", "keep"]
        (directory,) = [d for d in (mem.path / "index" / "text").iterdir() if d.is_dir()]
        files = _core.TextIndex(directory, "stem-bigram", False)
        assert not files.holds_terms("zebrafish") and files.holds_terms("lunch")
