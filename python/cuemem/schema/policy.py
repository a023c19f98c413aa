"""A policy (D3): a cause, the outcome it led to, its evidence and its confidence."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from .enums import _StrEnum

__all__ = ["Cause", "Polarity", "Policy", "cause_key", "confidence"]

#: A cause: ``(dimension, value)`` cues, sorted. All must hold for the policy to apply.
Cause = tuple[tuple[str, str], ...]


class Polarity(_StrEnum):
    """What a policy asks for: avoid a cause of bad outcomes, or repeat one of good ones."""

    MITIGATE = "mitigate"
    REINFORCE = "reinforce"

    @property
    def opposite(self) -> Polarity:
        return Polarity.REINFORCE if self is Polarity.MITIGATE else Polarity.MITIGATE


def confidence(count: int, salience_sum: float) -> float:
    """``min(1, count / (count + 1) + salience_sum / (count * 4))``, the policy confidence of D3.

    ``count`` is the number of supporting episodes (at least 1) and ``salience_sum`` the
    sum of their composite salience.

    Example:
        >>> confidence(2, 1.0), confidence(3, 0.0), confidence(9, 36.0)
        (0.7916666666666666, 0.75, 1.0)
    """
    return min(1.0, count / (count + 1) + salience_sum / (count * 4))


def cause_key(cause: Cause) -> str:
    """The cause as one readable string, ``dim=value & dim=value``, in cause order."""
    return " & ".join(f"{d}={v}" for d, v in cause)


@dataclass(frozen=True, slots=True)
class Policy:
    """A rule for the next decision, with the episodes that taught it.

    Mined policies (``generated``) come from :func:`~cuemem.policy.distill_policies`;
    a person may also write one as a note of kind ``policy``.
    """

    id: str
    polarity: Polarity
    #: The cues that must all hold in a situation for the policy to apply.
    cause: Cause
    #: What the policy says, in words.
    statement: str
    #: Ids of the episodes that support it (the outcome happened under the cause).
    evidence: tuple[str, ...]
    #: Ids of episodes under the same cause with the other outcome.
    counter_examples: tuple[str, ...]
    confidence: float
    #: Sum of the composite salience of the supporting episodes.
    salience_sum: float
    #: Dates of the first and last supporting episode (None for a hand-written policy).
    span: tuple[date, date] | None
    #: The users whose episodes support it.
    scope: tuple[str, ...]
    generated: bool = True
    #: What the policy is about; defaults to its cause as :func:`cause_key` writes it.
    subject: str = ""
    #: Derived from external content (B3): some supporting episode is tainted.
    taint: bool = False
    #: Ids of the policies this one contradicts.
    contradicts: tuple[str, ...] = ()

    @property
    def support(self) -> int:
        """How many episodes support the policy."""
        return len(self.evidence)

    def __post_init__(self) -> None:
        if not self.subject:
            object.__setattr__(self, "subject", cause_key(self.cause))

    def applies(self, situation: Mapping[str, Sequence[str]]) -> bool:
        """Whether every cue of the cause holds in ``situation`` (dimension -> values).

        A policy without a cause applies nowhere.
        """
        return bool(self.cause) and all(v in situation.get(d, ()) for d, v in self.cause)
