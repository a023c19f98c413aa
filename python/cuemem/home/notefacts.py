"""The note files proved as journaled: what a reader of every note may learn without reading them.

A view that draws on the notes (``MEMORY.md``) need not re-read 31,000 files after each
commit when the store can prove every file is the version the journal holds, as the
store last saw it: one survey of the directory (a stat per file, in the core; see
:meth:`cuemem.store.notes.NoteStore.survey` for its limit), no file added, missing or
edited by hand (:meth:`Notebook.journaled <cuemem.home.notebook.Notebook.journaled>`). Then a note's kind and whether it is generated are known from what was
seen of its file, and a note read at a journaled version is that version still.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..store.notes import SeenRow

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["JournaledNotes"]


class JournaledNotes:
    """Every note file of a home as the journal holds it, as the store last saw it."""

    __slots__ = ("_seen", "_versions")

    def __init__(self, seen: Mapping[str, SeenRow], versions: Mapping[str, tuple[int, str]]) -> None:
        self._seen = seen
        self._versions = versions

    def generated_kind(self, id: str) -> str | None:
        """The kind of note ``id`` if it is generated and its file was seen at the journaled
        version; None when the file must be read to know."""
        row = self._seen.get(id)
        version = self._versions.get(id)
        if row is None or version is None or row[4] != version[1] or not row[6]:
            return None
        return row[5]
