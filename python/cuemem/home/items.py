"""The light view of a stored memory that the jobs and the policy mining work on.

Jobs read thousands of records per run; building a fully validated
:class:`~cuemem.schema.Episode` for each would dominate their cost. An :class:`Item`
is read straight from a journal record the home already validated when it was
written (the way the indexes read them), or from an episode.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

from ..errors import CorruptRecordError
from ..salience import AXES
from ..schema import Episode

if TYPE_CHECKING:
    from .home import Home

__all__ = ["CHRONOLOGICAL", "Item", "read_items"]

#: Sort key of items: when they occurred, then when they were recorded, then id.
CHRONOLOGICAL = operator.attrgetter("occurred_at", "recorded_at", "id")

#: The seven axes of a stored salience mapping, as a tuple in ``AXES`` order.
_AXES_OF = operator.itemgetter(*AXES)


class Item(NamedTuple):
    """What consolidation and distillation need of one memory (immutable; a named tuple,
    so reading a hundred thousand of them stays cheap).

    Attributes:
        id: The record's id.
        narrative: Its text.
        user_id: Whose memory it is.
        type: Its type.
        outcome: Its outcome value, or None.
        actors: Who took part.
        subject: What it is about, or None.
        tags: Its tags.
        kind: Its ``Kind`` value.
        tier: Its ``Tier`` value.
        level: Its ``Level`` value.
        axes: The seven salience axes as written, in ``AXES`` order.
        confidence: Its confidence.
        occurred_at: When it happened.
        recorded_at: When it was written.
        taint: Derived from external content.
    """

    id: str
    narrative: str
    user_id: str
    type: str
    outcome: str | None
    actors: tuple[str, ...]
    subject: str | None
    tags: tuple[str, ...]
    kind: str
    tier: str
    level: str
    axes: tuple[float, ...]
    confidence: float
    occurred_at: date
    recorded_at: datetime
    taint: bool

    @property
    def peak(self) -> float:
        """The strongest salience axis as written."""
        return max(self.axes)

    @classmethod
    def of_json(cls, record: Mapping[str, Any]) -> Item:
        """The item of an episode as the journal stores it (``Episode.to_json``).

        Raises:
            KeyError, TypeError, ValueError: the stored record is malformed.
        """
        return cls(  # positional, in field order: the cheapest way to build a named tuple
            record["id"],
            record["narrative"],
            record["user_id"],
            record["type"],
            record["outcome"],
            tuple(record["actors"]),
            record["subject"],
            tuple(record["tags"]),
            record["kind"],
            record["tier"],
            record["level"],
            _AXES_OF(record["salience"]),
            float(record["confidence"]),
            date.fromisoformat(record["occurred_at"]),
            datetime.fromisoformat(record["recorded_at"]),
            bool(record["taint"]),
        )

    @classmethod
    def of(cls, episode: Episode) -> Item:
        """The item of a validated episode."""
        return cls.of_json(episode.to_json())


def read_items(home: Home, rows: Sequence[int] | npt.NDArray[Any]) -> list[Item]:
    """The items of ``rows``, read from the journal in row order, one open per segment.

    Raises:
        CorruptRecordError: a record there is not an episode.
        StorageError: a segment cannot be read.
    """
    out: list[Item] = []
    for row, stored in zip(rows.tolist() if isinstance(rows, np.ndarray) else rows, home.stored(rows)):
        try:
            out.append(Item.of_json(stored))
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptRecordError(f"the record of row {row} is not an episode: {exc}") from None
    return out
