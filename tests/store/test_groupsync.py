"""Group commit under fsync="always": no call returns unsynced, one sync serves the waiting calls."""

from __future__ import annotations

import os
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory
from cuemem.errors import StorageError
from cuemem.home.guard import Guard
from cuemem.store import groupsync
from cuemem.store.fsync import FsyncPolicy, handed_syncs, sync, sync_counts
from cuemem.store.groupsync import GroupSync
from cuemem.store.journal import Journal

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


class _SlowSync:
    """Stands in for ``groupsync.sync``: records the file size each sync covered, then syncs slowly."""

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay
        self.covered: list[int] = []
        self.lock = threading.Lock()

    def __call__(self, fd: int, policy: FsyncPolicy, **kwargs: Any) -> None:
        size = os.fstat(fd).st_size
        time.sleep(self.delay)
        sync(fd, policy, **kwargs)
        with self.lock:
            self.covered.append(size)


def test_every_wait_returns_after_a_sync_that_covers_its_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer's wait returns only once a sync made after its write covered its end offset."""
    slow = _SlowSync()
    monkeypatch.setattr(groupsync, "sync", slow)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    group, write_lock, short = GroupSync(), threading.Lock(), []

    def writer(n: int) -> None:
        for i in range(10):
            with write_lock:  # the journal's writer: one append at a time
                os.write(fd, f"{n} {i}\n".encode())
                end = os.fstat(fd).st_size
                ticket = group.written(fd)
            group.wait(ticket)
            with slow.lock:
                if max(slow.covered, default=0) < end:
                    short.append((n, i))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.close(fd)
    assert short == []
    assert len(slow.covered) < 80 / 2  # waiting writers shared syncs


def test_a_failed_sync_fails_its_waiters_and_every_later_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sync's StorageError reaches the waiter, and the group refuses tickets from then on."""

    def broken(fd: int, policy: FsyncPolicy, **kwargs: Any) -> None:
        raise StorageError(5, "EIO")

    monkeypatch.setattr(groupsync, "sync", broken)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = GroupSync()
    os.write(fd, b"x\n")
    ticket = group.written(fd)
    with pytest.raises(StorageError, match="EIO"):
        group.wait(ticket)
    with pytest.raises(StorageError, match="earlier journal sync failed"):
        group.written(fd)
    with pytest.raises(StorageError, match="earlier journal sync failed"):
        group.wait(ticket)
    os.close(fd)


def test_flush_syncs_the_waiting_tickets_before_their_segment_closes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After flush, a wait for an earlier ticket returns without another sync."""
    slow = _SlowSync(delay=0)
    monkeypatch.setattr(groupsync, "sync", slow)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = GroupSync()
    os.write(fd, b"x\n")
    ticket = group.written(fd)
    group.flush()
    os.close(fd)
    group.wait(ticket)
    assert slow.covered == [2]


def test_a_deferred_append_is_synced_by_wait_synced_not_by_append(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Journal.append(defer=True) writes without a sync; wait_synced(owed) makes the sync."""
    slow = _SlowSync(delay=0)
    monkeypatch.setattr(groupsync, "sync", slow)
    with Journal(tmp_path / "j", writable=True) as journal:
        journal.append([{"id": "a"}], defer=True)
        assert slow.covered == []
        journal.wait_synced(journal.owed)
        assert len(slow.covered) == 1
        journal.append([{"id": "b"}])  # not deferred: synced before it returns
        assert len(slow.covered) == 2


def test_guard_runs_deferred_waits_after_letting_go_and_refuses_them_outside() -> None:
    """A deferred wait runs once the outermost hold ends, with the lock free for other threads."""
    guard, seen = Guard(), []

    def wait() -> None:
        other = threading.Thread(target=lambda: seen.append(guard.acquire(timeout=1) and (guard.release() or True)))
        other.start()
        other.join()

    with guard:
        with guard:
            guard.defer(wait)
        assert seen == []  # the inner exit runs nothing
    assert seen == [True]
    with pytest.raises(RuntimeError):
        guard.defer(wait)


