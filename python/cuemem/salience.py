"""The salience table: seven decaying axes per memory, ranked at ``now``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from . import _arrays, _scalars
from ._core import AXES, DEFAULT_HALF_LIVES_DAYS, DEFAULT_WEIGHTS, DecayPass, TopK
from ._core import SalienceTable as _SalienceTable
from ._time import TimeLike, to_seconds
from .errors import CueTypeError, InvalidArgumentError, InvalidValueError

__all__ = ["AXES", "DEFAULT_HALF_LIVES_DAYS", "DEFAULT_WEIGHTS", "DecayPass", "RowState", "SalienceTable", "TopK"]


class RowState(NamedTuple):
    """A row as written: axes undecayed, at reference time ``t`` (epoch seconds)."""

    axes: dict[str, float]
    confidence: float
    t: float
    protected: bool


def _per_axis(values: Mapping[str, float] | None, defaults: Mapping[str, float], name: str) -> list[float] | None:
    if values is None:
        return None
    if not isinstance(values, Mapping):
        raise CueTypeError(f"{name} must be a mapping of axis to number, got {type(values).__name__}")
    unknown = set(values) - set(AXES)
    if unknown:
        raise InvalidValueError(f"{name}: unknown axes {sorted(map(str, unknown))}; the axes are {list(AXES)}")
    out = []
    for a in AXES:
        v = values.get(a, defaults[a])
        number = _scalars.as_real(v)
        if number is None:
            raise CueTypeError(f"{name}[{a!r}] must be a number, got {type(v).__name__}")
        out.append(number)
    return out


class SalienceTable:
    """Seven salience axes, confidence and a reference time per row; decay to ``now``.

    ``composite = sum(w[a] * decayed[a]) * (0.6 + 0.4 * confidence)`` where each axis
    halves every ``half_lives_days[a]`` days after the row's reference time; rows with
    ``risk >= 0.7`` or ``importance >= 0.7`` are protected and never decay.

    Args:
        weights: per-axis weight overrides (others keep :data:`DEFAULT_WEIGHTS`).
        half_lives_days: per-axis half-life overrides, in days.

    Example:
        >>> import numpy as np
        >>> tab = SalienceTable()
        >>> axes = np.zeros((1, 7), dtype=np.float32); axes[0, 1] = 1.0   # urgency only
        >>> tab.put([0], axes, [1.0], [0.0])
        >>> round(float(tab.composite([0], now=7 * 86400)[0]), 4)   # one urgency half-life later
        0.075

    Raises:
        InvalidValueError: an unknown axis, a negative weight or a non-positive half-life.
        CueTypeError: overrides that are not a mapping of axis to number.
    """

    __slots__ = ("_inner",)

    def __init__(self, weights: Mapping[str, float] | None = None, half_lives_days: Mapping[str, float] | None = None) -> None:
        self._inner = _SalienceTable(
            _per_axis(weights, DEFAULT_WEIGHTS, "weights"),
            _per_axis(half_lives_days, DEFAULT_HALF_LIVES_DAYS, "half_lives_days"),
        )

    @classmethod
    def _wrap(cls, inner: _SalienceTable) -> SalienceTable:
        obj = cls.__new__(cls)
        obj._inner = inner
        return obj

    @property
    def weights(self) -> dict[str, float]:
        """The weight of each axis."""
        return dict(zip(AXES, self._inner.weights))

    @property
    def half_lives_days(self) -> dict[str, float]:
        """The half-life of each axis, in days."""
        return dict(zip(AXES, self._inner.half_lives_days))

    @property
    def nbytes(self) -> int:
        """Resident bytes of the columns."""
        return self._inner.nbytes

    @property
    def live(self) -> int:
        """Rows written and not removed."""
        return self._inner.live

    def put(self, rows: Any, axes: Any, confidence: Any, t: Any) -> None:
        """Writes (or overwrites) rows.

        Args:
            rows: uint32 row numbers, shape ``(n,)``.
            axes: float32 values in [0, 1], shape ``(n, 7)``, columns in :data:`AXES` order.
            confidence: float32 in [0, 1], shape ``(n,)``.
            t: float64 reference times, seconds since the Unix epoch, shape ``(n,)``.

        Raises:
            CueTypeError: a wrong dtype or number of dimensions.
            ShapeError: lengths disagree, or ``axes`` does not have 7 columns.
            InvalidValueError: NaN, a value outside [0, 1], a non-finite time.
        """
        self._inner.put(
            _arrays.rows(rows),
            _arrays.floats(axes, np.float32, "axes", 2),
            _arrays.floats(confidence, np.float32, "confidence", 1),
            _arrays.floats(t, np.float64, "t", 1),
        )

    def remove(self, rows: Any) -> None:
        """Forgets ``rows`` (unknown rows are ignored)."""
        self._inner.remove(_arrays.rows(rows))

    def erase(self, rows: Any) -> None:
        """Forgets ``rows`` and clears their reference times: nothing of them is left."""
        self._inner.erase(_arrays.rows(rows))

    def get(self, row: int) -> RowState | None:
        """The row as written, or None if it is not live.

        Raises:
            CueTypeError: ``row`` is not an integer. InvalidArgumentError: it is not a row number (0 to 2**32 - 1).
        """
        number = _scalars.integer(row, "row")
        if not 0 <= number < 2**32:
            raise InvalidArgumentError(f"row must be a row number, 0 to 2**32 - 1, got {number}")
        got = self._inner.get(number)
        if got is None:
            return None
        axes, confidence, t, protected = got
        return RowState(dict(zip(AXES, axes)), confidence, t, protected)

    def composite(self, rows: Any, now: TimeLike) -> npt.NDArray[np.float32]:
        """Composite salience of ``rows`` decayed to ``now`` (removed rows score 0).

        Raises:
            InvalidValueError: a row beyond the table.
        """
        return self._inner.composite(_arrays.rows(rows), to_seconds(now))

    def score_key(self, now: TimeLike) -> int | None:
        """What every score at ``now`` depends on besides its row (the epoch the decay
        coefficients are walked back from; None: each computed directly): two queries at the
        same ``now`` that get equal keys score each row they both hold bit for bit, whatever
        rows were put between them (a ranking kept at ``now`` then grows by scoring new rows alone).

        Raises:
            InvalidArgumentError: a non-finite ``now``.
        """
        return self._inner.score_key(to_seconds(now))

    def top_k(self, candidates: Any, now: TimeLike, k: int = 10) -> TopK:
        """The ``k`` best candidates by composite at ``now``, best first (ties: the later row).

        Args:
            candidates: rows as a uint32 array, a ``pyroaring.BitMap`` or a :class:`Pruned`.
            now: the instant to decay to.
            k: how many to keep (>= 1).

        Raises:
            InvalidArgumentError: ``k < 1`` or a non-finite ``now``.
            InvalidValueError: a candidate row beyond the table.
        """
        # k: checked by the binding (a numpy integer given to it as a Python int by the same rule)
        return self._inner.top_k(_arrays.rows(candidates, "candidates"), to_seconds(now), k if type(k) is int else _scalars.count(k, "k"))

    def decay_pass(self, now: TimeLike, floor: float = 0.35, out: npt.NDArray[np.float32] | None = None) -> DecayPass:
        """Decays every row to ``now``: the weekly distillation's kernel.

        Args:
            now: the instant to decay to.
            floor: composite below which a live, unprotected row is reported.
            out: optional C-contiguous float32 array ``(len(self), 7)`` to write into.

        Returns:
            ``.axes`` (decayed, protected rows unchanged) and ``.below`` (uint32 rows).
        """
        return self._inner.decay_pass(to_seconds(now), floor, out)

    def to_bytes(self) -> bytes:
        """The file image of the table."""
        return self._inner.to_bytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> SalienceTable:
        """Reads an image made by :meth:`to_bytes`.

        Raises:
            CorruptIndexError: the bytes are truncated or damaged.
        """
        return cls._wrap(_SalienceTable.from_bytes(_arrays.data(data, "data")))

    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the table to ``path`` atomically."""
        self._inner.save(_arrays.path(path))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SalienceTable:
        """Reads a table saved by :meth:`save`."""
        return cls._wrap(_SalienceTable.load(_arrays.path(path)))

    def __len__(self) -> int:
        return len(self._inner)

    def __repr__(self) -> str:
        return repr(self._inner)
