"""Deterministic synthetic episode corpus for the recall benchmark.

The corpus stands in for an agent's journal: episodes in time order, each with
a user, a type, an outcome, one to three actors (Zipf-skewed, so a few actors
appear everywhere and most appear rarely) and three time buckets. Every
dimension is dictionary-encoded the way a column store would hold it, so the
systems under test can load it in bulk without a Python loop per episode.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...schema.enums import COMMON_TYPES

AXES: tuple[str, ...] = (
    "importance",
    "urgency",
    "risk",
    "novelty",
    "affect",
    "actionability",
    "reinforcement",
)
"""Salience axes, in the column order of :attr:`Corpus.axes`."""

DIMENSIONS: tuple[str, ...] = ("actor", "user", "type", "outcome", "time")
"""Cue dimensions of the corpus, in the order the systems index them."""

TYPES: tuple[str, ...] = COMMON_TYPES
_TYPE_WEIGHTS = np.array([20, 14, 8, 5, 6, 10, 14, 6, 6, 5, 3, 3], dtype=np.float64)

OUTCOMES: tuple[str, ...] = ("positive", "negative", "pending")
_OUTCOME_WEIGHTS = np.array([0.45, 0.2, 0.35])

N_ACTORS = 20_000
N_USERS = 100
ACTOR_ZIPF_S = 1.0
USER_ZIPF_S = 0.5

FIRST_DAY = np.datetime64("2024-01-01", "D")
LAST_DAY = np.datetime64("2026-12-31", "D")
_EPOCH_DAY = np.datetime64("1970-01-01", "D")
_DAY_S = 86_400

# Beta(a, b) per salience axis: most memories are unremarkable, a few matter.
_AXIS_BETA: tuple[tuple[float, float], ...] = (
    (2.0, 5.0),  # importance
    (1.5, 6.0),  # urgency
    (1.2, 8.0),  # risk
    (2.0, 3.0),  # novelty
    (2.0, 2.0),  # affect
    (2.0, 4.0),  # actionability
    (1.0, 4.0),  # reinforcement
)
_CONFIDENCE_BETA = (5.0, 2.0)


@dataclass(frozen=True)
class Dimension:
    """One dictionary-encoded cue dimension.

    Row ``rows[i]`` carries the value ``values[codes[i]]``. A row with several
    values (actors, time buckets) simply appears several times.

    Attributes:
        values: Distinct values of the dimension; every one occurs at least once.
        codes: ``uint32`` indexes into ``values``.
        rows: ``uint32`` episode rows, same length as ``codes``.
    """

    values: list[str]
    codes: np.ndarray
    rows: np.ndarray

    def __len__(self) -> int:
        """Return the number of (row, value) pairs."""
        return len(self.rows)


@dataclass(frozen=True)
class Corpus:
    """A synthetic journal of episodes, column by column.

    Attributes:
        n: Number of episodes; rows are ``0 .. n-1`` in time order.
        seed: Seed the corpus was generated from.
        dims: Cue dimensions by name (see :data:`DIMENSIONS`).
        axes: ``float32`` salience, shape ``(n, 7)``, columns in :data:`AXES` order.
        confidence: ``float32`` confidence, shape ``(n,)``.
        t: ``float64`` reference time (``occurred_at``) in unix seconds, shape ``(n,)``.
    """

    n: int
    seed: int
    dims: dict[str, Dimension]
    axes: np.ndarray
    confidence: np.ndarray
    t: np.ndarray

    @property
    def protected(self) -> np.ndarray:
        """Return the boolean mask of rows exempt from decay (risk or importance >= 0.7)."""
        return (self.axes[:, AXES.index("risk")] >= 0.7) | (
            self.axes[:, AXES.index("importance")] >= 0.7
        )


def make_corpus(n: int = 1_000_000, seed: int = 7) -> Corpus:
    """Generate a corpus of ``n`` episodes, identical for identical arguments.

    Args:
        n: Number of episodes.
        seed: Seed for numpy's ``default_rng``.

    Returns:
        The corpus.

    Raises:
        ValueError: If ``n`` is not positive or does not fit in ``uint32`` rows.

    Example:
        >>> c = make_corpus(1_000, seed=1)
        >>> c.axes.shape, sorted(c.dims)
        ((1000, 7), ['actor', 'outcome', 'time', 'type', 'user'])
    """
    if not 0 < n < 2**32:
        raise ValueError(f"episodes must be in 1 .. 2**32-1, got {n}")
    rng = np.random.default_rng(seed)
    t = _occurred_at(rng, n)
    dims = {
        "actor": _actors(rng, n),
        "user": _single(rng, n, _names("user", N_USERS, 3), _zipf(N_USERS, USER_ZIPF_S)),
        "type": _single(rng, n, list(TYPES), _TYPE_WEIGHTS / _TYPE_WEIGHTS.sum()),
        "outcome": _single(rng, n, list(OUTCOMES), _OUTCOME_WEIGHTS),
        "time": _time_buckets(t),
    }
    axes = np.empty((n, len(AXES)), dtype=np.float32)
    for j, (a, b) in enumerate(_AXIS_BETA):
        axes[:, j] = rng.beta(a, b, n)
    confidence = rng.beta(*_CONFIDENCE_BETA, n).astype(np.float32)
    return Corpus(n=n, seed=seed, dims=dims, axes=axes, confidence=confidence, t=t)


def _occurred_at(rng: np.random.Generator, n: int) -> np.ndarray:
    """Draw whole-second timestamps uniformly over the corpus' days, sorted."""
    start = (FIRST_DAY - _EPOCH_DAY).astype(np.int64) * _DAY_S
    span = ((LAST_DAY - FIRST_DAY).astype(np.int64) + 1) * _DAY_S
    seconds = rng.integers(0, span, n, dtype=np.int64)
    seconds.sort()
    return (start + seconds).astype(np.float64)


