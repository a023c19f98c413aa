"""What each life-cycle job changed, as frozen reports (also journaled as ``job`` records)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["ConsolidationReport", "DedupeReport", "DistillationReport", "JobReport", "MaintenanceReport", "RunReport"]


@dataclass(frozen=True)
class ConsolidationReport:
    """The outcome of :meth:`cuemem.Memory.consolidate`.

    Attributes:
        ran_at: The ``now`` it ran at.
        considered: Short-term items not yet consolidated that were read.
        promoted: Ids of the long-term records written, by group key.
        sources: Short-term items those records cite.
        by_repetition: Records promoted because their group repeated.
        by_intensity: Records promoted because a member was intense enough.
        proposed: Ids of the proposals written instead (the high profile), one per promotion.
    """

    ran_at: datetime
    considered: int
    promoted: tuple[str, ...]
    sources: int
    by_repetition: int
    by_intensity: int
    proposed: tuple[str, ...] = ()

    job = "consolidate"

    def summary(self) -> dict[str, Any]:
        """The report as JSON-ready values (what the journal's ``job`` record holds)."""
        return {
            "considered": self.considered,
            "promoted": list(self.promoted),
            "sources": self.sources,
            "by_repetition": self.by_repetition,
            "by_intensity": self.by_intensity,
            **({"proposed": list(self.proposed)} if self.proposed else {}),
        }

    def __str__(self) -> str:
        return (
            f"consolidated {self.sources} short-term item(s) into {len(self.promoted)} long-term record(s) "
            f"({self.by_repetition} by repetition, {self.by_intensity} by intensity; {self.considered} considered)"
        )


@dataclass(frozen=True)
class DistillationReport:
    """The outcome of :meth:`cuemem.Memory.distill`.

    Attributes:
        ran_at: The ``now`` it ran at.
        scanned: Rows the full decay pass covered.
        candidates: Old, unreferenced memories found below the floor.
        abstracted: Of those, the memories this run abstracted (at most ``max_sources``).
        deferred: Candidates left for a later run by ``max_sources``.
        rungs: Ids of the rungs written.
        by_level: Level -> rungs written at that level.
        proposed: Ids of the proposals written instead of rungs (the high profile).
    """

    ran_at: datetime
    scanned: int
    candidates: int
    abstracted: int
    deferred: int
    rungs: tuple[str, ...]
    by_level: dict[str, int] = field(default_factory=dict)
    proposed: tuple[str, ...] = ()

    job = "distill"

    def summary(self) -> dict[str, Any]:
        """The report as JSON-ready values (what the journal's ``job`` record holds)."""
        return {
            "scanned": self.scanned,
            "candidates": self.candidates,
            "abstracted": self.abstracted,
            "deferred": self.deferred,
            "rungs": list(self.rungs),
            "by_level": dict(self.by_level),
            **({"proposed": list(self.proposed)} if self.proposed else {}),
        }

    def __str__(self) -> str:
        levels = ", ".join(f"{n} {lvl}" for lvl, n in self.by_level.items()) or "none"
        return (
            f"distilled {self.abstracted} of {self.candidates} faded memories into {len(self.rungs)} rung(s) ({levels}); "
            f"{self.deferred} deferred; {self.scanned} scanned"
        )


#: Any job's report.
JobReport = Any


@dataclass(frozen=True)
class RunReport:
    """The run of a job whose own report belongs to another API (expiry, policies).

    Attributes:
        job: The job's name.
        ran_at: The ``now`` it ran at.
        counts: What it changed, as counts (what the journal's ``job`` record holds).
        detail: The report of the call it made (``Memory.expire``, ``Memory.distill_policies``).
    """

    job: str
    ran_at: datetime
    counts: dict[str, int]
    detail: Any = field(compare=False, repr=False)

    def summary(self) -> dict[str, Any]:
        """The counts, JSON-ready."""
        return dict(self.counts)

    def __str__(self) -> str:
        return ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in self.counts.items())


@dataclass(frozen=True)
class MaintenanceReport:
    """The outcome of :meth:`cuemem.Memory.maintain`: the jobs that were due, in order.

    Attributes:
        ran_at: The ``now`` it ran at.
        ran: ``(job name, its report)`` for each job that was due and ran.
        not_due: Names of the jobs that were not due.
    """

    ran_at: datetime
    ran: tuple[tuple[str, JobReport], ...]
    not_due: tuple[str, ...]

    def __str__(self) -> str:
        if not self.ran:
            return f"nothing due at {self.ran_at.isoformat()}"
        return "\n".join(f"{name}: {report}" for name, report in self.ran)


@dataclass(frozen=True)
class DedupeReport:
    """The outcome of :meth:`cuemem.Memory.dedupe`: duplicates proposed, never merged.

    Attributes:
        ran_at: The ``now`` it ran at.
        checked: Memories new since the last run that were judged against the memories of their identity.
        compared: Pairs judged.
        proposed: Ids of the merge proposals written (one per group of duplicates).
        rows: Where the next run starts: the home's rows when it ran, or the first new
            memory whose duplicate waited in a pending merge.
    """

    ran_at: datetime
    checked: int
    compared: int
    proposed: tuple[str, ...]
    rows: int

    job = "dedupe"

    def summary(self) -> dict[str, Any]:
        """The report as JSON-ready values (what the journal's ``job`` record holds)."""
        return {"checked": self.checked, "compared": self.compared, "proposed": list(self.proposed), "rows": self.rows}

    def __str__(self) -> str:
        return f"proposed {len(self.proposed)} merge(s) of duplicates ({self.checked} new memories checked, {self.compared} pairs judged)"
