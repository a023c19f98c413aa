"""A fixed, seeded mix of recall queries over a benchmark corpus.

The mix spans the selectivities an agent produces: one rare or common actor,
two cues that narrow each other, unions within a dimension, an exclusion, and
broad cues (an outcome in a year) whose candidate sets are a sizeable share of
the corpus. Values are drawn from the corpus itself, so every cue exists.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cuemem.lab.bench.corpus import Corpus

NOW: float = float((np.datetime64("2027-01-01T00:00:00", "s") - np.datetime64(0, "s")).astype(np.int64))
"""Recall time of every benchmark query: 2027-01-01T00:00:00Z in unix seconds."""

K: int = 10
"""Number of results every benchmark query asks for."""

CueMap = dict[str, "str | list[str]"]


@dataclass(frozen=True)
class Query:
    """One benchmark query.

    Attributes:
        kind: Short label of the query family, e.g. ``"actor+year"``.
        cues: Dimension -> value, or list of values unioned within the dimension.
        exclude: Dimension -> value(s) whose rows are removed, or ``None``.
    """

    kind: str
    cues: CueMap
    exclude: CueMap | None = None


def make_queries(corpus: Corpus, seed: int = 7) -> list[Query]:
    """Build the query mix (about 200 queries) for ``corpus``.

    Args:
        corpus: Corpus whose values the queries use.
        seed: Seed of the query draw; independent of the corpus seed.

    Returns:
        Queries grouped by family, in a fixed order.
    """
    pick = _Picker(corpus, np.random.default_rng(seed))
    families: list[tuple[int, Callable[[], Query]]] = [
        (45, lambda: Query("actor", {"actor": pick.actor()})),
        (30, lambda: Query("actor+year", {"actor": pick.actor(), "time": pick.year()})),
        (30, lambda: Query("user+type", {"user": pick.value("user"), "type": pick.value("type")})),
        (25, lambda: Query("actor|actor", {"actor": pick.distinct(pick.actor, 2)})),
        (15, lambda: Query("month|month", {"time": pick.adjacent_months()})),
        (
            25,
            lambda: Query(
                "user-negative", {"user": pick.value("user")}, exclude={"outcome": "negative"}
            ),
        ),
        (15, lambda: Query("outcome+year", {"outcome": pick.value("outcome"), "time": pick.year()})),
        (15, lambda: Query("type+outcome", {"type": pick.value("type"), "outcome": pick.value("outcome")})),
    ]
    return [make() for count, make in families for _ in range(count)]


class _Picker:
    """Draws cue values from a corpus with one random generator."""

    def __init__(self, corpus: Corpus, rng: np.random.Generator) -> None:
        self._corpus = corpus
        self._rng = rng
        time = corpus.dims["time"].values
        self._years = [v for v in time if len(v) == 4]
        self._months = [v for v in time if len(v) == 7]

    def value(self, dim: str) -> str:
        """Return the value of a random row of ``dim`` (frequent values come up more)."""
        d = self._corpus.dims[dim]
        return d.values[int(d.codes[self._rng.integers(len(d.codes))])]

    def actor(self) -> str:
        """Return an actor: half the time frequency-weighted, half uniform over actors."""
        if self._rng.random() < 0.5:
            return self.value("actor")
        values = self._corpus.dims["actor"].values
        return values[int(self._rng.integers(len(values)))]

    def year(self) -> str:
        """Return a year present in the corpus."""
        return self._years[int(self._rng.integers(len(self._years)))]

    def adjacent_months(self) -> list[str]:
        """Return two consecutive months present in the corpus (or one if only one exists)."""
        if len(self._months) < 2:
            return list(self._months)
        i = int(self._rng.integers(len(self._months) - 1))
        return self._months[i : i + 2]

    def distinct(self, draw: Callable[[], str], count: int) -> list[str]:
        """Return ``count`` distinct values from ``draw`` (fewer if it keeps repeating)."""
        out: list[str] = []
        for _ in range(20 * count):
            v = draw()
            if v not in out:
                out.append(v)
            if len(out) == count:
                break
        return out
