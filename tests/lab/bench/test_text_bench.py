"""The text benchmark's corpus, queries and engines, and the Japanese analyzer measurement, at small sizes."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuemem.lab.bench import japanese
from cuemem.lab.bench.corpus import make_corpus
from cuemem.lab.bench.text import _queries, _selective_actors, build_engines, narratives


def test_narratives_are_deterministic_and_open_with_the_cues() -> None:
    """Narratives repeat for a seed, one per row, opening with type, actors and outcome."""
    corpus = make_corpus(500, seed=3)
    a, b = narratives(corpus, 3), narratives(corpus, 3)
    assert a == b and len(a) == 500
    types = set(corpus.dims["type"].values)
    assert all(n.split(" with ", 1)[0] in types for n in a)
    assert all(8 <= len(n.split(". ", 1)[1].split()) <= 24 for n in a)


def test_queries_come_from_the_narratives() -> None:
    """Every query is 2 to 4 words of some narrative's body; actors are selective."""
    corpus = make_corpus(3_000, seed=5)
    texts = narratives(corpus, 5)
    words = {w for t in texts for w in t.split(". ", 1)[1].split()}
    qs = _queries(texts, 5)
    assert all(2 <= len(q.split()) <= 4 and set(q.split()) <= words for q in qs)
    actors = _selective_actors(make_corpus(200_000, seed=5), 5)
    assert len(actors) == len(qs)


def test_engines_answer_the_same_queries(tmp_path: Path) -> None:
    """Both engines index the corpus; every timed call answers; cue + text stays within the cue."""
    pytest.importorskip("tantivy")
    corpus = make_corpus(2_000, seed=1)
    engines = build_engines(corpus, tmp_path, seed=1)
    assert set(engines.calls) == {"tantivy-py", "cuemem BM25", "cuemem text recall", "cuemem cue + text"}
    rows, scores = engines.calls["cuemem BM25"][0](engines.queries[0])  # type: ignore[misc]
    assert len(rows) > 0 and list(scores) == sorted(scores, reverse=True)
    assert len(engines.calls["tantivy-py"][0](engines.queries[0])) > 0  # type: ignore[arg-type]


def test_japanese_corpus_knows_its_relevant_sentences() -> None:
    """Each query's relevant rows hold its person, place and object."""
    texts, codes = japanese.corpus()
    qs = japanese.queries(codes)
    for text, relevant in qs[:20]:
        words = text.replace("は", " ").replace("で", " ").split()
        assert all(all(w in texts[r] for w in words) for r in relevant)
