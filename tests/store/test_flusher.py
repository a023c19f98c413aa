"""fsync="interval": appends synced within a window, one sync for all of them, none lost to a close."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.errors import StorageError
from cuemem.store.flusher import Flusher
from cuemem.store.fsync import sync_counts
from cuemem.store.journal import Journal


def _fsyncs() -> int:
    return sync_counts()[0]


def _eventually(check: object, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.005)
    return False


def test_writes_within_a_window_share_one_sync_made_by_the_thread(tmp_path: Path) -> None:
    """Many writes before the window ends cost no sync at once and one sync when it ends."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    flusher = Flusher(window=0.2)
    try:
        before = _fsyncs()
        for _ in range(100):
            os.write(fd, b"x\n")
            flusher.written(fd)
        assert _fsyncs() == before
        assert _eventually(lambda: _fsyncs() == before + 1)
        time.sleep(0.3)
        assert _fsyncs() == before + 1  # nothing more to sync
    finally:
        flusher.close()
        os.close(fd)


def test_flush_and_close_sync_what_is_pending_at_once(tmp_path: Path) -> None:
    """flush() before a descriptor closes, and close(), sync the pending writes without waiting for the window."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    flusher = Flusher(window=60)
    try:
        os.write(fd, b"a\n")
        flusher.written(fd)
        before = _fsyncs()
        flusher.flush()
        assert _fsyncs() == before + 1
        flusher.flush()
        assert _fsyncs() == before + 1  # nothing pending
        os.write(fd, b"b\n")
        flusher.written(fd)
        flusher.close()
        assert _fsyncs() == before + 2
    finally:
        os.close(fd)


def test_a_failed_background_sync_is_raised_by_the_next_write(tmp_path: Path) -> None:
    """A sync the thread could not make (here: a descriptor closed under it) surfaces as StorageError."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    flusher = Flusher(window=0.01)
    flusher.written(fd)
    os.close(fd)  # the thread's sync now fails (EBADF)
    time.sleep(0.1)
    with pytest.raises(StorageError, match="background sync"):
        flusher.written(fd)
    flusher.close()


def test_an_interval_journal_syncs_on_rotation_and_close_and_keeps_every_record(tmp_path: Path) -> None:
    """Appends across segment rotations under interval are all there after close and reopen."""
    journal = Journal(tmp_path / "j", fsync="interval", writable=True, segment_bytes=64)  # type: ignore[arg-type]
    before = _fsyncs()
    for i in range(20):
        journal.append([{"n": i}])
    assert len(journal.segments()) > 1
    assert _fsyncs() - before < 20 + 2 * len(journal.segments())  # not one sync per append
    journal.close()
    assert [e.record["n"] for e in Journal(tmp_path / "j").read()] == list(range(20))


def test_memory_open_takes_interval_and_its_writes_survive_a_reopen(tmp_path: Path) -> None:
    """Memory.open(fsync="interval") remembers and recalls as always; a reopen finds every memory."""
    from datetime import date

    with Memory.open(tmp_path / "h", fsync="interval") as mem:
        ids = [mem.remember(f"note {i}", actors=["x"], now=date(2026, 6, 1)) for i in range(30)]
    with Memory.open(tmp_path / "h", read_only=True) as mem:
        assert mem.ids() == ids
