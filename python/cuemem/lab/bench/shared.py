"""Benchmark of the shared home: a PostgreSQL home against the seed's SQL and the embedded home.

Everything is set up as a user would and goes through the public API only
(``Memory.open("postgresql://…?cuemem_home=NAME", cache=DIR)``, ``import_jsonl``,
``recall``, ``remember``, ``import_records``); the SQL baseline is the query a user of
the seed's design writes against the home's ``episodes`` table. In one run, on the
benchmark corpus (:mod:`~cuemem.lab.bench.corpus`) and its query mix
(:mod:`~cuemem.lab.bench.queries`):

1. **Import**: the corpus as JSONL (written untimed), ``import_jsonl`` into a PostgreSQL
   home (one ``COPY`` transaction of the log and its projections) and into an embedded
   home, records/s; the handle's ``close`` (index cache saved) is timed apart.
2. **Recall**, warm, p50/p99 µs, round after round of the same mix on each system:
   - *SQL*: the seed's GIN query, ``actors @> …`` / ``time_buckets && …`` (and
     ``user_id``, ``type``, ``outcome`` equalities, ``IS DISTINCT FROM`` for an
     exclusion) with the full decayed salience top 10 computed in SQL by
     :func:`score_sql` — cuemem's formula written once (each axis halves every
     half-life after ``occurred_at``, unless importance or risk is at least 0.7;
     ``composite = Σ w·axis · (0.6 + 0.4·confidence)``; ties to the later record) —
     over psycopg on the server's Unix socket (its default statement preparation);
   - ``Memory.recall`` on the PostgreSQL home (its local cache, reopened warm);
   - ``Memory.recall`` on the embedded home holding the same records.
   Before timing, every query of the mix runs once on each (the warm-up), and the
   three top-10 lists must be equal — the SQL's up to ties within
   :data:`TOLERANCE` (cuemem ranks in ``float32``), with scores within it too — else
   :class:`~cuemem.lab.bench.agreement.DisagreementError`. The first call of each
   (``first_us``; in one process, so the first system pays for warming shared code) is
   kept; the cold recall that the table reports is part 3's, a fresh process's first. The two homes are timed round after round interleaved,
   the SQL in rounds of its own (each with up to :data:`ROUNDS` rounds in :data:`BUDGET_S`).
3. **Open + catch-up** of a fresh process (a new cache directory) on the N-episode
   shared home — replaying the whole log (no snapshot on the server), and from a
   snapshot of the warm cache (:mod:`cuemem.postgres.snapshots`; its publishing timed
   apart) — against a fresh process reopening the warm cache (and the embedded home's
   reopen), each timed inside its process around ``Memory.open``; then its first recall.
4. **Writes**: 4 writer processes at once (each its own cache), against 1, on an empty
   shared home each: ``remember`` calls, then batches of ``import_records``; writes/s
   over the wall time from a common start to the last writer's end. A fresh handle
   then checks that every write is there.

Without ``pg`` a throwaway :class:`~cuemem.postgres.cluster.LocalCluster` (a Unix
socket only) is made in a temporary directory and stopped at the end, even on
failure; with ``pg`` (a DSN whose user may create schemas) the homes are schemas
``cuemem_bench_<run>_*`` in that database, dropped at the end.
``cuemem bench --shared [--pg DSN]`` runs it.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import threading
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

import cuemem
from cuemem.lab.bench.agreement import DisagreementError
from cuemem.lab.bench.corpus import AXES, make_corpus
from cuemem.lab.bench.home import episode_records, now_datetime, write_jsonl
from cuemem.lab.bench.machine import describe_machine
from cuemem.lab.bench.queries import K, NOW, Query, make_queries
from cuemem.lab.bench.tables import fit_width, number_cell, ratio_cell, titled_table
from cuemem.lab.bench.timing import time_paths
from cuemem.errors import InvalidArgumentError
from cuemem.memory import Memory

__all__ = ["TOLERANCE", "measure", "render", "score_sql", "sql_query"]

#: Largest score difference treated as a tie (cuemem scores in ``float32``, SQL in ``float8``).
TOLERANCE = 1e-4
#: Most timed rounds over the query mix, and the seconds after which no further round starts.
ROUNDS, BUDGET_S = 5, 30.0
#: Writer processes of the concurrent write benchmark.
WRITERS = 4
#: Per writer: timed ``remember`` calls, then ``import_records`` batches of ``BATCH`` records.
REMEMBERS, BATCHES, BATCH = 200, 5, 1_000
#: Fresh processes per open measurement; the median is reported.
OPEN_REPEATS = 3
#: The projection's columns the cue dimensions of the query mix read: (column, is an array).
COLUMNS: dict[str, tuple[str, bool]] = {
    "actor": ("actors", True),
    "time": ("time_buckets", True),
    "user": ("user_id", False),
    "type": ("type", False),
    "outcome": ("outcome", False),
}
_DAY_S = 86_400.0


# -- the SQL baseline ---------------------------------------------------------------------


def score_sql() -> str:
    """cuemem's decayed composite as one SQL expression over an ``episodes`` row, at
    ``%(now)s`` (unix seconds), with cuemem's default weights and half-lives.

    Protection compares in ``float4``, as the core does (an axis stored as ``0.7f``
    protects); the decay itself is in ``float8``.
    """
    weights, half_lives = cuemem.DEFAULT_WEIGHTS, cuemem.DEFAULT_HALF_LIVES_DAYS
    axis = {a: f"(salience->>'{a}')::float8" for a in AXES}
    protected = "((salience->>'importance')::float4 >= 0.7::float4 OR (salience->>'risk')::float4 >= 0.7::float4)"
    age = "greatest(%(now)s::float8 - date_part('epoch', occurred_at), 0)"
    plain = " + ".join(f"{float(weights[a])!r} * {axis[a]}" for a in AXES)
    decayed = " + ".join(f"{float(weights[a])!r} * {axis[a]} * power(2.0, -{age} / {float(half_lives[a]) * _DAY_S!r})" for a in AXES)
    return f"(CASE WHEN {protected} THEN {plain} ELSE {decayed} END) * (0.6 + 0.4 * confidence)"


def sql_query(schema: str, query: Query) -> tuple[str, dict[str, Any]]:
    """The seed design's SQL for ``query``: the cue filter on ``{schema}.episodes`` (GIN
    operators on the arrays), live and reviewed rows (as ``Memory.recall`` by default),
    the top :data:`~cuemem.lab.bench.queries.K` by :func:`score_sql`, ties to the later record.

    Raises:
        InvalidArgumentError: a cue names a dimension the table has no column for.
    """
    where = ["retired_at IS NULL", "reviewed"]
    params: dict[str, Any] = {"now": NOW, "k": K}
    for negate, cues in ((False, query.cues), (True, query.exclude or {})):
        for dim, value in cues.items():
            if dim not in COLUMNS:
                raise InvalidArgumentError(f"the episodes table has no column for the cue dimension {dim!r}")
            column, array = COLUMNS[dim]
            values = [value] if isinstance(value, str) else list(value)
            name = f"{'x' if negate else 'c'}{len(params)}"
            params[name] = values if array or len(values) > 1 else values[0]
            if array:
                test = f"{column} {'@>' if len(values) == 1 and not negate else '&&'} %({name})s::text[]"
            elif len(values) == 1:
                test = f"{column} IS DISTINCT FROM %({name})s" if negate else f"{column} = %({name})s"
            else:
                test = f"{column} = ANY(%({name})s::text[])"
                test = f"NOT coalesce({test}, false)" if negate else test
            where.append(f"NOT ({test})" if negate and array else test)
    sql = (
        f"SELECT id, {score_sql()} AS score FROM {schema}.episodes WHERE {' AND '.join(where)} "
        "ORDER BY score DESC, seq DESC LIMIT %(k)s"
    )
    return sql, params


# -- the run ----------------------------------------------------------------------------


def measure(
    episodes: int = 100_000,
    *,
    seed: int = 7,
    pg: str | None = None,
    writers: int = WRITERS,
    remembers: int = REMEMBERS,
    batches: int = BATCHES,
    batch: int = BATCH,
    rounds: int = ROUNDS,
    budget_s: float = BUDGET_S,
    console: Console | None = None,
) -> dict[str, Any]:
    """Runs the four measurements of the module docstring; returns them as a JSON-shaped dict.

    Raises:
        DisagreementError: the SQL's, the PostgreSQL home's and the embedded home's top 10
            differ on a query, or a write is missing after the write benchmark.
        PostgresUnavailableError: no ``pg`` and no PostgreSQL server programs here.
    """
    import psycopg

    console = console or Console(stderr=True)

    def say(text: str) -> None:
        console.print(f"[dim]shared bench: {text}[/dim]")

    corpus = make_corpus(episodes, seed)
    queries = make_queries(corpus, seed)
    now = now_datetime()
    run = uuid.uuid4().hex[:8]
    out: dict[str, Any] = {"episodes": episodes, "seed": seed, "queries": len(queries), "machine": describe_machine()}
    tmp = Path(tempfile.mkdtemp(prefix="cuemem-bench-shared-"))
    tmp.chmod(0o711)  # a local cluster's server user (postgres, when this is root) passes through
    try:
        with _terminated_as_exit(), _server(pg, tmp, run) as (dsn, schemas):
            with psycopg.connect(dsn, autocommit=True) as conn:
                out["server"] = _describe_server(conn)

            def address(name: str) -> str:
                return _address(dsn, schemas(name))

            source = tmp / "corpus.jsonl"
            say(f"writing {episodes:,} episodes as JSONL")
            out["jsonl_bytes"] = write_jsonl(corpus, source)
            say("importing into the embedded home and the PostgreSQL home")
            out["import"] = _import(source, tmp / "embedded", address("main"), tmp / "cache-importer", now)
            say("checking and timing recall (SQL, PostgreSQL home, embedded home)")
            out["recall"] = _recall(dsn, schemas("main"), address("main"), tmp, queries, now, rounds, budget_s)
            say("timing open + catch-up of fresh processes")
            out["open"] = _open(address("main"), tmp, queries[0], now, dsn, schemas("main"))
            say(f"timing writes: 1 writer, then {writers}")
            out["writes"] = {
                str(n): _writes(address(f"w{n}"), tmp / f"writers-{n}", n, remembers, batches, batch, now) for n in (1, writers)
            }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    one, many = out["writes"]["1"], out["writes"][str(writers)]
    out["writers"] = writers
    out["ratios"] = {
        "import_pg_over_embedded": _ratio(out["import"]["postgres"]["records_per_s"], out["import"]["embedded"]["records_per_s"]),
        "sql_over_pg_home_p50": _ratio(out["recall"]["sql"]["p50_us"], out["recall"]["pg_home"]["p50_us"]),
        "sql_over_pg_home_p99": _ratio(out["recall"]["sql"]["p99_us"], out["recall"]["pg_home"]["p99_us"]),
        "pg_home_over_embedded_p50": _ratio(out["recall"]["pg_home"]["p50_us"], out["recall"]["embedded"]["p50_us"]),
        "pg_home_over_embedded_p99": _ratio(out["recall"]["pg_home"]["p99_us"], out["recall"]["embedded"]["p99_us"]),
        "catch_up_over_warm_open": _ratio(out["open"]["catch_up"]["open_s"], out["open"]["warm"]["open_s"]),
        "catch_up_over_snapshot_open": _ratio(out["open"]["catch_up"]["open_s"], out["open"]["snapshot"]["open_s"]),
        "remember_many_over_one": _ratio(many["remember"]["writes_per_s"], one["remember"]["writes_per_s"]),
        "import_records_many_over_one": _ratio(many["import_records"]["writes_per_s"], one["import_records"]["writes_per_s"]),
    }
    return out


@contextmanager
def _terminated_as_exit() -> Iterator[None]:
    """While inside, SIGTERM raises SystemExit (so the cluster is stopped and the
    directory removed on the way out); the old handler is put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextmanager
