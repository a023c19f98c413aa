"""The forget benchmark (bench/forget.py) at a small scale: it runs through the public API and reports every call."""

from __future__ import annotations

from rich.console import Console

from cuemem.lab.bench import forget


def test_the_forget_benchmark_forgets_what_it_says_and_renders() -> None:
    """Each timed call forgets the records it should (asserted inside) and the table prints."""
    result = forget.measure(2_000, seed=3)
    assert result["timings"]["one episode, erase"]["forgotten"] == forget.DERIVATIVES + 1
    assert result["timings"]["one user (1%), erase"]["lines"] >= result["leaver_records"]
    console = Console(record=True, width=140)
    forget.render(result, console)
    assert "× rebuild" in console.export_text()
