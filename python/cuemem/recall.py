"""The full recall path in one native call: prune by cues, rank by decayed salience."""

from __future__ import annotations

from . import _scalars
from ._core import Recall
from ._core import recall as _recall
from ._time import TimeLike, to_seconds
from .index import CueIndex, Cues
from .salience import SalienceTable

__all__ = ["Recall", "recall"]


def recall(index: CueIndex, table: SalienceTable, cues: Cues | None, *, now: TimeLike, k: int = 10, exclude: Cues | None = None) -> Recall:
    """Rows matching ``cues``, ranked by composite salience decayed to ``now``; top ``k``.

    The GIL is released for the whole call.

    Returns:
        ``.rows``, ``.scores``, ``.breakdown`` (per-axis contributions) for the winners,
        ``.total`` (rows matching the cues), ``.examined`` (postings touched) and
        ``.full_scan`` (live rows).

    Raises:
        UnknownDimensionError: a cue names an undeclared dimension.
        CueTypeError: ``k`` not an integer.
        InvalidArgumentError: ``k < 1``, a non-finite ``now``, an empty cue.
        InvalidValueError: the index holds a row the table does not.
    """
    # k: checked by the binding (a numpy integer given to it as a Python int by the same rule)
    return _recall(index._inner, table._inner, cues, to_seconds(now), k if type(k) is int else _scalars.count(k, "k"), exclude)