def _server(pg: str | None, tmp: Path, run: str) -> Iterator[tuple[str, Callable[[str], str]]]:
    """The database to benchmark in and the schema name of each home; a throwaway local
    cluster without ``pg`` (stopped on the way out, whatever happens), else ``pg`` with
    this run's schemas dropped on the way out."""
    made: list[str] = []

    def schemas(name: str) -> str:
        schema = f"cuemem_bench_{run}_{name}"
        if schema not in made:
            made.append(schema)
        return schema

    if pg is None:
        from cuemem.postgres.cluster import LocalCluster

        cluster = LocalCluster(tmp / "pg")
        try:
            cluster.start()
            yield cluster.create_database("cuemem_bench"), schemas
        finally:
            cluster.stop()
        return
    import psycopg

    try:
        yield pg, schemas
    finally:
        with psycopg.connect(pg, autocommit=True) as conn:
            for schema in made:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _address(dsn: str, schema: str) -> str:
    return f"{dsn}{'&' if '?' in dsn else '?'}cuemem_home={schema}"


def _describe_server(conn: Any) -> dict[str, str]:
    row = conn.execute("SELECT version()").fetchone()
    settings = {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in ("fsync", "synchronous_commit", "shared_buffers", "work_mem", "timezone")}
    return {"version": str(row[0]).split(" on ")[0], **settings}


