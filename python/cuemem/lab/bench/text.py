"""Benchmark of text recall: cuemem's core against tantivy-py, and cue + text against text.

The corpus is the recall benchmark's (:func:`~cuemem.lab.bench.corpus.make_corpus`):
each episode's narrative opens with its type, actors and outcome, as the home
benchmark writes them, and goes on with 8 to 24 words drawn from a Zipf-skewed
vocabulary of 30,000 synthetic words, so term frequencies look like prose. Both
engines index the same narratives, each in a temporary directory; the queries are
2 to 4 words taken from random episodes, the same strings for both. Timed, for
each query:

- **tantivy-py**: ``index.parse_query`` (OR of the terms) + ``searcher.search`` top 10
  (``count=False``, so block-max WAND can prune, as in cuemem);
- **cuemem BM25**: the core's ``TextIndex.search`` top 10 (analysis included);
- **cuemem text recall**: ``text_recall`` with no cue: BM25 pool of 100, blended
  with the decayed salience composite, top 10 (what ``Memory.recall(text=...)`` runs);
- **cue + text**: the same with a selective actor cue (an actor on 20 to 2,000 episodes).

``cuemem bench --text`` runs it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from ... import _core
from .corpus import Corpus, make_corpus
from .queries import NOW
from .systems import CuememSystem
from .timing import time_calls

#: Distinct synthetic words and the Zipf exponent of their use.
VOCABULARY = 30_000
ZIPF_S = 1.07
QUERIES = 200
K = 10
_SYLLABLES = ("ka", "ri", "to", "mu", "sen", "lo", "da", "vi", "ne", "por", "ta", "li", "qu", "es", "an", "mo")


def _word(i: int) -> str:
    out = []
    i += len(_SYLLABLES)  # every word has at least two syllables
    while i:
        i, r = divmod(i, len(_SYLLABLES))
        out.append(_SYLLABLES[r])
    return "".join(out)


def narratives(corpus: Corpus, seed: int = 7) -> list[str]:
    """One narrative per corpus row: its type, actors and outcome, then Zipf-drawn words."""
    rng = np.random.default_rng(seed + 1)
    words = [_word(i) for i in range(VOCABULARY)]
    p = 1.0 / np.arange(1, VOCABULARY + 1) ** ZIPF_S
    lengths = rng.integers(8, 25, corpus.n)
    drawn = rng.choice(VOCABULARY, size=int(lengths.sum()), p=p / p.sum()).tolist()
    types = corpus.dims["type"]
    outcomes = corpus.dims["outcome"]
    type_of = np.empty(corpus.n, dtype=np.uint32)
    type_of[types.rows] = types.codes
    outcome_of = np.empty(corpus.n, dtype=np.uint32)
    outcome_of[outcomes.rows] = outcomes.codes
    actors: list[list[str]] = [[] for _ in range(corpus.n)]
    a = corpus.dims["actor"]
    for row, code in zip(a.rows.tolist(), a.codes.tolist()):
        actors[row].append(a.values[code])
    out = []
    at = 0
    for i, n in enumerate(lengths.tolist()):
        body = " ".join(words[w] for w in drawn[at : at + n])
        at += n
        out.append(f"{types.values[type_of[i]]} with {', '.join(actors[i])}: {outcomes.values[outcome_of[i]]}. {body}")
    return out


def _queries(texts: list[str], seed: int) -> list[str]:
    rng = np.random.default_rng(seed + 2)
    out = []
    for row in rng.integers(0, len(texts), QUERIES).tolist():
        body = texts[row].split(". ", 1)[1].split()
        n = int(rng.integers(2, 5))
        picks = rng.choice(len(body), size=min(n, len(body)), replace=False)
        out.append(" ".join(body[i] for i in sorted(picks.tolist())))
    return out


def _selective_actors(corpus: Corpus, seed: int) -> list[str]:
    a = corpus.dims["actor"]
    counts = np.bincount(a.codes, minlength=len(a.values))
    pick = np.flatnonzero((counts >= 20) & (counts <= 2_000))
    rng = np.random.default_rng(seed + 3)
    return [a.values[i] for i in rng.choice(pick, size=QUERIES).tolist()]


def _stats(ns: np.ndarray) -> dict[str, float]:
    return {"p50_us": float(np.percentile(ns, 50)) / 1e3, "p99_us": float(np.percentile(ns, 99)) / 1e3}


@dataclass
class Engines:
    """Both engines over the same narratives, and the calls the benchmark times."""

    queries: list[str]
    actors: list[str]
    cuemem_build_s: float
    tantivy_py_build_s: float
    calls: dict[str, tuple[Callable[[Any], object], list[Any]]]


def build_engines(corpus: Corpus, directory: Path, seed: int = 7) -> Engines:
    """Indexes the corpus's narratives in cuemem's core and in tantivy-py under ``directory``."""
    import tantivy

    texts = narratives(corpus, seed)
    queries = _queries(texts, seed)
    actors = _selective_actors(corpus, seed)
    system = CuememSystem()
    system.build(corpus)
    index, table = system._index._inner, system._table._inner

    t0 = time.perf_counter()
    ours = _core.TextIndex(directory / "cuemem", "stem-bigram", True)
    step = 50_000
    for start in range(0, corpus.n, step):
        ours.add(np.arange(start, min(start + step, corpus.n), dtype=np.uint32), texts[start : start + step])
    ours.commit("{}")
    ours.close()
    ours_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    (directory / "tantivy-py").mkdir()
    theirs = tantivy.Index(builder.build(), path=str(directory / "tantivy-py"))
    writer = theirs.writer(heap_size=96 << 20, num_threads=2)
    for text in texts:
        writer.add_document(tantivy.Document(body=text))
    writer.commit()
    writer.wait_merging_threads()
    theirs.reload()
    searcher = theirs.searcher()
    theirs_s = time.perf_counter() - t0
    del texts

    def tantivy_py(q: str) -> object:
        return searcher.search(theirs.parse_query(q, ["body"]), K, count=False).hits

    def bm25(q: str) -> object:
        return ours.search(q, None, K)

    def recall(q: str) -> object:
        return _core.text_recall(index, table, ours, None, q, NOW, K)

    def cue_text(qa: tuple[str, str]) -> object:
        return _core.text_recall(index, table, ours, {"actor": qa[1]}, qa[0], NOW, K)

    pairs = list(zip(queries, actors))
    calls: dict[str, tuple[Callable[[Any], object], list[Any]]] = {
        "tantivy-py": (tantivy_py, list(queries)),
        "cuemem BM25": (bm25, list(queries)),
        "cuemem text recall": (recall, list(queries)),
        "cuemem cue + text": (cue_text, pairs),
    }
    return Engines(queries, actors, ours_s, theirs_s, calls)


def measure_text(episodes: int = 1_000_000, *, seed: int = 7, console: Console | None = None) -> dict[str, Any]:
    """Builds both engines on the same narratives and times the same queries on each."""
    console = console or Console()
    console.print(f"text bench: indexing {episodes:,} narratives in cuemem and tantivy-py")
    corpus = make_corpus(episodes, seed=seed)
    with tempfile.TemporaryDirectory(prefix="cuemem-textbench-") as tmp:
        engines = build_engines(corpus, Path(tmp), seed)
        result: dict[str, Any] = {
            "episodes": episodes, "queries": len(engines.queries), "k": K,
            "cuemem_build_s": engines.cuemem_build_s, "tantivy_py_build_s": engines.tantivy_py_build_s,
        }
        for name, (fn, items) in engines.calls.items():
            for item in items:  # warm-up
                fn(item)
            lat = time_calls(fn, items, rounds=5, budget_s=20.0)
            result[name] = _stats(lat.ns)
    return result


def render_text(result: dict[str, Any], console: Console) -> None:
    """Prints the text benchmark's table."""
    base = result["tantivy-py"]["p50_us"]
    table = Table(title=f"text recall, {result['episodes']:,} episodes, {result['queries']} queries, k={result['k']}", title_justify="left")
    for col in ("system", "p50 µs", "p99 µs", "p50 × tantivy-py"):
        table.add_column(col, justify="right" if col != "system" else "left")
    for name in ("tantivy-py", "cuemem BM25", "cuemem text recall", "cuemem cue + text"):
        s = result[name]
        table.add_row(name, f"{s['p50_us']:,.0f}", f"{s['p99_us']:,.0f}", f"{s['p50_us'] / base:.2f}×")
    table.caption = f"build: cuemem {result['cuemem_build_s']:.1f} s, tantivy-py {result['tantivy_py_build_s']:.1f} s"
    console.print(table)
