"""Failure-cost profiles (D4): one choice that sets thresholds, TTLs, approvals, freshness.

How costly is a wrong memory? A coding assistant that misremembers a preference
annoys; an agent that misremembers a dosage harms. The profile is chosen per home
handle (``Memory.open(..., profile="high")``) and derives every threshold the write
path and the freshness check use:

================================  ===========  ===========  ===========
setting                           low          medium       high
================================  ===========  ===========  ===========
origin trust for long-term        0.40         0.60         0.80
short-term TTL (default)          30 days      14 days      7 days
approval of sensitive long-term   no           no           yes
approval expires after            —            —            7 days
stale below freshness             0.70         0.75         0.85
live versions per subject         5            5            5
long-term capacity per user       200,000      100,000      50,000
consolidation: min occurrences    2            2            3
consolidation: salience floor     0.70         0.80         0.90
consolidation: min confidence     0.30         0.40         0.60
distillation floor                0.35         0.35         0.35
derivations proposed, not made    no           no           yes
================================  ===========  ===========  ===========

TTLs per kind of memory (all profiles): a ``price`` lives 30 minutes, a preference 7
days, an immutable ``attribute`` never expires; anything else takes the profile's
default. Sensitive kinds under the high profile: preference, procedural, policy, and
any record tagged ``sensitive``.

Under the high profile the purely additive derivations — consolidated records, rungs
of the ladder, mined policies — are proposed (:mod:`cuemem.lifecycle.proposals`)
rather than written: a person accepts each one (``propose_derivations``). Changes and
retirements of existing knowledge are proposed under every profile.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from types import MappingProxyType

from .. import _scalars
from ..errors import CueTypeError, InvalidArgumentError
from ..schema import Kind, Origin

__all__ = ["PROFILES", "Profile", "Trust", "profile"]

_DAY = timedelta(days=1)


class Trust(float, enum.Enum):
    """How far a write is trusted, by who wrote it (B4): user utterance high, model inference low."""

    USER = 1.0
    JOB = 0.8
    AGENT = 0.5
    EXTERNAL = 0.3

    @classmethod
    def of(cls, origin: Origin) -> float:
        """The trust of an origin."""
        return float(cls[Origin(origin).name].value)


#: TTL per kind of memory, shared by every profile: the key is an episode ``type`` or
#: a :class:`~cuemem.schema.Kind` value; ``None`` means the record never expires.
DEFAULT_KIND_TTLS: Mapping[str, timedelta | None] = MappingProxyType({
    "price": timedelta(minutes=30),
    Kind.PREFERENCE.value: timedelta(days=7),
    "attribute": None,
})


@dataclass(frozen=True)
class Profile:
    """The thresholds one failure-cost level implies (see the module table).

    Build a variant with :func:`dataclasses.replace`.

    Attributes:
        name: ``"low"``, ``"medium"``, ``"high"`` or a custom label.
        long_term_trust: The least origin trust that may write long-term; lower
            origins are written short-term instead.
        short_ttl: How long a short-term record lives when its kind has no TTL of its own.
        kind_ttls: TTL per episode type or kind (``None``: never expires).
        approval: Whether sensitive long-term writes wait for approval.
        sensitive_kinds: The kinds whose long-term writes are sensitive.
        approval_ttl: How long a queued write waits before it expires unapproved.
        stale_below: Freshness below which a memory is reported stale.
        max_live_versions: Versions of a subject kept live in recall (the journal keeps all).
        long_term_capacity: Live long-term records per user before the least salient retire.
        min_occurrences: Consolidation: repetitions that promote a short-term group.
        salience_floor: Consolidation: salience that promotes a group by itself.
        min_confidence: Consolidation: mean confidence a promoted group needs.
        distill_floor: Distillation: composite salience below which a memory moves up the ladder.
        propose_derivations: Consolidation, distillation and policy mining propose their
            new records (accepted one by one) instead of writing them.
    """

    name: str
    long_term_trust: float
    short_ttl: timedelta
    approval: bool
    approval_ttl: timedelta
    stale_below: float
    long_term_capacity: int
    min_occurrences: int
    salience_floor: float
    min_confidence: float
    max_live_versions: int = 5
    distill_floor: float = 0.35
    propose_derivations: bool = False
    sensitive_kinds: frozenset[Kind] = frozenset({Kind.PREFERENCE, Kind.PROCEDURAL, Kind.POLICY})
    kind_ttls: Mapping[str, timedelta | None] = field(default_factory=lambda: DEFAULT_KIND_TTLS)

    def __post_init__(self) -> None:
        for name in ("long_term_trust", "stale_below", "salience_floor", "min_confidence", "distill_floor"):
            value = getattr(self, name)
            number = _scalars.as_real(value)
            if number is None or not 0.0 <= number <= 1.0:
                raise InvalidArgumentError(f"Profile.{name} must be a number in [0, 1], got {value!r}")
            object.__setattr__(self, name, number)
        for name in ("short_ttl", "approval_ttl"):
            value = getattr(self, name)
            if not isinstance(value, timedelta) or value <= timedelta(0):
                raise InvalidArgumentError(f"Profile.{name} must be a positive timedelta, got {value!r}")
        for name, least in (("max_live_versions", 1), ("long_term_capacity", 1), ("min_occurrences", 1)):
            value = getattr(self, name)
            count = _scalars.as_int(value)
            if count is None or count < least:
                raise InvalidArgumentError(f"Profile.{name} must be an int >= {least}, got {value!r}")
            object.__setattr__(self, name, count)
        propose = _scalars.as_bool(self.propose_derivations)
        if propose is None:
            raise InvalidArgumentError(f"Profile.propose_derivations must be a bool, got {self.propose_derivations!r}")
        object.__setattr__(self, "propose_derivations", propose)
        if not isinstance(self.kind_ttls, Mapping):
            raise CueTypeError(f"Profile.kind_ttls must be a mapping, got {type(self.kind_ttls).__name__}")
        for key, ttl in self.kind_ttls.items():
            if not isinstance(key, str) or (ttl is not None and (not isinstance(ttl, timedelta) or ttl <= timedelta(0))):
                raise InvalidArgumentError(f"Profile.kind_ttls[{key!r}] must be a positive timedelta or None, got {ttl!r}")
        object.__setattr__(self, "kind_ttls", MappingProxyType(dict(self.kind_ttls)))
        object.__setattr__(self, "sensitive_kinds", frozenset(Kind(k) for k in self.sensitive_kinds))

    def ttl(self, type: str, kind: Kind | str) -> timedelta | None:
        """The TTL of a short-term record: by its type, else its kind, else the default.

        Example:
            >>> PROFILES["medium"].ttl("price", "semantic"), PROFILES["medium"].ttl("note", "episodic").days
            (datetime.timedelta(seconds=1800), 14)
        """
        for key in (type, str(kind)):
            if key in self.kind_ttls:
                return self.kind_ttls[key]
        return self.short_ttl


#: The three built-in profiles.
PROFILES: Mapping[str, Profile] = MappingProxyType({
    "low": Profile("low", long_term_trust=0.4, short_ttl=30 * _DAY, approval=False, approval_ttl=7 * _DAY, stale_below=0.7,
                   long_term_capacity=200_000, min_occurrences=2, salience_floor=0.7, min_confidence=0.3),
    "medium": Profile("medium", long_term_trust=0.6, short_ttl=14 * _DAY, approval=False, approval_ttl=7 * _DAY, stale_below=0.75,
                      long_term_capacity=100_000, min_occurrences=2, salience_floor=0.8, min_confidence=0.4),
    "high": Profile("high", long_term_trust=0.8, short_ttl=7 * _DAY, approval=True, approval_ttl=7 * _DAY, stale_below=0.85,
                    long_term_capacity=50_000, min_occurrences=3, salience_floor=0.9, min_confidence=0.6, propose_derivations=True),
})


def profile(value: object) -> Profile:
    """A profile from its name or itself.

    Raises:
        InvalidArgumentError: an unknown name.
        CueTypeError: neither a string nor a :class:`Profile`.
    """
    if isinstance(value, Profile):
        return value
    if isinstance(value, str):
        try:
            return PROFILES[value]
        except KeyError:
            raise InvalidArgumentError(f"unknown profile {value!r}; the profiles are {list(PROFILES)}") from None
    raise CueTypeError(f"profile must be a name or a Profile, got {type(value).__name__}")
