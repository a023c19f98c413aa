"""Hostile note files (schema/note.py): impossible dates, alias bombs, huge front matter — format errors, never fatal."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import memory_limit
import pytest

from cuemem import Memory
from cuemem.errors import NoteFormatError, SchemaError
from cuemem.schema import Note
from cuemem.schema.note import MAX_FRONT_MATTER, MAX_NOTE_BYTES

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
GOOD = Note.create("hello", id="n1", kind="semantic", recorded_at=NOW).to_markdown()


@pytest.mark.parametrize("bad", ["2026-02-30T00:00:00+00:00", "2026-02-30", "0000-01-01", "2026-13-01", "2026-06-01 25:00:00"])
def test_an_impossible_date_is_a_format_error(bad: str) -> None:
    """A hand-written date that is no date is a NoteFormatError naming the file, not a ValueError."""
    text = re.sub(r"recorded_at: .*", f"recorded_at: {bad}", GOOD)
    with pytest.raises(NoteFormatError, match="impossible date|recorded_at"):
        Note.from_markdown(text, path="n1.md")


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    """Anchors and aliases are refused on the parser's events: a few hundred bytes never become gigabytes."""
    levels = ["a: &a [x, x, x, x, x, x, x, x, x]"] + [f"{c}: &{c} [{', '.join(['*' + p] * 9)}]" for p, c in zip("abcdefgh", "bcdefghi")]
    bomb = "---\nid: n1\n" + "\n".join(levels) + "\nkind: *i\n---\nbody"
    with pytest.raises(NoteFormatError, match="anchor or alias"):
        Note.from_markdown(bomb)


def test_plain_ampersands_and_stars_are_fine() -> None:
    """Text holding & and * in quoted values is not mistaken for an anchor."""
    note = Note.create("R&D * notes", id="n2", kind="semantic", recorded_at=NOW, subject="R&D *budget*", tags=["a&b", "*"])
    assert Note.from_markdown(note.to_markdown()) == note


def test_oversized_front_matter_is_refused() -> None:
    """Front matter beyond the bound is a format error before YAML sees it."""
    text = "---\nid: n1\nkind: semantic\nsubject: '" + "x" * (MAX_FRONT_MATTER + 1) + "'\n---\nbody"
    with pytest.raises(NoteFormatError, match="larger than"):
        Note.from_markdown(text)


def test_a_home_with_a_broken_note_opens_and_reports_it(tmp_path: Path) -> None:
    """Open, read-only open and sync all work; the broken file is reported, the rest is intact."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.write_note("n1", "hello", now=NOW)
        mem.write_note("n2", "kept", now=NOW)
    path = tmp_path / "notes" / "n1.md"
    path.write_text(re.sub(r"recorded_at: .*", "recorded_at: 2026-02-30", path.read_text(encoding="utf-8")), encoding="utf-8")
    with Memory.open(tmp_path, fsync="never") as mem:
        assert [e.path for e in mem.open_report.note_errors] == [str(path)]
        report = mem.sync(now=NOW)
        assert report.updated == [] and len(report.errors) == 1 and [n.id for n in mem.notes()] == ["n2"]
    with Memory.open(tmp_path, read_only=True) as reader:
        assert len(reader.open_report.note_errors) == 1


@pytest.mark.parametrize("tags", [None, "urgent", [1], 5])
def test_write_note_refuses_tags_that_are_not_a_list_of_strings(tmp_path: Path, tags: object) -> None:
    """A bare string is not split into characters; None or numbers are a SchemaError, nothing written."""
    with Memory.open(tmp_path, fsync="never") as mem:
        with pytest.raises(SchemaError):
            mem.write_note("n1", "body", tags=tags, now=NOW)  # type: ignore[arg-type]
        with pytest.raises(SchemaError):
            mem.write_note("n1", "body", sources=tags, now=NOW)  # type: ignore[arg-type]
        assert mem.notes() == [] and not (tmp_path / "notes" / "n1.md").exists()


def test_a_note_larger_than_a_note_file_may_be_is_refused_at_write(tmp_path: Path) -> None:
    """A note whose file would be larger than any note file is read (MAX_NOTE_BYTES bytes, or
    front matter past MAX_FRONT_MATTER characters, here of many non-ASCII tags) is a
    SchemaError, and nothing is written; one at the bound is written and read back."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        with pytest.raises(SchemaError, match="a note file holds at most"):
            mem.write_note("huge", "é" * (MAX_NOTE_BYTES // 2))
        with pytest.raises(SchemaError, match="front matter"):
            mem.write_note("tagged", "short", tags=[f"{i:05d}" + "漢" * 100 for i in range(12_000)])
        assert mem.notes() == []
        room = MAX_NOTE_BYTES - len(mem.write_note("big", "", kind="semantic", now=NOW).to_file())
        kept = mem.write_note("big", "x" * room, kind="semantic", now=NOW)
        assert len(kept.to_file()) == MAX_NOTE_BYTES
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        assert mem.open_report.note_errors == [] and [len(n.body) for n in mem.notes()] == [room]


@pytest.mark.skipif(not memory_limit.AVAILABLE, reason="needs /proc to cap the child's memory")
def test_a_note_file_larger_than_any_note_is_reported_unread(tmp_path: Path) -> None:
    """A note file larger than any note cuemem writes (a sparse 4 GiB file) is reported on
    every open and never read whole: a child whose memory is capped far below its size
    opens the home; the rest of the home is there."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        mem.remember("Acme wants a discount", now=NOW)
        mem.write_note("kept", "a real note")
    with open(home / "notes" / "big.md", "wb") as f:
        f.truncate(4 << 30)
    done = memory_limit.open_with_room(home, 1 << 30)
    assert done.returncode == 0, done.stderr[-2000:]
    for read_only in (True, False):
        with Memory.open(home, fsync="never", read_only=read_only) as mem:
            errors = [str(e) for e in mem.open_report.note_errors]
            assert any("big.md" in e and "larger than any note; not read" in e for e in errors), errors
            assert [n.id for n in mem.notes()] == ["kept"] and len(mem) == 1


def test_a_staged_note_larger_than_any_note_is_dropped_unread(tmp_path: Path) -> None:
    """A hidden pending note file larger than any note (never one a write staged) is removed
    at the next writable open, as any pending file the journal does not hold is."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        mem.write_note("kept", "a real note")
    pending = home / "notes" / ".kept.md.pending"
    with open(pending, "wb") as f:
        f.truncate(MAX_NOTE_BYTES + 1)
    with Memory.open(home, fsync="never") as mem:
        assert [n.body for n in mem.notes()] == ["a real note"]
    assert not pending.exists()
