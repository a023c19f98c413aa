"""The write-then-recall benchmark (bench/tail.py) at a small scale: both timings, the memory just written found, the table."""

from __future__ import annotations

from rich.console import Console

from cuemem.lab.bench import tail


def test_the_tail_benchmark_times_both_recalls_and_finds_each_new_memory() -> None:
    """Every pair is timed both ways, the tail's commits are counted, the new memories are found, and the table prints."""
    result = tail.measure(2_000, seed=3, pairs=60)
    assert result["commits"] == 0 and result["found"] > 0  # and every new memory searchable at once (checked inside)
    for key in ("alone", "after_remember"):
        assert 0 < result[key]["p50_us"] <= result[key]["p99_us"] <= result[key]["max_us"]
    console = Console(record=True, width=160)
    tail.render(result, console)
    assert "right after a remember" in console.export_text()
