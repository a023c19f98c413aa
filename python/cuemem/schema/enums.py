"""The closed vocabularies of the schema, as str-valued enums.

Each enum also inherits ``str``: ``Outcome("positive") is Outcome.POSITIVE``, a member
compares equal to its value, and ``json.dumps`` writes the value.
"""

from __future__ import annotations

import enum

from .fields import unit

__all__ = ["Band", "Kind", "Level", "Origin", "Outcome", "Tier", "band_of"]


class _StrEnum(str, enum.Enum):
    """A str-valued enum whose ``str()`` is its value."""

    def __str__(self) -> str:
        return str(self.value)


class Outcome(_StrEnum):
    """How an episode turned out (A1)."""

    POSITIVE = "positive"
    NEGATIVE = "negative"
    PENDING = "pending"
    NONE = "none"


class Kind(_StrEnum):
    """What sort of memory a record holds (A3)."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"
    PREFERENCE = "preference"
    POLICY = "policy"


class Level(_StrEnum):
    """The rung of the abstraction ladder, raw to policy (D2)."""

    RAW = "raw"
    SUMMARY = "summary"
    PATTERN = "pattern"
    PRINCIPLE = "principle"
    POLICY = "policy"


class Tier(_StrEnum):
    """The memory tier a record lives in (D4)."""

    WORKING = "working"
    SHORT = "short"
    LONG = "long"


class Origin(_StrEnum):
    """Who wrote a record (B3)."""

    USER = "user"
    AGENT = "agent"
    EXTERNAL = "external"
    JOB = "job"


class Band(_StrEnum):
    """The importance band derived from ``importance`` (A1)."""

    HIGH = "high"
    MED = "med"
    LOW = "low"


#: ``importance`` at or above which the band is high.
BAND_HIGH = 0.7
#: ``importance`` at or above which the band is at least med.
BAND_MED = 0.4


def band_of(importance: float) -> Band:
    """The importance band: high at ``>= 0.7``, med at ``>= 0.4``, low below.

    Example:
        >>> band_of(0.7), band_of(0.4), band_of(0.39)
        (<Band.HIGH: 'high'>, <Band.MED: 'med'>, <Band.LOW: 'low'>)

    Args:
        importance: a number in [0, 1].

    Raises:
        SchemaError: ``importance`` is not a finite number in [0, 1].
    """
    value = unit(importance, "importance")
    if value >= BAND_HIGH:
        return Band.HIGH
    if value >= BAND_MED:
        return Band.MED
    return Band.LOW


#: The episode types cuemem's own corpora use (the bench's and the demo's); the
#: ``type`` field itself is open vocabulary.
COMMON_TYPES: tuple[str, ...] = (
    "note",
    "meeting",
    "decision",
    "incident",
    "deal",
    "call",
    "email",
    "review",
    "plan",
    "bug",
    "release",
    "hire",
)
