"""Benchmark of the home: import, open, recall through ``Memory``, durable ``remember``.

The core benchmark times :func:`cuemem.recall` on indexes built straight from
numpy columns. This one times what a user of :class:`cuemem.Memory` pays on top,
on the same synthetic corpus turned into ``remember`` records:

1. **import**: the corpus as a JSONL file (written untimed), then
   ``Memory.open`` + ``import_jsonl`` + the first recall, timed together;
2. **open**: reopening the closed home, which must load the index cache
   rather than replay the journal;
3. **recall**: the core benchmark's query mix through ``Memory.recall`` and
   through :func:`cuemem.recall` on the home's own indexes, in the same run
   (``Hit.record`` is lazy and is not touched while timing);
4. **remember**: single durable writes on the open home, under the default
   fsync policy (``"always"``) and under ``"never"`` for comparison.

Before timing, every query's answer through ``Memory`` is checked against the
core on the home's indexes (same ids and scores) and against an index built from
the corpus columns (same match count), so the import is known to be faithful.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

import cuemem
from cuemem.lab.bench.agreement import DisagreementError
from cuemem.lab.bench.corpus import AXES, DIMENSIONS, Corpus
from cuemem.lab.bench.progress import Bars
from cuemem.lab.bench.queries import K, NOW, Query
from cuemem.lab.bench.timing import Latency, time_calls, time_paths
from cuemem.errors import CuememError, InvalidArgumentError
from cuemem.home.cues import DIMENSIONS as HOME_DIMENSIONS
from cuemem.memory import Memory

__all__ = [
    "CacheNotLoadedError",
    "episode_records",
    "measure_home",
    "now_datetime",
    "write_jsonl",
]

REMEMBER_CALLS = 200
"""Timed ``remember`` calls per fsync policy."""

REMEMBER_WARMUP = 5
"""Untimed ``remember`` calls before each timed series."""

OPEN_REPEATS = 3
"""Timed reopenings of the home; the median is reported."""

RECALL_ROUNDS = 5
"""Most timed rounds over the query mix, for ``Memory`` and for the core each."""

RECALL_BUDGET_S = 30.0
"""Seconds after which no further timed recall round starts."""

TARGET_EPISODES = 1_000_000
"""Corpus size the time targets below are stated for; they scale linearly with it."""

IMPORT_TARGET_S = 15.0
"""Import JSONL -> recall-ready, seconds at :data:`TARGET_EPISODES`."""

OPEN_TARGET_S = 0.5
"""Open of a closed home (cache loaded), seconds at :data:`TARGET_EPISODES`."""

P99_RATIO_TARGET = 2.0
"""Largest ``Memory.recall`` p99 over core p99."""

_WRITE_CHUNK = 10_000
_DAY_S = 86_400


class CacheNotLoadedError(CuememError, AssertionError):
    """Raised when reopening the benchmark home replays the journal instead of loading its cache."""


def now_datetime() -> datetime:
    """Return the benchmark's recall time :data:`~cuemem.lab.bench.queries.NOW` as an aware UTC datetime.

    Example:
        >>> now_datetime().isoformat()
        '2027-01-01T00:00:00+00:00'
    """
    return datetime.fromtimestamp(NOW, tz=timezone.utc)


def episode_records(corpus: Corpus, start: int = 0, stop: int | None = None) -> list[dict[str, Any]]:
    """Return corpus rows ``start .. stop-1`` as ``remember`` keyword dicts, ``narrative`` included.

    Each record carries the row's actors, user (``user_id``), type, outcome,
    ``occurred_at`` (the ISO date of the row's time, UTC), all seven salience axes
    (``importance`` and ``risk`` also as fields) and ``confidence``. The narrative
    names the row, so narratives are unique. The home's ``subject`` and ``tag``
    dimensions stay empty.

    Args:
        corpus: The benchmark corpus.
        start: First row.
        stop: One past the last row (default: the end of the corpus).

    Raises:
        InvalidArgumentError: If the range is not within the corpus, or a
            one-value dimension (user, type, outcome) is not one value per row.

    Example:
        >>> from cuemem.lab.bench.corpus import make_corpus
        >>> r = episode_records(make_corpus(100, seed=1), 0, 1)[0]
        >>> sorted(r)[:4], r["salience"]["risk"] == r["risk"]
        (['actors', 'confidence', 'importance', 'narrative'], True)
    """
    stop = corpus.n if stop is None else stop
    if not 0 <= start <= stop <= corpus.n:
        raise InvalidArgumentError(f"rows {start} .. {stop} are not within the corpus of {corpus.n}")
    users = _single_values(corpus, "user", start, stop)
    types = _single_values(corpus, "type", start, stop)
    outcomes = _single_values(corpus, "outcome", start, stop)
    actors = _multi_values(corpus, "actor", start, stop)
    days = np.datetime_as_string((corpus.t[start:stop] // _DAY_S).astype(np.int64).astype("datetime64[D]")).tolist()
    axes = corpus.axes[start:stop].tolist()
    confidence = corpus.confidence[start:stop].tolist()
    i_importance, i_risk = AXES.index("importance"), AXES.index("risk")
    out = []
    for i in range(stop - start):
        row_axes = axes[i]
        out.append(
            {
                "narrative": f"{types[i]} #{start + i} with {', '.join(actors[i])}: {outcomes[i]}",
                "user_id": users[i],
                "type": types[i],
                "outcome": outcomes[i],
                "actors": actors[i],
                "occurred_at": days[i],
                "importance": row_axes[i_importance],
                "risk": row_axes[i_risk],
                "salience": dict(zip(AXES, row_axes)),
                "confidence": confidence[i],
            }
        )
    return out


def _single_values(corpus: Corpus, name: str, start: int, stop: int) -> list[str]:
    """Return the value of a one-value-per-row dimension for rows ``start .. stop-1``."""
    dim = corpus.dims[name]
    if len(dim) != corpus.n or not np.array_equal(dim.rows[start:stop], np.arange(start, stop)):
        raise InvalidArgumentError(f"dimension {name!r} does not hold exactly one value per row, in row order")
    picked: list[str] = np.asarray(dim.values, dtype=object)[dim.codes[start:stop]].tolist()
    return picked


def _multi_values(corpus: Corpus, name: str, start: int, stop: int) -> list[list[str]]:
    """Return each row's values of a dimension whose rows ascend, for rows ``start .. stop-1``."""
    dim = corpus.dims[name]
    cuts = np.searchsorted(dim.rows, np.arange(start, stop + 1, dtype=np.int64)).tolist()
    flat: list[str] = np.asarray(dim.values, dtype=object)[dim.codes[cuts[0] : cuts[-1]]].tolist()
    base = cuts[0]
    return [flat[a - base : b - base] for a, b in zip(cuts[:-1], cuts[1:])]


def write_jsonl(corpus: Corpus, path: str | Path, step: Callable[[], None] | None = None) -> int:
    """Write the whole corpus to ``path`` as one ``remember`` record per line.

    Args:
        corpus: The benchmark corpus.
        path: File to create or overwrite.
        step: Called after each chunk of :data:`_WRITE_CHUNK` rows (progress).

    Returns:
        The bytes written.
    """
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    written = 0
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, corpus.n, _WRITE_CHUNK):
            records = episode_records(corpus, start, min(start + _WRITE_CHUNK, corpus.n))
            text = "".join(encode(r) + "\n" for r in records)
            written += handle.write(text)
            if step is not None:
                step()
    return written