def test_threads_sharing_a_handle_append_while_one_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under fsync="always", 8 threads' remembers share syncs made outside the guard, and all survive."""
    slow = _SlowSync()
    monkeypatch.setattr(groupsync, "sync", slow)
    with Memory.open(tmp_path / "home", fsync="always") as mem:
        guard = mem._home.guard
        held_during_sync = []
        original = slow.__call__

        def checked(fd: int, policy: FsyncPolicy, **kwargs: Any) -> None:
            held_during_sync.append(guard.holds())
            original(fd, policy, **kwargs)

        monkeypatch.setattr(groupsync, "sync", checked)

        def work(n: int) -> None:
            for i in range(10):
                mem.remember(f"thread {n} note {i}", actors=[f"t{n}"], now=NOW)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert held_during_sync and not any(held_during_sync)
        assert len(slow.covered) < 80 / 2
    with Memory.open(tmp_path / "home") as mem:
        assert len(mem) == 80


def test_a_note_file_is_placed_only_after_its_record_is_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a facade call the journal's sync comes before the note's file is renamed into place."""
    from cuemem.store.notes import NoteStore

    events: list[str] = []
    real_sync, real_synced, real_place = groupsync.sync, groupsync.synced, NoteStore.place

    def sync_spy(fd: int, policy: FsyncPolicy, **kwargs: Any) -> None:
        events.append("sync")
        real_sync(fd, policy, **kwargs)

    def synced_spy(syncer: Any, job: int) -> None:
        real_synced(syncer, job)
        events.append("sync")

    def place_spy(self: NoteStore, staged: Any) -> Any:
        events.append("place")
        return real_place(self, staged)

    with Memory.open(tmp_path / "home", fsync="always") as mem:
        monkeypatch.setattr(groupsync, "sync", sync_spy)
        monkeypatch.setattr(groupsync, "synced", synced_spy)
        monkeypatch.setattr(NoteStore, "place", place_spy)
        mem.write_note("editor", "I use vim.", kind="preference", now=NOW)
        assert events[:2] == ["sync", "place"]


def test_after_a_failed_sync_an_append_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a sync failed, a later append raises before a byte reaches the segment."""

    def broken(fd: int, policy: FsyncPolicy, **kwargs: Any) -> None:
        raise StorageError(5, "EIO")

    with Journal(tmp_path / "j", writable=True) as journal:
        journal.append([{"id": "a"}])
        monkeypatch.setattr(groupsync, "sync", broken)
        with pytest.raises(StorageError, match="EIO"):
            journal.append([{"id": "b"}])
        size = sum(p.stat().st_size for p in (tmp_path / "j").iterdir())
        with pytest.raises(StorageError, match="earlier journal sync failed"):
            journal.append([{"id": "c"}])
        assert sum(p.stat().st_size for p in (tmp_path / "j").iterdir()) == size
        monkeypatch.setattr(groupsync, "sync", sync)
        with pytest.raises(StorageError):
            journal.close()


def test_a_descriptor_that_cannot_be_duplicated_fails_typed_and_blocks_no_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """os.dup failing is a StorageError, and the next waiter leads instead of waiting forever."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = GroupSync()
    os.write(fd, b"x\n")
    ticket = group.written(fd)
    real_dup = os.dup

    def no_dup(fd: int) -> int:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(groupsync.os, "dup", no_dup)
    with pytest.raises(StorageError, match="Too many open files"):
        group.wait(ticket)
    monkeypatch.setattr(groupsync.os, "dup", real_dup)
    done = threading.Event()
    threading.Thread(target=lambda: (group.wait(ticket), done.set()), daemon=True).start()
    assert done.wait(5)
    os.close(fd)


def test_a_synced_write_is_not_failed_by_a_later_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ticket an earlier sync covered returns, even after a later sync failed."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = GroupSync()
    os.write(fd, b"a\n")
    first = group.written(fd)
    group.wait(first)

    def broken(fd: int, policy: FsyncPolicy, **kwargs: Any) -> None:
        raise StorageError(5, "EIO")

    monkeypatch.setattr(groupsync, "sync", broken)
    os.write(fd, b"b\n")
    with pytest.raises(StorageError):
        group.wait(group.written(fd))
    group.wait(first)  # on disk before the failure: no error
    os.close(fd)


def test_a_mirror_catch_up_syncs_the_lines_it_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Journal.place under fsync="always" returns with its lines synced (nothing left owed)."""
    from cuemem.store.journal import Position

    slow = _SlowSync(delay=0)
    monkeypatch.setattr(groupsync, "sync", slow)
    with Journal(tmp_path / "j", writable=True) as journal:
        journal.place([(Position(1, 0), b'{"id":"a"}\n')])
        assert slow.covered == [len(b'{"id":"a"}\n')]


