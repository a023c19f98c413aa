"""Text recall: the analyzers and recipe of the home's text index, the blend's weights.

The index itself is a cache of the home (:mod:`cuemem.home.textindex`).
"""

from __future__ import annotations

from .recipe import ANALYZERS, DEFAULT_ANALYZER, text_directory
from .vectors import Embedder
from .weights import TextWeights

__all__ = ["ANALYZERS", "DEFAULT_ANALYZER", "Embedder", "TextWeights", "text_directory"]
