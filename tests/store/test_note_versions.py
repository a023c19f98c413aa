"""Note versioning (store/note_versions.py): a person's pending edit is kept as a version first."""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path

from cuemem.schema import Note
from cuemem.store.note_versions import next_versions, synced_versions
from cuemem.store.notes import NoteStore

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
FIELDS = {"id": "deploy", "kind": "procedural", "body": "Deploys go out on Tuesdays."}


def _stored(store: NoteStore, body: str, version: int) -> dict[str, tuple[int, str]]:
    note = Note.create(body, id="deploy", kind="procedural", recorded_at=NOW, version=version)
    store.write(note)
    return {"deploy": (version, store.fingerprint("deploy"))}


def test_a_new_note_is_version_one(tmp_path: Path) -> None:
    """Nothing journaled: one note, version 1."""
    (only,) = next_versions(NoteStore(tmp_path), {}, FIELDS, NOW)
    assert (only.id, only.version, only.body) == ("deploy", 1, FIELDS["body"])


def test_an_untouched_file_gets_the_next_version_only(tmp_path: Path) -> None:
    """The file still hashes to its journaled version: no edit to keep."""
    store = NoteStore(tmp_path)
    known = _stored(store, "old text", 3)
    (only,) = next_versions(store, known, FIELDS, NOW)
    assert only.version == 4 and only.body == FIELDS["body"]


def test_a_hand_edit_is_kept_as_a_user_version_before_the_new_one(tmp_path: Path) -> None:
    """A file a person changed becomes version n+1 (origin user), the write n+2."""
    store = NoteStore(tmp_path)
    known = _stored(store, "old text", 3)
    path = store.path_for("deploy")
    path.write_text(path.read_text(encoding="utf-8").replace("old text", "a person's text"), encoding="utf-8")
    edit, new = next_versions(store, known, FIELDS, NOW)
    assert (edit.version, edit.origin.value, edit.body.strip()) == (4, "user", "a person's text")
    assert (new.version, new.body) == (5, FIELDS["body"])


def test_a_deleted_or_broken_file_is_not_an_edit_to_keep(tmp_path: Path) -> None:
    """A gone file (the journal holds every version) or an unreadable one is left for sync to report."""
    store = NoteStore(tmp_path)
    known = _stored(store, "old text", 1)
    store.path_for("deploy").write_text("not a note at all", encoding="utf-8")
    assert [n.version for n in next_versions(store, known, FIELDS, NOW)] == [2]
    store.path_for("deploy").unlink()
    assert [n.version for n in next_versions(store, known, FIELDS, NOW)] == [2]


def test_synced_versions_advance_each_changed_file(tmp_path: Path) -> None:
    """Each changed file of a scan is its note's next version, origin user, text as written."""
    store = NoteStore(tmp_path)
    known = _stored(store, "old text", 2)
    path = store.path_for("deploy")
    path.write_text(path.read_text(encoding="utf-8").replace("old text", "edited"), encoding="utf-8")
    scan = store.scan(known={k: sha for k, (_, sha) in known.items()})
    (synced,) = synced_versions(scan, known, NOW)
    assert (synced.version, synced.origin.value, synced.body.strip()) == (3, "user", "edited")
    assert hashlib.sha256(path.read_bytes()).hexdigest() != known["deploy"][1]
