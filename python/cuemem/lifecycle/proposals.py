"""Maintenance proposals (D5): a job that would change or retire knowledge proposes instead.

A proposal (:mod:`cuemem.store.proposals`: its record, its file) joins the one review queue
(:mod:`.review`, kind ``proposal``) and waits until a person or an agent decides it.

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

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from ..home.state import ACCEPTED, LifecycleState
from ..store import kinds
from ..store.proposals import NOTE_SOURCE, JobRegret, Proposal, parsed_records, undone

if TYPE_CHECKING:
    from ..home.home import Home

__all__ = ["conflicts", "regret"]


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
            known = home.notes.versions.get(nid)
            if known is None or known[1] != s.sha256:
                out.append(f"note {nid} changed since (its file's digest differs)")
        elif s.id not in home:
            out.append(f"{s.id} is not in the home")
        elif s.id in state.retired:
            out.append(f"{s.id} was retired since ({state.retired[s.id]})")
        elif s.id in state.superseded_by:
            out.append(f"{s.id} was superseded by {state.superseded_by[s.id]} since")
        elif home.rows.digest(s.id) != s.sha256:
            out.append(f"{s.id} does not hold what the proposal was made from (its digest differs)")
    written: set[str] = set()
    notes: dict[str, int] = {}  # note id -> the version it is at, as the records go
    for _, r in parsed_records(proposal.records):  # one that cuemem did not write: checked_records refuses it
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
                    known = home.notes.versions.get(r.id)
                    notes[r.id] = 0 if known is None else known[0]
                if notes[r.id] + 1 != r.version:
                    out.append(f"note {r.id} is at version {notes[r.id]} now, not {r.version - 1}")
                notes[r.id] = r.version
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
