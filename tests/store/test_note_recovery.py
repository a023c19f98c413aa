"""Crash-safe note writes (store/notes.py staging and recovery): journal first, files after, finished on open."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory
from cuemem.schema import Note
from cuemem.store import records as rec
from cuemem.store.notes import NoteStore

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _note(body: str, version: int = 1) -> Note:
    return Note.create(body, id="deploy", kind="procedural", recorded_at=NOW, version=version)


def test_a_write_that_never_reached_the_journal_is_dropped_not_adopted(tmp_path: Path) -> None:
    """A crash after staging, before the append: the pending file is removed; sync adopts nothing."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.write_note("other", "kept", now=NOW)
    NoteStore(tmp_path / "notes").stage([("deploy", _note("never journaled").to_markdown().encode())])
    (tmp_path / "notes" / ".other.md.tmp").write_bytes(b"half a note")
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.notes_recovered == []
        assert sorted(mem.open_report.leftovers_removed) == [".deploy.md.pending", ".other.md.tmp"]
        assert [n.id for n in mem.notes()] == ["other"] and mem.sync(now=NOW).updated == []
    assert sorted(p.name for p in (tmp_path / "notes").iterdir()) == ["other.md"]


def test_a_journaled_write_whose_file_was_not_placed_is_finished_on_open(tmp_path: Path) -> None:
    """A crash after the append, before the rename: the file is placed; it is no person's edit."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.write_note("deploy", "version one", now=NOW)
        home = mem._home
        second = _note("version two", version=2)
        record = rec.note(second)
        staged = home.notes.files.stage([("deploy", record["markdown"].encode())])
        home.journal.append([record], trusted=True)  # the crash comes before place()
    assert staged == ["deploy.md"] and (tmp_path / "notes" / ".deploy.md.pending").exists()
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.notes_recovered == ["deploy"] and mem.open_report.note_errors == []
        (note,) = mem.notes()
        assert (note.version, note.body) == (2, "version two") and mem.sync(now=NOW).updated == []


def test_a_failed_append_leaves_no_note_file_behind(tmp_path: Path, monkeypatch: Any) -> None:
    """write_note whose journal append fails writes no note file, pending or placed."""
    from cuemem.errors import StorageError
    from cuemem.store.journal import Journal

    with Memory.open(tmp_path, fsync="never") as mem:

        def full(self: Journal, lines: Any, *, defer: bool = False) -> Any:
            raise StorageError(28, "no space left on device")

        monkeypatch.setattr(Journal, "append_lines", full)  # what every append comes down to
        with pytest.raises(StorageError):
            mem.write_note("deploy", "lost", now=NOW)
        monkeypatch.undo()
        assert mem.notes() == [] and list((tmp_path / "notes").iterdir()) == []
        mem.write_note("deploy", "written", now=NOW)
        assert [n.body for n in mem.notes()] == ["written"]


def test_a_job_run_places_all_its_notes_after_the_journal(tmp_path: Path) -> None:
    """distill_policies' notes exist as files once the call returns, none pending."""
    with Memory.open(tmp_path, fsync="never") as mem:
        for i in range(4):
            mem.remember(f"deal {i} lost on price", actors=["acme"], type="deal", outcome="negative", tags=["price"], now=NOW)
        report = mem.distill_policies(now=NOW)
        files = sorted(p.name for p in (tmp_path / "notes").iterdir())
        assert report.written and all(not f.startswith(".") for f in files) and len(files) == len(report.written)


def test_writing_over_a_hand_edit_keeps_both_versions_and_places_the_new_text(tmp_path: Path) -> None:
    """One commit holds the person's version and the agent's: the file ends as the new one, both are journaled."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.write_note("n1", "v1", now=NOW)
        path = tmp_path / "notes" / "n1.md"
        path.write_text(path.read_text(encoding="utf-8").replace("v1", "a person's text"), encoding="utf-8")
        note = mem.write_note("n1", "v2", now=NOW)
        assert note.version == 3 and [(n.version, n.body) for n in mem.notes()] == [(3, "v2")]
        assert mem.sync(now=NOW).updated == [] and not [p for p in (tmp_path / "notes").iterdir() if p.name.startswith(".")]
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.notes_recovered == [] and mem.open_report.note_errors == []
