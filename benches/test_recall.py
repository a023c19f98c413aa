"""Recall over the whole query mix, one benchmark per system (group "recall")."""

from __future__ import annotations

import pytest

from cuemem.lab.bench.queries import K, NOW, Query
from cuemem.lab.bench.systems import SYSTEMS, System


@pytest.mark.parametrize("name", SYSTEMS)
def test_recall_query_mix(benchmark, systems: dict[str, System], queries: list[Query], name: str) -> None:
    """Time one pass of every query of the mix through one system."""
    benchmark.group = "recall"
    system = systems[name]

    def run() -> None:
        for q in queries:
            system.recall(q.cues, q.exclude, NOW, K)

    benchmark(run)
