"""Tests of the benchmark runner's output: the JSON shape, the tables and the plot."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from cuemem.lab.bench import report, run_bench
from cuemem.lab.bench.plot import plot_scaling
from cuemem.lab.bench.systems import SYSTEMS

ROW_KEYS = {"p50_us", "p99_us", "cold_p50_us", "cold_p99_us", "build_s", "bytes_per_episode", "examined_pct"}
FLOOR_KEYS = {"p50_ms", "bytes_read", "bytes_written", "threads", "how"}


def test_run_bench_writes_the_documented_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small run without the home prints the warm, cold and decay tables and writes exactly the documented keys."""
    monkeypatch.setattr(report, "ROUNDS", 1)  # each cold call sweeps 64 MiB first
    out = io.StringIO()
    path = tmp_path / "bench.json"
    result = run_bench(1_000, json_path=str(path), console=Console(file=out, width=160), home=False)
    written = json.loads(path.read_text())
    assert written == result
    assert set(written) == {"episodes", "machine", "systems", "cold", "decay_pass"}
    assert written["episodes"] == 1_000
    assert list(written["systems"]) == list(SYSTEMS)
    for row in written["systems"].values():
        assert set(row) == ROW_KEYS and row["p50_us"] > 0 and row["cold_p50_us"] > 0
    assert written["systems"]["cuemem"]["cold_p50_us"] > written["systems"]["cuemem"]["p50_us"]
    cold = written["cold"]
    assert set(cold) == {"evict_bytes", "llc_bytes", "how"} and cold["evict_bytes"] >= max(2 * cold["llc_bytes"], 64 * 2**20)
    decay = written["decay_pass"]
    assert set(decay) == {
        "rows", "axes", "floor", "numpy", "bandwidth_floor", "cuemem", "cuemem_out", "numpy_x_cuemem", "cuemem_x_floor", "cuemem_out_x_floor"
    }
    assert decay["cuemem"]["p50_ms"] > 0 and decay["floor"] == 0.35
    assert set(decay["bandwidth_floor"]) == FLOOR_KEYS and decay["bandwidth_floor"]["p50_ms"] > 0
    assert decay["bandwidth_floor"]["bytes_read"] >= decay["bandwidth_floor"]["bytes_written"] >= 1_000 * 28
    assert decay["cuemem_x_floor"] > 0
    text = out.getvalue()
    assert "p50 ×" in text and "python-sets" in text and "decay pass over 1,000 x 7" in text
    assert "recall, k=10, cold caches, 1,000 episodes" in text and "bandwidth floor" in text


def test_plot_scaling_draws_a_png(tmp_path: Path) -> None:
    """The scaling plot is written for measurements at several sizes, with cold-cache lines when measured."""
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
    for r in results:
        for row in r["systems"].values():
            row["cold_p50_us"] = row["p50_us"] * 3
    with_cold = tmp_path / "cold.png"
    plot_scaling(results, with_cold)
    assert with_cold.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and with_cold.read_bytes() != path.read_bytes()
