"""The durable-write benchmark: the floor, remember under each policy, and threads, in one report."""

from __future__ import annotations

from rich.console import Console

from cuemem.lab.bench import durable


def test_the_report_holds_the_floor_every_policy_and_the_threads() -> None:
    """A tiny run reports positive figures for the floor, each policy and each thread count, and renders."""
    result = durable.measure(1_000, writes=16, threads=4, thread_writes=16)
    assert set(result["remember"]) == set(durable.POLICIES) and set(result["facts"]) == {"always", "never"}
    assert all(s["p50_us"] > 0 for s in result["facts"].values())
    assert result["floor"]["p50_us"] > 0 and all(s["p50_us"] > 0 for s in result["remember"].values())
    assert set(result["writes_per_s"]) == {"1", "4"} and all(v > 0 for d in result["writes_per_s"].values() for v in d.values())
    console = Console(record=True, width=120)
    durable.render(result, console)
    text = console.export_text()
    assert "fdatasync" in text and "a fact of a subject" in text
