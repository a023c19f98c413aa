"""Benchmark of where agents meet the memory: ``recall`` through the MCP server over stdio
next to the same call in process, and ``CuememStore.search`` next to LangGraph's
``InMemoryStore.search``, each pair in the same run.

**MCP.** The question benchmark's home (:func:`~cuemem.lab.bench.questions.build_home`) is
built through the public API and closed; ``cuemem --user '*' mcp --home DIR`` is then
started as an agent host starts it (a subprocess, driven by the MCP SDK's own client
over stdio), and a read-only handle is opened in process on the same home. The same
cue queries (the recall benchmark's mix) and questions (the question benchmark's) are
asked both ways, one after the other per argument: the in-process call is
``Memory.recall``; the MCP one is ``call_tool("recall", ...)`` up to its decoded result
(JSON-RPC over the pipe, the hits' records rendered as structured content). Warm: an
untimed pass, then rounds.

**LangGraph.** The same items (``{"text": narrative, "actor": ..., "type": ...}`` in a
namespace per user) are put into a ``CuememStore`` and an ``InMemoryStore``; then the
same searches: a namespace prefix with a filter on a field, and a natural-language
``query`` (cuemem's text recall against the ``InMemoryStore``'s — which, without an
index configured, matches nothing by meaning and only filters: the figure says what a
user gets from each).

``cuemem bench --agents`` runs it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from rich.console import Console

from ...memory import Memory
from .corpus import make_corpus
from .home import now_datetime
from .machine import describe_machine
from .queries import make_queries
from .questions import build_home, questions
from .tables import fit_width, number_cell, ratio_cell, titled_table
from .timing import Latency

__all__ = ["measure", "measure_mcp", "measure_store", "render"]

K = 10
T = TypeVar("T")


def _stats(latency: Latency) -> dict[str, float]:
    return {"p50_us": round(latency.percentile_us(50), 3), "p99_us": round(latency.percentile_us(99), 3), "calls": float(len(latency.ns))}


async def _time_pairs(
    items: Sequence[T], local: Callable[[T], object], remote: Callable[[T], Awaitable[object]], rounds: int, budget_s: float,
) -> tuple[Latency, Latency]:
    """Each item both ways, one after the other, round after round (within ``budget_s``)."""
    clock = time.perf_counter_ns
    here: list[int] = []
    there: list[int] = []
    start, done = clock(), 0
    while done < rounds and (done == 0 or (clock() - start) / 1e9 < budget_s):
        for item in items:
            t0 = clock()
            local(item)
            t1 = clock()
            await remote(item)
            here.append(t1 - t0)
            there.append(clock() - t1)
        done += 1
    return Latency(np.array(here, dtype=np.int64), done), Latency(np.array(there, dtype=np.int64), done)


def measure_mcp(episodes: int = 1_000_000, *, seed: int = 7, rounds: int = 5, budget_s: float = 60.0) -> dict[str, Any]:
    """In-process ``Memory.recall`` against ``recall`` through ``cuemem mcp`` over stdio."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, get_default_environment

    corpus = make_corpus(episodes, seed)
    now = now_datetime()
    cue_args: list[dict[str, Any]] = [{"cues": q.cues} for q in make_queries(corpus, seed) if q.exclude is None]
    text_args: list[dict[str, Any]] = [{"text": question} for question, _, _ in questions(corpus, seed)]
    kinds: list[tuple[str, list[dict[str, Any]]]] = [("cue recall", cue_args), ("text recall", text_args)]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        t0 = time.perf_counter()
        build_home(corpus, home, seed).close()
        build_s = time.perf_counter() - t0
        # The server is this cuemem (this import path), not whichever one is installed.
        path = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
        params = StdioServerParameters(command=sys.executable, args=["-m", "cuemem", "--user", "*", "mcp", "--home", str(home)],
                                       env={**get_default_environment(), **path})

        async def run() -> dict[str, Any]:
            out: dict[str, Any] = {}
            with Memory.open(home, read_only=True, user="*") as mem:
                async with Client(params, read_timeout_seconds=300) as client:
                    for kind, args in kinds:

                        def local(a: dict[str, Any]) -> list[str]:
                            return [h.record.id for h in mem.recall(a.get("cues"), text=a.get("text"), k=K, now=now).hits]

                        async def remote(a: dict[str, Any]) -> list[str]:
                            result = await client.call_tool("recall", {**a, "k": K, "now": now.isoformat()})
                            if result.is_error or result.structured_content is None:
                                raise RuntimeError(f"the server refused {a}: {result.content}")
                            return [str(h["id"]) for h in result.structured_content["hits"]]

                        for a in args:  # untimed: the same hits both ways
                            if await remote(a) != local(a):
                                raise RuntimeError(f"the server and the handle disagree on {a}")
                        here, there = await _time_pairs(args, local, remote, rounds, budget_s)
                        out[kind] = {"in process": _stats(here), "mcp stdio": _stats(there),
                                     "ratio_p50": round(there.percentile_us(50) / max(here.percentile_us(50), 1e-9), 3)}
            return out

        timings = asyncio.run(run())
    return {"episodes": episodes, "build_s": round(build_s, 1), "k": K, "rounds": rounds, "machine": describe_machine(),
            "recall": timings}