# -- 1. import ------------------------------------------------------------------------------


def _import(source: Path, embedded: Path, address: str, cache: Path, now: Any) -> dict[str, Any]:
    out = {}
    homes: tuple[tuple[str, str | Path, Path | None], ...] = (("embedded", embedded, None), ("postgres", address, cache))
    for name, path, cached in homes:
        mem = Memory.open(path, user="*", cache=cached)
        try:
            t0 = time.perf_counter()
            report = mem.import_jsonl(source, now=now)
            seconds = time.perf_counter() - t0
        finally:
            t1 = time.perf_counter()
            mem.close()
            close_s = time.perf_counter() - t1
        out[name] = {"records": report.count, "s": round(seconds, 3), "records_per_s": round(report.count / seconds, 1), "close_s": round(close_s, 3)}
    return out


# -- 2. recall ------------------------------------------------------------------------------


def _recall(dsn: str, schema: str, address: str, tmp: Path, queries: Sequence[Query], now: Any, rounds: int, budget_s: float) -> dict[str, Any]:
    import psycopg

    statements = [sql_query(schema, q) for q in queries]
    clock = time.perf_counter_ns
    first: dict[str, float] = {}
    t = clock()
    pg_home = Memory.open(address, cache=tmp / "cache-importer", user="*")
    embedded = Memory.open(tmp / "embedded", user="*")
    conn = psycopg.connect(dsn, autocommit=True)
    try:
        opened = {"pg_home": pg_home.open_report.index, "embedded": embedded.open_report.index}

        def sql(i: int) -> list[tuple[str, float]]:
            text, params = statements[i]
            return [(str(a), float(b)) for a, b in conn.execute(text, params).fetchall()]

        def through(mem: Memory) -> Callable[[int], Any]:
            return lambda i: mem.recall(queries[i].cues, k=K, now=now, exclude=queries[i].exclude)

        systems: dict[str, Callable[[int], Any]] = {"sql": sql, "pg_home": through(pg_home), "embedded": through(embedded)}
        answers: dict[str, list[Any]] = {}
        for name, call in systems.items():
            t = clock()
            answers[name] = [call(0)]
            first[name] = round((clock() - t) / 1e3, 1)
            answers[name] += [call(i) for i in range(1, len(queries))]
        check = _check(queries, answers)
        # The two homes round after round, in passes of their own (the same machine conditions for
        # both); the SQL apart, so that its rounds, far slower, do not use up the homes' budget.
        samples: dict[str, np.ndarray] = {}
        done: dict[str, int] = {}
        indices = list(range(len(queries)))
        for group in (("pg_home", "embedded"), ("sql",)):
            timed = time_paths({name: systems[name] for name in group}, indices, rounds=rounds, budget_s=budget_s)
            for name in group:
                samples[name], done[name] = timed[name].ns, timed[name].rounds
    finally:
        conn.close()
        pg_home.close()
        embedded.close()
    out: dict[str, Any] = {"k": K, "opened": opened, "check": check}
    for name in systems:
        ns = samples[name]
        out[name] = {
            "p50_us": round(float(np.percentile(ns, 50)) / 1e3, 1),
            "p99_us": round(float(np.percentile(ns, 99)) / 1e3, 1),
            "first_us": first[name],
            "rounds": done[name],
        }
    return out


