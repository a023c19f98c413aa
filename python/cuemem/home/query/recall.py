"""The recall planner: one native call per page, current versions first, abstractions first.

A recall is one call into the core — cue pruning and salience top-k
(``_core.recall``), or BM25 blended with salience and freshness over the cue
candidates (``_core.text_recall``). A text query is first read as a question and
the core's pool re-ranked by thread context and boosts (:mod:`.understand`); when the
question names someone or something the home knows, that value's memories, by
salience, are the floor of the answer (a page never comes back short while they
last), and a question that refers back with a pronoun carries over what the recall it
follows named (:func:`carried`). In
either kind a superseded version goes behind the current ones, and with
``exclude_stale`` stale hits go; a further page is fetched while they crowded the
first (:func:`_page`, one loop for both kinds). Then, for cue recall, each hit is
preceded by the record that builds on it (:func:`lead_with_abstractions`): a
consolidated record or a rung of the ladder is what an agent should read first,
the original right behind it as provenance.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import replace
from functools import partial
from datetime import datetime
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from ... import _core, _scalars
from ...errors import CorruptIndexError, CueTypeError, InvalidArgumentError, ReadOnlyError, UnknownDimensionError
from ...schema import Episode
from ...schema.fields import text as text_field
from ...text.weights import TextWeights
from ..clock import TimeArg, edge_now
from ..home import Home
from ..cues import DIMENSIONS, QUARANTINED, cue_values_json, normalize
from ..scope import Reach
from ..results import Hit, Hits, RecallResult, TextHit, page_result
from .understand import POOLED, Ranked, Reader, merge_pools

__all__ = ["Recaller", "carried", "cites_any", "guarded", "lead_with_abstractions"]

H = TypeVar("H", bound=Hit)


class Recaller:
    """Recall over one open home under one profile's freshness rule and stale threshold, which it is given.

    Args:
        home: The open home.
        freshness: A stored record's freshness at a time (the profile's rule, C6).
        stale_below: The freshness below which a hit is stale.
        weights: The default blend of text recalls.
    """

    def __init__(self, home: Home, freshness: Callable[[Episode, datetime], float], stale_below: float, weights: TextWeights) -> None:
        self._home = home
        self._fresh = freshness
        self._stale_below = stale_below
        self._reader = Reader(home)
        #: The default blend of text recalls.
        self.weights = weights

    def recall(
        self, cues: Mapping[str, Any] | None, text: object, k: int, now: TimeArg, *, exclude: Mapping[str, Any] | None,
        exclude_stale: object, weights: object, include_quarantined: object, follows: object, reach: Reach,
    ) -> RecallResult:
        """A caller's recall (``Memory.recall``'s arguments, checked here) within ``reach``,
        at ``now`` read at the edge: :meth:`cues`, or with ``text``, :meth:`text` — holding
        the home's guard, as every call of the facade does (``Memory.recall``, the hot path,
        spares the facade's wrapper and takes it here).

        Raises:
            ScopeError: as :meth:`Reach.cues`. UnknownDimensionError, TimeCueError: a bad cue.
            InvalidArgumentError: a blank ``text`` (``k`` is checked by the core's binding, as ``_scalars.count``).
            CueTypeError: ``text``, ``weights`` or ``follows`` of the wrong type.
            ForkedHandleError: as the guard (a forked child's handle).
        """
        with self._home.guard:
            # (``False``, the default, is a bool: it skips the check's call, not the check.)
            stale = exclude_stale if exclude_stale is False else _scalars.boolean(exclude_stale, "exclude_stale")
            held = include_quarantined if include_quarantined is False else _scalars.boolean(include_quarantined, "include_quarantined")
            at = edge_now(now)
            resolved = reach.cues(normalize(cues, now=at))
            excluded = None if exclude is None else normalize(exclude, now=at) or None
            # ``k`` is checked once, by the core's binding (CueTypeError, InvalidArgumentError), with the
            # same rule as ``_scalars.count``, which gives it another integer (numpy's) as a Python int.
            if type(k) is not int:
                k = _scalars.count(k, "k")
            if text is None:
                return self._cues(resolved, k, at, at.timestamp(), excluded, stale, held)
            if not isinstance(text, str):
                raise CueTypeError(f"text must be a string, got {type(text).__name__}")
            if not text_field(text, "text", allow_empty=True).strip():  # a lone surrogate: SchemaError
                raise InvalidArgumentError("text must hold at least one word")
            if weights is not None and not isinstance(weights, TextWeights):
                raise CueTypeError(f"weights must be a TextWeights, got {type(weights).__name__}")
            if follows is not None and not isinstance(follows, RecallResult):
                raise CueTypeError(f"follows must be a RecallResult, got {type(follows).__name__}")
            return self.text(resolved, text, k, at, excluded, weights, stale, held, follows)

    def cue_values(self, dimension: str, reach: Reach) -> list[tuple[str, int]]:
        """The values of a cue dimension with how many memories ``reach`` sees carry each, most
        first (an unscoped reach may always list the ``user`` values: they are what it needs
        to choose a scope).

        Raises:
            ScopeError: an unscoped reach on a home of several users (but for ``user``).
            UnknownDimensionError: ``dimension`` is not a cue dimension.
        """
        if dimension not in DIMENSIONS:
            raise UnknownDimensionError(f"unknown cue dimension {dimension!r}; the dimensions are {list(DIMENSIONS)}")
        home, scope = self._home, reach.scope
        within = reach.cues({}) if dimension != "user" or scope.user is not None else {}
        values = [v for v in home.values(dimension) if dimension != "user" or scope.sees(v)]
        counts = [(v, home.count({**within, dimension: [v]})) for v in values]
        return sorted([vc for vc in counts if vc[1]], key=lambda vc: (-vc[1], vc[0]))

    def cues(
        self, cues: dict[str, list[str]], k: int, at: datetime, exclude: dict[str, list[str]] | None, exclude_stale: bool,
        quarantined: bool = False,
    ) -> RecallResult:
        """Memories matching every cue, ranked by salience decayed to ``at``, abstractions
        first; quarantined ones only with ``quarantined``.

        The page's hits are built when read (:class:`Hits`). A page that nothing reorders
        — no stale filter asked, no superseded version in it, nothing citing its rows —
        is returned as the core ranked it; otherwise the hits are built here, the page
        grown (:func:`_page`) and led by abstractions (:meth:`_lead`)."""
        return self._cues(cues, k, at, at.timestamp(), exclude, exclude_stale, quarantined)

    def _cues(
        self, cues: dict[str, list[str]], k: int, at: datetime, t: float, exclude: dict[str, list[str]] | None, exclude_stale: bool,
        quarantined: bool,
    ) -> RecallResult:
        """:meth:`cues` at ``at``, whose POSIX time is ``t``."""
        exclude = guarded(exclude, quarantined)
        indexes = self._home.indexes
        first = _core.recall(indexes.cues._inner, indexes.salience._inner, cues, t, k, exclude)
        rows: list[int] = first.rows.tolist()
        ids, superseded = indexes.ids, indexes.lifecycle.superseded_by
        if not (exclude_stale or (superseded and _superseded_in(rows, ids, superseded)) or (indexes.cited and cites_any(rows, indexes.citers))):
            # The common page: nothing to reorder, returned as the core ranked it.
            return page_result(_CuePage(rows, ids, first, at, self), first.total, first.examined, first.full_scan, cues)
        return self._reordered(first, rows, cues, k, at, t, exclude, exclude_stale)

    def _reordered(
        self, first: _core.Recall, rows: list[int], cues: dict[str, list[str]], k: int, at: datetime, t: float,
        exclude: dict[str, list[str]] | None, exclude_stale: bool,
    ) -> RecallResult:
        """The page ``first`` (rows ``rows``) with what reorders it applied: stale hits left out
        (``exclude_stale``), superseded versions behind the current ones, the page grown
        while they crowded it (:func:`_page`) and led by abstractions (:meth:`_lead`)."""
        home = self._home
        indexes = home.indexes
        ids, superseded = indexes.ids, indexes.lifecycle.superseded_by
        made: dict[int, Hit] = {}  # a hit (and the record it loaded) is reused when the page grows
        hits: Sequence[Hit] = Hits(rows, ids, partial(self._make, first, rows, at, ids, made))

        def page(wanted: int) -> tuple[Hits[Hit], _core.Recall]:
            nonlocal rows
            r = first if wanted == k else _core.recall(indexes.cues._inner, indexes.salience._inner, cues, t, wanted, exclude)
            rows = r.rows.tolist()
            return Hits(rows, ids, partial(self._make, r, rows, at, ids, made)), r

        hits, r = _page(page, k, exclude_stale, superseded, hits, first)
        if isinstance(hits, Hits):
            page_rows = rows[: len(hits)]
        else:
            row_of = {id(h): row for row, h in made.items()}
            page_rows = [row_of[id(h)] for h in hits]
        hits = self._lead(hits, page_rows, k, at, cues, exclude)
        return RecallResult(hits=hits, total=r.total, examined=r.examined, full_scan=r.full_scan, cues=cues)

    def _make(self, r: _core.Recall, rows: Sequence[int], at: datetime, ids: Sequence[str], made: dict[int, Hit], i: int) -> Hit:
        """The ``i``-th hit of the page ``r`` (rows ``rows``, ids ``ids``), reusing one already in ``made``."""
        row = rows[i]
        hit = made.get(row)
        if hit is None:
            hit = made[row] = Hit(ids[row], float(r.scores[i]), r.breakdown[i].tolist(), self._home.loader(row))
            hit._fresh = self._freshness(at)
            hit.stale_below = self._stale_below
        return hit

    def text(
        self, cues: dict[str, list[str]], text: str, k: int, at: datetime, exclude: dict[str, list[str]] | None,
        weights: TextWeights | None, exclude_stale: bool, quarantined: bool = False, follows: RecallResult | None = None,
    ) -> RecallResult[TextHit]:
        """Memories holding the query's terms among those the cues let through, ranked by
        the blend, the named memories as the floor; quarantined ones only with
        ``quarantined``; a pronoun refers to what ``follows`` named."""
        exclude = guarded(exclude, quarantined)
        home = self._home
        if home.caches.text is None:
            if home.closed:
                raise ReadOnlyError("this Memory handle is closed")
            raise InvalidArgumentError(f"this home has no text index yet ({home.caches.report}); open it writable once to build it")
        home.caches.text.ready(home.indexes, home.journal)
        w = weights or self.weights
        question = self._reader.read(text, at, w) if w.reads_question else None
        if question is not None and question.refers and follows is not None and w.names:
            question = replace(question, named=question.named | carried(follows))
        query, core_cues = text, cues
        if question is not None:
            query = question.query
            if w.time_filter and question.buckets and "time" not in cues:
                core_cues = cues | {"time": list(question.buckets)}
        rerank = w.reranks
        near = self._reader.nearest(text, core_cues, exclude, w) if w.vector > 0 else None
        blend = w.core_kwargs()
        ids, loader, fresh, stale_below = home.indexes.ids, home.loader, self._freshness(at), self._stale_below
        t = at.timestamp()

        def pool(within: dict[str, list[str]], wanted: int, whole: bool, scale: float | None = None) -> tuple[list[Ranked], _core.TextRecall]:
            r = _core.text_recall(
                home.indexes.cues._inner, home.indexes.salience._inner, home.caches.text.core, within, query, t,  # type: ignore[union-attr]
                wanted, exclude, **blend, whole_pool=whole, scale=scale,
            )
            ranked = [
                Ranked(row, score, bm25, tx, s, f, 0.0)
                for row, score, bm25, tx, s, f in zip(
                    r.rows.tolist(), r.scores.tolist(), r.bm25.tolist(), r.text.tolist(), r.salience.tolist(), r.freshness.tolist()
                )
            ]
            return ranked, r

        def page(wanted: int) -> tuple[list[TextHit], _core.TextRecall]:
            if not rerank:
                ranked, r = pool(core_cues, wanted, whole=False)
            else:
                # The pool is the same whatever ``wanted`` is, so a longer page only adds a tail
                # (``wanted`` itself still goes to the core, which checks it, unless it is past the pool).
                ranked, r = pool(core_cues, w.pool if type(wanted) is int and wanted > w.pool else wanted, whole=True)
                full = len(ranked) >= w.pool  # more memories may match than the pool holds
                scale = max((x.bm25 for x in ranked), default=0.0) or None
                if question is not None and w.names and w.name_boost > 0:
                    for dimension, values in question.named.items():  # the named memories' own best matches join the pool
                        if dimension in POOLED and dimension not in core_cues:
                            more, _ = pool(core_cues | {dimension: values}, 1, whole=True, scale=scale)
                            ranked = merge_pools(ranked, more)
                ranked = self._reader.rerank(ranked, question, w, core_cues, exclude, wanted, near)
                if len(ranked) < wanted and full:  # beyond the pool: the blend's own order
                    seen = {x.row for x in ranked}
                    tail, _ = pool(core_cues, wanted, whole=False)
                    ranked.extend([x for x in tail if x.row not in seen][: wanted - len(ranked)])
                if len(ranked) < wanted and question is not None and w.names:  # the named memories are the floor
                    ranked.extend(self._floor(question.named, core_cues, exclude, wanted, t, w, {x.row for x in ranked}))
            hits = []
            for x in ranked:
                hit = TextHit(ids[x.row], x.score, x.bm25, [x.text, x.salience, x.freshness, x.boost], loader(x.row))
                hit._fresh = fresh
                hit.stale_below = stale_below
                hits.append(hit)
            return hits, r

        superseded = home.lifecycle.superseded_by
        try:
            hits, r = _page(page, k, exclude_stale, superseded)
        except CorruptIndexError as exc:
            if not home.caches.text.writable:
                raise  # a reader cannot rebuild: the writer does, and refresh() picks it up
            home.repair_text(str(exc))  # damaged under the open handle: the cache is rebuilt, the recall asked again
            hits, r = _page(page, k, exclude_stale, superseded)
        named = question.named if question is not None else {}
        return RecallResult(hits=list(hits), total=r.total, examined=r.examined, full_scan=r.full_scan, cues=core_cues, named=named)

    def _floor(
        self, named: dict[str, list[str]], cues: dict[str, list[str]], exclude: dict[str, list[str]] | None, wanted: int, t: float,
        w: TextWeights, seen: set[int],
    ) -> list[Ranked]:
        """Up to ``wanted - len(seen)`` memories carrying a value the question named (of a
        person, subject or tag) that are not in ``seen``, best salience first: what a
        question naming someone returns when its other words match too little."""
        indexes = self._home.indexes
        found: list[tuple[float, int]] = []
        for dimension, values in named.items():
            if dimension not in POOLED or dimension in cues:
                continue
            r = _core.recall(indexes.cues._inner, indexes.salience._inner, cues | {dimension: values}, t, wanted, exclude)
            found.extend((float(s), int(row)) for s, row in zip(r.scores.tolist(), r.rows.tolist()) if row not in seen)
        out: list[Ranked] = []
        for s, row in sorted(found, key=lambda x: (-x[0], -x[1])):
            if row not in seen and len(seen) < wanted:
                seen.add(row)
                out.append(Ranked(row, w.salience * s, 0.0, 0.0, s, 0.0, 0.0))
        return out

    def _freshness(self, at: datetime) -> Callable[[Episode], float]:
        """A hit's freshness at ``at`` under the profile (C6), computed when asked for."""
        fresh = self._fresh
        return lambda e: fresh(e, at)

    def _hit(self, row: int, score: float, parts: list[float], at: datetime) -> Hit:
        hit = Hit(self._home.id_at(row), score, parts, self._home.loader(row))
        hit._fresh = self._freshness(at)
        hit.stale_below = self._stale_below
        return hit

    def _lead(
        self, hits: Sequence[Hit], rows: list[int], k: int, at: datetime, cues: dict[str, list[str]], exclude: dict[str, list[str]] | None,
    ) -> Sequence[Hit]:
        """Places before each hit the record that cites it (consolidated record or rung),
        if it is of the recall's user (its ``user`` cue: a scope) and none of its
        exclusions (quarantine among them); the other cues it need not match (a
        consolidated record of short-term items is long-term)."""
        if not hits:
            return hits
        home = self._home
        order = lead_with_abstractions(rows, home.citer_rows, k)
        if order != rows:
            hit_rows = set(rows)
            leads = [r for r in order if r not in hit_rows]
            within = {"user": cues["user"]} if "user" in cues else {}
            admitted = {r for r, ok in zip(leads, home.admits(within, leads, exclude)) if ok}
            order = [r for r in order if r in hit_rows or r in admitted][:k]
        if order == rows:
            return hits
        by_row = dict(zip(rows, hits))
        out = []
        for row in order:
            hit = by_row.get(row)
            if hit is None:
                top = home.salience.top_k(np.array([row], dtype=np.uint32), at, 1)
                if not len(top.scores):
                    continue  # no longer live (retired): nothing to lead with
                hit = self._hit(row, float(top.scores[0]), top.breakdown[0].tolist(), at)
            out.append(hit)
        return out


class _CuePage(Hits[Hit]):
    """The page of a cue recall that nothing reorders: its hits built from the core's
    ranking when read (as :meth:`Recaller._make` builds them; a :class:`Hits` whose state
    is its own slots rather than a ``make`` bound to it, which cost the recall as much)."""

    __slots__ = ("_recall", "_when", "_recaller")

    def __init__(self, rows: list[int], ids: Sequence[str], recall: _core.Recall, at: datetime, recaller: Recaller) -> None:
        self._rows = rows
        self._ids = ids
        self._made = None
        self._recall = recall
        self._when = at
        self._recaller = recaller

    def _build(self, j: int) -> Hit:
        return self._recaller._make(self._recall, self._rows, self._when, self._ids, {}, j)


R = TypeVar("R")


def carried(follows: RecallResult) -> dict[str, list[str]]:
    """What a question referring back (a pronoun) carries over from the recall it follows:
    the people, subjects and tags that recall's question named, or else the people of
    its first hit."""
    named = {d: list(v) for d, v in follows.named.items() if d in POOLED}
    if named or not follows.hits:
        return named
    actors = cue_values_json(follows.hits[0].record.to_json()).get("actor", [])
    return {"actor": actors} if actors else {}


def guarded(exclude: dict[str, list[str]] | None, quarantined: bool) -> dict[str, list[str]] | None:
    """``exclude`` plus the quarantined records, unless the recall asked for them.

    Example:
        >>> guarded({"type": ["chat"]}, False)
        {'type': ['chat'], 'trust': ['quarantined']}
    """
    if quarantined:
        return exclude
    if not exclude:
        return {"trust": [QUARANTINED]}
    held = exclude.get("trust")
    if held is None:
        return {**exclude, "trust": [QUARANTINED]}
    return {**exclude, "trust": held if QUARANTINED in held else [*held, QUARANTINED]}


def _crowded(hits: Sequence[Hit], superseded: Container[str]) -> bool:
    """Whether a superseded version is among ``hits`` (it goes behind the current ones)."""
    if not superseded:
        return False  # no version was ever superseded: nothing to look up
    return any(i in superseded for i in (hits.ids if isinstance(hits, Hits) else [h.id for h in hits]))


def _superseded_in(rows: list[int], ids: Sequence[str], superseded: Container[str]) -> bool:
    """Whether the id of one of ``rows`` is ``superseded`` (as :func:`_crowded`, read from rows)."""
    return any(ids[row] in superseded for row in rows)


def _page(
    fetch: Callable[[int], tuple[Sequence[H], R]], k: int, exclude_stale: bool, superseded: Container[str],
    hits: Sequence[H] | None = None, raw: R | None = None,
) -> tuple[Sequence[H], R]:
    """The first ``k`` hits ``fetch`` ranks, those whose id is ``superseded`` placed after
    the rest — and with ``exclude_stale`` only fresh ones — fetching a page four times
    larger while superseded or stale hits crowd the page. ``hits`` and ``raw``: the first
    page, if the caller fetched it already. A page with neither is returned as it came
    (its hits unbuilt, if it builds them lazily)."""
    wanted = k
    while True:
        if hits is None or raw is None:
            hits, raw = fetch(wanted)
        if not exclude_stale and not _crowded(hits, superseded):
            return (hits if len(hits) <= k else hits[:k]), raw
        kept = [h for h in hits if not h.stale] if exclude_stale else list(hits)
        front = [h for h in kept if h.id not in superseded]
        if len(front) >= k or len(hits) < wanted:
            if len(front) < len(kept):
                front.extend(h for h in kept if h.id in superseded)
            return front[:k], raw
        wanted *= 4  # superseded or stale hits crowded the first page: look further down the ranking
        hits = raw = None


def cites_any(rows: Sequence[int], citers: Sequence[int] | npt.NDArray[np.int64]) -> bool:
    """Whether a later record cites any of ``rows`` (``citers``: row -> its citer, -1 if none),
    or a row lies past ``citers`` (then the page takes the general path, which checks).

    Example:
        >>> cites_any([0, 2], [-1, 3, -1, -1]), cites_any([1], [-1, 3, -1, -1])
        (False, True)
    """
    n = len(citers)
    return bool(len(rows)) and (max(rows) >= n or max(map(citers.__getitem__, rows)) >= 0)


def lead_with_abstractions(rows: Sequence[int], citers: Sequence[int] | npt.NDArray[np.int64], k: int) -> list[int]:
    """``rows`` (best first) with each row's citing record placed just before it, at most ``k``.

    The citing record's own citer goes before it in turn, so a hit is preceded by its
    chain of abstractions, the most abstract first. A record already placed (as an
    earlier hit or another hit's abstraction) is not repeated; abstractions that push
    the ranking past ``k`` push out its tail.

    Example:
        >>> import numpy as np
        >>> lead_with_abstractions([0, 1, 2], np.array([-1, 3, -1, -1]), k=3)
        [0, 3, 1]
    """
    n = len(citers)
    if not cites_any(rows, citers):
        return list(rows[:k])  # nothing cites any of them: the common case, one look
    out: list[int] = []
    seen: set[int] = set()
    for row in rows:
        chain = [row]  # the row, what cites it, what cites that, ... (citers are later rows)
        while chain[-1] < n and citers[chain[-1]] >= 0 and int(citers[chain[-1]]) not in seen:
            chain.append(int(citers[chain[-1]]))
        for r in reversed(chain):
            if r not in seen:
                seen.add(r)
                out.append(r)
    return out[:k]
