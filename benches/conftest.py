"""Session fixtures for the pytest-benchmark suite: one corpus, every system built once.

Run on purpose with ``pytest benches/ --benchmark-only``; ``CUEMEM_BENCH_N``
sets the corpus size (default 100,000 episodes).
"""

from __future__ import annotations

import os

import pytest

from cuemem.lab.bench.agreement import check_agreement
from cuemem.lab.bench.corpus import Corpus, make_corpus
from cuemem.lab.bench.queries import K, NOW, Query, make_queries
from cuemem.lab.bench.reference import Columns, Ranking
from cuemem.lab.bench.systems import SYSTEMS, System, make_system


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    """The benchmark corpus, sized by ``CUEMEM_BENCH_N``."""
    return make_corpus(int(os.environ.get("CUEMEM_BENCH_N", "100000")))


@pytest.fixture(scope="session")
def queries(corpus: Corpus) -> list[Query]:
    """The fixed query mix over the corpus."""
    return make_queries(corpus)


@pytest.fixture(scope="session")
def ranking() -> Ranking:
    """cuemem's default weights and half-lives."""
    return Ranking.from_cuemem()


@pytest.fixture(scope="session")
def columns(corpus: Corpus) -> Columns:
    """The corpus columns the numpy reference scores with."""
    return Columns.of(corpus)


@pytest.fixture(scope="session")
def systems(corpus: Corpus, queries: list[Query], ranking: Ranking, columns: Columns) -> dict[str, System]:
    """Every system, built once and checked to agree on the query mix before timing."""
    built = {name: make_system(name, ranking) for name in SYSTEMS}
    for system in built.values():
        system.build(corpus)
    answers = {
        name: [s.recall(q.cues, q.exclude, NOW, K) for q in queries] for name, s in built.items()
    }
    check_agreement(answers, queries, columns, ranking, NOW, K)
    return built
