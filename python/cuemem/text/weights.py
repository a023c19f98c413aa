"""The weights of the text blend: how BM25, decayed salience and freshness mix."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InvalidArgumentError


@dataclass(frozen=True)
class TextWeights:
    """Weights of a text recall's score (computed in the core)::

        score = text      * bm25 / max_bm25
              + salience  * composite(now)
              + freshness * 2 ** (-max(now - occurred_at, 0) / freshness_half_life_days)

    ``max_bm25`` is the best BM25 of the pool: the ``pool`` best memories by BM25
    (at least ``k``) among those the cues let through, which the blend re-ranks. The
    text part is thus in (0, text]; with the defaults a memory of full salience gains
    0.3, so salience orders near-equal text matches without overturning clear ones.
    Freshness is a recency term of the reference time, off by default.

    Attributes:
        text: Weight of the normalized BM25 score (>= 0).
        salience: Weight of the decayed salience composite (>= 0).
        freshness: Weight of the freshness term (>= 0).
        freshness_half_life_days: Half-life of the freshness term (> 0).
        pool: Memories taken by BM25 before blending (>= 1).
    """

    text: float = 1.0
    salience: float = 0.3
    freshness: float = 0.0
    freshness_half_life_days: float = 30.0
    pool: int = 100

    def __post_init__(self) -> None:
        for name in ("text", "salience", "freshness"):
            w = getattr(self, name)
            if isinstance(w, bool) or not isinstance(w, (int, float)) or not (math.isfinite(w) and w >= 0):
                raise InvalidArgumentError(f"text weight {name} must be a finite number >= 0, got {w!r}")
        h = self.freshness_half_life_days
        if isinstance(h, bool) or not isinstance(h, (int, float)) or not (math.isfinite(h) and h > 0):
            raise InvalidArgumentError(f"freshness_half_life_days must be a finite number > 0, got {h!r}")
        if isinstance(self.pool, bool) or not isinstance(self.pool, int) or self.pool < 1:
            raise InvalidArgumentError(f"pool must be an int >= 1, got {self.pool!r}")

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
