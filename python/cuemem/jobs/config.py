"""The thresholds of the life-cycle jobs, as frozen dataclasses with the documented defaults.

A failure-cost profile supplies its own values by building these with other numbers;
every job takes its config as an argument and reads nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from .. import _scalars
from ..errors import InvalidArgumentError
from ..lifecycle.profiles import PROFILES, Profile

__all__ = ["DEFAULT_SHORT_TTL", "ConsolidationConfig", "DistillationConfig", "TtlFn", "default_ttl"]

#: How long a short-term item lives unless its type or kind says otherwise (the medium profile's).
DEFAULT_SHORT_TTL = PROFILES["medium"].short_ttl

#: (type, kind of memory) -> how long a short-term item of that type and kind lives
#: (``None``: it never expires). ``Profile.ttl`` of :mod:`cuemem.lifecycle.profiles` is one.
TtlFn = Callable[[str, str], "timedelta | None"]


def default_ttl(type: str, kind: str) -> timedelta | None:
    """The short-term TTL of a type and kind under the medium profile (the one TTL rule:
    :meth:`cuemem.lifecycle.profiles.Profile.ttl`): a price 30 minutes, a preference 7
    days, an attribute never, anything else 14 days."""
    return PROFILES["medium"].ttl(type, kind)


def _unit(config: object, name: str) -> None:
    """Holds ``config.name`` to a real number in [0, 1], kept as a float."""
    value = getattr(config, name)
    number = _scalars.as_real(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise InvalidArgumentError(f"{name} must be a number in [0, 1], got {value!r}")
    object.__setattr__(config, name, number)


def _count(config: object, name: str, least: int = 1) -> None:
    """Holds ``config.name`` to an integer >= ``least``, kept as an int."""
    value = getattr(config, name)
    number = _scalars.as_int(value)
    if number is None or number < least:
        raise InvalidArgumentError(f"{name} must be an integer >= {least}, got {value!r}")
    object.__setattr__(config, name, number)


@dataclass(frozen=True)
class ConsolidationConfig:
    """When short-term items are promoted to long-term memory (D1).

    Attributes:
        min_occurrences: Members a group needs to be promoted by repetition.
        salience_floor: Strongest axis (as written) at which one member promotes its
            group by intensity.
        min_confidence: Members below this confidence are left out of every group.
        key_chars: Without a subject, items group by this many leading characters of
            their narrative (case-folded, whitespace collapsed).
        ttl: (type, kind) -> TTL of a short-term item; expired items are not consolidated.

    Raises:
        InvalidArgumentError: a threshold outside its domain.
    """

    min_occurrences: int = 2
    salience_floor: float = 0.8
    min_confidence: float = 0.4
    key_chars: int = 60
    ttl: TtlFn = field(default=default_ttl, compare=False)

    def __post_init__(self) -> None:
        _count(self, "min_occurrences")
        _unit(self, "salience_floor")
        _unit(self, "min_confidence")
        _count(self, "key_chars")
        if not callable(self.ttl):
            raise InvalidArgumentError(f"ttl must be a function of the type and kind, got {type(self.ttl).__name__}")

    @classmethod
    def of(cls, profile: Profile) -> ConsolidationConfig:
        """The thresholds and TTLs a failure-cost profile sets."""
        return cls(
            min_occurrences=profile.min_occurrences, salience_floor=profile.salience_floor,
            min_confidence=profile.min_confidence, ttl=profile.ttl,
        )


@dataclass(frozen=True)
class DistillationConfig:
    """When old, unreferenced memories climb one rung of the abstraction ladder (D2).

    Attributes:
        floor: A memory whose strongest axis, decayed to ``now``, is below this is
            abstracted.
        min_age_days: Only memories that occurred at least this many days before
            ``now`` are old enough.
        max_sources: At most this many memories are abstracted per run, in journal
            order (a freshly imported backlog is worked off over successive runs).
        sample: Source narratives quoted by the extractive summary of a rung.

    Raises:
        InvalidArgumentError: a threshold outside its domain.
    """

    floor: float = 0.35
    min_age_days: float = 7.0
    max_sources: int = 50_000
    sample: int = 3

    def __post_init__(self) -> None:
        _unit(self, "floor")
        days = _scalars.as_real(self.min_age_days)
        if days is None or not 0 <= days < float("inf"):
            raise InvalidArgumentError(f"min_age_days must be a finite number >= 0, got {self.min_age_days!r}")
        object.__setattr__(self, "min_age_days", days)
        _count(self, "max_sources")
        _count(self, "sample")
