"""Tests of the home benchmark at a tiny corpus: records, JSONL, the measurement and its table."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console

from cuemem import Memory
from cuemem.lab.bench.agreement import DisagreementError
from cuemem.lab.bench.corpus import AXES, Corpus, make_corpus
from cuemem.lab.bench.home import episode_records, measure_home, now_datetime, write_jsonl
from cuemem.lab.bench.queries import Query, make_queries
from cuemem.lab.bench.report import render
from cuemem.lab.bench.tables import home_table
from cuemem.errors import InvalidArgumentError

N = 1_500

RECALL_KEYS = {"memory_p50_us", "memory_p99_us", "core_p50_us", "core_p99_us", "p50_ratio", "p99_ratio", "queries", "rounds"}
REMEMBER_KEYS = {"calls", "fsync_always_p50_us", "fsync_always_p99_us", "fsync_never_p50_us", "fsync_never_p99_us"}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    """A corpus small enough for the default test run."""
    return make_corpus(N, seed=3)


@pytest.fixture(scope="module")
def queries(corpus: Corpus) -> list[Query]:
    """The benchmark query mix over the tiny corpus."""
    return make_queries(corpus, seed=3)


@pytest.fixture(scope="module")
def measured(corpus: Corpus, queries: list[Query], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One home measurement at the tiny corpus, with few rounds and remember calls."""
    workdir = tmp_path_factory.mktemp("home-bench")
    result = measure_home(
        corpus, queries, workdir=workdir, remember_calls=7, rounds=2, console=Console(file=io.StringIO())
    )
    assert list(workdir.iterdir()) == []
    return result


def test_records_carry_the_corpus_columns(corpus: Corpus) -> None:
    """A record holds its row's actors, user, type, outcome, day, axes and confidence."""
    row = 17
    (record,) = episode_records(corpus, row, row + 1)
    dims = corpus.dims
    actor = dims["actor"]
    want_actors = [actor.values[c] for c in actor.codes[actor.rows == row].tolist()]
    assert record["actors"] == want_actors
    for key, dim in (("user_id", "user"), ("type", "type"), ("outcome", "outcome")):
        assert record[key] == dims[dim].values[int(dims[dim].codes[row])]
    day = str(np.datetime64(int(corpus.t[row]), "s").astype("datetime64[D]"))
    assert record["occurred_at"] == day
    assert [record["salience"][a] for a in AXES] == corpus.axes[row].tolist()
    assert record["importance"] == record["salience"]["importance"]
    assert record["risk"] == record["salience"]["risk"]
    assert record["confidence"] == float(corpus.confidence[row])


def test_records_are_accepted_by_memory_with_unique_narratives(corpus: Corpus, tmp_path: Path) -> None:
    """Every record is a valid ``remember`` call and no two narratives repeat."""
    records = episode_records(corpus, 0, 200)
    assert len({r["narrative"] for r in records}) == 200
    with Memory.open(tmp_path, fsync="never", user="*") as mem:
        eid = mem.remember(**records[0], now=now_datetime())
        report = mem.import_records(records[1:], now=now_datetime())
        assert report.count == 199 and len(mem) == 200
        assert list(mem.get(eid).time_buckets) == [records[0]["occurred_at"][:4], records[0]["occurred_at"][:7], records[0]["occurred_at"]]


def test_records_refuse_a_range_outside_the_corpus(corpus: Corpus) -> None:
    """Asking for rows past the end is a ValueError, not a short list."""
    with pytest.raises(InvalidArgumentError, match="not within the corpus"):
        episode_records(corpus, N - 1, N + 1)


def test_jsonl_holds_one_record_per_row(corpus: Corpus, tmp_path: Path) -> None:
    """The JSONL file has one line per row, equal to the records, and its size is reported."""
    path = tmp_path / "c.jsonl"
    steps: list[int] = []
    written = write_jsonl(corpus, path, step=lambda: steps.append(1))
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == N and written == path.stat().st_size and steps == [1]
    assert [json.loads(lines[i]) for i in (0, N - 1)] == [episode_records(corpus, i, i + 1)[0] for i in (0, N - 1)]


