"""The approval queue's items (B4, B5): writes waiting for a person's decision."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..schema import Episode
from .gate import ApprovalReason

__all__ = ["Approval"]


@dataclass(frozen=True)
class Approval:
    """A write waiting in the approval queue.

    Attributes:
        id: The id the record gets if approved.
        reason: :class:`~cuemem.lifecycle.gate.ApprovalReason`: sensitive (a sensitive
            long-term write under a profile with approvals) or conflict (less confident
            than the current version).
        subject: The subject it would become the current version of.
        supersedes: The version current when it was queued.
        episode: The record as it would be written.
        requested_at: When it was queued.
        expires_at: When it lapses undecided.
    """

    id: str
    reason: ApprovalReason
    subject: str | None
    supersedes: str | None
    episode: Episode
    requested_at: datetime
    expires_at: datetime

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> Approval:
        """The item an ``approval`` journal record describes."""
        episode = Episode.from_json(record["episode"])
        return cls(
            id=str(record["id"]),
            reason=ApprovalReason(record["reason"]),
            subject=episode.subject,
            supersedes=record.get("supersedes"),
            episode=episode,
            requested_at=datetime.fromisoformat(str(record["requested_at"])),
            expires_at=datetime.fromisoformat(str(record["expires_at"])),
        )
