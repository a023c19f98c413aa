"""What a forget did, or would do: the receipt."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["ForgetReceipt", "Kept"]


@dataclass(frozen=True)
class Kept:
    """Something a forget could not remove, and why (it is reported, never silently edited).

    Attributes:
        kind: ``"note"``: a person's note that cites or quotes a forgotten record.
        id: Its id.
        why: What ties it to the forgotten records.
    """

    kind: str
    id: str
    why: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "id": self.id, "why": self.why}


@dataclass(frozen=True)
class ForgetReceipt:
    """The receipt of :meth:`cuemem.Memory.forget` (with ``dry_run``, its plan).

    Attributes:
        id: The receipt's id (its ``forget`` record in the journal).
        dry_run: Nothing was changed: this is what the forget would do.
        retention: ``"erase"`` (the content is gone from every file of the home: only a
            tombstone with the id and a content hash is left) or ``"retire"`` (out of
            every recall path, kept in the journal for audit).
        target: What was asked for: ``{"kind", "values", "user"}``.
        at: When.
        forgotten: Every record forgotten, in journal order: the target's and their
            derivatives (consolidated records and rungs that quoted them).
        derivatives: Those of ``forgotten`` that were derived from others.
        rederived: Derivative id -> the id of its successor, made again from the
            sources that remain.
        notes: Notes forgotten with them (a rung's, a policy mined from their outcomes).
        policies: Of ``notes``, the mined policies made again from the outcomes that remain.
        approvals: Queued writes dropped (they named the target).
        kept: What could not be removed, and why.
        lines: Journal lines overwritten with tombstones (``erase``).
    """

    id: str
    dry_run: bool
    retention: str
    target: dict[str, Any]
    at: datetime
    forgotten: tuple[str, ...]
    derivatives: tuple[str, ...] = ()
    rederived: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    policies: tuple[str, ...] = ()
    approvals: tuple[str, ...] = ()
    kept: tuple[Kept, ...] = ()
    lines: int = 0

    def to_json(self) -> dict[str, Any]:
        """The receipt as JSON-ready values."""
        return {
            "id": self.id, "dry_run": self.dry_run, "retention": self.retention, "target": self.target, "at": self.at.isoformat(),
            "forgotten": list(self.forgotten), "derivatives": list(self.derivatives), "rederived": dict(self.rederived),
            "notes": list(self.notes), "policies": list(self.policies), "approvals": list(self.approvals),
            "kept": [k.to_json() for k in self.kept], "lines": self.lines,
        }
