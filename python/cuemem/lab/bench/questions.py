"""Benchmark of question understanding: ``Memory.recall(text=question)`` with it and without.

A home is built as a user builds one — ``Memory.import_records`` of the home
benchmark's records (actors, type, outcome, day, salience) with the text
benchmark's narratives (:func:`~cuemem.lab.bench.text.narratives`) and a thread per 20
consecutive episodes (a conversation) — and the
same questions are asked of it, each in turn under:

- **plain**: ``TextWeights.plain()``, the core's blend alone (what text recall did
  before the question was read);
- **understood**: the defaults: function words out, the named actor boosted and out
  of BM25, thread neighbours and the thread's best shared;
- **cue + understood**: the same question with a selective actor as a cue;
- **keywords**, plain and understood: the question's 2-4 topic words alone, so
  reading strips nothing and the second stage's own cost shows.

A question is ``"what did <actor> say about <2-4 words of one of their episodes>?"``,
so every part of the reading has work to do. The five calls on one question run
back to back, so each meets the same cache state; the ratio of the medians is the
cost of understanding on the same home in the same run.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from ...memory import Memory
from ...text import TextWeights
from .corpus import Corpus, make_corpus
from .home import episode_records, now_datetime
from .text import QUERIES, _selective_actors, narratives

__all__ = ["KINDS", "build_home", "measure_questions", "questions", "render_questions"]

#: Episodes per thread.
THREAD = 20
K = 10


def build_home(corpus: Corpus, home: Path, seed: int = 7) -> Memory:
    """A home holding the corpus through ``import_records`` — the home benchmark's records
    with the text benchmark's narratives and a thread per :data:`THREAD` episodes; the
    caller closes it."""
    texts = narratives(corpus, seed)

    def records() -> Iterator[dict[str, Any]]:
        step = 50_000
        for begin in range(0, corpus.n, step):
            for i, r in enumerate(episode_records(corpus, begin, min(begin + step, corpus.n)), begin):
                r["narrative"] = texts[i]
                r["thread"] = f"conversation-{i // THREAD}"
                yield r

    mem = Memory.open(home, fsync="never", user="*")
    mem.import_records(records(), now=now_datetime())
    return mem


def questions(corpus: Corpus, seed: int = 7) -> list[tuple[str, str, str]]:
    """(question, actor, keywords) triples: an actor on 20 to 2,000 episodes, 2-4 words of
    one of their episodes, and the question asking about them."""
    texts = narratives(corpus, seed)
    actors = _selective_actors(corpus, seed)
    a = corpus.dims["actor"]
    code = {v: i for i, v in enumerate(a.values)}
    rng = np.random.default_rng(seed + 4)
    out = []
    for actor in actors:
        rows = a.rows[a.codes == code[actor]]
        body = texts[int(rng.choice(rows))].split(". ", 1)[1].split()
        n = int(rng.integers(2, 5))
        picks = sorted(rng.choice(len(body), size=min(n, len(body)), replace=False).tolist())
        words = " ".join(body[i] for i in picks)
        out.append((f"what did {actor} say about {words}?", actor, words))
    return out


def _stats(ns: list[int]) -> dict[str, float]:
    a = np.asarray(ns, dtype=np.float64)
    return {"p50_us": float(np.percentile(a, 50)) / 1e3, "p99_us": float(np.percentile(a, 99)) / 1e3}


#: The timed call kinds, in table order.
KINDS = ("plain", "understood", "cue + understood", "keywords, plain", "keywords, understood")


def _time(mem: Memory, asked: list[tuple[str, str, str]], rounds: int) -> dict[str, list[int]]:
    """Per call kind, the nanoseconds of each recall: the kinds back to back on each question."""
    now = now_datetime()
    plain, understood = TextWeights.plain(), TextWeights()

    def call(kind: str, q: str, actor: str, words: str) -> object:
        if kind == "plain":
            return mem.recall(text=q, k=K, now=now, weights=plain)
        if kind == "understood":
            return mem.recall(text=q, k=K, now=now, weights=understood)
        if kind == "cue + understood":
            return mem.recall({"actor": actor}, text=q, k=K, now=now, weights=understood)
        return mem.recall(text=words, k=K, now=now, weights=plain if kind == "keywords, plain" else understood)

    for q, a, w in asked:  # warm-up
        for kind in KINDS:
            call(kind, q, a, w)
    times: dict[str, list[int]] = {kind: [] for kind in KINDS}
    clock = time.perf_counter_ns
    for _ in range(rounds):
        for q, a, w in asked:
            for kind in KINDS:
                start = clock()
                call(kind, q, a, w)
                times[kind].append(clock() - start)
    return times


def measure_questions(episodes: int = 1_000_000, *, seed: int = 7, rounds: int = 3, console: Console | None = None) -> dict[str, Any]:
    """Builds the home and times plain, understood and cue + understood recalls of the same questions."""
    console = console or Console()
    console.print(f"question bench: importing {episodes:,} episodes into a home")
    corpus = make_corpus(episodes, seed=seed)
    asked = questions(corpus, seed)[:QUERIES]
    with tempfile.TemporaryDirectory(prefix="cuemem-questionbench-") as tmp:
        t0 = time.perf_counter()
        mem = build_home(corpus, Path(tmp) / "home", seed)
        build_s = time.perf_counter() - t0
        try:
            times = _time(mem, asked, rounds)
        finally:
            mem.close()
    result: dict[str, Any] = {"episodes": episodes, "questions": len(asked), "k": K, "rounds": rounds, "build_s": build_s}
    for name, ns in times.items():
        result[name] = _stats(ns)
    result["understood_over_plain_p50"] = result["understood"]["p50_us"] / result["plain"]["p50_us"]
    result["keywords_understood_over_plain_p50"] = result["keywords, understood"]["p50_us"] / result["keywords, plain"]["p50_us"]
    return result


def render_questions(result: dict[str, Any], console: Console) -> None:
    """Prints the question benchmark's table."""
    base = result["plain"]["p50_us"]
    table = Table(
        title=f"Memory.recall(text=question), {result['episodes']:,} episodes, {result['questions']} questions, k={result['k']}",
        title_justify="left",
    )
    for col in ("weights", "p50 µs", "p99 µs", "p50 × plain"):
        table.add_column(col, justify="right" if col != "weights" else "left")
    for name in KINDS:
        s = result[name]
        table.add_row(name, f"{s['p50_us']:,.0f}", f"{s['p99_us']:,.0f}", f"{s['p50_us'] / base:.2f}×")
    table.caption = f"home built through import_records in {result['build_s']:.1f} s"
    console.print(table)