def test_measure_home_reports_the_documented_keys(measured: dict[str, Any]) -> None:
    """The result has every documented key, the cache was loaded, and the times are positive."""
    assert set(measured) == {
        "episodes", "jsonl_bytes", "import_s", "import_steps", "close_s", "open_s", "open_index", "recall", "remember", "targets",
    }
    assert measured["episodes"] == N and measured["open_index"] == "loaded"
    assert set(measured["recall"]) == RECALL_KEYS and set(measured["remember"]) == REMEMBER_KEYS
    assert measured["recall"]["rounds"] == 2 and measured["remember"]["calls"] == 7
    assert measured["import_s"] >= measured["import_steps"]["import_jsonl_s"] > 0
    assert measured["recall"]["memory_p50_us"] > 0 and measured["recall"]["core_p99_us"] > 0
    assert measured["remember"]["fsync_always_p50_us"] > 0 and measured["remember"]["fsync_never_p99_us"] > 0
    assert measured["targets"]["import_s"] == pytest.approx(15.0 * N / 1_000_000)
    json.dumps(measured, allow_nan=False)


def test_home_table_shows_every_row(measured: dict[str, Any]) -> None:
    """The rich table names the size, each step, the targets and that Hit.record is not read."""
    out = io.StringIO()
    Console(file=out, width=200).print(home_table(measured))
    text = out.getvalue()
    assert f"home, {N:,} episodes" in text
    for label in ("import JSONL", "open (loaded cache)", "Memory.recall", "core recall", "fsync=always", "fsync=never", "p99 ≤ 2.00×"):
        assert label in text
    assert "Hit.record not read" in text


def test_render_prints_the_home_table_when_measured(measured: dict[str, Any]) -> None:
    """``render`` adds the home table after the core tables when a measurement has one."""
    result = {"episodes": N, "machine": "m", "systems": {}, "decay_pass": {}, "home": measured}
    out = io.StringIO()
    render(result, Console(file=out, width=200))
    assert f"home, {N:,} episodes" in out.getvalue()


def test_measure_home_refuses_a_cue_the_home_does_not_index(corpus: Corpus, tmp_path: Path) -> None:
    """A query over a dimension the home lacks is refused before any work."""
    with pytest.raises(InvalidArgumentError, match="does not index"):
        measure_home(corpus, [Query("odd", {"colour": "red"})], workdir=tmp_path, console=Console(file=io.StringIO()))
    assert list(tmp_path.iterdir()) == []


def test_measure_home_detects_a_home_that_differs_from_the_corpus(
    corpus: Corpus, queries: list[Query], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import that loses a cue (every outcome written as "pending") fails the match-count check."""
    import cuemem.lab.bench.home as home

    def lossy(c: Corpus, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
        return [{**r, "outcome": "pending"} for r in episode_records(c, start, stop)]

    monkeypatch.setattr(home, "episode_records", lossy)
    with pytest.raises(DisagreementError, match="matches in the home"):
        measure_home(corpus, queries, workdir=tmp_path, console=Console(file=io.StringIO()))
    assert list(tmp_path.iterdir()) == []


def test_run_bench_adds_the_home_by_default_and_skips_it_on_request(tmp_path: Path) -> None:
    """``run_bench`` measures the home unless ``home=False``, and writes it under "home" in the JSON."""
    from cuemem.lab.bench import run_bench

    out = io.StringIO()
    path = tmp_path / "bench.json"
    result = run_bench(1_000, json_path=str(path), systems=["cuemem"], console=Console(file=out, width=200))
    written = json.loads(path.read_text())
    assert written == result and written["home"]["episodes"] == 1_000
    assert written["home"]["open_index"] == "loaded"
    assert "home, 1,000 episodes" in out.getvalue()
    skipped = run_bench(1_000, systems=["cuemem"], home=False, console=Console(file=io.StringIO()))
    assert "home" not in skipped
