"""Text recall: the home's text index (a cache of the journal), the blend's weights, hits."""

from __future__ import annotations

from .cache import ANALYZERS, DEFAULT_ANALYZER, TextCache, text_directory
from .results import TextHit
from .weights import TextWeights

__all__ = ["ANALYZERS", "DEFAULT_ANALYZER", "TextCache", "TextHit", "TextWeights", "text_directory"]
