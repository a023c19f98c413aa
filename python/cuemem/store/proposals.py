"""Maintenance proposals (D5) as the journal holds them: a job that would change or retire knowledge proposes instead.

A proposal is one ``proposal`` record in the journal (:func:`cuemem.store.records.proposal`):
what the job would commit, why, the evidence, and the sources it was made from, each
with the digest of its journal record then. It joins the one review queue
(:mod:`cuemem.lifecycle.review`, kind ``proposal``) and waits: nothing of it is applied until a person
or an agent accepts it, and the home's ``proposals/<id>.md`` shows it as plain text
(:func:`render`). Whether it still applies and how often a job's accepted proposals are
regretted are the life-cycle's questions (:mod:`cuemem.lifecycle.proposals`).

The types and functions here are pure: the home, the life-cycle, the jobs and the facade
share them.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import CorruptRecordError, MalformedRecordError
from ..schema.frontmatter import render as render_front
from . import kinds
from . import records as rec

__all__ = [
    "JobRegret",
    "Proposal",
    "ProposalSource",
    "ProposalStatus",
    "checked_records",
    "ordered",
    "parsed_records",
    "proposal_id",
    "render",
    "undone",
]


#: The prefix of a source that is a note (``note:<id>``, with its journaled file digest), not a record.
NOTE_SOURCE = "note:"


class ProposalStatus(str, enum.Enum):
    """Where a proposal stands."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    REJECTED = "rejected"

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class ProposalSource:
    """A record a proposal was made from, and the digest of its journal record then."""

    id: str
    sha256: str


@dataclass(frozen=True)
class Proposal:
    """One maintenance proposal.

    Attributes:
        id: What :meth:`~cuemem.Memory.accept` and :meth:`~cuemem.Memory.reject` take.
        job: The job that made it (``"dedupe"``, ``"expire"``, ``"consolidate"``, ...).
        action: What it would do (``"merge"``, ``"retire"``, ``"derive"``).
        user: Whose memories it is about.
        summary: One line: what it would do.
        why: Why the job proposes it.
        evidence: What the job saw, one line each.
        sources: The records it was made from, with their digests then.
        records: The journal records accepting it commits.
        made_at: When the job made it.
        status: Pending, accepted or rejected.
        decided_at: When it was decided (None while pending).
    """

    id: str
    job: str
    action: str
    user: str
    summary: str
    why: str
    evidence: tuple[str, ...]
    sources: tuple[ProposalSource, ...]
    records: tuple[rec.Record, ...]
    made_at: datetime
    status: ProposalStatus
    decided_at: datetime | None

    @classmethod
    def of(cls, record: Mapping[str, Any], verdict: tuple[str, str] | None) -> Proposal:
        """The proposal a ``proposal`` record (checked by the applier) holds, with its verdict."""
        made = kinds.parse(record, kinds.ProposalRecord, trusted=True)
        return cls(
            id=made.id, job=made.job, action=made.action, user=made.user, summary=made.summary, why=made.why,
            evidence=made.evidence, sources=tuple(ProposalSource(i, d) for i, d in made.sources),
            records=tuple(dict(r) for r in made.records), made_at=made.at,
            status=ProposalStatus.PENDING if verdict is None else ProposalStatus(verdict[0]),
            decided_at=None if verdict is None else datetime.fromisoformat(verdict[1]),
        )

    def changes(self) -> list[str]:
        """What accepting it writes, one line per record."""
        out = []
        for r, parsed in parsed_records(self.records):
            match parsed:
                case kinds.RetireRecord():
                    out.append(f"retire {', '.join(parsed.ids)} ({parsed.reason})")
                case kinds.RememberRecord(episode=episode):
                    out.append(f"write {episode.get('id')}: {str(episode.get('narrative'))[:120]!r}")
                case kinds.VersionRecord():
                    out.append(
                        f"make {parsed.id} the current version of {parsed.subject!r}" + (f" (after {parsed.supersedes})" if parsed.supersedes else "")
                    )
                case kinds.NoteRecord():
                    out.append(f"write version {parsed.version} of note {parsed.id}")
                case None:
                    out.append(f"a {rec.op_of(r)} record cuemem did not write (accepting it is refused)")
        return out


