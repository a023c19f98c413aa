"""``write_note`` through the trust rules: a note's provenance, and who may replace a trusted note.

A note version gets its provenance as every write does (:mod:`.writes`), from the call
and never from its content: it is tainted and unreviewed when its origin is external,
when its session is tainted (an external note taints its session, as any external
write does: :meth:`Admission.session_taint <.writes.Admission.session_taint>`), when a
record it cites is tainted or unreviewed (:func:`~.writes.source_trust`), or when the
note's current version is tainted (a new version derives from it).

**A tainted version never replaces a reviewed one.** Written over a note whose current
version is reviewed — a person's note, say — it becomes a pending version: one
``proposal`` of ``write_note`` (action ``replace``) holding the note record, sourced on
the note as journaled (``note:<id>`` and its digest), waiting in the one review queue.
The note's file, its journaled version and ``MEMORY.md`` stay as they were until a
person accepts it (and a person's edit of the file meanwhile makes the proposal a
conflict, never overwritten). A person's pending edit of the file is journaled first, as
on every write. A tainted version of a note that is itself unreviewed (or new) is
written as before: there is no trusted version to keep.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import CuememError
from ..home.scope import DEFAULT_USER
from ..schema import Note, Origin
from ..store import records as rec
from ..store.note_versions import next_versions
from ..store.proposals import NOTE_SOURCE, proposal_id
from .writes import Admission, source_trust

if TYPE_CHECKING:
    from ..home.home import Home

__all__ = ["NoteWrite", "JOB", "note_write"]

#: The ``job`` of the proposal a tainted version of a reviewed note becomes.
JOB = "write_note"


class NoteWrite(NamedTuple):
    """What a ``write_note`` commits, and the version it writes (or proposes)."""

    note: Note
    records: list[rec.Record]
    proposal: str | None


def note_write(home: Home, admission: Admission, fields: dict[str, Any], session: str | None) -> NoteWrite:
    """The records that write ``fields`` (``Note.create``'s keywords) as the next version of
    its note in ``home`` at ``admission.at`` (the batch's admission: its session taint), under
    the rules of the module docstring.

    Raises:
        SchemaError, InvalidIdError: a field breaks the note schema (nothing to write).
    """
    at = admission.at
    nid = fields.get("id")
    known = isinstance(nid, str) and nid in home.notes.versions
    current = _current(home, nid) if isinstance(nid, str) and known else None
    tainted, records = admission.session_taint(session, DEFAULT_USER, None, fields.get("origin") == Origin.EXTERNAL.value)
    sources = fields.get("sources")
    cited = [s for s in sources if isinstance(s, str)] if isinstance(sources, (list, tuple)) else []  # else: Note.create refuses it
    if cited and not tainted:
        taint, reviewed = source_trust(home, cited, None)
        tainted = taint or not reviewed
    if known and not tainted:
        tainted = current is None or current.taint  # a broken current version: unknown provenance
    if tainted:
        fields = {**fields, "taint": True, "reviewed": False}
    notes = next_versions(home.notes.files, home.notes.versions, fields, at)
    records.extend(rec.note(n) for n in notes)
    new = notes[-1]
    if not tainted or not known or (current is not None and not current.reviewed):
        return NoteWrite(new, records, None)
    # A tainted version over a reviewed note: proposed, not written.
    assert isinstance(nid, str)
    version = records.pop()
    journaled = records[-1]["sha256"] if len(notes) > 1 else home.notes.versions[nid][1]  # after a person's pending edit, if any
    pid = proposal_id(JOB, "replace", [nid, str(new.version), str(version["sha256"])])
    if pid not in home.lifecycle.proposals:  # the same version proposed again waits (or was decided) once
        records.append(rec.proposal(
            pid, job=JOB, action="replace", user=DEFAULT_USER,
            summary=f"Replace note {nid} with a tainted version (origin {new.origin.value}{'' if session is None else f', session {session}'})",
            why="A tainted version (external origin, a tainted session or tainted sources) never replaces a reviewed note "
                "on its own: a person decides.",
            evidence=[f"proposed: {new.body[:400]!r}"], sources=[(f"{NOTE_SOURCE}{nid}", str(journaled))], records=[version], at=at,
        ))
    return NoteWrite(new, records, pid)


def _current(home: Home, nid: str) -> Note | None:
    """Note ``nid`` as its file holds it now (a person's pending edit is its current version), or None if broken."""
    try:
        return home.notes.read(nid)
    except CuememError:
        return None
