"""Re-deriving an abstraction from what remains of its sources (after a forget).

A consolidated record or a rung of the ladder quotes its sources. When some of them
are forgotten, the derivative goes with them, and the same job function that made it
makes its successor from the sources that remain: the promotion of the remaining
members (:func:`~.consolidate.promotion_of`), or the rung over them
(:func:`~.distill.rung_of`, with the default summarizer), written through the gate
like any job's write. When nothing remains, nothing is re-derived.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..lifecycle.writes import Admission
from ..schema import Level, Note
from ..store import kinds
from ..store import records as rec
from ..store.note_versions import next_versions
from .config import DistillationConfig
from .consolidate import promotion_of
from .distill import EVERYTHING_ELSE, rung_of
from .home import promoted_episode, read_items, rung_episode, rung_note_fields
from ..home.items import CHRONOLOGICAL
from .summarize import ExtractiveSummarizer

if TYPE_CHECKING:
    from ..home.home import Home

__all__ = ["REDERIVED", "rederive"]

#: The route of a promotion made again from what remained of its members.
REDERIVED = "rederived"


def rederive(
    home: Home, derivative: Mapping[str, Any], remaining: Sequence[str], admission: Admission, now: datetime
) -> tuple[str | None, list[rec.Record]]:
    """The successor of ``derivative`` (a stored episode with ``sources``) made from the
    ``remaining`` sources, and the records that write it (its note's, for a rung);
    ``(None, [])`` when nothing remains or that record exists already."""
    items = sorted(read_items(home, home.rows_of(remaining)), key=CHRONOLOGICAL)
    if not items:
        return None, []
    level = Level(derivative["level"])
    subject = derivative.get("subject")
    notes: list[Note] = []
    if level is Level.RAW:
        key = (str(derivative["user_id"]), f"subject:{subject}" if subject else f"text:{items[0].narrative[:60]}")
        episode = promoted_episode(promotion_of(key, (REDERIVED,), items), now)
        rung = None
    else:
        rung = rung_of(level, f"subject {subject}" if subject else EVERYTHING_ELSE, items, DistillationConfig(), ExtractiveSummarizer())
        episode = rung_episode(rung, now)
    if home.id_taken(episode.id):
        return None, []
    admitted = admission.admit(episode)
    records = list(admitted.records)
    if rung is not None:
        for record in admitted.records:
            match kinds.parse(record, trusted=True):
                case kinds.RememberRecord(episode=stored):
                    notes.extend(next_versions(home.notes.files, home.notes.versions, rung_note_fields(rung, stored), now))
    return episode.id, [*records, *(rec.note(n) for n in notes)]
