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

from ..text.question import NAME_DIMENSIONS, Question, Vocabulary, read_question, when_query
from ..text.weights import TextWeights
from .home import Home
from .threads import NONE

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
    ) -> list[Ranked]:
        """``pool`` (the core's blend, any order) with the context and boosts added, best
        first; ties go to the later row."""
        indexes = self._home.indexes
        inner = indexes.cues._inner
        base = {r.row: r for r in pool}
        scores = {r.row: r.score for r in pool}
        if weights.neighbour_share > 0 or weights.thread_share > 0:
            threads = indexes.threads
            threads.ensure(indexes.cues, len(indexes))
            if threads.any:
                if weights.neighbour_share > 0:
                    for r in pool:
                        for side in (0, 1):  # before, after
                            n, share = r.row, weights.neighbour_share
                            for _ in range(weights.neighbour_window):
                                n = threads.neighbours(n)[side]
                                if n == NONE:
                                    break
                                scores[n] = scores.get(n, 0.0) + share * r.score
                                share /= 2
                if weights.thread_share > 0:
                    best: dict[int, float] = {}
                    for r in pool:
                        t = threads.thread(r.row)
                        if t != NONE and r.score > best.get(t, float("-inf")):
                            best[t] = r.score
                    for row in scores:
                        b = best.get(threads.thread(row))
                        if b is not None:
                            scores[row] += weights.thread_share * b
                joined = [row for row in scores if row not in base]
                if joined:  # a neighbour enters only if the recall's cues let it through
                    ok = inner.admits(cues, np.array(joined, dtype=np.uint32), exclude)
                    for row, passes in zip(joined, ok.tolist()):
                        if not passes:
                            del scores[row]
        top = max(scores.values(), default=0.0)
        if question is not None and top > 0:
            rows = np.fromiter(scores, dtype=np.uint32, count=len(scores))
            boosts = self._boosts(rows, question, weights, top)
            for row, b in boosts.items():
                scores[row] += b
        order = sorted(scores, key=lambda row: (-scores[row], -row))
        out = []
        for row in order:
            core = base.get(row)
            if core is None:
                out.append(Ranked(row, scores[row], 0.0, 0.0, 0.0, 0.0, scores[row]))
            else:
                out.append(core._replace(score=scores[row], boost=scores[row] - core.score))
        return out

    def _boosts(self, rows: np.ndarray, question: Question, weights: TextWeights, top: float) -> dict[int, float]:
        """Row -> the boost it earns (only rows that earn one)."""
        inner = self._home.indexes.cues._inner
        out: dict[int, float] = {}
        listed = rows.tolist()

        def add(mask: list[bool], amount: float) -> None:
            for row, hit in zip(listed, mask):
                if hit:
                    out[row] = out.get(row, 0.0) + amount

        if weights.names and weights.name_boost > 0:
            for dimension, values in question.named.items():
                add(inner.admits({dimension: values}, rows).tolist(), weights.name_boost * top)
        if weights.time and weights.time_boost > 0 and question.buckets and not weights.time_filter:
            add(inner.admits({"time": list(question.buckets)}, rows).tolist(), weights.time_boost * top)
        if weights.time and weights.when_boost > 0 and question.asks_when:
            text = self._home.text
            if text is not None:
                said, _ = text.core.search(when_query(self.vocabulary()), candidates=rows, limit=len(listed))
                hit = set(said.tolist())
                add([row in hit for row in listed], weights.when_boost * top)
        return out
