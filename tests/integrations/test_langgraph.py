"""``cuemem.integrations.langgraph``: ``CuememStore`` against LangGraph's own ``InMemoryStore``, reopened, and inside a real graph."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict

import pytest

pytest.importorskip("langgraph")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from langgraph.config import get_store  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.runtime import Runtime  # noqa: E402
from langgraph.store.base import GetOp, InvalidNamespaceError, Item, Op, PutOp, Result, SearchOp  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from cuemem import Memory, Profile  # noqa: E402
from cuemem.errors import InvalidArgumentError  # noqa: E402
from cuemem.integrations.langgraph import CuememStore  # noqa: E402
from cuemem.lifecycle.profiles import PROFILES as PROFILES_BUILT_IN  # noqa: E402

NAMESPACES = [("a",), ("A",), ("a", "b"), ("a", "b", "c"), ("a", "x y"), ("b",), ("é", "b")]
PREFIXES = [(), ("a",), ("A",), ("a", "b"), ("b",), ("é",), ("zz",)]
KEYS = ["k", "K", "k k", "k  k", "ü", ""]
WORDS = ["apple", "Apple pie", "pear", "plum tart", "apple  pie", ""]
LOTS = 1_000


class Oracle(InMemoryStore):
    """``InMemoryStore`` whose namespaces exist only while they hold an item, as in LangGraph's database stores
    (``InMemoryStore`` keeps an empty namespace once any get, put or delete has named it)."""

    def batch(self, ops: Any) -> list[Result]:
        out = super().batch(ops)
        for namespace in [ns for ns, items in self._data.items() if not items]:
            del self._data[namespace]
        return out


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CuememStore]:
    with CuememStore.open(tmp_path / "home", fsync="never") as opened:
        yield opened


def _exact(value: Any) -> str:
    """A value as JSON text: equal only when exactly equal (``1``, ``1.0`` and ``True`` apart)."""
    return json.dumps(value)


def _item(item: Item | None) -> tuple[tuple[str, ...], str, str] | None:
    return None if item is None else (item.namespace, item.key, _exact(item.value))


def _everything(store: Any) -> list[tuple[tuple[str, ...], str, str, str, str]]:
    """Every item with its times, in a fixed order."""
    found = store.search((), limit=LOTS)
    return sorted((i.namespace, i.key, _exact(i.value), i.created_at.isoformat(), i.updated_at.isoformat()) for i in found)


#: Values that meet cuemem's rules on purpose: equal but for case or spacing, ``1`` / ``True`` / ``1.0``, words to search.
VALUES: list[dict[str, Any]] = [
    {"s": "apple"}, {"s": "Apple"}, {"s": "apple  pie"}, {"s": "Apple pie"}, {"n": 1}, {"n": True}, {"n": 1.0},
    {"s": "pear", "n": 2, "t": [0, 1]}, {"t": "plum tart", "n": -1}, {},
]
scalars = st.one_of(st.integers(-2, 2), st.booleans(), st.none(), st.sampled_from(WORDS))
values = st.one_of(st.sampled_from(VALUES), st.dictionaries(st.sampled_from(["n", "s", "t"]), scalars, max_size=3))
#: The medium profile, the high one (approvals for sensitive kinds) and one that retires every superseded version at once.
PROFILES: list[str | Profile] = ["medium", "high", dataclasses.replace(PROFILES_BUILT_IN["medium"], name="one-live", max_live_versions=1)]
filters = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["n", "s", "t"]), st.one_of(st.integers(-2, 2), st.booleans(), st.sampled_from(WORDS)), max_size=2),
    st.builds(lambda op, n: {"n": {op: n}}, st.sampled_from(["$gt", "$gte", "$lt", "$lte", "$ne", "$eq"]), st.integers(-2, 2)),
)
# Skewed towards a few slots and towards writes, so that items are often updated, deleted and written again.
namespaces = st.one_of(st.sampled_from(NAMESPACES[:2]), st.sampled_from(NAMESPACES))
keys = st.one_of(st.just(KEYS[0]), st.sampled_from(KEYS))
KINDS: dict[str, st.SearchStrategy[tuple[Any, ...]]] = {
    "put": st.tuples(st.just("put"), namespaces, keys, values),
    "delete": st.tuples(st.just("delete"), namespaces, keys),
    "get": st.tuples(st.just("get"), namespaces, keys),
    "search": st.tuples(st.just("search"), st.sampled_from(PREFIXES), filters, st.integers(1, 4), st.integers(0, 3)),
    "query": st.tuples(st.just("query"), st.sampled_from(PREFIXES), st.sampled_from(["apple", "pear", "plum"])),
    "namespaces": st.tuples(
        st.just("namespaces"), st.sampled_from([None, ("a",), ("*", "b")]), st.sampled_from([None, ("b",), ("*",)]),
        st.sampled_from([None, 1, 2]), st.integers(1, 5), st.integers(0, 3),
    ),
}
operations = st.sampled_from(["put"] * 5 + ["delete"] * 2 + ["get", "search", "query", "namespaces"]).flatmap(KINDS.__getitem__)


def _check(op: tuple[Any, ...], store: CuememStore, oracle: InMemoryStore) -> None:
    """Runs ``op`` on both stores and compares the answers."""
    name = op[0]
    if name == "put":
        store.put(op[1], op[2], op[3])
        oracle.put(op[1], op[2], op[3])
    elif name == "delete":
        store.delete(op[1], op[2])
        oracle.delete(op[1], op[2])
    elif name == "get":
        mine = store.get(op[1], op[2])
        assert _item(mine) == _item(oracle.get(op[1], op[2]))
        assert mine is None or mine.created_at <= mine.updated_at
    elif name == "search":
        _, prefix, wanted, limit, offset = op
        try:
            expected = {_item(i) for i in oracle.search(prefix, filter=wanted, limit=LOTS)}
        except (TypeError, ValueError):  # a "$gt" on a value that is no number
            with pytest.raises((TypeError, ValueError)):
                store.search(prefix, filter=wanted, limit=LOTS)
            return
        full = store.search(prefix, filter=wanted, limit=LOTS)
        assert {_item(i) for i in full} == expected and len(full) == len(expected)
        # InMemoryStore's order is its dicts' insertion order; this store's is newest first, and pages follow it.
        assert [i.updated_at for i in full] == sorted((i.updated_at for i in full), reverse=True)
        page = store.search(prefix, filter=wanted, limit=limit, offset=offset)
        assert [_item(i) for i in page] == [_item(i) for i in full[offset : offset + limit]]
    elif name == "query":
        _, prefix, word = op
        everything = {_item(i): i for i in oracle.search(prefix, limit=LOTS)}
        found = [_item(i) for i in store.search(prefix, query=word, limit=LOTS)]
        said = {k for k, i in everything.items() if any(isinstance(v, str) and word in v.lower().split() for v in i.value.values())}
        assert len(found) == len(set(found)) and said <= set(found) <= set(everything)
    else:
        _, prefix, suffix, depth, limit, offset = op
        asked = {"prefix": prefix, "suffix": suffix, "max_depth": depth, "limit": limit, "offset": offset}
        assert store.list_namespaces(**asked) == oracle.list_namespaces(**asked)


def _sweep() -> Iterator[tuple[Any, ...]]:
    """Every read the strategies can ask, once, whole: the end state compared from every side."""
    for prefix in PREFIXES:
        yield ("search", prefix, None, LOTS, 0)
        for word in ("apple", "pear", "plum"):
            yield ("query", prefix, word)
    for match in [None, ("a",), ("*", "b")]:
        for suffix in [None, ("b",), ("*",)]:
            for depth in [None, 1, 2]:
                yield ("namespaces", match, suffix, depth, LOTS, 0)


@given(st.sampled_from(PROFILES), st.lists(operations, min_size=8, max_size=40))
def test_random_operations_answer_as_langgraphs_in_memory_store(profile: str | Profile, ops: list[tuple[Any, ...]]) -> None:
    """Puts, deletes, gets, filtered, paged and text searches and namespace listings agree with InMemoryStore; a reopen changes nothing."""
    with tempfile.TemporaryDirectory() as home:
        oracle = Oracle()
        with CuememStore.open(home, fsync="never", profile=profile) as store:
            for op in ops:
                _check(op, store, oracle)
            for final in _sweep():
                _check(final, store, oracle)
            before = _everything(store)
        assert [row[:3] for row in before] == sorted((i.namespace, i.key, _exact(i.value)) for i in oracle.search((), limit=LOTS))
        with CuememStore.open(home, fsync="never", profile=profile) as again:
            assert _everything(again) == before
            assert again.list_namespaces(limit=LOTS) == oracle.list_namespaces(limit=LOTS)


def test_a_batch_reads_before_it_writes_and_its_last_put_wins(store: CuememStore) -> None:
    """In one batch, reads see the store as it was and the last put of a key wins, as in InMemoryStore."""
    oracle = InMemoryStore()
    ops: list[Op] = [
        PutOp(("a",), "k", {"v": 1}), GetOp(("a",), "k"), PutOp(("a",), "k", {"v": 2}), SearchOp(("a",)), PutOp(("a",), "j", {"v": 3}),
    ]
    for target in (store, oracle):
        target.put(("a",), "k", {"v": 0})
    mine, theirs = store.batch(ops), oracle.batch(ops)
    got, found = mine[1], mine[3]
    assert isinstance(got, Item) and isinstance(theirs[1], Item) and isinstance(found, list) and isinstance(theirs[3], list)
    assert _item(got) == _item(theirs[1]) == (("a",), "k", '{"v": 0}') and mine[0] is mine[2] is mine[4] is None
    assert [_item(i) for i in found if isinstance(i, Item)] == [_item(i) for i in theirs[3] if isinstance(i, Item)] != []
    assert {_item(i) for i in store.search(("a",))} == {_item(i) for i in oracle.search(("a",))}
    assert _item(store.get(("a",), "k")) == (("a",), "k", '{"v": 2}') and store.get(("a",), "j") is not None


def test_an_update_supersedes_and_a_delete_is_a_tombstone_version(store: CuememStore) -> None:
    """Each write is a version of the item's subject: the old value is in history, never in get or search."""
    ns = ("users", "Alice")
    store.put(ns, "food", {"likes": "ramen"})
    first = store.get(ns, "food")
    store.put(ns, "food", {"likes": "pizza"})
    second = store.get(ns, "food")
    assert first is not None and second is not None and second.value == {"likes": "pizza"}
    assert second.created_at == first.created_at < second.updated_at
    assert [i.key for i in store.search(("users",), query="ramen")] == []
    assert [i.value for i in store.search(("users",), query="pizza")] == [{"likes": "pizza"}]
    subject = "langgraph/users/~41lice#food"
    assert [json.loads(v.episode.narrative) for v in store.memory.history(subject)] == [{"likes": "ramen"}, {"likes": "pizza"}]
    store.delete(ns, "food")
    assert store.get(ns, "food") is None and store.search(()) == [] and store.list_namespaces() == []
    assert store.search(("users",), query="pizza") == []
    chain = store.memory.history(subject)
    assert [v.current for v in chain] == [False, False, True] and "lg-deleted" in chain[-1].episode.tags
    store.put(ns, "food", {"likes": "pizza"})  # back after a delete: a new item, created now
    third = store.get(ns, "food")
    assert third is not None and third.created_at == third.updated_at > second.updated_at