def parsed_records(records: Iterable[rec.Record]) -> list[tuple[rec.Record, kinds.TypedRecord | None]]:
    """Each record a proposal holds with what :func:`~cuemem.store.kinds.parse` reads of it
    (None for one that is not as cuemem writes it: accepting the proposal is refused)."""
    out: list[tuple[rec.Record, kinds.TypedRecord | None]] = []
    for r in records:
        try:
            out.append((r, kinds.parse(r)))
        except MalformedRecordError:
            out.append((r, None))
    return out


def proposal_id(job: str, action: str, parts: Iterable[str]) -> str:
    """The id of the proposal of ``job`` doing ``action`` about ``parts`` (the same proposal
    made twice has the same id, so a job never proposes it again)."""
    seed = "|".join([job, action, *sorted(parts)])
    return "pr-" + hashlib.blake2b(seed.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


# -- accepting ---------------------------------------------------------------------


def checked_records(proposal: Proposal) -> list[rec.Record]:
    """What accepting ``proposal`` commits, each record checked as cuemem writes it (a
    proposal record is read back from the journal, which a person may have edited).

    Raises:
        CorruptRecordError: a record that cuemem did not write.
    """
    try:
        return [kinds.checked(r, rec.PROPOSABLE_OPS).to_json() for r in proposal.records]
    except MalformedRecordError as exc:
        raise CorruptRecordError(f"proposal {proposal.id} holds a record cuemem did not write: {exc}") from None


# -- regret ------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRegret:
    """The proposals of one job: how many wait, how many were accepted and rejected (the
    acceptance rate, :attr:`acceptance`), and how many accepted ones were regretted."""

    job: str
    pending: int
    accepted: int
    rejected: int
    regretted: int

    @property
    def rate(self) -> float | None:
        """Regretted over accepted (None before anything was accepted)."""
        return None if not self.accepted else self.regretted / self.accepted

    @property
    def decided(self) -> int:
        """Accepted and rejected: the proposals a person (or an agent) answered."""
        return self.accepted + self.rejected

    @property
    def acceptance(self) -> float | None:
        """Accepted over decided: how often what the job proposes is taken (None before any decision)."""
        return None if not self.decided else self.accepted / self.decided

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the command line's shape)."""
        return {"job": self.job, "pending": self.pending, "accepted": self.accepted, "rejected": self.rejected,
                "acceptance_rate": self.acceptance, "regretted": self.regretted, "regret_rate": self.rate}


def undone(proposal: Proposal) -> list[str]:
    """The records accepting ``proposal`` takes out of recall: those it retires, the versions it supersedes."""
    out: list[str] = []
    for _, r in parsed_records(proposal.records):
        match r:
            case kinds.RetireRecord():
                out.extend(r.ids)
            case kinds.VersionRecord(supersedes=str() as old) if old:
                out.append(old)
    return list(dict.fromkeys(out))


# -- the file a person reads ---------------------------------------------------------

_HEADER = (
    "<!-- A maintenance proposal of cuemem. The journal holds it: editing this file changes nothing. "
    "Decide it with `cuemem review accept ID` or `cuemem review reject ID`. -->\n"
)


def render(proposal: Proposal) -> str:
    """``proposals/<id>.md``: YAML front matter (id, job, action, status, sources and their
    digests), then what it would do, why, the evidence and what accepting writes."""
    front = {
        "id": proposal.id, "job": proposal.job, "action": proposal.action, "user": proposal.user, "status": proposal.status.value,
        "made_at": proposal.made_at.isoformat(),
        "decided_at": None if proposal.decided_at is None else proposal.decided_at.isoformat(),
        "sources": [{"id": s.id, "sha256": s.sha256} for s in proposal.sources],
    }
    matter = render_front(front)
    if matter is None:
        import yaml  # type: ignore[import-untyped, unused-ignore]

        matter = yaml.safe_dump(front, sort_keys=False, allow_unicode=True)
    lines = [
        "---", matter.rstrip("\n"), "---",
        _HEADER.rstrip("\n"), "",
        f"# {proposal.summary}", "", f"**Why:** {proposal.why}", "", "## Evidence", "",
        *[f"- {e}" for e in proposal.evidence], "", "## Accepting writes", "", *[f"- {c}" for c in proposal.changes()], "",
    ]
    return "\n".join(lines)


def ordered(proposals: Sequence[Proposal]) -> list[Proposal]:
    """Oldest first, then by id."""
    return sorted(proposals, key=lambda p: (p.made_at, p.id))
