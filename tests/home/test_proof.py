"""The journal's fingerprint (home/proof.py): a hand edit anywhere in the journal makes every cache stale."""

from __future__ import annotations

import json
import os
import shutil
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cuemem import IndexState, Memory

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _home(path: Path) -> list[str]:
    with Memory.open(path, fsync="never") as mem:
        return [mem.remember(f"note {i} about acme", actors=["acme" if i % 2 else "globex"], now=NOW) for i in range(20)]


def _segment(path: Path) -> Path:
    (segment,) = sorted((path / "journal").glob("*.jsonl"))
    return segment


def test_a_same_length_edit_in_the_middle_is_detected(tmp_path: Path) -> None:
    """acme -> acmx on one middle line (same length): the cache and the text index are rebuilt from the journal."""
    ids = _home(tmp_path)
    segment = _segment(tmp_path)
    lines = segment.read_bytes().splitlines(keepends=True)
    assert b'"acme"' in lines[5]
    lines[5] = lines[5].replace(b'"acme"', b'"acmx"').replace(b"about acme", b"about acmx")
    segment.write_bytes(b"".join(lines))
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.REBUILT and "changed under the cache" in (mem.open_report.rebuilt_because or "")
        assert mem.open_report.text is IndexState.REBUILT
        assert [h.id for h in mem.recall({"actor": "acmx"}, now=NOW).hits] == [ids[5]]
        assert [h.id for h in mem.recall(text="acmx", now=NOW).hits] == [ids[5]]
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.LOADED


