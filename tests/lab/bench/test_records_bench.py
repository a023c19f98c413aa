"""The records benchmark (bench/records.py) at a small scale: every path runs through the public API and renders."""

from __future__ import annotations

from rich.console import Console

from cuemem.lab.bench import records


def test_the_records_benchmark_times_every_path_against_the_floor() -> None:
    result = records.measure(2_000, seed=3)
    timings = result["timings"]
    assert list(timings) == [
        "tantivy-py indexes the narratives (the floor)", "import_jsonl, recall-ready", "rebuild()", "open from the journal (fresh process)",
    ]
    assert all(seconds > 0 for seconds in timings.values())
    assert result["facts"] == 200 and list(result["per_fact_us"]) == ["import_jsonl, recall-ready", "rebuild()"]
    assert all(fact > 0 and episode > 0 for fact, episode in result["per_fact_us"].values())
    console = Console(record=True, width=140)
    records.render(result, console)
    text = console.export_text()
    assert "× tantivy-py" in text and "µs a fact" in text
