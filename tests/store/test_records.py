"""The journal's records (store/records.py): one constructor per kind, read back by op_of."""

from __future__ import annotations

from datetime import datetime, timezone

from cuemem.schema import Note
from cuemem.store import records as rec

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def test_every_record_kind_has_a_constructor() -> None:
    """Each Op has exactly one constructor in store/records.py, and op_of reads it back."""
    made = [
        rec.remember({"id": "x"}), rec.version("u/s", "x", None, NOW, NOW), rec.decision("x", "approved", NOW),
        rec.retire(["x"], "ttl", NOW), rec.job("j", NOW, {}), rec.taint("default", "s", None, NOW),
        rec.approval("x", reason="conflict", subject="u/s", supersedes=None, episode={}, requested_at=NOW, expires_at=NOW),
        rec.note(Note.create("body", id="n", kind="semantic", recorded_at=NOW)),
        rec.forget("fg-1", retention="erase", target={"kind": "id", "sha256": "0" * 64}, ids=["x"], notes=[], approvals=[], hashes=["0" * 64], at=NOW),
        rec.proposal("p", job="j", action="merge", user="default", summary="s", why="w", evidence=[], sources=[], records=[], at=NOW),
        rec.erasing("fg-1", "0" * 64),
    ]
    tombstone = rec.erased("x", "remember", "0" * 64, 200)
    assert len(tombstone) == 200 and tombstone.endswith(b" \n")
    made.append(__import__("json").loads(tombstone))
    assert sorted(rec.op_of(r).value for r in made) == sorted(op.value for op in rec.Op)  # type: ignore[union-attr]
    assert rec.op_of({"op": "nonsense"}) is None and rec.op_of({}) is None


def test_a_note_record_carries_its_file_and_digest() -> None:
    """The note record holds the markdown and the SHA-256 of its UTF-8 bytes."""
    import hashlib

    note = Note.create("Deploys go out on Tuesdays.", id="deploy-day", kind="procedural", recorded_at=NOW)
    record = rec.note(note)
    assert record["markdown"] == note.to_markdown() and record["version"] == note.version
    assert record["sha256"] == hashlib.sha256(note.to_markdown().encode("utf-8")).hexdigest()