def _check(queries: Sequence[Query], answers: dict[str, list[Any]]) -> dict[str, Any]:
    """Each query's three top-10 lists: the homes' equal (ids and scores), the SQL's equal
    up to ties within :data:`TOLERANCE`. Raises :class:`DisagreementError` otherwise."""
    problems: list[str] = []
    equal = tied = 0
    worst = 0.0
    for i, q in enumerate(queries):
        pg = [(h.id, float(h.score)) for h in answers["pg_home"][i].hits]
        emb = [(h.id, float(h.score)) for h in answers["embedded"][i].hits]
        sql = answers["sql"][i]
        if [a for a, _ in pg] != [a for a, _ in emb] or not np.allclose([s for _, s in pg], [s for _, s in emb], rtol=0, atol=1e-6):
            problems.append(f"q{i} {q}: the PostgreSQL home's top {K} differs from the embedded home's")
        how = _same_top(sql, pg)
        if how is None:
            problems.append(f"q{i} {q}: SQL {sql[:3]}… differs from Memory.recall {pg[:3]}…")
        else:
            equal += how == "equal"
            tied += how == "tied"
        if len(sql) == len(pg) and sql:
            worst = max(worst, max(abs(a[1] - b[1]) for a, b in zip(sql, pg)))
    if problems:
        raise DisagreementError(f"{len(problems)} disagreement(s):\n  " + "\n  ".join(problems[:10]))
    return {"queries": len(queries), "sql_equal": equal, "sql_tied": tied, "max_score_diff": worst, "tolerance": TOLERANCE}


