"""What a text recall returns per memory."""

from __future__ import annotations

from collections.abc import Callable

from ..home.results import Hit
from ..schema import Episode

#: The parts of a text hit's score, in order.
PARTS = ("text", "salience", "freshness", "boost")


class TextHit(Hit):
    """A memory found by text: its blended score, raw BM25 and the score's parts."""

    __slots__ = ("bm25",)

    def __init__(self, id: str, score: float, bm25: float, parts: list[float], load: Callable[[], Episode]) -> None:
        super().__init__(id, score, parts, load)
        self.bm25 = bm25

    @property
    def breakdown(self) -> dict[str, float]:
        """The weighted text, salience and freshness parts of the core's blend and the
        ``boost`` question reading and thread context added (they sum to the score)."""
        return dict(zip(PARTS, self._parts))

    def __repr__(self) -> str:
        return f"TextHit(id={self.id!r}, score={self.score:.4f}, bm25={self.bm25:.3f})"
