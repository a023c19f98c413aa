"""The life-cycle jobs: weekly distillation over the session's corpus as a home, and the
consolidation of short-term items (``CUEMEM_BENCH_N`` of each).

Each round runs on a fresh copy of the home (copied untimed), since a run changes it.
``cuemem bench-jobs`` runs the same measurements at 1M / 100k and prints them.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory
from cuemem.lab.bench.corpus import Corpus
from cuemem.lab.bench.home import now_datetime, write_jsonl
from cuemem.lab.bench.jobs import build_short_home
from cuemem.jobs import consolidate
from cuemem.jobs.home import read_items

ROUNDS = 3


@pytest.fixture(scope="session")
def distill_home(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed home holding the corpus."""
    base = tmp_path_factory.mktemp("jobs-bench")
    write_jsonl(corpus, base / "corpus.jsonl")
    with Memory.open(base / "home", user="*", fsync="never") as mem:
        mem.import_jsonl(base / "corpus.jsonl", now=now_datetime())
    return base / "home"


@pytest.fixture(scope="session")
def short_home(corpus: Corpus, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed home of short-term items, as many as the corpus has episodes."""
    path = tmp_path_factory.mktemp("jobs-bench") / "short"
    build_short_home(path, corpus.n, now_datetime())
    return path


def _fresh(source: Path, tmp_path: Path) -> Any:
    counter = iter(range(1_000))

    def setup() -> tuple[tuple[Memory], dict[str, Any]]:
        copy = tmp_path / f"copy-{next(counter)}"
        shutil.copytree(source, copy)
        return (Memory.open(copy, user="*"),), {}

    return setup


def test_weekly_distillation(benchmark: Any, distill_home: Path, tmp_path: Path) -> None:
    """``Memory.distill`` three days after the corpus ends, fsync "always"."""
    benchmark.group = "jobs"
    now = now_datetime()

    def run(mem: Memory) -> int:
        try:
            return len(mem.distill(now=now).rungs)
        finally:
            mem.close()

    assert benchmark.pedantic(run, setup=_fresh(distill_home, tmp_path), rounds=ROUNDS) > 0


def test_consolidation(benchmark: Any, short_home: Path, tmp_path: Path) -> None:
    """``Memory.consolidate`` over every short-term item, fsync "always"."""
    benchmark.group = "jobs"
    now = now_datetime()

    def run(mem: Memory) -> int:
        try:
            return len(mem.consolidate(now=now).promoted)
        finally:
            mem.close()

    assert benchmark.pedantic(run, setup=_fresh(short_home, tmp_path), rounds=ROUNDS) > 0


def test_consolidation_pure(benchmark: Any, short_home: Path) -> None:
    """The pure ``consolidate`` over the same items, already read."""
    benchmark.group = "jobs"
    with Memory.open(short_home, user="*", read_only=True) as mem:
        items = read_items(mem._home, list(range(len(mem))))
    assert benchmark(consolidate, items, now_datetime())
