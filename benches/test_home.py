"""The home through ``Memory``: import, open, recall against the core, durable remember.

Groups: "home import" (JSONL -> recall-ready), "home open" (cache loaded),
"home recall" (the query mix through ``Memory.recall`` and through the core on
the home's own indexes; ``Hit.record`` is lazy and never read), "home remember"
(one durable write per call, per fsync policy). The corpus is the session's
(``CUEMEM_BENCH_N`` episodes).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import cycle
from pathlib import Path
from typing import Any

import pytest

import cuemem
from cuemem import Memory
from cuemem.lab.bench.corpus import Corpus
from cuemem.lab.bench.home import episode_records, now_datetime, write_jsonl
from cuemem.lab.bench.queries import K, NOW, Query

REMEMBER_ROUNDS = 200


@pytest.fixture(scope="session")
def jsonl(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The corpus as a JSONL file of ``remember`` records."""
    path = tmp_path_factory.mktemp("home-bench") / "corpus.jsonl"
    write_jsonl(corpus, path)
    return path


@pytest.fixture(scope="session")
def home_path(jsonl: Path, corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed home holding the corpus, its index cache saved."""
    path = tmp_path_factory.mktemp("home-bench") / "home"
    with Memory.open(path, user="*", fsync="never") as mem:
        mem.import_jsonl(jsonl, now=now_datetime())
        assert len(mem) == corpus.n
    return path


@pytest.fixture(scope="session")
def reader(home_path: Path) -> Iterator[Memory]:
    """A read-only handle on the home, for recall."""
    with Memory.open(home_path, user="*", read_only=True) as mem:
        yield mem


def test_home_import(benchmark: Any, jsonl: Path, corpus: Corpus, queries: list[Query], tmp_path: Path) -> None:
    """Time open + ``import_jsonl`` + first recall into a fresh home (fsync "always")."""
    benchmark.group = "home import"
    now = now_datetime()
    first = queries[0]
    homes = iter(range(1_000))

    def run() -> int:
        with Memory.open(tmp_path / f"home-{next(homes)}", user="*") as mem:
            mem.import_jsonl(jsonl, now=now)
            mem.recall(first.cues, k=K, now=now, exclude=first.exclude)
            return len(mem)

    assert benchmark.pedantic(run, rounds=1, iterations=1) == corpus.n


def test_home_open(benchmark: Any, home_path: Path) -> None:
    """Time a writer's open of the closed home; it must load the cache, not replay the journal."""
    benchmark.group = "home open"
    handles: list[Memory] = []

    def close_previous() -> None:
        while handles:
            handles.pop().close()

    def run() -> str:
        handles.append(Memory.open(home_path, user="*"))
        return handles[-1].open_report.index

    try:
        how = benchmark.pedantic(run, setup=close_previous, rounds=5, iterations=1)
    finally:
        close_previous()
    assert how == "loaded"


@pytest.mark.parametrize("path", ["memory", "core"])
def test_home_recall_query_mix(benchmark: Any, reader: Memory, queries: list[Query], path: str) -> None:
    """Time one pass of the query mix through ``Memory.recall`` or the core on the same indexes."""
    benchmark.group = "home recall"
    now = now_datetime()
    cues, salience = reader._home.indexes.cues, reader._home.indexes.salience

    def through_memory() -> None:
        for q in queries:
            reader.recall(q.cues, k=K, now=now, exclude=q.exclude)

    def through_core() -> None:
        for q in queries:
            cuemem.recall(cues, salience, q.cues, now=NOW, k=K, exclude=q.exclude)

    benchmark(through_memory if path == "memory" else through_core)


@pytest.mark.parametrize("fsync", ["always", "never"])
def test_home_remember(benchmark: Any, home_path: Path, corpus: Corpus, fsync: str) -> None:
    """Time single ``remember`` calls on the open home under one fsync policy."""
    benchmark.group = "home remember"
    now = now_datetime()
    records = cycle(episode_records(corpus, 0, min(corpus.n, REMEMBER_ROUNDS)))
    with Memory.open(home_path, user="*", fsync=fsync) as mem:
        before = len(mem)
        benchmark.pedantic(lambda: mem.remember(**next(records), now=now), rounds=REMEMBER_ROUNDS, iterations=1)
        # A fact said again is a repetition of its subject's current version: no new row.
        assert before < len(mem) <= before + REMEMBER_ROUNDS
