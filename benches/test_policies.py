"""Policy distillation and judge, next to what a user would write in Python.

``CUEMEM_BENCH_POLICY_N`` sets the outcome episodes (default 100,000); the judge
benchmarks use the 10,000 most confident policies mined from them.
"""

from __future__ import annotations

import os

import pytest

from cuemem.lab.bench.policies import _python_counter, _scan_judge, make_outcome_episodes, make_situations
from cuemem.policy import Policy, PolicyBook, distill_policies
from cuemem.schema import Episode


@pytest.fixture(scope="module")
def episodes() -> list[Episode]:
    """The outcome episodes."""
    return make_outcome_episodes(int(os.environ.get("CUEMEM_BENCH_POLICY_N", "100000")))


@pytest.fixture(scope="module")
def book(episodes: list[Episode]) -> list[Policy]:
    """The 10,000 most confident policies."""
    return distill_policies(episodes)[:10_000]


def test_distill_cuemem(benchmark, episodes: list[Episode]) -> None:  # type: ignore[no-untyped-def]
    """distill_policies: closed cue sets mined in the core."""
    benchmark.pedantic(distill_policies, args=(episodes,), rounds=3, iterations=1)


def test_distill_python_counter(benchmark, episodes: list[Episode]) -> None:  # type: ignore[no-untyped-def]
    """Baseline: every cue combination of up to three cues counted with a Counter."""
    benchmark.pedantic(_python_counter, args=(episodes, 2), rounds=3, iterations=1)


def test_judge_cuemem(benchmark, book: list[Policy]) -> None:  # type: ignore[no-untyped-def]
    """PolicyBook.judge over 10,000 policies, one situation per call."""
    b = PolicyBook(book)
    situations = iter(make_situations(book, 100_000) * 10)
    benchmark(lambda: b.judge(next(situations)))


def test_judge_python_scan(benchmark, book: list[Policy]) -> None:  # type: ignore[no-untyped-def]
    """Baseline: test every policy's cause against the situation."""
    situations = iter(make_situations(book, 10_000) * 10)
    benchmark(lambda: _scan_judge(book, next(situations)))
