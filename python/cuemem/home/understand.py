"""A text recall's second stage: the question read against the home, the thread context.

The core ranks the pool (BM25 blended with salience and freshness); this stage adds
what :class:`~cuemem.text.TextWeights` describes — shares of thread neighbours' and
of the thread's best score, boosts for named cue values, named days and "when"
questions — over that pool, a bounded list. Every membership test is one call into
the core (:meth:`CueIndex.admits <cuemem.index.CueIndex>`, a text search restricted
to the pool), so no posting list crosses into Python.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from ..text.question import NAME_DIMENSIONS, Question, Vocabulary, read_question, when_query
from ..text.weights import TextWeights
from .home import Home

__all__ = ["Ranked", "Reader"]


class Ranked(NamedTuple):
    """One re-ranked row: its final score, the core's parts and what this stage added."""

    row: int
    score: float
    bm25: float
    text: float
    salience: float
    freshness: float
    boost: float


class Reader:
    """Question reading and thread context over one home's text recalls."""

    def __init__(self, home: Home) -> None:
        self._home = home
        self._vocabulary: Vocabulary | None = None
        self._built_for: tuple[int, int] = (0, -1)

    def vocabulary(self) -> Vocabulary:
        """The cue values a question may name, rebuilt when the indexes have changed."""
        indexes = self._home.indexes
        key = (id(indexes), len(indexes))
        if self._vocabulary is None or self._built_for != key:
            inner = indexes.cues._inner
            values = {d: inner.values(d) for d in NAME_DIMENSIONS}
            years = [v for v in inner.values("time") if len(v) == 4]
            self._vocabulary, self._built_for = Vocabulary(values, years), key
        return self._vocabulary

    def read(self, text: str, at: datetime, weights: TextWeights) -> Question:
        """``text`` taken apart as ``weights`` asks."""
        vocabulary = self.vocabulary() if weights.names or (weights.time and weights.when_boost > 0) else None
        return read_question(
            text, now=at, vocabulary=vocabulary, function_words=weights.function_words, names=weights.names, time=weights.time,
        )

    def rerank(
        self,
        pool: list[Ranked],
        question: Question | None,
        weights: TextWeights,
        cues: dict[str, list[str]],
        exclude: dict[str, list[str]] | None,
        k: int,
    ) -> list[Ranked]:
        """The best ``k`` of ``pool`` (the core's blend) once the context and boosts are
        added, best first; ties go to the later row."""
        if not pool:
            return []
        indexes = self._home.indexes
        inner = indexes.cues._inner
        rows = np.fromiter((r.row for r in pool), dtype=np.uint32, count=len(pool))
        scores = np.fromiter((r.score for r in pool), dtype=np.float32, count=len(pool))
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
            text = self._home.text
            if text is not None:
                said, _ = text.core.search(when_query(self.vocabulary()), candidates=rows, limit=len(rows))
                out += np.isin(rows, said) * (weights.when_boost * top)
        return out
