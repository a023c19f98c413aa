"""index/notes-seen.json (home/noteseen.py): an open hashes only note files whose stat changed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.home import noteseen
from cuemem.store.fsync import FsyncPolicy
from cuemem.store.notes import NoteStore, Seen

T = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)


class Reads:
    """Counts the note files a store reads whole, passing each read through (a measurement)."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real = NoteStore._bytes

        def counted(store: NoteStore, path: Path, id: str) -> bytes:
            self.paths.append(path.name)
            return real(store, path, id)

        monkeypatch.setattr(NoteStore, "_bytes", counted)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    r = Reads()
    r.install(monkeypatch)
    yield r


def _home(path: Path, n: int = 30) -> None:
    with Memory.open(path, fsync="never") as mem:
        for i in range(n):
            mem.write_note(f"step-{i}", f"Runbook step {i}.", kind="procedural", now=T)
        mem.write_note("pref-tea", "Prefers tea.", kind="preference", now=T)


def test_a_second_open_reads_no_unchanged_note_file(tmp_path: Path, reads: Reads) -> None:
    """After a session saved what it saw, opening reads no unchanged note file (MEMORY.md's stamp holds too); an edit is read."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        for i in range(20):
            for j in range(2):
                mem.remember(f"deal with vendor{i} slipped ({j})", type=f"deal{i}", actors=[f"vendor{i}"], outcome="negative", now=T)
        assert len(mem.distill_policies(now=T).written) == 20
        mem.write_note("pref-tea", "Prefers tea.", kind="preference", now=T)
    assert (tmp_path / "h" / "index" / noteseen.FILE).is_file()
    reads.paths.clear()
    with Memory.open(tmp_path / "h") as mem:
        assert not mem.open_report.note_errors
    assert reads.paths == []
    path = tmp_path / "h" / "notes" / "pref-tea.md"
    path.write_bytes(path.read_bytes().replace(b"Prefers tea.", b"Prefers tee."))
    with Memory.open(tmp_path / "h") as mem:
        assert len(mem.policies()) == 20 and "Prefers tee." in (tmp_path / "h" / "MEMORY.md").read_text(encoding="utf-8")
    assert reads.paths[0] == "pref-tea.md"  # the open's own check reads only the changed file


def test_an_edit_of_the_same_size_is_seen(tmp_path: Path, reads: Reads) -> None:
    """A person's edit that keeps the size (new mtime) is picked up as an edit."""
    _home(tmp_path / "h")
    path = tmp_path / "h" / "notes" / "pref-tea.md"
    path.write_bytes(path.read_bytes().replace(b"Prefers tea.", b"Prefers tee."))
    with Memory.open(tmp_path / "h") as mem:
        assert mem.sync(now=T + timedelta(days=1)).updated == ["pref-tea"]
        assert {n.id: n.body for n in mem.notes()}["pref-tea"] == "Prefers tee."


def test_an_edit_with_its_mtime_set_back_is_seen_by_its_change_time(tmp_path: Path) -> None:
    """``touch -d`` restoring size and mtime still changes the change time: the edit is found."""
    _home(tmp_path / "h")
    path = tmp_path / "h" / "notes" / "pref-tea.md"
    st = path.stat()
    path.write_bytes(path.read_bytes().replace(b"Prefers tea.", b"Prefers tee."))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    with Memory.open(tmp_path / "h") as mem:
        assert mem.sync(now=T + timedelta(days=1)).updated == ["pref-tea"]


@pytest.mark.parametrize("junk", [b"", b"{", b"[]", b'{"version": 1, "notes": {"pref-tea": [1, 2]}}',
                                  b'{"version": 1, "notes": {"pref-tea": [1, 2, 3, 4, "x", "y", 1]}}', b"\xff" * 64])
def test_a_broken_seen_file_reads_as_no_entries(tmp_path: Path, junk: bytes) -> None:
    """Whatever stands in notes-seen.json, the open hashes the files and finds every edit."""
    _home(tmp_path / "h", n=2)
    (tmp_path / "h" / "index" / noteseen.FILE).write_bytes(junk)
    path = tmp_path / "h" / "notes" / "pref-tea.md"
    path.write_bytes(path.read_bytes().replace(b"Prefers tea.", b"Prefers tee."))
    with Memory.open(tmp_path / "h") as mem:
        assert mem.sync(now=T + timedelta(days=1)).updated == ["pref-tea"]


def test_an_entry_is_trusted_only_with_the_journaled_digest(tmp_path: Path) -> None:
    """An entry matching the file's stat but naming another digest than the journal's makes the file be read."""
    _home(tmp_path / "h", n=1)
    path = tmp_path / "h" / "notes" / "pref-tea.md"
    path.write_bytes(path.read_bytes().replace(b"Prefers tea.", b"Prefers tee."))
    st = path.stat()
    entry = Seen(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, "0" * 64, "preference", False)
    seen = noteseen.load(tmp_path / "h" / "index")
    seen["pref-tea"] = entry
    noteseen._write(tmp_path / "h" / "index" / noteseen.FILE, {k: list(v) for k, v in seen.items()}, FsyncPolicy.NEVER)
    with Memory.open(tmp_path / "h") as mem:
        assert mem.sync(now=T + timedelta(days=1)).updated == ["pref-tea"]


def test_racy_entries_are_not_kept(tmp_path: Path) -> None:
    """An entry as new as the saved file itself (a change could hide in its timestamp tick) is dropped."""
    index = tmp_path / "index"
    index.mkdir()
    sha = "a" * 64
    old = Seen(10, 1, 1, 7, sha, "semantic", False)
    future = Seen(10, 2**62, 1, 8, sha, "semantic", False)
    noteseen.save(index, {"old": old, "new": future, "other": old}, {"old": (1, sha), "new": (1, sha), "other": (1, "b" * 64)},
                  FsyncPolicy.NEVER)
    assert noteseen.load(index) == {"old": old}
