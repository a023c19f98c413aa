"""The write gate (B4, B5): what happens to a candidate write, decided from trust and state.

:func:`judge` is pure. Given what is about to be written, who wrote it, the current
version of its subject (if any) and the failure-cost profile, it returns a
:class:`Verdict`:

1. Trust by origin: the stored confidence is at most the origin's trust
   (:class:`~cuemem.lifecycle.profiles.Trust`), and an origin trusted less than
   ``profile.long_term_trust`` writes short-term instead of long-term.
2. Quarantine: a write nobody has reviewed that derives from external content (see
   :class:`~cuemem.lifecycle.writes.Admission`) is trusted as external content is, and
   never long-term by itself: it lands short-term and quarantined, and a version of a
   fact waits in the queue for a person (``untrusted``), so it never supersedes a
   reviewed fact on its own.
3. Long-term writes about a subject are versions. Saying the current version again
   is a repetition (nothing new is written). Under a profile with approvals, a
   sensitive write (a sensitive kind, or tagged ``sensitive``) waits in the approval
   queue. Otherwise a new fact with confidence >= the current version's supersedes
   it; a less confident one waits for review while the current version stays.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from ..schema import Kind, Origin, Tier
from .extract import plain
from .profiles import Profile, Trust

__all__ = ["Action", "ApprovalReason", "Current", "Verdict", "judge", "trusted"]

#: The tag that makes any long-term write sensitive.
SENSITIVE_TAG = "sensitive"

# Looked up once per process: the gate runs on every write.
_TRUST = {origin: Trust.of(origin) for origin in Origin}
_LONG, _SHORT = Tier.LONG, Tier.SHORT
_EXTERNAL = _TRUST[Origin.EXTERNAL]


class Action(str, enum.Enum):
    """What the gate does with a write."""

    WRITE = "write"
    SUPERSEDE = "supersede"
    QUEUE = "queue"
    REPEAT = "repeat"

    def __str__(self) -> str:
        return str(self.value)


class ApprovalReason(str, enum.Enum):
    """Why a write waits in the approval queue."""

    #: A long-term write of a sensitive kind (or tagged ``sensitive``) under a profile with approvals.
    SENSITIVE = "sensitive"
    #: Less confident than the current version of its subject.
    CONFLICT = "conflict"
    #: A version of a fact derived from external content: it waits for a person, whatever its confidence.
    UNTRUSTED = "untrusted"

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Current:
    """The current version of a subject, as far as the gate needs it."""

    id: str
    confidence: float
    narrative: str


@dataclass(frozen=True)
class Verdict:
    """The gate's decision.

    Attributes:
        action: Write, supersede, queue for a decision, or a repetition (no write).
        tier: The tier the record goes to (long-term may have become short-term).
        confidence: The confidence to store (capped by the origin's trust).
        versioned: Whether the write is a version of its subject.
        supersedes: The current version it replaces (or would, once approved).
        reason: For a queued write, why (:class:`ApprovalReason`).
    """

    action: Action
    tier: Tier
    confidence: float
    versioned: bool = False
    supersedes: str | None = None
    reason: ApprovalReason | None = None


def trusted(tier: Tier, origin: Origin, confidence: float, profile: Profile, quarantined: bool = False) -> tuple[Tier, float]:
    """Rules 1 and 2, trust by origin: the tier and confidence a write of ``origin`` may have.

    The stored confidence is at most the origin's trust; an origin trusted less than
    ``profile.long_term_trust`` writes short-term instead of long-term. A quarantined
    write is trusted at most as external content, and is never long-term.

    Example:
        >>> from cuemem.lifecycle.profiles import PROFILES
        >>> trusted(Tier.LONG, Origin.EXTERNAL, 0.9, PROFILES["medium"])
        (<Tier.SHORT: 'short'>, 0.3)
    """
    trust = _TRUST[origin]
    if quarantined:
        trust = min(trust, _EXTERNAL)
    if tier is _LONG and (quarantined or trust < profile.long_term_trust):
        tier = _SHORT
    return tier, confidence if confidence <= trust else trust


def judge(
    *,
    tier: Tier,
    kind: Kind,
    tags: Sequence[str],
    origin: Origin,
    confidence: float,
    subject: str | None,
    current: Current | None,
    narrative: str,
    profile: Profile,
    quarantined: bool = False,
) -> Verdict:
    """The gate's verdict on one write (see the module docstring for the rules).

    Example:
        >>> from cuemem.lifecycle.profiles import PROFILES
        >>> judge(tier=Tier.LONG, kind=Kind.SEMANTIC, tags=(), origin=Origin.AGENT, confidence=0.8,
        ...       subject="x", current=None, narrative="x is a y", profile=PROFILES["medium"]).tier
        <Tier.SHORT: 'short'>
    """
    if quarantined and tier is _LONG and subject is not None:  # a fact from external content: a person decides
        _, stored = trusted(tier, origin, confidence, profile)
        old = None if current is None else current.id
        if current is not None and plain(current.narrative) == plain(narrative):
            return Verdict(Action.REPEAT, tier, stored, versioned=True, supersedes=old)  # nothing new, nothing raised
        return Verdict(Action.QUEUE, tier, stored, versioned=True, supersedes=old, reason=ApprovalReason.UNTRUSTED)
    tier, stored = trusted(tier, origin, confidence, profile, quarantined)
    if tier is not Tier.LONG or subject is None:
        return Verdict(Action.WRITE, tier, stored)
    old = None if current is None else current.id
    if current is not None and plain(current.narrative) == plain(narrative):
        return Verdict(Action.REPEAT, tier, stored, versioned=True, supersedes=old)
    if profile.approval and (kind in profile.sensitive_kinds or SENSITIVE_TAG in tags):
        return Verdict(Action.QUEUE, tier, stored, versioned=True, supersedes=old, reason=ApprovalReason.SENSITIVE)
    if current is not None and stored < current.confidence:
        return Verdict(Action.QUEUE, tier, stored, versioned=True, supersedes=old, reason=ApprovalReason.CONFLICT)
    return Verdict(Action.SUPERSEDE if current is not None else Action.WRITE, tier, stored, versioned=True, supersedes=old)

