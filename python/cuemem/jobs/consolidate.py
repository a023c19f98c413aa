"""Consolidation (D1): promoting short-term items to long-term memory, as a pure function.

Live short-term items group by user and subject, or, without a subject, by the first
60 characters of their narrative (case-folded, whitespace collapsed). Members whose
confidence is below ``min_confidence`` are left out. A group is promoted

- by **repetition** when it has at least ``min_occurrences`` members, or
- by **intensity** when one member's strongest salience axis (as written) reaches
  ``salience_floor``.

A promotion is one long-term record: the members' distinct narratives merged in the
order they occurred, each axis the maximum over the members, the mean confidence,
``sources`` = every member, tainted if any member is. Its id is derived from its
members, so promoting the same group twice gives the same record. The function reads
no clock and no home: the same items, ``now`` and config give the same plan.
"""

from __future__ import annotations

import hashlib
import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain
from dataclasses import dataclass
from datetime import date, datetime

from ..errors import CueTypeError
from ..salience import AXES
from ..schema.fields import utc_offset
from .config import ConsolidationConfig
from ..home.items import CHRONOLOGICAL, Item

_NARRATIVE, _ACTORS, _TAGS = (operator.attrgetter(f) for f in ("narrative", "actors", "tags"))

__all__ = ["Promotion", "consolidate", "group_key", "promotion_id", "promotion_of"]

#: The routes by which a group is promoted.
REPETITION = "repetition"
INTENSITY = "intensity"


@dataclass(frozen=True)
class Promotion:
    """One group promoted to a long-term record.

    Attributes:
        id: The new record's id (derived from ``sources``).
        key: The group key: ``(user_id, "subject:..." or "text:...")``.
        routes: ``("repetition",)``, ``("intensity",)`` or both.
        sources: Every member's id, in the order they occurred.
        narrative: The members' distinct narratives, one per line.
        user_id: The members' user.
        type: The members' most common type.
        kind: The members' most common kind.
        subject: The group's subject, or None.
        actors: Every member's actors, first seen first.
        tags: Every member's tags, first seen first.
        salience: Axis -> the maximum over the members.
        confidence: The members' mean confidence.
        occurred_at: When the last member occurred.
        taint: Any member is tainted.
    """

    id: str
    key: tuple[str, str]
    routes: tuple[str, ...]
    sources: tuple[str, ...]
    narrative: str
    user_id: str
    type: str
    kind: str
    subject: str | None
    actors: tuple[str, ...]
    tags: tuple[str, ...]
    salience: dict[str, float]
    confidence: float
    occurred_at: date
    taint: bool


def group_key(item: Item, key_chars: int = 60) -> tuple[str, str]:
    """The group an item joins: its user and subject, else its narrative's opening.

    Example:
        >>> from datetime import date, datetime, timezone
        >>> it = Item("a", "Prefers  dark MODE", "u", "note", None, (), None, (), "preference", "short",
        ...           "raw", (0.0,) * 7, 1.0, date(2026, 1, 1), datetime(2026, 1, 1, tzinfo=timezone.utc), False)
        >>> group_key(it)
        ('u', 'text:prefers dark mode')
    """
    if item.subject:
        return (item.user_id, "subject:" + item.subject)
    return (item.user_id, "text:" + " ".join(item.narrative.casefold().split())[:key_chars])


def promotion_id(sources: Iterable[str]) -> str:
    """The id of the record promoting exactly ``sources`` (order does not matter)."""
    digest = hashlib.blake2b("\n".join(sorted(sources)).encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return "lt-" + digest


def _live(item: Item, now: datetime, config: ConsolidationConfig) -> bool:
    if item.tier != "short" or item.recorded_at > now:
        return False
    ttl = config.ttl(item.type, item.kind)
    return ttl is None or item.recorded_at + ttl > now


def _most_common(values: Sequence[str]) -> str:
    """The most frequent value; ties go to the one seen first."""
    counts = Counter(values)
    best = max(counts.values())
    return next(v for v in values if counts[v] == best)


def consolidate(items: Iterable[Item], now: datetime, config: ConsolidationConfig | None = None) -> list[Promotion]:
    """The promotions due at ``now`` among ``items`` (pure: no clock, no home).

    Items that are not short-term, not yet recorded at ``now``, expired (recorded at
    least their kind's TTL before ``now``) or below ``min_confidence`` take no part.

    Args:
        items: Candidate memories (other tiers are ignored).
        now: The instant the job runs at (an aware datetime).
        config: Thresholds (default: the documented defaults).

    Returns:
        The promotions, ordered by group key.

    Raises:
        CueTypeError: ``now`` is not an aware datetime, or an item is not an :class:`Item`.
    """
    if not isinstance(now, datetime) or utc_offset(now, "now") is None:
        raise CueTypeError(f"now must be an aware datetime, got {now!r}")
    cfg = config if config is not None else ConsolidationConfig()
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in items:
        if not isinstance(item, Item):
            raise CueTypeError(f"consolidate takes Items, got {type(item).__name__}")
        if item.confidence < cfg.min_confidence or not _live(item, now, cfg):
            continue
        groups.setdefault(group_key(item, cfg.key_chars), []).append(item)
    out: list[Promotion] = []
    for key in sorted(groups):
        members = sorted(groups[key], key=CHRONOLOGICAL)
        routes = []
        if len(members) >= cfg.min_occurrences:
            routes.append(REPETITION)
        if max(map(max, (m.axes for m in members))) >= cfg.salience_floor:
            routes.append(INTENSITY)
        if routes:
            out.append(promotion_of(key, tuple(routes), members))
    return out


def promotion_of(key: tuple[str, str], routes: tuple[str, ...], members: Sequence[Item]) -> Promotion:
    """The promotion of ``members`` (one group, in the order they occurred) by ``routes``."""
    sources = tuple(m.id for m in members)
    return Promotion(
        id=promotion_id(sources),
        key=key,
        routes=routes,
        sources=sources,
        narrative="\n".join(dict.fromkeys(map(_NARRATIVE, members))),
        user_id=key[0],
        type=_most_common([m.type for m in members]),
        kind=_most_common([m.kind for m in members]),
        subject=members[0].subject if key[1].startswith("subject:") else None,
        actors=tuple(dict.fromkeys(chain.from_iterable(map(_ACTORS, members)))),
        tags=tuple(dict.fromkeys(chain.from_iterable(map(_TAGS, members)))),
        salience=dict(zip(AXES, map(max, zip(*(m.axes for m in members))))),
        confidence=sum(m.confidence for m in members) / len(members),
        occurred_at=members[-1].occurred_at,
        taint=any(m.taint for m in members),
    )