#: Item counts of the store comparison.
STORE_SIZES = (10_000, 100_000)
#: Searches timed per kind.
SEARCHES = 200


def _items(n: int, seed: int) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    """``n`` items: the corpus's narratives and types (one per episode), in a namespace per user."""
    from .text import narratives

    corpus = make_corpus(n, seed)
    texts = narratives(corpus, seed)
    users, types = corpus.dims["user"], corpus.dims["type"]  # one value per row, in row order
    return [
        (("memories", users.values[int(users.codes[i])]), f"m{i}", {"text": texts[i], "type": types.values[int(types.codes[i])]})
        for i in range(n)
    ]


def measure_store(sizes: Sequence[int] = STORE_SIZES, *, seed: int = 7, rounds: int = 3, budget_s: float = 30.0) -> dict[str, Any]:
    """``CuememStore.search`` next to ``InMemoryStore.search`` over the same items, same run."""
    from langgraph.store.base import BaseStore
    from langgraph.store.memory import InMemoryStore

    from ...integrations.langgraph import CuememStore
    from .timing import time_calls

    out: dict[str, Any] = {}
    for n in sizes:
        items = _items(n, seed)
        rng = np.random.default_rng(seed)
        namespaces = sorted({ns for ns, _, _ in items})
        picks = [items[int(i)] for i in rng.integers(0, n, SEARCHES)]
        prefixed = [(ns, {"type": v["type"]}) for ns, _, v in picks]
        worded = [(ns[:1], " ".join(v["text"].split(". ", 1)[-1].split()[:3])) for ns, _, v in picks]
        oracle = InMemoryStore()
        with tempfile.TemporaryDirectory() as tmp, CuememStore.open(Path(tmp) / "home", fsync="never") as store:
            t0 = time.perf_counter()
            for ns, key, value in items:
                store.put(ns, key, value)
            put_s = time.perf_counter() - t0
            for ns, key, value in items:
                oracle.put(ns, key, value)
            row: dict[str, Any] = {"items": n, "namespaces": len(namespaces), "cuemem put_s": round(put_s, 1)}
            searches: list[tuple[str, list[tuple[tuple[str, ...], Any]], Callable[[BaseStore, tuple[tuple[str, ...], Any]], object]]] = [
                ("prefix + filter", prefixed, lambda s, a: s.search(a[0], filter=a[1], limit=10)),
                ("query", worded, lambda s, a: s.search(a[0], query=a[1], limit=10)),
            ]
            for kind, args, call in searches:
                for a in args:  # untimed pass: both answer
                    call(store, a), call(oracle, a)
                mine = time_calls(lambda a: call(store, a), args, rounds=rounds, budget_s=budget_s)
                theirs = time_calls(lambda a: call(oracle, a), args, rounds=rounds, budget_s=budget_s)
                row[kind] = {"cuemem": _stats(mine), "InMemoryStore": _stats(theirs),
                             "ratio_p50": round(mine.percentile_us(50) / max(theirs.percentile_us(50), 1e-9), 3)}
            out[str(n)] = row
    return out


def measure(episodes: int = 1_000_000, *, seed: int = 7) -> dict[str, Any]:
    """Both comparisons: ``recall`` over MCP at ``episodes``, the LangGraph store at :data:`STORE_SIZES`."""
    return {**measure_mcp(episodes, seed=seed), "store": measure_store(seed=seed)}


def render(result: dict[str, Any], console: Console) -> None:
    """Prints the tables of :func:`measure`."""
    table = titled_table(f"recall in process and through cuemem mcp (stdio), {result['episodes']:,} episodes, k={result['k']}")
    for column in ("call", "way", "p50 µs", "p99 µs", "p50 × in process"):
        table.add_column(column, justify="left" if column in ("call", "way") else "right")
    for kind, ways in result["recall"].items():
        base = ways["in process"]["p50_us"]
        for way in ("in process", "mcp stdio"):
            s = ways[way]
            table.add_row(kind, way, number_cell(s["p50_us"]), number_cell(s["p99_us"]), ratio_cell(s["p50_us"] / base if base else None))
    console.print(fit_width(table))
    console.print(f"home built in {result['build_s']} s; {result['machine']}")
    if "store" not in result:
        return
    store = titled_table("CuememStore.search against LangGraph's InMemoryStore.search, limit 10")
    for column in ("items", "search", "store", "p50 µs", "p99 µs", "p50 × InMemoryStore"):
        store.add_column(column, justify="left" if column in ("search", "store") else "right")
    for n, row in result["store"].items():
        for kind in ("prefix + filter", "query"):
            ways = row[kind]
            for way in ("cuemem", "InMemoryStore"):
                st = ways[way]
                ratio = st["p50_us"] / ways["InMemoryStore"]["p50_us"] if ways["InMemoryStore"]["p50_us"] else None
                store.add_row(f"{int(n):,}", kind, way, number_cell(st["p50_us"]), number_cell(st["p99_us"]), ratio_cell(ratio))
    console.print(fit_width(store))