def test_a_text_search_fills_its_page_with_current_items_that_pass_the_filter(store: CuememStore) -> None:
    """Old versions and filtered-out items share the recall's pool; the search widens it until the page is full."""
    for version in range(3):
        for key in range(40):
            store.put(("notes",), f"n{key}", {"text": f"apple note {key} version {version}", "keep": key % 8 == 0})
    page = store.search(("notes",), query="apple note", filter={"keep": True}, limit=5)
    assert sorted(i.key for i in page) == [f"n{key}" for key in (0, 16, 24, 32, 8)]
    assert all(i.value["text"].endswith("version 2") and i.score is not None for i in page)
    later = store.search(("notes",), query="apple note", filter={"keep": True}, limit=3, offset=3)
    assert [i.key for i in later] == [i.key for i in page[3:]]


def test_values_that_differ_only_in_case_or_spacing_are_kept_apart(store: CuememStore) -> None:
    """cuemem's repetition rule ignores case and spacing; values, keys and namespaces still round-trip exactly."""
    store.put(("A",), "k", {"x": "Hello  World"})
    store.put(("a",), "k", {"x": "hello world"})
    store.put(("A",), "K", {"x": 1})
    store.put(("A",), "k", {"x": "hello world"})
    store.put(("A",), "K", {"x": True})
    store.put(("A",), "K", {"x": 1.0})
    assert _item(store.get(("A",), "k")) == (("A",), "k", '{"x": "hello world"}')
    assert _item(store.get(("a",), "k")) == (("a",), "k", '{"x": "hello world"}')
    assert _item(store.get(("A",), "K")) == (("A",), "K", '{"x": 1.0}')
    nested = {"z": [1, {"b": None, "a": "日本語"}], "a": -0.1, "big": 2**70, "text": "line\nbreak \ud800"}
    store.put(("A", "x y", "~7e/#"), "k/#~", nested)
    got = store.get(("A", "x y", "~7e/#"), "k/#~")
    assert got is not None and _exact(got.value) == _exact(nested) and list(got.value) == ["z", "a", "big", "text"]