def _syncer_threads() -> set[str]:
    """The ids of this process's OS threads named as the core's syncer (Linux: /proc).

    A thread may end between the listing and the read of its name (another test's handle being
    collected); it is no syncer of this test's, so it is skipped."""
    named: set[str] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if name == "cuemem-syncer":
            named.add(task.name)
    return named


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process's threads from /proc")
def test_a_started_sync_runs_on_the_cores_syncer_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """start() hands the sync to the core's thread (no Python sync), the wait collects it, and
    nothing is synced twice."""
    led: list[int] = []
    monkeypatch.setattr(groupsync, "sync", lambda fd, policy, **kw: led.append(fd))
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = GroupSync()
    os.write(fd, b"x\n")
    ticket = group.written(fd)
    before, handed, threads = sync_counts()[0], handed_syncs(), _syncer_threads()
    group.start()
    group.wait(ticket)
    assert _syncer_threads() - threads  # this group's syncer (named once it runs)
    assert sync_counts()[0] == before + 1 and handed_syncs() == handed + 1 and led == []
    group.start()  # nothing left to sync: no sync
    group.flush()
    assert sync_counts()[0] == before + 1 and led == []
    os.write(fd, b"y\n")
    second = group.written(fd)
    group.start()
    group.flush()  # collects the started sync, which covers the ticket: no other
    group.wait(second)
    assert sync_counts()[0] == before + 2 and handed_syncs() == handed + 2 and led == []
    os.close(fd)


@pytest.mark.skipif(sys.platform != "linux", reason="fsync of a pipe is EINVAL on Linux")
def test_a_started_sync_that_fails_fails_its_waiter_and_every_later_write() -> None:
    """The core's failed sync reaches the wait of the ticket it covered, and later writes are refused."""
    read, write = os.pipe()
    group = GroupSync()
    os.write(write, b"x\n")
    ticket = group.written(write)
    group.start()
    with pytest.raises(StorageError, match="Invalid argument"):
        group.wait(ticket)
    with pytest.raises(StorageError, match="earlier journal sync failed"):
        group.written(write)
    os.close(read)
    os.close(write)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process's threads from /proc")
def test_a_durable_remember_starts_its_sync_before_it_applies_the_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under fsync="always" a remember's sync runs on the core's syncer thread, and the call
    returns only after its outcome was collected."""
    events: list[str] = []
    real_later, real_synced = groupsync.sync_later, groupsync.synced

    def later(syncer: Any, fd: int, job: int) -> bool:
        events.append("start")
        return real_later(syncer, fd, job)

    def collected(syncer: Any, job: int) -> None:
        real_synced(syncer, job)
        events.append("synced")

    threads = _syncer_threads()
    with Memory.open(tmp_path / "home", fsync="always") as mem:
        monkeypatch.setattr(groupsync, "sync_later", later)
        monkeypatch.setattr(groupsync, "synced", collected)
        monkeypatch.setattr(groupsync, "sync", lambda fd, policy, **kw: events.append("led"))
        mem.remember("Acme asked for a discount", now=NOW)
        assert events == ["start", "synced"] and _syncer_threads() - threads


def test_waiters_of_one_started_sync_all_return_after_that_one_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four threads waiting on tickets one started sync covers all collect it: no other sync is made."""
    led: list[int] = []
    monkeypatch.setattr(groupsync, "sync", lambda fd, policy, **kw: led.append(fd))
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = GroupSync()
    tickets = []
    for i in range(4):
        os.write(fd, f"{i}\n".encode())
        tickets.append(group.written(fd))
    before = sync_counts()[0]
    group.start()
    done: list[int] = []
    threads = [threading.Thread(target=lambda t=t: (group.wait(t), done.append(t))) for t in tickets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    group.flush()
    assert sorted(done) == tickets and led == [] and sync_counts()[0] == before + 1
    os.close(fd)


def test_without_background_sync_a_waiter_leads_the_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the core cannot sync a descriptor (not POSIX), start() does nothing and the wait syncs itself."""
    slow = _SlowSync(delay=0)
    monkeypatch.setattr(groupsync, "sync", slow)
    monkeypatch.setattr(groupsync, "BACKGROUND_SYNC", False)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = GroupSync()
    os.write(fd, b"x\n")
    ticket = group.written(fd)
    group.start()
    assert slow.covered == []
    group.wait(ticket)
    assert slow.covered == [2]
    os.close(fd)