def _time_buckets(t: np.ndarray) -> Dimension:
    """Encode ``YYYY``, ``YYYY-MM`` and ``YYYY-MM-DD`` buckets, three per row."""
    n = len(t)
    day = (t // _DAY_S).astype(np.int64).astype("datetime64[D]")
    month = day.astype("datetime64[M]")
    year = day.astype("datetime64[Y]")
    all_days = np.arange(FIRST_DAY, LAST_DAY + 1)
    all_months = np.unique(all_days.astype("datetime64[M]"))
    all_years = np.unique(all_days.astype("datetime64[Y]"))
    values = [str(v) for v in all_years] + [str(v) for v in all_months]
    values += [str(v) for v in all_days]
    codes = np.empty((n, 3), dtype=np.uint32)
    codes[:, 0] = (year - all_years[0]).astype(np.int64)
    codes[:, 1] = len(all_years) + (month - all_months[0]).astype(np.int64)
    codes[:, 2] = len(all_years) + len(all_months) + (day - all_days[0]).astype(np.int64)
    rows = np.repeat(np.arange(n, dtype=np.uint32), 3)
    return _compact(values, codes.reshape(-1), rows)


def _actors(rng: np.random.Generator, n: int) -> Dimension:
    """Give each row one to three distinct Zipf-distributed actors."""
    per_row = rng.integers(1, 4, n)
    rows = np.repeat(np.arange(n, dtype=np.uint32), per_row)
    codes = rng.choice(N_ACTORS, size=len(rows), p=_zipf(N_ACTORS, ACTOR_ZIPF_S))
    # Drop an actor drawn twice for the same row; the first draw always survives.
    pair = rows.astype(np.int64) * N_ACTORS + codes
    _, first = np.unique(pair, return_index=True)
    first.sort()
    return _compact(_names("actor", N_ACTORS, 5), codes[first], rows[first])


def _single(rng: np.random.Generator, n: int, values: list[str], p: np.ndarray) -> Dimension:
    """Give each row exactly one value drawn with probabilities ``p``."""
    codes = rng.choice(len(values), size=n, p=p)
    return _compact(values, codes, np.arange(n, dtype=np.uint32))


def _compact(values: list[str], codes: np.ndarray, rows: np.ndarray) -> Dimension:
    """Drop values that no row carries and renumber the codes densely."""
    used, dense = np.unique(codes, return_inverse=True)
    return Dimension(
        values=[values[i] for i in used.tolist()],
        codes=dense.astype(np.uint32).reshape(-1),
        rows=np.ascontiguousarray(rows, dtype=np.uint32),
    )


def _zipf(n: int, s: float) -> np.ndarray:
    """Return Zipf probabilities ``1/rank**s`` over ``n`` ranks."""
    p: np.ndarray = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    p /= p.sum()
    return p


def _names(prefix: str, n: int, width: int) -> list[str]:
    """Return ``prefix-000..`` names zero-padded to ``width`` digits."""
    return [f"{prefix}-{i:0{width}d}" for i in range(n)]