def _answers(store: CuememStore) -> tuple[Any, ...]:
    """Everything a store says about the ``docs`` of the reopen test."""
    return _everything(store), store.list_namespaces(), [(i.namespace, i.key) for i in store.search(("docs",), query="python tutorial")]


def test_a_reopened_store_answers_the_same(tmp_path: Path) -> None:
    """Items, times, namespaces and text search come back from the home itself after a reopen."""
    home = tmp_path / "home"
    with CuememStore.open(home, fsync="never") as store:
        store.put(("docs",), "py", {"text": "Python tutorial for beginners"})
        store.put(("docs",), "ts", {"text": "TypeScript guide"})
        store.put(("docs", "old"), "py", {"text": "Perl tutorial"})
        store.put(("docs", "old"), "py", {"text": "Python two tutorial"})
        store.put(("docs",), "gone", {"text": "Python, deleted"})
        store.delete(("docs",), "gone")
        before = _answers(store)
    with CuememStore.open(home, fsync="never") as store:
        after = _answers(store)
        assert store.search(("docs",), query="perl") == []
    assert after == before and set(before[2]) == {(("docs",), "py"), (("docs", "old"), "py")}


def test_refresh_follows_another_writer(tmp_path: Path) -> None:
    """A store on a read-only handle sees what the writer's store wrote once it refreshes."""
    home = tmp_path / "home"
    with CuememStore.open(home, fsync="never") as writer:
        writer.put(("a",), "k", {"v": "first"})
        with CuememStore.open(home, read_only=True) as reader:
            writer.put(("a",), "k", {"v": "second"})
            writer.put(("a",), "j", {"v": "third"})
            assert _item(reader.get(("a",), "k")) == (("a",), "k", '{"v": "first"}') and reader.get(("a",), "j") is None
            reader.refresh()
            assert _everything(reader) == _everything(writer)


