"""``CuememStore``'s semantic index (LangGraph's ``IndexConfig`` over the home's vectors) and TTL (over the home's records, one clock)."""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from langchain_core.embeddings import Embeddings  # noqa: E402

from cuemem.errors import InvalidArgumentError  # noqa: E402
from cuemem.integrations.langgraph import CuememStore, LangGraphEmbedder  # noqa: E402

DIMS = 64


def _vector(text: str) -> list[float]:
    """A deterministic bag-of-words vector: each word adds to one coordinate chosen by its digest."""
    out = [0.0] * DIMS
    for word in text.lower().replace('"', " ").replace(":", " ").replace("{", " ").replace("}", " ").split():
        out[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMS] += 1.0
    return out


def _cosine(a: list[float], b: list[float]) -> float:
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(x * x for x in b))
    return 0.0 if not na or not nb else sum(x * y for x, y in zip(a, b)) / (na * nb)


class Words(Embeddings):
    """A small real embedding model (bag of words) that counts the texts it embeds."""

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += texts
        return [_vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return _vector(text)


class Clock:
    """The store's one clock, moved by hand."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 3, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def words() -> Words:
    return Words()


@pytest.fixture
def store(tmp_path: Path, words: Words) -> Iterator[CuememStore]:
    with CuememStore.open(tmp_path / "home", fsync="never", index={"dims": DIMS, "embed": words, "fields": ["text"]}) as opened:
        yield opened


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_query_ranks_items_by_the_cosine_of_their_vectors(store: CuememStore, words: Words) -> None:
    """search(query=...) returns every item under the prefix, best cosine first, the score being that cosine."""
    texts = {"a": "red apple pie", "b": "blue car", "c": "green apple", "d": "apple"}
    for key, text in texts.items():
        store.put(("docs",), key, {"text": text, "n": len(text)})
    found = store.search(("docs",), query="apple pie")
    assert [h.key for h in found][:2] == ["a", "d"] and len(found) == 4
    for hit in found:
        assert hit.score == pytest.approx(_cosine(_vector("apple pie"), _vector(texts[hit.key])), abs=1e-5)
    assert store.index_config == {"dims": DIMS, "embed": words, "fields": ["text"]} and store.embeddings is words
    assert [h.key for h in store.search(("docs",), query="apple", filter={"n": {"$lt": 12}})] == ["d", "c", "b"]
    assert [h.key for h in store.search(("docs",), query="apple pie", limit=2, offset=1)] == [h.key for h in found[1:3]]


def test_paging_and_filters_follow_the_ranking(store: CuememStore) -> None:
    """offset/limit page through the ranking a query gives; a filter keeps its order."""
    for i in range(12):
        store.put(("p",), f"k{i}", {"text": "word " * (i + 1) + "other", "even": i % 2 == 0})
    full = [h.key for h in store.search(("p",), query="word", limit=100)]
    assert len(full) == 12
    assert [h.key for o in range(0, 12, 5) for h in store.search(("p",), query="word", limit=5, offset=o)] == full
    even = [h.key for h in store.search(("p",), query="word", filter={"even": True}, limit=100)]
    assert even == [k for k in full if int(k[1:]) % 2 == 0]


def test_a_puts_own_index_chooses_what_is_embedded(store: CuememStore, words: Words) -> None:
    """put(index=[...]) embeds those fields; index=False nothing (the item comes last, unscored)."""
    store.put(("d",), "own", {"text": "zebra", "title": "apple"}, index=["title"])
    store.put(("d",), "none", {"text": "apple"}, index=False)
    store.put(("d",), "default", {"text": "apple zebra"})
    found = store.search(("d",), query="apple")
    assert [(h.key, None if h.score is None else round(h.score, 4)) for h in found] == [
        ("own", 1.0), ("default", round(_cosine(_vector("apple"), _vector("apple zebra")), 4)), ("none", None),
    ]
    assert sorted(words.embedded) == ["apple", "apple zebra"]  # the field chosen, never the unindexed item


def test_an_item_of_several_texts_scores_its_best_text(tmp_path: Path) -> None:
    """With a path that finds several texts, an item's score is its best text's cosine, as in LangGraph's stores."""
    words = Words()
    with CuememStore.open(tmp_path / "h", fsync="never", index={"dims": DIMS, "embed": words, "fields": ["notes[*]"]}) as store:
        store.put(("d",), "many", {"notes": ["apple pie", "zebra", "tiger lion"]})
        store.put(("d",), "one", {"notes": ["apple tart"]})
        found = store.search(("d",), query="zebra")
        assert [(h.key, round(h.score or 0, 4)) for h in found] == [("many", 1.0), ("one", round(_cosine(_vector("zebra"), _vector("apple tart")), 4))]
        assert store.search(("d",), query="tiger lion", limit=1)[0].score == pytest.approx(1.0)
    with CuememStore.open(tmp_path / "h", fsync="never", index={"dims": DIMS, "embed": Words(), "fields": ["notes[*]"]}) as reopened:
        assert reopened.search(("d",), query="apple pie")[0].key == "many"  # the texts embedded again after a reopen


def test_an_overwritten_deleted_or_forgotten_item_does_not_come_back(store: CuememStore) -> None:
    """A put again replaces the item's vector; a delete or an erasure takes it out of every search."""
    store.put(("d",), "k", {"text": "zebra stripes"})
    store.put(("d",), "j", {"text": "lion mane"})
    assert store.search(("d",), query="zebra stripes")[0].score == pytest.approx(1.0)
    store.put(("d",), "k", {"text": "tiger"})
    after = store.search(("d",), query="zebra stripes")
    assert sorted(h.key for h in after) == ["j", "k"] and all(h.score is not None and h.score < 0.5 for h in after)
    assert {h.key: h.value["text"] for h in store.search(("d",), query="tiger")} == {"k": "tiger", "j": "lion mane"}
    store.delete(("d",), "k")
    assert [h.key for h in store.search(("d",), query="tiger")] == ["j"]
    (hit,) = store.memory.recall({"tag": "lg:d"}, text="lion", k=5).hits
    store.memory.forget(hit.id)
    store.refresh()
    assert store.search(("d",), query="lion mane") == [] and store.get(("d",), "j") is None


def test_the_vectors_live_in_the_home_and_survive_a_reopen(tmp_path: Path) -> None:
    """The home's vector cache keeps the item vectors: a reopened store searches without embedding again."""
    config = {"dims": DIMS, "embed": Words(), "fields": ["text"]}
    with CuememStore.open(tmp_path / "h", fsync="never", index=config) as first:
        first.put(("d",), "a", {"text": "apple"})
        first.put(("d",), "b", {"text": "banana"})
        before = [(h.key, h.score) for h in first.search(("d",), query="apple")]
    again = Words()
    with CuememStore.open(tmp_path / "h", fsync="never", index={**config, "embed": again}) as second:
        assert [(h.key, h.score) for h in second.search(("d",), query="apple")] == before
        assert again.embedded == []
        assert (tmp_path / "h" / "index" / "vectors").is_dir()


def test_embed_may_be_a_function_sync_or_async(tmp_path: Path) -> None:
    """A plain function and an async one both embed, through the sync and the async API."""

    def sync_embed(texts: list[str]) -> list[list[float]]:
        return [_vector(t) for t in texts]

    async def async_embed(texts: list[str]) -> list[list[float]]:
        return [_vector(t) for t in texts]

    for embed in (sync_embed, async_embed):
        with CuememStore.open(tmp_path / embed.__name__, fsync="never", index={"dims": DIMS, "embed": embed}) as store:
            store.put(("d",), "a", {"text": "apple"})
            store.put(("d",), "b", {"text": "kiwi"})

            async def run(s: CuememStore = store) -> list[str]:
                return [h.key for h in await s.asearch(("d",), query="kiwi")]

            assert asyncio.run(run()) == ["b", "a"]
            assert [h.key for h in store.search(("d",), query="apple")] == ["a", "b"]


def test_a_bad_index_or_ttl_config_is_refused(tmp_path: Path) -> None:
    """A malformed IndexConfig, TTLConfig or clock is a typed error and opens nothing."""
    for index in [{"dims": 0, "embed": Words()}, {"dims": 4}, {"dims": 4, "embed": Words(), "fields": "text"}, {"dims": True, "embed": Words()}, {"dims": 4, "embed": 5}, "x"]:
        with pytest.raises(InvalidArgumentError):
            CuememStore.open(tmp_path / "bad", index=index)  # type: ignore[arg-type]
    for ttl in [{"default_ttl": -1}, {"refresh_on_read": "yes"}, {"ttl": 5}, [("default_ttl", 1)]]:
        with pytest.raises(InvalidArgumentError):
            CuememStore.open(tmp_path / "bad", ttl=ttl)  # type: ignore[arg-type]
    for clock in [lambda: datetime(2026, 1, 1), "now", lambda: "2026-01-01"]:
        with pytest.raises(InvalidArgumentError):
            CuememStore.open(tmp_path / "bad", clock=clock)  # type: ignore[arg-type]
    assert not (tmp_path / "bad").exists()
    with pytest.raises(InvalidArgumentError):
        LangGraphEmbedder({"dims": 3, "embed": lambda texts: [[1.0, 0.0] for _ in texts]}).passages(['langgraph\n{"a": "x"}'])


def subjects(store: CuememStore) -> set[str | None]:
    """The subjects of the records the home's own text recall finds under ``("a",)``."""
    return {store.memory.get(h.id).subject for h in store.memory.recall({"tag": "lg:a"}, text="apple", k=50).hits}


def test_an_expired_item_is_gone_from_every_path(tmp_path: Path, clock: Clock) -> None:
    """Past its TTL an item leaves get, search and list_namespaces; a sweep retires its record from the home."""
    with CuememStore.open(tmp_path / "h", fsync="never", ttl={"default_ttl": 2}, clock=clock) as store:
        store.put(("a", "b"), "short", {"text": "apple"})
        store.put(("a", "c"), "long", {"text": "apple"}, ttl=10)
        store.put(("a", "d"), "always", {"text": "apple"}, ttl=None)
        clock.advance(minutes=1, seconds=59)
        assert store.get(("a", "b"), "short", refresh_ttl=False) is not None
        clock.advance(seconds=1)
        assert store.get(("a", "b"), "short") is None
        assert sorted(h.key for h in store.search(("a",))) == ["always", "long"]
        assert sorted(h.key for h in store.search(("a",), query="apple")) == ["always", "long"]
        assert store.list_namespaces() == [("a", "c"), ("a", "d")]
        assert subjects(store) == {"langgraph/a/b#short", "langgraph/a/c#long", "langgraph/a/d#always"}  # the home's own recall: until the sweep
        assert store.sweep_ttl() == 1 and store.sweep_ttl() == 0
        assert subjects(store) == {"langgraph/a/c#long", "langgraph/a/d#always"}
        clock.advance(minutes=10)
        assert store.sweep_ttl() == 1
        assert [h.key for h in store.search(())] == ["always"]
        store.put(("a", "b"), "short", {"text": "apple"}, ttl=None)  # written again after it expired: a new item
        again = store.get(("a", "b"), "short")
        assert again is not None and again.created_at == clock.now
    with CuememStore.open(tmp_path / "h", fsync="never", clock=clock) as reopened:
        assert sorted(h.key for h in reopened.search(())) == ["always", "short"]


def test_a_read_refreshes_the_ttl_unless_told_not_to(tmp_path: Path, clock: Clock) -> None:
    """refresh_on_read (default True) restarts an item's TTL at a get or search (unless it restarted less than 1% of it ago); refresh_ttl=False does not."""
    with CuememStore.open(tmp_path / "h", fsync="never", ttl={"default_ttl": 1}, clock=clock) as store:
        store.put(("n",), "a", {"v": 1})
        store.put(("n",), "b", {"v": 2})
        first = store.get(("n",), "a")
        assert first is not None
        clock.advance(seconds=50)
        assert [h.key for h in store.search(("n",), filter={"v": 1})] == ["a"]  # refreshes a only
        assert store.get(("n",), "b", refresh_ttl=False) is not None
        clock.advance(seconds=50)
        assert store.get(("n",), "b") is None
        kept = store.get(("n",), "a")
        assert kept is not None and (kept.value, kept.created_at, kept.updated_at) == (first.value, first.created_at, first.updated_at)
        assert len(store.memory.history("langgraph/n#a")) == 3  # the put, the search's refresh, this get's
        for _ in range(5):  # a burst of reads (less than 1% of the TTL apart) restarts it once
            clock.advance(seconds=0.1)
            assert store.get(("n",), "a") is not None
        assert len(store.memory.history("langgraph/n#a")) == 3
    with CuememStore.open(tmp_path / "h2", fsync="never", ttl={"default_ttl": 1, "refresh_on_read": False}, clock=clock) as store:
        store.put(("n",), "a", {"v": 1})
        clock.advance(seconds=50)
        assert store.get(("n",), "a") is not None
        clock.advance(seconds=50)
        assert store.get(("n",), "a") is None and store.get(("n",), "a", refresh_ttl=True) is None


def test_the_sweeper_thread_sweeps_and_stops(tmp_path: Path, clock: Clock) -> None:
    """start_ttl_sweeper sweeps every sweep_interval_minutes; stop_ttl_sweeper ends it; without a TTL config it does nothing."""
    with CuememStore.open(tmp_path / "h", fsync="never", ttl={"default_ttl": 1, "sweep_interval_minutes": 0.001}, clock=clock) as store:
        store.put(("n",), "a", {"v": 1})
        future = store.start_ttl_sweeper()
        clock.advance(minutes=2)
        deadline = time.monotonic() + 10
        while store.memory.recall({"tag": "lg:n"}, k=5).hits and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store.memory.recall({"tag": "lg:n"}, k=5).hits == []
        assert store.stop_ttl_sweeper(timeout=5) and future.result(timeout=5) is None
    with CuememStore.open(tmp_path / "h2", fsync="never") as plain:
        assert plain.start_ttl_sweeper().done() and plain.stop_ttl_sweeper()