def test_a_touched_but_unchanged_journal_still_loads(tmp_path: Path) -> None:
    """A new modification time with the same bytes (a copy, a checkout) costs a hash, not a rebuild."""
    _home(tmp_path)
    segment = _segment(tmp_path)
    st = segment.stat()
    os.utime(segment, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.LOADED


def test_appends_by_a_later_writer_are_caught_up_not_distrusted(tmp_path: Path) -> None:
    """Bytes after the cache's head are new records, not an edit: caught up."""
    _home(tmp_path)
    index = tmp_path / "index"
    saved = {p.name: p.read_bytes() for p in index.iterdir() if p.is_file()}
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("late", actors=["zeta"], now=NOW)
    for name, data in saved.items():
        (index / name).write_bytes(data)  # the cache as it was before the late write
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.CAUGHT_UP and mem.recall({"actor": "zeta"}, now=NOW).total == 1


@pytest.mark.parametrize("edit", ["truncate", "append-to-sealed"])
def test_a_shorter_or_rewritten_prefix_is_detected(tmp_path: Path, edit: str) -> None:
    """Bytes before the head removed: the cache is rebuilt; a read-only handle goes without the text index."""
    _home(tmp_path)
    segment = _segment(tmp_path)
    data = segment.read_bytes()
    lines = data.splitlines(keepends=True)
    if edit == "truncate":
        segment.write_bytes(b"".join(lines[:3] + lines[4:]))  # a middle line removed
    else:
        segment.write_bytes(b"".join(lines[:-1]) + lines[-1].replace(b"note 19", b"note 91"))
    with Memory.open(tmp_path, read_only=True) as reader:
        assert reader.open_report.index is IndexState.REBUILT and reader.open_report.text is None
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.REBUILT and len(mem) == (19 if edit == "truncate" else 20)


def test_after_a_rebuild_for_an_edit_the_fingerprint_is_of_the_edited_journal(tmp_path: Path) -> None:
    """The rebuilt cache's fingerprint checks out against the journal as it now is (a touch costs a check, no rebuild)."""
    _home(tmp_path)
    segment = _segment(tmp_path)
    segment.write_bytes(segment.read_bytes().replace(b"note 3 about", b"note 3 abXut", 1))
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.REBUILT
        mem.remember("after the edit", now=NOW)
    st = segment.stat()
    os.utime(segment, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.LOADED, mem.open_report.rebuilt_because


def test_an_edit_while_a_writer_is_open_is_caught_at_the_next_open(tmp_path: Path) -> None:
    """A person edits a middle line while the home is open for writing; saves never vouch for it."""
    _home(tmp_path)
    segment = _segment(tmp_path)
    with Memory.open(tmp_path, fsync="never") as mem:
        segment.write_bytes(segment.read_bytes().replace(b"note 4 about", b"note 4 abZut", 1))
        mem.remember("during", now=NOW)
        mem.save_index()
        mem.remember("after the save", now=NOW)
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.REBUILT and "writer had it open" in (mem.open_report.rebuilt_because or "")
        assert [h.record.narrative for h in mem.recall(text="abZut", k=1, now=NOW).hits] == ["note 4 abZut acme"]
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.LOADED


def test_a_deleted_earlier_segment_makes_the_cache_stale(tmp_path: Path) -> None:
    """An import adds a segment; deleting the first one is caught, not answered from the old cache."""
    with Memory.open(tmp_path, fsync="never") as mem:
        for i in range(5):
            mem.remember(f"first {i}", now=NOW)
        mem.import_records([{"narrative": f"imported {i}"} for i in range(5)], now=NOW)
        mem.remember("last", now=NOW)
    segments = sorted((tmp_path / "journal").glob("*.jsonl"))
    assert len(segments) >= 2
    segments[0].unlink()
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.REBUILT and len(mem) < 11
        for eid in mem.ids():
            assert mem.get(eid).id == eid


def test_a_folder_where_a_note_goes_refuses_the_write_before_the_journal(tmp_path: Path) -> None:
    """notes/x.md as a directory: write_note raises StorageError and journals nothing; later writes number from 1."""
    from cuemem.errors import StorageError

    Memory.open(tmp_path, fsync="never").close()  # the home first: a directory of other files is never made one
    (tmp_path / "notes" / "x.md").mkdir(parents=True)
    with Memory.open(tmp_path, fsync="never") as mem:
        before = mem.stats().journal_bytes
        with pytest.raises(StorageError, match="not a file"):
            mem.write_note("x", "first", now=NOW)
        assert mem.stats().journal_bytes == before
        (tmp_path / "notes" / "x.md").rmdir()
        assert mem.write_note("x", "second", now=NOW).version == 1


def test_a_rebuild_vouches_for_the_bytes_it_read(tmp_path: Path) -> None:
    """The fingerprint a rebuild saves is the checksum of the journal as it is (taken as the replay read it)."""
    _home(tmp_path)
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.rebuild()
    segment = _segment(tmp_path)
    body = json.loads((tmp_path / "index" / "journal.json").read_text())
    assert body["segments"][segment.name]["crc32"] == zlib.crc32(segment.read_bytes())
    st = segment.stat()
    os.utime(segment, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000_000))  # a touch: the checksum is checked
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.LOADED, mem.open_report.rebuilt_because


@pytest.mark.parametrize("how", ["open", "open, no write after", "rebuild"])
def test_an_edit_after_a_rebuild_while_the_writer_is_open_is_caught(tmp_path: Path, how: str) -> None:
    """The cache was rebuilt from the journal as it was; a person's edit after that is never
    vouched for (with no write after it, only the stat taken before the replay read tells)."""
    _home(tmp_path)
    if how.startswith("open"):
        shutil.rmtree(tmp_path / "index")
    segment = _segment(tmp_path)
    with Memory.open(tmp_path, fsync="never") as mem:
        if how == "rebuild":
            mem.rebuild()
        else:
            assert mem.open_report.index is IndexState.REBUILT
        time.sleep(0.02)  # past the file system's time stamp granularity
        segment.write_bytes(segment.read_bytes().replace(b"note 4 about", b"note 4 abZut", 1))
        if how != "open, no write after":
            mem.remember("after the edit", now=NOW)
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.REBUILT and "writer had it open" in (mem.open_report.rebuilt_because or "")
        assert [h.record.narrative for h in mem.recall(text="abZut", k=1, now=NOW).hits] == ["note 4 abZut acme"]


@pytest.mark.parametrize(("key", "value"), [("crc3g", None), ("crc32", "12"), ("crc32", 1.5), ("covered", True)])
def test_a_damaged_segment_entry_vouches_for_nothing(tmp_path: Path, key: str, value: object) -> None:
    """A segment's entry whose checksum or extent is gone or of the wrong type (one flipped
    byte in the file) proves nothing: the open rebuilds, the close writes a good fingerprint
    (it used to fail with a StorageError wrapping a KeyError), and the next open loads."""
    ids = _home(tmp_path)
    path = tmp_path / "index" / "journal.json"
    body = json.loads(path.read_text())
    (entry,) = body["segments"].values()
    if value is None:
        entry[key] = entry.pop("crc32")
    else:
        entry[key] = value
    path.write_text(json.dumps(body))
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.REBUILT and "does not cover" in (mem.open_report.rebuilt_because or "")
        assert len(mem.recall({"actor": "acme"}, k=50, now=NOW).hits) == len(ids) // 2
    with Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.index is IndexState.LOADED
