"""A text recall's second stage: the question read against the home, the thread context.

The core ranks the pool (BM25 blended with salience and freshness); this stage adds
what :class:`~cuemem.text.TextWeights` describes — with an embedder, the memories
nearest the question, fused by their rank (or every pool memory's cosine); shares of thread neighbours'
and of the thread's best score; boosts for named cue values, named days and "when"
questions — over that pool, a bounded list. Every membership test is one call into
the core (:meth:`CueIndex.admits <cuemem.index.CueIndex>`, a text search restricted
to the pool), so no posting list crosses into Python.
"""

from __future__ import annotations

import weakref
from datetime import datetime
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ... import _core
from ...errors import InvalidArgumentError
from ...text.question import NAME_DIMENSIONS, Question, Vocabulary, is_year, read_question, when_query
from ...text.weights import RANK_FUSION_K, TextWeights
from ..cues import cue_values_json
from ..home import Home
from ..indexes import Indexes

#: Rows written since the vocabulary was built beyond which it is rebuilt rather than extended.
_LEARN_AT_MOST = 1_000

__all__ = ["POOLED", "Nearest", "Ranked", "Reader", "merge_pools", "vector_part"]


class Ranked(NamedTuple):
    """One re-ranked row: its final score, the core's parts and what this stage added."""

    row: int
    score: float
    bm25: float
    text: float
    salience: float
    freshness: float
    boost: float


#: Dimensions whose named values bring their own BM25 pool (a type names too many memories).
POOLED = frozenset({"actor", "subject", "tag"})


def merge_pools(main: list[Ranked], more: list[Ranked]) -> list[Ranked]:
    """``main`` and the rows of ``more`` it lacks (both blended on one BM25 scale)."""
    have = {r.row for r in main}
    return main + [r for r in more if r.row not in have]


class Nearest(NamedTuple):
    """The question's vector, the embeddings, and the rows nearest the question."""

    query: npt.NDArray[np.float32]
    matrix: npt.NDArray[np.float32]
    rows: npt.NDArray[np.uint32]


def vector_part(rows: npt.NDArray[np.uint32], near: Nearest, weights: TextWeights) -> npt.NDArray[np.float32]:
    """What the vectors add to each of ``rows``, as ``weights.fusion`` says: rank fusion of
    the nearest (``vector * K / (K + place)``, nothing outside them) or ``vector * cosine``."""
    if weights.fusion == "cosine":
        embedded = rows < len(near.matrix)
        cosine = np.zeros(len(rows), dtype=np.float32)
        cosine[embedded] = near.matrix[rows[embedded]] @ near.query
        return np.float32(weights.vector) * cosine
    out = np.zeros(len(rows), dtype=np.float32)
    if len(near.rows) == 0 or len(rows) == 0:
        return out
    by_row = np.argsort(near.rows, kind="stable")  # near.rows is best first; find each row's place in it
    at = np.minimum(np.searchsorted(near.rows[by_row], rows), len(by_row) - 1)
    found = near.rows[by_row[at]] == rows
    place = by_row[at[found]].astype(np.float32)
    out[found] = np.float32(weights.vector * RANK_FUSION_K) / (np.float32(RANK_FUSION_K) + place)
    return out