def test_items_belong_to_one_cuemem_user(tmp_path: Path) -> None:
    """On a home of several users each store reads and writes its own user's items, without a ScopeError."""
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        mem.remember("Bob's own memory.", user_id="bob")
        default, alice = CuememStore(mem), CuememStore(mem, user="alice")
        default.put(("prefs",), "theme", {"theme": "dark"})
        alice.put(("prefs",), "theme", {"theme": "light"})
        assert (default.user, alice.user) == ("default", "alice")
        assert default.get(("prefs",), "theme").value == {"theme": "dark"}  # type: ignore[union-attr]
        assert [i.value for i in alice.search(("prefs",), query="light")] == [{"theme": "light"}]
        assert alice.search(("prefs",), query="dark") == []
        assert CuememStore(mem.user("alice")).get(("prefs",), "theme").value == {"theme": "light"}  # type: ignore[union-attr]


def test_refused_operations_change_nothing(store: CuememStore) -> None:
    """A bad TTL or index, a bad namespace or a value that is not JSON is refused before any write of the batch."""
    store.put(("a",), "k", {"v": 1})
    for ttl in [-1, 0, float("nan"), float("inf"), "5", True]:
        with pytest.raises(InvalidArgumentError):
            store.batch([PutOp(("a",), "j", {"v": 2}), PutOp(("a",), "k", {"v": 2}, ttl=ttl)])  # type: ignore[arg-type]
    for index in ["text", [1], [""]]:
        with pytest.raises(InvalidArgumentError):
            store.batch([PutOp(("a",), "j", {"v": 2}), PutOp(("a",), "k", {"v": 2}, index=index)])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.batch([PutOp(("a",), "j", {"v": 2}), PutOp(("a",), "k", {"v": object()})])
    for bad in [(), ("a.b",), ("",)]:
        with pytest.raises(InvalidNamespaceError):
            store.batch([PutOp(("a",), "j", {"v": 2}), PutOp(bad, "k", {"v": 2})])
    assert [(i.key, i.value) for i in store.search(())] == [("k", {"v": 1})] and store.supports_ttl


