"""Versions of a subject (B5, B6): the chain, its live bound, and "true at T as known at K".

Every adopted version of a subject starts being valid at its ``valid_from`` and stops
where the next adopted version starts; the version adopted last is current. Knowledge
has a time axis of its own: a version is *known* from the instant it was adopted. All
functions here are pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..schema import Episode
from ..home.state import VersionEntry

__all__ = ["Version", "as_of", "beyond_bound", "validity"]


@dataclass(frozen=True)
class Version:
    """One version of a subject as the home knows it now.

    Attributes:
        episode: The record as written.
        valid_from: When it started being true.
        valid_to: When the next version took over (None while current).
        adopted_at: When the home adopted it (its ``known`` time).
        superseded_by: The id of the version that replaced it, if any.
        current: Whether it is the current version.
        live: Whether recall still sees it (versions beyond the live bound are retired).
    """

    episode: Episode
    valid_from: datetime
    valid_to: datetime | None
    adopted_at: datetime
    superseded_by: str | None
    current: bool
    live: bool

    @property
    def id(self) -> str:
        """The record's id."""
        return self.episode.id


def validity(chain: Sequence[VersionEntry], known_at: datetime | None = None) -> list[tuple[VersionEntry, datetime, datetime | None]]:
    """Each version known at ``known_at`` (all for None) with its valid interval ``[from, to)``.

    A version ends where the next adopted one starts, and never before it starts
    itself: a successor valid from an earlier instant (a clock that went back, a
    back-dated fact) leaves it an empty interval — the later knowledge wins.
    """
    known = [v for v in chain if known_at is None or _t(v.adopted_at) <= known_at]
    out: list[tuple[VersionEntry, datetime, datetime | None]] = []
    for i, v in enumerate(known):
        start = _t(v.valid_from)
        end = max(_t(known[i + 1].valid_from), start) if i + 1 < len(known) else None
        out.append((v, start, end))
    return out


def as_of(chain: Sequence[VersionEntry], valid_at: datetime, known_at: datetime | None = None) -> VersionEntry | None:
    """The version true at ``valid_at`` according to what was known at ``known_at``.

    Boundaries: a version is true from its ``valid_from`` (inclusive) to the next
    version's ``valid_from`` (exclusive), and known from its adoption instant
    (inclusive). ``known_at=None`` uses everything known.

    Example:
        >>> from datetime import datetime, timezone
        >>> d = lambda day: datetime(2026, 6, day, tzinfo=timezone.utc)
        >>> chain = [VersionEntry("a", d(1).isoformat(), d(1).isoformat()), VersionEntry("b", d(10).isoformat(), d(12).isoformat())]
        >>> as_of(chain, d(10)).id, as_of(chain, d(10), known_at=d(11)).id, as_of(chain, d(9)).id
        ('b', 'a', 'a')
    """
    found = None
    for v, start, end in validity(chain, known_at):
        if start <= valid_at and (end is None or valid_at < end):
            found = v
    return found


def beyond_bound(live: Sequence[str], bound: int) -> list[str]:
    """The oldest live versions that exceed the bound (the newest ``bound`` stay).

    Example:
        >>> beyond_bound(["a", "b", "c", "d"], 3)
        ['a']
    """
    return list(live[: max(len(live) - bound, 0)])


def _t(iso: str) -> datetime:
    return datetime.fromisoformat(iso)
