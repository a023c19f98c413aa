"""The review queue: everything waiting for a person, in one list of one shape.

Three kinds of item wait. A *quarantined* record is written and indexed but unreviewed
(it derives from external content, see :mod:`.writes`): recall leaves it out unless
asked, and nothing auto-loaded ever shows it. A *queued write* is not written yet: a
sensitive or conflicting version, or a version of a fact from external content, in
the approval queue (:mod:`.approvals`). A *proposal* is a change a maintenance job
would make — a merge of near-duplicates, a retirement — written down instead of made
(:mod:`.proposals`). A person answers all three the same way — accept or reject — so
:meth:`cuemem.Memory.review` lists them together, oldest first, each
with the provenance chain of what it derives from. A decision is one ``decision``
record in the journal either way, so it survives a rebuild.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..schema import Episode, Origin

__all__ = ["Provenance", "ReviewItem", "ReviewKind", "provenance_chain"]

#: How far down its sources a review item's provenance chain goes.
CHAIN_LIMIT = 64


class ReviewKind(str, enum.Enum):
    """What kind of item waits for review."""

    #: Written, indexed and held back from recall until a person accepts it.
    QUARANTINED = "quarantined"
    #: A write waiting in the approval queue, not written yet.
    APPROVAL = "approval"
    #: A change a maintenance job proposes (:mod:`.proposals`), not made yet.
    PROPOSAL = "proposal"

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Provenance:
    """Where one record came from, as the API recorded it (never read from its content)."""

    id: str
    origin: Origin
    session: str | None
    source: str | None
    taint: bool
    reviewed: bool

    @classmethod
    def of(cls, episode: Episode) -> Provenance:
        """The provenance of ``episode``."""
        return cls(episode.id, episode.origin, episode.session, episode.source, episode.taint, episode.reviewed)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the command line's and the MCP server's shape)."""
        return {"id": self.id, "origin": self.origin.value, "session": self.session, "source": self.source, "taint": self.taint,
                "reviewed": self.reviewed}


@dataclass(frozen=True)
class ReviewItem:
    """One item waiting for a decision.

    Attributes:
        id: What :meth:`~cuemem.Memory.accept` and :meth:`~cuemem.Memory.reject` take.
        kind: Quarantined record or queued write.
        reason: Why it waits: ``"quarantined"``, the approval's reason, or the
            proposing job and action (``"dedupe: merge"``).
        narrative: What it says (a proposal's summary).
        user_id: Whose memory it is (or would be).
        since: When it started waiting.
        expires_at: When a queued write lapses (None for a quarantined record).
        provenance: The record first, then what it derives from, breadth first.
    """

    id: str
    kind: ReviewKind
    reason: str
    narrative: str
    user_id: str
    since: datetime
    expires_at: datetime | None
    provenance: tuple[Provenance, ...]


def provenance_chain(episode: Episode, lookup: Callable[[str], Episode | None]) -> tuple[Provenance, ...]:
    """``episode``'s provenance, then what it came from — its sources and the record it
    supersedes (an update's predecessor) — breadth first, each once, at most
    :data:`CHAIN_LIMIT`; ``lookup`` reads a source (None: not in the home)."""
    out = [Provenance.of(episode)]
    seen = {episode.id}
    queue: list[str] = _came_from(episode)
    while queue and len(out) < CHAIN_LIMIT:
        sid = queue.pop(0)
        if sid in seen:
            continue
        seen.add(sid)
        source = lookup(sid)
        if source is not None:
            out.append(Provenance.of(source))
            queue.extend(_came_from(source))
    return tuple(out)


def _came_from(episode: Episode) -> list[str]:
    """The records ``episode`` derives from: its sources, then its predecessor."""
    return [*episode.sources, *(() if episode.supersedes is None else (episode.supersedes,))]


def ordered(items: Sequence[ReviewItem]) -> list[ReviewItem]:
    """Oldest first, then by id."""
    return sorted(items, key=lambda i: (i.since, i.id))