def write_steps(corpus: Corpus) -> int:
    """Return how many times :func:`write_jsonl` calls ``step``."""
    return -(-corpus.n // _WRITE_CHUNK)


def measure_home(
    corpus: Corpus,
    queries: Sequence[Query],
    *,
    workdir: str | Path | None = None,
    remember_calls: int = REMEMBER_CALLS,
    rounds: int = RECALL_ROUNDS,
    budget_s: float = RECALL_BUDGET_S,
    console: Console | None = None,
) -> dict[str, Any]:
    """Benchmark import, open, recall and remember on a temporary home holding ``corpus``.

    The home is created in a fresh temporary directory (inside ``workdir`` if
    given) and removed afterwards.

    Args:
        corpus: The benchmark corpus.
        queries: The query mix (cue dimensions must be home dimensions).
        workdir: Where the temporary home goes (default: the system temp dir).
        remember_calls: Timed ``remember`` calls per fsync policy.
        rounds: Most timed rounds over ``queries``, for each of ``Memory`` and core.
        budget_s: Seconds after which no further timed recall round starts.
        console: Where progress goes; a fresh :class:`rich.console.Console` by default.

    Returns:
        ``{"episodes", "jsonl_bytes", "import_s", "import_steps": {"open_s",
        "import_jsonl_s", "first_recall_s"}, "open_s", "open_index", "close_s",
        "recall": {"memory_p50_us", "memory_p99_us", "core_p50_us", "core_p99_us",
        "p50_ratio", "p99_ratio", "queries", "rounds"}, "remember": {"calls",
        "fsync_always_p50_us", "fsync_always_p99_us", "fsync_never_p50_us",
        "fsync_never_p99_us"}, "targets": {"import_s", "open_s", "p99_ratio"}}``.

    Raises:
        InvalidArgumentError: If ``queries`` is empty, a query cue names a
            dimension the home does not index, or ``remember_calls`` is not positive.
        DisagreementError: If ``Memory.recall`` and the core disagree, or the
            home's match counts differ from the corpus'.
        CacheNotLoadedError: If reopening the home did not load its index cache.
    """
    if not queries:
        raise InvalidArgumentError("the home benchmark needs at least one query")
    if remember_calls < 1:
        raise InvalidArgumentError(f"remember_calls must be positive, got {remember_calls}")
    _check_dimensions(queries)
    console = console or Console()
    now = now_datetime()
    out: dict[str, Any] = {"episodes": corpus.n}
    with tempfile.TemporaryDirectory(prefix="cuemem-bench-home-", dir=workdir) as tmp, Bars(console) as bars:
        source = Path(tmp) / "corpus.jsonl"
        home = Path(tmp) / "home"
        out["jsonl_bytes"] = write_jsonl(corpus, source, step=bars.add("write JSONL", write_steps(corpus)))
        mem, out["import_s"], out["import_steps"] = _timed_import(home, source, queries[0], now, bars, corpus.n)
        try:
            _check_answers(mem, corpus, queries, now, bars.add("check home", len(queries)))
        finally:
            out["close_s"] = _timed_close(mem)
        records = episode_records(corpus, 0, min(corpus.n, remember_calls + REMEMBER_WARMUP))
        mem, out["open_s"], out["open_index"] = _timed_open(home)
        try:
            out["recall"] = _time_recall(mem, queries, now, rounds, budget_s, bars)
            always = _time_remember(mem, records, remember_calls, now, bars.add("remember fsync=always", remember_calls))
        finally:
            mem.close()
        with Memory.open(home, fsync="never", user="*") as mem:
            never = _time_remember(mem, records, remember_calls, now, bars.add("remember fsync=never", remember_calls))
    out["remember"] = {
        "calls": remember_calls,
        "fsync_always_p50_us": round(always.percentile_us(50), 3),
        "fsync_always_p99_us": round(always.percentile_us(99), 3),
        "fsync_never_p50_us": round(never.percentile_us(50), 3),
        "fsync_never_p99_us": round(never.percentile_us(99), 3),
    }
    scale = corpus.n / TARGET_EPISODES
    out["targets"] = {
        "import_s": round(IMPORT_TARGET_S * scale, 6),
        "open_s": round(OPEN_TARGET_S * scale, 6),
        "p99_ratio": P99_RATIO_TARGET,
    }
    return out


def _check_dimensions(queries: Sequence[Query]) -> None:
    """Raise unless every query cue names a dimension both the corpus and the home have.

    Raises:
        InvalidArgumentError: Naming the first dimension the home does not index.
    """
    for q in queries:
        for dim in [*q.cues, *(q.exclude or {})]:
            if dim not in HOME_DIMENSIONS or dim not in DIMENSIONS:
                raise InvalidArgumentError(f"query {q} uses dimension {dim!r}, which the home does not index")


def _timed_import(
    home: Path, source: Path, first: Query, now: datetime, bars: Bars, n: int
) -> tuple[Memory, float, dict[str, float]]:
    """Open an empty home, import ``source`` and recall once; return the handle and the times."""
    # import_jsonl reports every 5,000 lines and once at the end
    step = bars.add("import JSONL", n // 5_000 + 1)
    clock = time.perf_counter
    t0 = clock()
    mem = Memory.open(home, user="*")
    t1 = clock()
    try:
        mem.import_jsonl(source, now=now, progress=lambda done, total: step())
        t2 = clock()
        mem.recall(first.cues, k=K, now=now, exclude=first.exclude)
        t3 = clock()
    except BaseException:
        mem.close()
        raise
    steps = {"open_s": round(t1 - t0, 4), "import_jsonl_s": round(t2 - t1, 4), "first_recall_s": round(t3 - t2, 6)}
    return mem, round(t3 - t0, 4), steps


def _timed_close(mem: Memory) -> float:
    """Close ``mem`` (a writer saves its index cache); return the seconds it took."""
    t0 = time.perf_counter()
    mem.close()
    return round(time.perf_counter() - t0, 4)


def _timed_open(home: Path) -> tuple[Memory, float, str]:
    """Reopen ``home`` :data:`OPEN_REPEATS` times; return the last handle, the median seconds, how.

    Raises:
        CacheNotLoadedError: If any opening did not load the index cache as is.
    """
    times = []
    for i in range(OPEN_REPEATS):
        t0 = time.perf_counter()
        mem = Memory.open(home, user="*")
        times.append(time.perf_counter() - t0)
        how = mem.open_report.index
        if how != "loaded":
            mem.close()
            raise CacheNotLoadedError(f"reopening the home gave index {how!r}, expected 'loaded'")
        if i < OPEN_REPEATS - 1:
            mem.close()
    return mem, round(statistics.median(times), 4), how


def _check_answers(mem: Memory, corpus: Corpus, queries: Sequence[Query], now: datetime, step: Callable[[], None]) -> None:
    """Check ``Memory.recall`` against the core on the home's indexes and against the corpus.

    Raises:
        DisagreementError: Listing the first queries whose answers differ.
    """
    truth = _corpus_index(corpus)
    cues_index, salience = mem._home.indexes.cues, mem._home.indexes.salience  # the core on the home's own indexes
    ids = mem._home.indexes.ids
    problems = []
    for i, q in enumerate(queries):
        got = mem.recall(q.cues, k=K, now=now, exclude=q.exclude)
        core = cuemem.recall(cues_index, salience, q.cues, now=NOW, k=K, exclude=q.exclude)
        want_total = truth.count(q.cues, q.exclude)
        if [h.id for h in got.hits] != [ids[r] for r in core.rows.tolist()]:
            problems.append(f"q{i} {q}: Memory.recall ids differ from the core's")
        elif not np.allclose([h.score for h in got.hits], core.scores, rtol=0, atol=1e-6):
            problems.append(f"q{i} {q}: Memory.recall scores differ from the core's")
        if got.total != want_total or core.total != want_total:
            problems.append(f"q{i} {q}: {got.total} matches in the home, {want_total} in the corpus")
        step()
    if problems:
        shown = "\n  ".join(problems[:10])
        raise DisagreementError(f"{len(problems)} disagreement(s) in the home:\n  {shown}")


def _corpus_index(corpus: Corpus) -> cuemem.CueIndex:
    """Build a cue index straight from the corpus columns (the reference for match counts)."""
    index = cuemem.CueIndex(list(DIMENSIONS))
    for name in DIMENSIONS:
        dim = corpus.dims[name]
        index.insert_column(name, values=dim.values, codes=dim.codes, rows=dim.rows)
    return index


def _time_recall(
    mem: Memory, queries: Sequence[Query], now: datetime, rounds: int, budget_s: float, bars: Bars
) -> dict[str, Any]:
    """Time the query mix through ``Memory.recall`` and through the core on the same indexes,
    each in passes of its own, round by round (:func:`~.timing.time_paths`: at 1M episodes a
    pass right after the timing loop's collection ran 7–10 µs a call slower than the next)."""
    cues_index, salience = mem._home.indexes.cues, mem._home.indexes.salience

    def through_memory(q: Query) -> object:
        return mem.recall(q.cues, k=K, now=now, exclude=q.exclude)

    def through_core(q: Query) -> object:
        return cuemem.recall(cues_index, salience, q.cues, now=NOW, k=K, exclude=q.exclude)

    label = "time Memory / core recall"
    paths = {"memory": through_memory, "core": through_core}
    latency = time_paths(paths, queries, rounds=rounds, budget_s=budget_s, on_call=bars.add(label, rounds * 2 * len(queries)))
    bars.finish(label)
    row: dict[str, Any] = {}
    for name, ns in ((name, latency[name].ns) for name in paths):
        row[f"{name}_p50_us"] = round(float(np.percentile(ns, 50)) / 1_000, 3)
        row[f"{name}_p99_us"] = round(float(np.percentile(ns, 99)) / 1_000, 3)
    row["p50_ratio"] = _ratio(row["memory_p50_us"], row["core_p50_us"])
    row["p99_ratio"] = _ratio(row["memory_p99_us"], row["core_p99_us"])
    row["queries"] = len(queries)
    row["rounds"] = latency["memory"].rounds
    return row


def _time_remember(
    mem: Memory, records: Sequence[dict[str, Any]], calls: int, now: datetime, step: Callable[[], None]
) -> Latency:
    """Time ``calls`` single ``remember`` calls after :data:`REMEMBER_WARMUP` untimed ones."""
    for record in records[:REMEMBER_WARMUP]:
        mem.remember(**record, now=now)
    items = [records[(REMEMBER_WARMUP + i) % len(records)] for i in range(calls)]
    return time_calls(lambda record: mem.remember(**record, now=now), items, rounds=1, on_call=step)


def _ratio(value: float, base: float) -> float | None:
    """Return ``value / base`` rounded, or ``None`` when ``base`` is not positive."""
    return round(value / base, 3) if base > 0 else None
