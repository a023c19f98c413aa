"""Numpy formulation of cuemem's ranking, shared by the baselines and the checks.

This is the ``pyroaring+numpy`` baseline's scoring and the oracle that the
agreement check scores every system's answer with; cuemem itself scores in Rust.
The formula (spec A2, D2): each axis decays as ``2**(-age / half_life)`` unless
the row is protected (risk or importance >= 0.7 at write), and
``composite = sum(weight * decayed) * (0.6 + 0.4 * confidence)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from cuemem.lab.bench.corpus import AXES, Corpus

DAY_S = 86_400.0


@dataclass(frozen=True)
class Ranking:
    """Axis weights and half-lives, in :data:`~cuemem.lab.bench.corpus.AXES` order.

    Attributes:
        weights: ``float64`` weight per axis.
        half_lives_s: ``float64`` half-life per axis, in seconds.
    """

    weights: np.ndarray
    half_lives_s: np.ndarray

    @classmethod
    def from_dicts(
        cls, weights: Mapping[str, float], half_lives_days: Mapping[str, float]
    ) -> Ranking:
        """Build from ``axis -> weight`` and ``axis -> half-life in days`` mappings.

        Raises:
            KeyError: If an axis is missing from either mapping.
        """
        return cls(
            weights=np.array([float(weights[a]) for a in AXES]),
            half_lives_s=np.array([float(half_lives_days[a]) * DAY_S for a in AXES]),
        )

    @classmethod
    def from_cuemem(cls) -> Ranking:
        """Use cuemem's ``DEFAULT_WEIGHTS`` and ``DEFAULT_HALF_LIVES_DAYS``, so all systems rank alike."""
        import cuemem

        return cls.from_dicts(cuemem.DEFAULT_WEIGHTS, cuemem.DEFAULT_HALF_LIVES_DAYS)


@dataclass(frozen=True)
class Columns:
    """The per-row arrays scoring needs.

    Attributes:
        axes: ``float32`` salience at write, shape ``(n, 7)``.
        confidence: ``float32`` confidence, shape ``(n,)``.
        t: ``float64`` reference time in unix seconds, shape ``(n,)``.
        protected: ``bool`` rows that never decay, shape ``(n,)``.
    """

    axes: np.ndarray
    confidence: np.ndarray
    t: np.ndarray
    protected: np.ndarray

    @classmethod
    def of(cls, corpus: Corpus) -> Columns:
        """Take the columns of ``corpus`` (no copies except the protected mask)."""
        return cls(corpus.axes, corpus.confidence, corpus.t, corpus.protected)

    @property
    def nbytes(self) -> int:
        """Return the bytes held by the four arrays."""
        return sum(a.nbytes for a in (self.axes, self.confidence, self.t, self.protected))


def decayed_axes(cols: Columns, rows: np.ndarray | slice, now: float, ranking: Ranking) -> np.ndarray:
    """Return the ``float64`` axes of ``rows`` decayed to ``now``, shape ``(len(rows), 7)``."""
    age = np.maximum(now - cols.t[rows], 0.0)
    factor = np.exp2(-age[:, None] / ranking.half_lives_s[None, :])
    factor[cols.protected[rows]] = 1.0
    decayed: np.ndarray = cols.axes[rows] * factor
    return decayed


def composite(cols: Columns, rows: np.ndarray | slice, now: float, ranking: Ranking) -> np.ndarray:
    """Return the ``float64`` composite salience of ``rows`` at ``now``."""
    decayed = decayed_axes(cols, rows, now, ranking)
    score: np.ndarray = (decayed @ ranking.weights) * (0.6 + 0.4 * cols.confidence[rows].astype(np.float64))
    return score


def top_k(rows: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the ``k`` best ``rows`` and their scores, best first."""
    if len(rows) > k:
        keep = np.argpartition(scores, len(scores) - k)[-k:]
        rows, scores = rows[keep], scores[keep]
    order = np.argsort(-scores, kind="stable")
    return rows[order], scores[order]


def decay_pass(
    cols: Columns, now: float, ranking: Ranking, floor: float
) -> tuple[np.ndarray, np.ndarray]:
    """Decay every row to ``now``; report rows whose composite falls below ``floor``.

    Computed in ``float32`` (ages are exact to well under a second of a
    half-life), as a numpy user after speed would write it. Protected rows keep
    their axes and are never reported.

    Returns:
        ``(axes, below)``: ``float32`` decayed axes of shape ``(n, 7)`` and the
        ``uint32`` rows below the floor, ascending.
    """
    age = np.maximum(now - cols.t, 0.0).astype(np.float32)
    rate = (-1.0 / ranking.half_lives_s).astype(np.float32)
    factor = np.exp2(age[:, None] * rate[None, :])
    factor[cols.protected] = 1.0
    decayed = cols.axes * factor
    score = (decayed @ ranking.weights.astype(np.float32)) * (0.6 + 0.4 * cols.confidence)
    below = np.flatnonzero((score < floor) & ~cols.protected).astype(np.uint32)
    return decayed, below