def _same_top(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> str | None:
    """``"equal"`` when two ranked lists hold the same ids in the same order (scores within
    :data:`TOLERANCE`), ``"tied"`` when they differ only by ties, else None."""
    if len(a) != len(b) or any(abs(x[1] - y[1]) > TOLERANCE for x, y in zip(a, b)):
        return None
    if [x[0] for x in a] == [y[0] for y in b]:
        return "equal"
    scores = {**dict(a), **dict(b)}
    kth = min(s for _, s in a) if a else 0.0
    differing = {x[0] for x in a} ^ {y[0] for y in b}
    if all(abs(scores[i] - kth) <= TOLERANCE for i in differing):
        # Within the shared ids, a swap of two places is a tie only if their scores are.
        return "tied" if all(x[0] == y[0] or abs(x[1] - y[1]) <= TOLERANCE for x, y in zip(a, b)) else None
    return None


# -- 3. open + catch-up ---------------------------------------------------------------------------


def _open(address: str, tmp: Path, first: Query, now: Any, dsn: str, schema: str) -> dict[str, Any]:
    """Fresh processes opening the shared home into a new cache — replaying the whole log
    (no snapshot on the server) and from a snapshot of the warm cache (published by
    :func:`~cuemem.postgres.open.publish_snapshot`) — reopening the warm cache, and
    reopening the embedded home; the median of :data:`OPEN_REPEATS` each."""
    import psycopg

    from cuemem.postgres.open import publish_snapshot

    def drop_snapshots() -> None:
        with psycopg.connect(dsn, autocommit=True) as conn:
            if conn.execute("SELECT to_regclass(%s)", (f"{schema}.snapshots",)).fetchone() != (None,):
                conn.execute(f"DELETE FROM {schema}.snapshots")

    ctx = multiprocessing.get_context("spawn")
    cue = (first.cues, first.exclude)
    out: dict[str, Any] = {}
    with ctx.Pool(1) as pool:
        for name, path, cache in (
            ("catch_up", address, None),
            ("snapshot", address, None),
            ("warm", address, tmp / "cache-importer"),
            ("embedded", str(tmp / "embedded"), None),
        ):
            runs = []
            if name == "snapshot":
                drop_snapshots()
                t0 = time.perf_counter()
                seq = publish_snapshot(address, tmp / "cache-importer", user="*")
                out["snapshot_publish_s"] = round(time.perf_counter() - t0, 3)
                if seq is None:
                    raise DisagreementError("the warm cache published no snapshot")
            for r in range(OPEN_REPEATS):
                fresh = name in ("catch_up", "snapshot")
                if name == "catch_up":
                    drop_snapshots()  # the whole log, as if no cache had ever published one (a close may have)
                where = tmp / f"cache-fresh-{r}" if fresh else cache
                runs.append(pool.apply(_open_in_child, (path, None if where is None else str(where), cue, now)))
                if fresh:
                    shutil.rmtree(tmp / f"cache-fresh-{r}", ignore_errors=True)
            want = {"catch_up": "rebuilt", "snapshot": "loaded"}.get(name)
            if want is not None and any(r["index"] != want for r in runs):
                raise DisagreementError(f"a fresh process's open ({name}) came up {runs[-1]['index']!r}, not {want!r}")
            out[name] = {
                "open_s": round(statistics.median(r["open_s"] for r in runs), 3),
                "first_recall_ms": round(statistics.median(r["first_recall_ms"] for r in runs), 2),
                "index": runs[-1]["index"],
                "episodes": runs[-1]["episodes"],
            }
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(f"SELECT bytes FROM {schema}.snapshots ORDER BY seq DESC LIMIT 1").fetchone()
    out["snapshot_bytes"] = int(row[0]) if row else 0
    return out


def _open_in_child(path: str, cache: str | None, cue: tuple[Any, Any], now: Any) -> dict[str, Any]:
    """(In a fresh process.) Opens ``path`` and recalls once; the times and how it came up."""
    t0 = time.perf_counter()
    mem = Memory.open(path, user="*", cache=cache)
    t1 = time.perf_counter()
    try:
        hits = mem.recall(cue[0], k=K, now=now, exclude=cue[1])
        t2 = time.perf_counter()
        return {
            "open_s": t1 - t0, "first_recall_ms": (t2 - t1) * 1e3, "index": str(mem.open_report.index.value),
            "episodes": len(mem.ids()), "hits": len(hits.hits),
        }
    finally:
        mem.close()


# -- 4. writes ------------------------------------------------------------------------------


def _writes(address: str, root: Path, n: int, remembers: int, batches: int, batch: int, now: Any) -> dict[str, Any]:
    """``n`` writer processes at once on the empty shared home at ``address``."""
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(n)
    results = ctx.Queue()
    root.mkdir(parents=True)
    Memory.open(address, cache=root / "setup", user="*").close()  # the schema, made once
    procs = [
        ctx.Process(target=_writer, args=(address, str(root / f"cache-{w}"), w, remembers, batches, batch, now, barrier, results))
        for w in range(n)
    ]
    for p in procs:
        p.start()
    got = [results.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    failed = [g["error"] for g in got if "error" in g]
    if failed:
        raise RuntimeError(f"a writer failed: {failed[0]}")
    out: dict[str, Any] = {"writers": n}
    for phase, count in (("remember", remembers), ("import_records", batches * batch)):
        start = min(g[phase][0] for g in got)
        end = max(g[phase][1] for g in got)
        per_call = [x for g in got for x in g[phase][2]]
        out[phase] = {
            "writes": n * count, "wall_s": round(end - start, 3), "writes_per_s": round(n * count / (end - start), 1),
            "call_p50_ms": round(float(np.percentile(per_call, 50)) * 1e3, 2),
            "call_p99_ms": round(float(np.percentile(per_call, 99)) * 1e3, 2),
        }
    out["import_records"]["batch"] = batch
    with Memory.open(address, cache=root / "check", user="*") as mem:
        held = len(mem.ids())
    want = n * (remembers + batches * batch)
    if held != want:
        raise DisagreementError(f"{n} writers wrote {want:,} memories, a fresh handle holds {held:,}")
    out["held"] = held
    return out


def _writer(address: str, cache: str, w: int, remembers: int, batches: int, batch: int, now: Any, barrier: Any, results: Any) -> None:
    """(In a writer process.) Times ``remember`` calls, then ``import_records`` batches."""
    try:
        records = episode_records(make_corpus(batch, seed=100 + w))
        clock = time.perf_counter
        with Memory.open(address, cache=cache, user="*") as mem:
            barrier.wait(timeout=120)
            calls = []
            start = clock()
            for i in range(remembers):
                t = clock()
                mem.remember(f"writer {w} remembers {i}", actors=[f"writer-{w}"], user_id="user-000", now=now)
                calls.append(clock() - t)
            end = clock()
            remember = (start, end, calls)
            barrier.wait(timeout=300)
            calls = []
            start = clock()
            for b in range(batches):
                for i, r in enumerate(records):
                    r["narrative"] = f"writer {w} batch {b} item {i}: {r['narrative']}"
                t = clock()
                mem.import_records(records, now=now)
                calls.append(clock() - t)
                for r in records:
                    r["narrative"] = r["narrative"].split(": ", 1)[1]
            end = clock()
        results.put({"remember": remember, "import_records": (start, end, calls)})
    except BaseException as exc:  # reported to the parent, which raises
        results.put({"error": f"writer {w}: {type(exc).__name__}: {exc}"})
        try:
            barrier.abort()
        finally:
            os._exit(1)


def _ratio(value: float, base: float) -> float | None:
    return round(value / base, 3) if base else None


# -- the table ------------------------------------------------------------------------------


def render(result: dict[str, Any], console: Console) -> None:
    """Prints the table of :func:`measure` (80 columns)."""
    table = titled_table(f"shared home on PostgreSQL, {result['episodes']:,} episodes")
    for column in ("measurement", "value", "against", "value", "×"):
        table.add_column(column, justify="left" if column in ("measurement", "against") else "right")
    for label, value, against, base in _rows(result):
        table.add_row(label, number_cell(value), against, number_cell(base), _times(value, base))
    console.print(fit_width(table))
    c, op = result["recall"]["check"], result["open"]
    console.print(
        f"top {K} checked on all {c['queries']} queries: the SQL's equal to Memory.recall's on {c['sql_equal']}, up to ties on "
        f"{c['sql_tied']} (scores within {c['max_score_diff']:.1e}); the first recall of a fresh process (cold): PG home "
        f"{number_cell(op['warm']['first_recall_ms'] * 1e3)} µs (after a catch-up {number_cell(op['catch_up']['first_recall_ms'] * 1e3)} µs), "
        f"embedded {number_cell(op['embedded']['first_recall_ms'] * 1e3)} µs; the SQL's first after connecting "
        f"{number_cell(result['recall']['sql']['first_us'])} µs; {result['server']['version']} (fsync {result['server']['fsync']}); "
        f"{result['machine']}"
    )


def _rows(result: dict[str, Any]) -> list[tuple[str, float, str, float]]:
    """(measurement, value, what it is set against, that value) for each line of the tables."""
    rec, imp, op, wr = result["recall"], result["import"], result["open"], result["writes"]
    n = result["writers"]
    rows = []
    for label, key in (("p50", "p50_us"), ("p99", "p99_us")):
        rows.append((f"SQL recall {label} µs", rec["sql"][key], "PG home", rec["pg_home"][key]))
        rows.append((f"PG home recall {label} µs", rec["pg_home"][key], "embedded", rec["embedded"][key]))
    rows.append(("import_jsonl records/s", imp["postgres"]["records_per_s"], "embedded", imp["embedded"]["records_per_s"]))
    rows.append(("open s, new cache", op["catch_up"]["open_s"], "warm cache", op["warm"]["open_s"]))
    rows.append(("open s, new cache, snapshot", op["snapshot"]["open_s"], "new cache, catch-up", op["catch_up"]["open_s"]))
    rows.append((f"remember/s, {n} writers", wr[str(n)]["remember"]["writes_per_s"], "1 writer", wr["1"]["remember"]["writes_per_s"]))
    rows.append((f"import_records/s, {n} writers", wr[str(n)]["import_records"]["writes_per_s"], "1 writer", wr["1"]["import_records"]["writes_per_s"]))
    return rows


def _times(value: float, base: float) -> str:
    if not base:
        return "—"
    r = value / base
    return f"{r:,.0f}×" if r >= 100 else f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def markdown(result: dict[str, Any]) -> str:
    """The table of :func:`measure` in docs/benchmarks.md."""
    batch = result["writes"]["1"]["import_records"]["batch"]
    names = {
        "SQL recall": "recall {}, SQL: GIN filter + decayed top 10 in SQL",
        "PG home recall": "recall {}, `Memory.recall` on the PostgreSQL home",
    }
    against = {"PG home": "`Memory.recall`, PostgreSQL home", "embedded": "embedded home", "warm cache": "fresh process, warm cache",
               "new cache, catch-up": "fresh process, new cache (catch-up)",
               "1 writer": "1 writer process"}
    lines = ["| measurement | value | against | value | × |", "|---|---:|---|---:|---:|"]
    for label, value, base_name, base in _rows(result):
        for prefix, template in names.items():
            if label.startswith(prefix + " "):
                label = template.format(label[len(prefix) + 1:])
        label = {
            "import_jsonl records/s": "`import_jsonl` records/s into the PostgreSQL home",
            "open s, new cache": "open s, fresh process, new cache (catch-up)",
            "open s, new cache, snapshot": "open s, fresh process, new cache, from the snapshot",
        }.get(label, label)
        if label.startswith("remember/s"):
            label = f"`remember` writes/s, {result['writers']} writer processes at once"
        elif label.startswith("import_records/s"):
            label = f"`import_records` ({batch:,} a call) writes/s, {result['writers']} writer processes at once"
        lines.append(f"| {label} | {number_cell(value)} | {against.get(base_name, base_name)} | {number_cell(base)} | {_times(value, base)} |")
    return "\n".join(lines) + "\n"
