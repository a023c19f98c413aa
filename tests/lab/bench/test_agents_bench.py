"""The agents benchmark at a small size: recall through cuemem mcp over stdio agrees with the handle, and is timed."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from cuemem.lab.bench.agents import measure_mcp  # noqa: E402


def test_measure_mcp_times_both_ways_after_checking_they_agree() -> None:
    """Both call kinds are timed in process and over MCP; measure_mcp raises if an answer differed."""
    result = measure_mcp(2_000, rounds=1, budget_s=5.0)
    assert set(result["recall"]) == {"cue recall", "text recall"}
    for ways in result["recall"].values():
        assert ways["in process"]["calls"] == ways["mcp stdio"]["calls"] > 0
        assert 0 < ways["in process"]["p50_us"] and 0 < ways["mcp stdio"]["p50_us"] and ways["ratio_p50"] > 0


def test_measure_store_times_both_stores_on_the_same_items() -> None:
    """CuememStore and InMemoryStore are each timed on prefix+filter and query searches over the same items."""
    pytest.importorskip("langgraph")
    from cuemem.lab.bench.agents import measure_store

    (row,) = measure_store((500,), rounds=1, budget_s=5.0).values()
    assert row["items"] == 500 and row["namespaces"] > 1
    for kind in ("prefix + filter", "query"):
        assert row[kind]["cuemem"]["calls"] == row[kind]["InMemoryStore"]["calls"] > 0
