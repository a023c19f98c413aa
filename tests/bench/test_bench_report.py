"""Tests of the benchmark runner's output: the JSON shape, the tables and the plot."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from cuemem.bench import run_bench
from cuemem.bench.plot import plot_scaling
from cuemem.bench.systems import SYSTEMS

ROW_KEYS = {"p50_us", "p99_us", "build_s", "bytes_per_episode", "examined_pct"}


def test_run_bench_writes_the_documented_json(tmp_path: Path) -> None:
    """A small run without the home prints both tables and writes exactly the documented keys."""
    out = io.StringIO()
    path = tmp_path / "bench.json"
    result = run_bench(1_000, json_path=str(path), console=Console(file=out, width=160), home=False)
    written = json.loads(path.read_text())
    assert written == result
    assert set(written) == {"episodes", "machine", "systems", "decay_pass"}
    assert written["episodes"] == 1_000
    assert list(written["systems"]) == list(SYSTEMS)
    for row in written["systems"].values():
        assert set(row) == ROW_KEYS and row["p50_us"] > 0
    assert written["decay_pass"]["cuemem"]["p50_ms"] > 0
    text = out.getvalue()
    assert "p50 ×" in text and "python-sets" in text and "decay pass over 1,000 x 7" in text


def test_plot_scaling_draws_a_png(tmp_path: Path) -> None:
    """The scaling plot is written for measurements at several sizes."""
    results = [
        {
            "episodes": n,
            "systems": {
                name: {"p50_us": n / 100 * i, "p99_us": n / 10 * i} for i, name in enumerate(SYSTEMS, 1)
            },
        }
        for n in (10_000, 100_000)
    ]
    path = tmp_path / "scaling.png"
    plot_scaling(results, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
