"""Benchmark of writes visible at once: a text recall right after a ``remember`` against one without.

The home is the question benchmark's (:func:`~cuemem.lab.bench.questions.build_home`:
``import_records`` of the corpus with the text benchmark's narratives), saved and
warmed by one text recall. Then, through the public API only, for each of ``pairs``
steps, in the same run:

- ``Memory.recall(text=q)`` alone, timed (no write since the previous recall);
- ``Memory.remember(...)`` of a narrative holding ``q``'s words (not timed), then
  ``Memory.recall(text=q)`` again, timed: the new memory must be searchable at once.

``q`` runs over the text benchmark's queries (2 to 4 words of random narratives). The
text index searches the rows written since its last commit in memory (its tail) and
commits only when the tail passes ``_core.TextIndex.tail_limit`` rows; ``pairs`` is
larger than that by default, so the few recalls that do commit are inside the figures
(``commits`` says how many; ``max_us`` and ``mean_us`` show them). ``found`` counts the
recalls after a remember whose top 10 hold the memory just written; after each timed
pair an untimed recall of the new memory's own word (``step<i>``) must find it first.
``cuemem bench --tail`` runs it.
"""

from __future__ import annotations

import gc
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from ... import _core
from ...memory import Memory
from .corpus import make_corpus
from .home import now_datetime
from .machine import describe_machine
from .questions import build_home
from .tables import fit_width, number_cell, ratio_cell, titled_table
from .text import _queries, narratives
from .timing import summary_us

__all__ = ["measure", "render"]

K = 10


def measure(episodes: int = 100_000, *, seed: int = 7, pairs: int | None = None) -> dict[str, Any]:
    """Times recall alone and recall right after a remember, interleaved (see the module docstring)."""
    limit = int(_core.TextIndex.tail_limit)
    pairs = limit + limit // 4 if pairs is None else pairs
    corpus = make_corpus(episodes, seed)
    queries = _queries(narratives(corpus, seed), seed)
    now = now_datetime()
    alone: list[int] = []
    after: list[int] = []
    found = 0
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        t0 = time.perf_counter()
        build_home(corpus, home, seed).close()
        build_s = round(time.perf_counter() - t0, 1)
        with Memory.open(home, fsync="never", user="*") as mem:
            mem.recall(text=queries[0], k=K, now=now)
            clock = time.perf_counter_ns
            gc.disable()
            try:
                for i in range(pairs):
                    q = queries[i % len(queries)]
                    t = clock()
                    mem.recall(text=q, k=K, now=now)
                    alone.append(clock() - t)
                    new = mem.remember(f"{q} noted again, step{i}", actors=["bench-writer"], now=now)
                    t = clock()
                    res = mem.recall(text=q, k=K, now=now)
                    after.append(clock() - t)
                    found += any(h.id == new for h in res.hits)
                    mark = mem.recall(text=f"step{i}", k=1, now=now).hits  # not timed: the write is searchable
                    if not mark or mark[0].id != new:
                        raise AssertionError(f"the memory written at step {i} is not searchable at once")
            finally:
                gc.enable()
    a, b = summary_us(alone), summary_us(after)
    return {
        "episodes": episodes, "pairs": pairs, "tail_limit": limit, "commits": pairs // (limit + 1), "found": found,
        "alone": a, "after_remember": b,
        "ratio_p50": b["p50_us"] / a["p50_us"], "ratio_p99": b["p99_us"] / a["p99_us"],
        "build_s": build_s, "machine": describe_machine(),
    }


def render(result: dict[str, Any], console: Console) -> None:
    """Prints the table of :func:`measure`."""
    table = titled_table(
        f"text recall right after a remember, {result['episodes']:,} episodes, {result['pairs']:,} pairs "
        f"(tail bound {result['tail_limit']:,}: {result['commits']} commit(s) inside)"
    )
    for column in ("Memory.recall(text=...)", "p50 µs", "p99 µs", "mean µs", "max µs", "p50 × alone"):
        table.add_column(column, justify="left" if column.startswith("Memory") else "right")
    a = result["alone"]["p50_us"]
    for name, key in (("alone", "alone"), ("right after a remember", "after_remember")):
        s = result[key]
        table.add_row(name, number_cell(s["p50_us"]), number_cell(s["p99_us"]), number_cell(s["mean_us"]),
                      number_cell(s["max_us"]), ratio_cell(s["p50_us"] / a if a else None))
    console.print(fit_width(table))
    console.print(
        f"the new memory in the top {K}: {result['found']:,} of {result['pairs']:,}; p99 × alone {result['ratio_p99']:.2f}; "
        f"home built in {result['build_s']} s; {result['machine']}"
    )