def test_the_async_methods_run_the_same_operations(store: CuememStore) -> None:
    """aput, aget, asearch, adelete and alist_namespaces go through abatch."""

    async def script() -> tuple[Any, ...]:
        await store.aput(("a", "b"), "k", {"text": "async apple"})
        got = await store.aget(("a", "b"), "k")
        found = await store.asearch(("a",), query="apple")
        names = await store.alist_namespaces(prefix=("a",))
        await store.adelete(("a", "b"), "k")
        return got, found, names, await store.aget(("a", "b"), "k")

    got, found, names, gone = asyncio.run(script())
    assert got.value == {"text": "async apple"} and [i.key for i in found] == ["k"] and names == [("a", "b")] and gone is None


class Turn(TypedDict, total=False):
    """A graph's state: who speaks, what they said, what the memory gave back."""

    user: str
    said: str
    recalled: list[str]


def remember_node(state: Turn, runtime: Runtime[None]) -> Turn:
    """Writes what the user said to the store the graph was compiled with."""
    assert runtime.store is not None
    namespace = ("memories", state["user"])
    key = f"m{len(runtime.store.search(namespace, limit=LOTS))}"
    runtime.store.put(namespace, key, {"text": state["said"]})
    return {}


def recall_node(state: Turn) -> Turn:
    """Reads back, through ``get_store()``, the memories that share a word with a question."""
    found = get_store().search(("memories", state["user"]), query="what food do I like")
    return {"recalled": [item.value["text"] for item in found]}


def test_a_langgraph_graph_reads_and_writes_memory_through_the_store(tmp_path: Path) -> None:
    """A compiled StateGraph's nodes remember and recall through CuememStore; the memories outlive the graph."""
    builder = StateGraph(Turn)
    builder.add_node("remember", remember_node)
    builder.add_node("recall", recall_node)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    home = tmp_path / "home"
    with CuememStore.open(home, fsync="never") as store:
        graph = builder.compile(store=store)
        graph.invoke({"user": "alice", "said": "I like spicy food"})
        graph.invoke({"user": "bob", "said": "I like jazz"})
        out = graph.invoke({"user": "alice", "said": "The food I like most is ramen"})
    assert sorted(out["recalled"]) == ["I like spicy food", "The food I like most is ramen"]
    with CuememStore.open(home, fsync="never") as store:
        assert store.list_namespaces() == [("memories", "alice"), ("memories", "bob")]
        assert store.get(("memories", "bob"), "m0").value == {"text": "I like jazz"}  # type: ignore[union-attr]


def test_the_core_package_imports_without_langgraph() -> None:
    """``import cuemem`` (and ``cuemem.integrations``) never needs langgraph; only this module does."""
    code = (
        "import sys; sys.modules['langgraph'] = None\n"
        "import cuemem, cuemem.integrations\n"
        "try:\n    import cuemem.integrations.langgraph\nexcept ImportError:\n    print('refused')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "refused"