class Reader:
    """Question reading and thread context over one home's text recalls."""

    def __init__(self, home: Home) -> None:
        self._home = home
        self._vocabulary: Vocabulary | None = None
        self._built_for: weakref.ref[Indexes] | None = None  # the indexes it was built from
        self._learnt = 0  # rows it has learnt
        self._erasures = 0  # the indexes' erasures when it was built

    def vocabulary(self) -> Vocabulary:
        """The cue values a question may name: built from the cue index once, then
        extended by the live rows written since (a few records read), built afresh after
        a rebuild, an erasure or a large import. It may keep values whose memories were
        retired since; :meth:`read` asks the cue index whether a named value is still
        live. An erased memory's values leave it: they are in no live row."""
        indexes = self._home.indexes
        n = len(indexes)
        built_for = self._built_for() if self._built_for is not None else None
        if (
            self._vocabulary is None or built_for is not indexes or self._erasures != indexes.erasures
            or n < self._learnt or n - self._learnt > _LEARN_AT_MOST
        ):
            inner = indexes.cues._inner
            self._vocabulary = Vocabulary({d: inner.values(d) for d in NAME_DIMENSIONS}, filter(is_year, inner.values("time")))
        elif n > self._learnt:
            fresh = np.arange(self._learnt, n, dtype=np.uint32)
            live = fresh[indexes.cues.admits({}, fresh)]  # a retired or erased row is not read
            for episode in self._home.stored(live):
                for dimension, named in cue_values_json(episode).items():
                    if dimension in NAME_DIMENSIONS:
                        for value in named:
                            self._vocabulary.add(dimension, value)
                    elif dimension == "time":
                        for bucket in filter(is_year, named):
                            self._vocabulary.add_year(bucket)
        self._built_for, self._learnt, self._erasures = weakref.ref(indexes), n, indexes.erasures
        return self._vocabulary

    def read(self, text: str, at: datetime, weights: TextWeights) -> Question:
        """``text`` taken apart as ``weights`` asks."""
        vocabulary = self.vocabulary() if weights.names or (weights.time and weights.when_boost > 0) else None
        inner = self._home.indexes.cues._inner
        return read_question(
            text, now=at, vocabulary=vocabulary, function_words=weights.function_words, names=weights.names, time=weights.time,
            live=lambda dimension, value: inner.count({dimension: [value]}) > 0,
        )

    def nearest(
        self, text: str, cues: dict[str, list[str]], exclude: dict[str, list[str]] | None, weights: TextWeights,
    ) -> Nearest:
        """The question's vector and the ``vector_pool`` memories nearest it that the cues let through.

        Raises:
            InvalidArgumentError: the handle has no embedder.
        """
        home = self._home
        if home.caches.vectors is None:
            raise InvalidArgumentError("TextWeights.vector needs a handle opened with an embedder: Memory.open(path, embedder=...)")
        home.caches.vectors.ready(home)
        inner = home.indexes.cues._inner
        candidates = inner.prune(cues, exclude) if cues or exclude else inner.live()
        query = home.caches.vectors.query(text)
        matrix = home.caches.vectors.matrix()
        rows, _ = _core.cosine_top(matrix, query, candidates, weights.vector_pool)
        return Nearest(query, matrix, rows)

    def rerank(
        self,
        pool: list[Ranked],
        question: Question | None,
        weights: TextWeights,
        cues: dict[str, list[str]],
        exclude: dict[str, list[str]] | None,
        k: int,
        near: Nearest | None = None,
    ) -> list[Ranked]:
        """The best ``k`` of ``pool`` (the core's blend) once the vector part, the context
        and the boosts are added, best first; ties go to the later row."""
        if near is not None:
            have = {r.row for r in pool}
            pool = pool + [Ranked(row, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0) for row in near.rows.tolist() if row not in have]
        if not pool:
            return []
        indexes = self._home.indexes
        inner = indexes.cues._inner
        rows = np.fromiter((r.row for r in pool), dtype=np.uint32, count=len(pool))
        scores = np.fromiter((r.score for r in pool), dtype=np.float32, count=len(pool))
        if near is not None:
            scores = scores + vector_part(rows, near, weights)
        if (weights.neighbour_share > 0 and weights.neighbour_window > 0) or weights.thread_share > 0:
            threads = indexes.threads.ensure(indexes.cues)
            if not threads.is_empty():
                rows, scores = threads.spread(
                    rows, scores, neighbour_share=weights.neighbour_share, window=weights.neighbour_window,
                    thread_share=weights.thread_share,
                )
                if len(rows) > len(pool):  # a neighbour enters only if the recall's cues let it through
                    keep = np.ones(len(rows), dtype=bool)
                    keep[len(pool):] = inner.admits(cues, rows[len(pool):], exclude)
                    rows, scores = rows[keep], scores[keep]
        final = scores.astype(np.float64)
        top = float(final.max())
        if question is not None and top > 0:
            final += self._boosts(rows, question, weights, top)
        order = np.lexsort((-rows.astype(np.int64), -final))[:k]
        out = []
        for i in order.tolist():
            row, score = int(rows[i]), float(final[i])
            core = pool[i] if i < len(pool) else None
            if core is None:
                out.append(Ranked(row, score, 0.0, 0.0, 0.0, 0.0, score))
            else:
                out.append(core._replace(score=score, boost=score - core.score))
        return out

    def _boosts(self, rows: npt.NDArray[np.uint32], question: Question, weights: TextWeights, top: float) -> npt.NDArray[np.float64]:
        """The boost each row earns."""
        inner = self._home.indexes.cues._inner
        out = np.zeros(len(rows), dtype=np.float64)
        if weights.names and weights.name_boost > 0:
            for dimension, values in question.named.items():
                out += inner.admits({dimension: values}, rows) * (weights.name_boost * top)
        if weights.time and weights.time_boost > 0 and question.buckets and not weights.time_filter:
            out += inner.admits({"time": list(question.buckets)}, rows) * (weights.time_boost * top)
        if weights.time and weights.when_boost > 0 and question.asks_when:
            text = self._home.caches.text
            if text is not None:
                said, _ = text.core.search(when_query(self.vocabulary()), candidates=rows, limit=len(rows))
                out += np.isin(rows, said) * (weights.when_boost * top)
        return out
