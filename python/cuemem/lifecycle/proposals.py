"""Maintenance proposals (D5): a job that would change or retire knowledge proposes instead.

A proposal is one ``proposal`` record in the journal (:func:`cuemem.store.records.proposal`):
what the job would commit, why, the evidence, and the sources it was made from, each
with the digest of its journal record then. It joins the one review queue
(:mod:`.review`, kind ``proposal``) and waits: nothing of it is applied until a person
or an agent accepts it, and the home's ``proposals/<id>.md`` shows it as plain text.

Accepting commits its records after one check — **the sources are as they were**: each
source still in the home, not retired, not superseded, with the same digest; each
record it would write still applies (an id still free, a version still replacing the
current one, a note still at the version it followed). Otherwise the acceptance is a
:class:`~cuemem.errors.ProposalConflictError` and nothing is written. Rejecting writes
only the decision. Nothing here deletes a journal record.

**Regret**: an accepted proposal is *regretted* when what it took out of recall (the
records it retired, the versions it superseded) is written again afterwards — the same
user's live record with the same text, recorded after the acceptance. The regret rate
of a job is its regretted proposals over its accepted ones (:func:`regret`).

The functions here are pure but for :func:`conflicts`, which reads a home through the
narrow methods every life-cycle module uses.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import yaml  # type: ignore[import-untyped, unused-ignore]

from ..errors import CorruptRecordError, MalformedRecordError
from ..schema import Episode, Note
from ..schema.frontmatter import render as render_front
from ..store import kinds
from ..store import records as rec
from .state import ACCEPTED, LifecycleState

if TYPE_CHECKING:
    from ..home.home import Home

__all__ = [
    "JobRegret",
    "Proposal",
    "ProposalSource",
    "ProposalStatus",
    "checked_records",
    "conflicts",
    "proposal_id",
    "regret",
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
        for r, parsed in _parsed(self.records):
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
                    out.append(f"a {str(r.get('op'))[:40]} record cuemem did not write (accepting it is refused)")
        return out


def _parsed(records: Iterable[rec.Record]) -> list[tuple[rec.Record, kinds.TypedRecord | None]]:
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


def conflicts(proposal: Proposal, home: Home) -> list[str]:
    """Why ``proposal`` no longer applies to ``home`` (empty: it does).

    A source is gone, retired, superseded or its journal record's digest differs; or a
    record it would write meets a home that moved on (an id taken, a version or a note
    that is no longer the one it followed).
    """
    state = home.lifecycle
    out: list[str] = []
    for s in proposal.sources:
        if s.id.startswith(NOTE_SOURCE):
            nid = s.id[len(NOTE_SOURCE):]
            known = home.note_versions.get(nid)
            if known is None or known[1] != s.sha256:
                out.append(f"note {nid} changed since (its file's digest differs)")
        elif s.id not in home:
            out.append(f"{s.id} is not in the home")
        elif s.id in state.retired:
            out.append(f"{s.id} was retired since ({state.retired[s.id]})")
        elif s.id in state.superseded_by:
            out.append(f"{s.id} was superseded by {state.superseded_by[s.id]} since")
        elif home.digest(s.id) != s.sha256:
            out.append(f"{s.id} does not hold what the proposal was made from (its digest differs)")
    written: set[str] = set()
    notes: dict[str, int] = {}  # note id -> the version it is at, as the records go
    for _, r in _parsed(proposal.records):  # one that cuemem did not write: checked_records refuses it
        match r:
            case kinds.RememberRecord(episode=episode):
                eid = str(episode["id"])
                if home.id_taken(eid):
                    out.append(f"{eid} is taken since")
                written.add(eid)
            case kinds.VersionRecord():
                current = state.current(r.subject)
                if (None if current is None else current.id) != r.supersedes:
                    out.append(f"the current version of {r.subject!r} is {None if current is None else current.id} now, not {r.supersedes}")
            case kinds.RetireRecord():
                out.extend(f"{i} was retired since" for i in r.ids if i in state.retired)
            case kinds.NoteRecord():
                if r.id not in notes:
                    known = home.note_versions.get(r.id)
                    notes[r.id] = 0 if known is None else known[0]
                if notes[r.id] + 1 != r.version:
                    out.append(f"note {r.id} is at version {notes[r.id]} now, not {r.version - 1}")
                notes[r.id] = r.version
    return list(dict.fromkeys(out))


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
    for _, r in _parsed(proposal.records):
        match r:
            case kinds.RetireRecord():
                out.extend(r.ids)
            case kinds.VersionRecord(supersedes=str() as old) if old:
                out.append(old)
    return list(dict.fromkeys(out))


def regret(state: LifecycleState, came_back: Callable[[str, datetime], bool]) -> list[JobRegret]:
    """Per job (sorted by name): its proposals by status, and how many accepted ones were
    regretted — ``came_back(id, accepted_at)`` says whether record ``id``'s content was
    written again after ``accepted_at``."""
    counts: dict[str, list[int]] = {}
    for pid, record in state.proposals.items():
        verdict = state.proposal_verdicts.get(pid)
        p = Proposal.of(record, verdict)
        c = counts.setdefault(p.job, [0, 0, 0, 0])
        if verdict is None:
            c[0] += 1
        elif verdict[0] == ACCEPTED:
            c[1] += 1
            assert p.decided_at is not None
            at = p.decided_at
            if any(came_back(i, at) for i in undone(p)):
                c[3] += 1
        else:
            c[2] += 1
    return [JobRegret(job, *c) for job, c in sorted(counts.items())]


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
    lines = [
        "---", (render_front(front) or yaml.safe_dump(front, sort_keys=False, allow_unicode=True)).rstrip("\n"), "---",
        _HEADER.rstrip("\n"), "",
        f"# {proposal.summary}", "", f"**Why:** {proposal.why}", "", "## Evidence", "",
        *[f"- {e}" for e in proposal.evidence], "", "## Accepting writes", "", *[f"- {c}" for c in proposal.changes()], "",
    ]
    return "\n".join(lines)


def ordered(proposals: Sequence[Proposal]) -> list[Proposal]:
    """Oldest first, then by id."""
    return sorted(proposals, key=lambda p: (p.made_at, p.id))
