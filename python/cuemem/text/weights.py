"""The weights of the text blend: how BM25, decayed salience and freshness mix."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from .. import _scalars
from ..errors import InvalidArgumentError


#: The widest ``neighbour_window``.
MAX_WINDOW = 8
#: The largest weight, boost or share (beyond it float32 scores overflow).
MAX_WEIGHT = 1e6
#: How vectors join the blend (``TextWeights.fusion``).
FUSIONS = ("rank", "cosine")
#: The rank-fusion constant: the nearest memory gains the whole ``vector``, the 60th half of it
#: (the usual constant of reciprocal rank fusion, not tuned here).
RANK_FUSION_K = 60
#: The ``vector`` weight of a handle opened with an embedder and no ``text_weights``: the
#: weight measured (docs/benchmarks.md, Vectors), in the middle of a plateau (0.1 to 0.3).
WITH_EMBEDDER = 0.2


@dataclass(frozen=True)
class TextWeights:
    """Weights of a text recall's score: the blend computed in the core, then what
    reading the query as a question and the thread context add.

    The blend (in the core)::

        blend = text      * bm25 / max_bm25
              + salience  * composite(now)
              + freshness * 2 ** (-max(now - occurred_at, 0) / freshness_half_life_days)

    ``max_bm25`` is the best BM25 of the pool: the ``pool`` best memories by BM25
    (at least ``k``) among those the cues let through, which the blend re-ranks. The
    text part is thus in (0, text]; with the defaults a memory of full salience gains
    0.3, so salience orders near-equal text matches without overturning clear ones.
    Freshness is a recency term of the reference time, off by default.

    Then the query is read as a question (:mod:`cuemem.text.question`): question and
    function words leave the BM25 query (``function_words``), cue values the home
    knows that the question names become boosts and bring their own best BM25
    matches into the pool (``names``), time phrases become
    boosts of those days (``time``; ``time_filter`` makes them a cue instead), and a
    "when" question favours memories that say when. Over the pool, for a memory in
    a thread (``remember(thread=...)``)::

        score = blend
              + neighbour_share * sum over pool memories d = 1 .. neighbour_window
                                  places before or after it in its thread of blend / 2 ** (d - 1)
              + thread_share    * (best blend in its thread)
              + (name_boost if it carries a named value, per dimension
                 + time_boost if it falls on a named day
                 + when_boost if the question asks when and it says when) * best

    where ``best`` is the best score after the context terms. A neighbour that was
    not in the pool can enter this way, but only one the cues let through. Boosts
    are relative to the best score and shares to the scores they share, so both
    mean the same at any BM25 scale. :meth:`plain` switches every one of these off: the blend alone, as
    computed in the core.

    Attributes:
        text: Weight of the normalized BM25 score (>= 0).
        salience: Weight of the decayed salience composite (>= 0).
        freshness: Weight of the freshness term (>= 0).
        freshness_half_life_days: Half-life of the freshness term (> 0).
        pool: Memories taken by BM25 before blending (>= 1); also the pool that
            understanding and context re-rank.
        function_words: Drop question and function words from the BM25 query.
        names: Find the home's cue values in the question and boost them.
        name_boost: Boost of a memory carrying a named value (>= 0).
        time: Read time phrases in the question (boosts, or a cue with ``time_filter``).
        time_boost: Boost of a memory on a day a time phrase names (>= 0).
        time_filter: Time phrases narrow the recall like a ``time`` cue instead.
        when_boost: Boost, for a "when" question, of a memory that says when (>= 0).
        neighbour_share: Share of an adjacent memory's blend a memory gains (>= 0);
            halved at each further place.
        neighbour_window: How many places before and after a pool memory its score
            reaches (0 to 8).
        thread_share: Share of its thread's best blend a memory gains (>= 0).
        vector: Weight of the vectors (>= 0; 0, off, by default; a handle opened with
            an embedder and no ``text_weights`` uses :data:`WITH_EMBEDDER`, 0.2, the
            weight measured in docs/benchmarks.md). It needs a handle opened with an embedder
            (``Memory.open(..., embedder=...)``); the ``vector_pool`` memories nearest
            the question among those the cues let through join the BM25 pool, and
            gain, before the context terms, what ``fusion`` says.
        vector_pool: Memories taken by cosine (>= 1).
        fusion: How the vectors join the blend. ``"rank"`` (the default), rank
            fusion: the memory at place ``r`` (0 first) of the ``vector_pool`` nearest
            gains ``vector * 60 / (60 + r)``, on the scale of the text part (whose
            best is ``text``), whatever the embedder's cosines look like; a memory
            not among them gains nothing, so a clear text match keeps its lead and a
            question no word matches is answered by the nearest memories.
            ``"cosine"``: every memory of the pool gains ``vector * cosine`` (with
            ``text=0`` and ``salience=0`` the score is the cosine itself).
    """

    text: float = 1.0
    salience: float = 0.3
    freshness: float = 0.0
    freshness_half_life_days: float = 30.0
    pool: int = 100
    function_words: bool = True
    names: bool = True
    name_boost: float = 0.3
    time: bool = True
    time_boost: float = 0.3
    time_filter: bool = False
    when_boost: float = 0.2
    neighbour_share: float = 0.5
    neighbour_window: int = 2
    thread_share: float = 0.5
    vector: float = 0.0
    vector_pool: int = 50
    fusion: str = "rank"

    def __post_init__(self) -> None:
        # Each field is checked by its kind's rule (numpy's scalars taken) and kept as Python's type.
        for name in ("text", "salience", "freshness", "name_boost", "time_boost", "when_boost", "neighbour_share", "thread_share", "vector"):
            w = getattr(self, name)
            number = _scalars.as_real(w)
            if number is None or not (math.isfinite(number) and 0 <= number <= MAX_WEIGHT):
                raise InvalidArgumentError(f"text weight {name} must be a number in [0, {MAX_WEIGHT:g}], got {w!r}")
            object.__setattr__(self, name, number)
        h = self.freshness_half_life_days
        days = _scalars.as_real(h)
        if days is None or not (math.isfinite(days) and 0 < days <= 1e9):
            raise InvalidArgumentError(f"freshness_half_life_days must be a number in (0, 1e9], got {h!r}")
        object.__setattr__(self, "freshness_half_life_days", days)
        for name in ("pool", "vector_pool"):
            n = getattr(self, name)
            size = _scalars.as_int(n)
            if size is None or size < 1:
                raise InvalidArgumentError(f"{name} must be an int >= 1, got {n!r}")
            object.__setattr__(self, name, size)
        w = self.neighbour_window
        window = _scalars.as_int(w)
        if window is None or not 0 <= window <= MAX_WINDOW:
            raise InvalidArgumentError(f"neighbour_window must be an int in [0, {MAX_WINDOW}], got {w!r}")
        object.__setattr__(self, "neighbour_window", window)
        if self.fusion not in FUSIONS:
            raise InvalidArgumentError(f"fusion must be one of {list(FUSIONS)}, got {self.fusion!r}")
        for name in ("function_words", "names", "time", "time_filter"):
            flag = _scalars.as_bool(getattr(self, name))
            if flag is None:
                raise InvalidArgumentError(f"text weight {name} must be True or False, got {getattr(self, name)!r}")
            object.__setattr__(self, name, flag)

    @classmethod
    def plain(cls, **blend: Any) -> TextWeights:
        """The blend alone: no question reading, no boosts, no thread context."""
        off: dict[str, Any] = dict(
            function_words=False, names=False, time=False, time_filter=False, name_boost=0.0, time_boost=0.0, when_boost=0.0,
            neighbour_share=0.0, thread_share=0.0,
        )
        try:
            return cls(**(off | blend))
        except TypeError as exc:  # an unknown keyword
            raise InvalidArgumentError(f"TextWeights.plain: {exc}") from None

    @property
    def reads_question(self) -> bool:
        """Whether the query is taken apart before BM25 sees it."""
        return self.function_words or self.names or self.time

    @property
    def reranks(self) -> bool:
        """Whether anything is added to the core's blend."""
        boosts = (self.names and self.name_boost > 0) or (self.time and (self.time_boost > 0 or self.when_boost > 0))
        return boosts or (self.neighbour_share > 0 and self.neighbour_window > 0) or self.thread_share > 0 or self.vector > 0

    def core_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``_core.text_recall``."""
        d = asdict(self)
        return {
            "text_weight": float(d["text"]),
            "salience_weight": float(d["salience"]),
            "freshness_weight": float(d["freshness"]),
            "freshness_half_life_days": float(d["freshness_half_life_days"]),
            "pool": int(d["pool"]),
        }
