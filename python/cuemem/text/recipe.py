"""What a home's text index is built with: the analyzers, the recipe, where it lives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import _core
from ..errors import InvalidArgumentError

__all__ = ["ANALYZERS", "DEFAULT_ANALYZER", "FORMAT", "check_analyzer", "text_directory", "text_recipe"]

#: Bumped whenever the text index's meaning changes.
FORMAT = 1

#: The analyzers a text index can be built with (see docs/text-recall.md).
ANALYZERS: tuple[str, ...] = tuple(_core.TextIndex.analyzers())

#: Latin words lower-cased, stop words dropped, English stems; CJK character bigrams.
DEFAULT_ANALYZER = "stem-bigram"


def text_recipe(analyzer: str) -> dict[str, Any]:
    """What a text index is a function of, besides the journal."""
    return {"format": FORMAT, "analyzer": analyzer, "source": "episode narrative", "document": "home row"}


def text_directory(index_dir: Path, analyzer: str) -> Path:
    """Where the text index of ``analyzer`` lives under a home's ``index/``."""
    return index_dir / "text" / f"{analyzer}-v{FORMAT}"


def check_analyzer(analyzer: object) -> str:
    """``analyzer`` if it names a known analyzer.

    Raises:
        InvalidArgumentError: an unknown analyzer.
    """
    if not isinstance(analyzer, str) or analyzer not in ANALYZERS:
        raise InvalidArgumentError(f"text analyzer must be one of {list(ANALYZERS)}, got {analyzer!r}")
    return analyzer
