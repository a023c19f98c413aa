"""Freshness (C6): a memory's confidence decays with its age, at a rate set by its kind.

``freshness = confidence * 0.5 ** (age_days / half_life[kind])`` where the age runs
from when the memory was recorded (learned) to ``now``. Below the profile's
``stale_below`` (0.70 low, 0.75 medium, 0.85 high) a memory is *stale*: recall marks
it, and can leave it out. Episodic memories record what happened and never go stale;
a short-term record past its TTL has no freshness left.

=============  =================
kind           half-life (days)
=============  =================
episodic       never stale
semantic       730
procedural     365
preference     180
policy         730
=============  =================
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType

from ..schema import Episode, Kind, Tier
from .profiles import Profile
from .tiers import is_expired

__all__ = ["HALF_LIVES_DAYS", "freshness", "freshness_of"]

_DAY = 86_400.0

#: Freshness half-life per kind, in days (None: never decays).
HALF_LIVES_DAYS: Mapping[Kind, float | None] = MappingProxyType({
    Kind.EPISODIC: None,
    Kind.SEMANTIC: 730.0,
    Kind.PROCEDURAL: 365.0,
    Kind.PREFERENCE: 180.0,
    Kind.POLICY: 730.0,
})


def freshness(confidence: float, kind: Kind, recorded_at: datetime, now: datetime) -> float:
    """The confidence left to a memory of ``kind`` recorded at ``recorded_at``, at ``now``.

    A memory recorded after ``now`` has its full confidence.

    Example:
        >>> from datetime import datetime, timedelta, timezone
        >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> freshness(1.0, Kind.PREFERENCE, t, t + timedelta(days=180)), freshness(0.9, Kind.EPISODIC, t, t + timedelta(days=900))
        (0.5, 0.9)
    """
    half_life = HALF_LIVES_DAYS[Kind(kind)]
    if half_life is None:
        return confidence
    age = max((now - recorded_at).total_seconds(), 0.0) / _DAY
    return float(confidence * 0.5 ** (age / half_life))


def freshness_of(episode: Episode, now: datetime, profile: Profile) -> float:
    """The freshness of a stored record at ``now``: :func:`freshness`, or 0 for a
    short-term record past its TTL (expired, even before ``expire`` retires it)."""
    if episode.tier is Tier.SHORT and is_expired(episode.recorded_at, episode.type, episode.kind.value, now=now, profile=profile):
        return 0.0
    return freshness(episode.confidence, episode.kind, episode.recorded_at, now)

