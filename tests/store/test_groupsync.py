"""Group commit under fsync="always": no call returns unsynced, one sync serves the waiting calls.

The core's group (``rust/src/groupsync.rs``) syncs on a thread of its own; its unit tests slow and
fail that sync to check coverage and failures. These tests hold the contract from Python, with
real descriptors: the journal's, a pipe's (whose fsync Linux refuses), a closed one's.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from cuemem import Memory, _core
from cuemem.errors import StorageError
from cuemem.home.guard import Guard
from cuemem.store import groupsync
from cuemem.store.fsync import FsyncPolicy, handed_syncs, sync, sync_counts
from cuemem.store.groupsync import InlineGroupSync, group_sync
from cuemem.store.journal import Journal

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _eventually(done: Any) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if done():
            return True
        time.sleep(0.001)
    return False


def test_a_ticket_is_synced_by_the_cores_thread_without_anyone_waiting(tmp_path: Path) -> None:
    """written() starts the sync on the core's own thread: it is made (and counted) before any wait."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = _core.GroupSync()
    before, handed = sync_counts()[0], handed_syncs()
    os.write(fd, b"x\n")
    ticket = group.written(fd)
    assert _eventually(lambda: handed_syncs() > handed)
    assert sync_counts()[0] > before
    group.wait(ticket)
    group.flush()
    os.close(fd)


def test_flush_syncs_the_tickets_before_their_segment_closes(tmp_path: Path) -> None:
    """After flush, a wait for an earlier ticket returns without another sync."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = _core.GroupSync()
    os.write(fd, b"x\n")
    ticket = group.written(fd)
    group.flush()
    os.close(fd)
    made = handed_syncs()
    group.wait(ticket)
    assert handed_syncs() == made


@pytest.mark.skipif(sys.platform != "linux", reason="fsync of a pipe is EINVAL on Linux")
def test_a_failed_sync_fails_its_waiter_and_every_later_write_but_not_an_earlier_ticket(tmp_path: Path) -> None:
    """The core's failed sync reaches the wait of the ticket it should have covered; later writes are refused."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = _core.GroupSync()
    os.write(fd, b"a\n")
    first = group.written(fd)
    group.wait(first)
    group.flush()  # the next ticket is on another "segment": a pipe
    read, write = os.pipe()
    os.write(write, b"x\n")
    ticket = group.written(write)
    with pytest.raises(StorageError, match="Invalid argument") as failed:
        group.wait(ticket)
    assert failed.value.errno == 22
    with pytest.raises(StorageError, match="earlier journal sync failed"):
        group.written(write)
    with pytest.raises(StorageError, match="earlier journal sync failed"):
        group.check()
    group.wait(first)  # on disk before the failure: no error
    with pytest.raises(StorageError):
        group.flush()
    for d in (read, write, fd):
        os.close(d)


def test_a_descriptor_that_cannot_be_duplicated_fails_typed_and_blocks_no_one(tmp_path: Path) -> None:
    """A ticket for a closed descriptor is a StorageError; the group still takes the next one."""
    closed = os.open(tmp_path / "gone", os.O_WRONLY | os.O_CREAT)
    os.close(closed)
    group = _core.GroupSync()
    with pytest.raises(StorageError, match="Bad file descriptor"):
        group.written(closed)
    with pytest.raises(StorageError):
        group.written(-1)
    group.check()
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    os.write(fd, b"x\n")
    done = threading.Event()
    ticket = group.written(fd)
    threading.Thread(target=lambda: (group.wait(ticket), done.set()), daemon=True).start()
    assert done.wait(5)
    group.flush()
    os.close(fd)


def test_a_deferred_append_is_on_disk_once_wait_synced_returns(tmp_path: Path) -> None:
    """Journal.append(defer=True) hands out a ticket; wait_synced(owed) returns once a sync covered
    it, and a plain append returns synced."""
    with Journal(tmp_path / "j", writable=True) as journal:
        before = handed_syncs()
        journal.append([{"id": "a"}], defer=True)
        assert journal.owed > 0
        journal.wait_synced(journal.owed)
        assert handed_syncs() >= before + 1
        made = handed_syncs()
        journal.append([{"id": "b"}])  # not deferred: synced before it returns
        assert handed_syncs() >= made + 1
        after = sync_counts()[0]
        journal.wait_synced(journal.owed)
        assert sync_counts()[0] == after  # nothing was left to sync


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


def test_threads_sharing_a_handle_wait_for_their_syncs_outside_the_guard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under fsync="always", 8 threads' remembers wait for their syncs with the guard let go,
    no sync covers nothing, and every write survives."""
    with Memory.open(tmp_path / "home", fsync="always") as mem:
        guard = mem._home.guard
        held_while_waiting: list[bool] = []
        real_wait = Journal.wait_synced

        def wait_synced(self: Journal, ticket: int) -> None:
            held_while_waiting.append(guard.holds())
            real_wait(self, ticket)

        monkeypatch.setattr(Journal, "wait_synced", wait_synced)
        before = handed_syncs()

        def work(n: int) -> None:
            for i in range(10):
                mem.remember(f"thread {n} note {i}", actors=[f"t{n}"], now=NOW)

        threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert held_while_waiting and not any(held_while_waiting)
        assert 1 <= handed_syncs() - before <= 80  # a sync covers at least one new ticket
    with Memory.open(tmp_path / "home") as mem:
        assert len(mem) == 80


def test_a_note_file_is_placed_only_after_its_record_is_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a facade call the journal's sync is waited for before the note's file is renamed into place."""
    from cuemem.store.notes import NoteStore

    events: list[str] = []
    real_wait, real_place = Journal.wait_synced, NoteStore.place

    def wait_spy(self: Journal, ticket: int) -> None:
        real_wait(self, ticket)
        events.append("synced")

    def place_spy(self: NoteStore, staged: Any) -> Any:
        events.append("place")
        return real_place(self, staged)

    with Memory.open(tmp_path / "home", fsync="always") as mem:
        monkeypatch.setattr(Journal, "wait_synced", wait_spy)
        monkeypatch.setattr(NoteStore, "place", place_spy)
        mem.write_note("editor", "I use vim.", kind="preference", now=NOW)
        assert events[:2] == ["synced", "place"]


def test_a_mirror_catch_up_syncs_the_lines_it_places(tmp_path: Path) -> None:
    """Journal.place under fsync="always" returns with its lines synced (nothing left owed)."""
    from cuemem.store.journal import Position

    with Journal(tmp_path / "j", writable=True) as journal:
        before = handed_syncs()
        journal.place([(Position(1, 0), b'{"id":"a"}\n')])
        assert handed_syncs() >= before + 1
        after = sync_counts()[0]
        journal.wait_synced(journal.owed)
        assert sync_counts()[0] == after


def _syncer_threads() -> set[str]:
    """The ids of this process's OS threads named as the core's syncer (Linux: /proc; else none).

    A thread may end between the listing and the read of its name (another test's handle being
    collected); it is no syncer of this test's, so it is skipped."""
    named: set[str] = set()
    tasks = Path("/proc/self/task")
    if not tasks.is_dir():
        return named
    for task in tasks.iterdir():
        try:
            name = (task / "comm").read_text().strip()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if name == "cuemem-syncer":
            named.add(task.name)
    return named


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process's threads from /proc")
def test_a_durable_remember_is_synced_on_the_cores_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under fsync="always" a remember's journal sync is the core's (no os.fsync of Python's for
    it), made on a thread of the handle's own named as the syncer."""
    before = _syncer_threads()  # other tests' workers may live on a while
    synced_here: list[str] = []  # what Python's os.fsync was asked to sync (a view's file may be)
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        synced_here.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    with Memory.open(tmp_path / "home", fsync="always") as mem:
        handed = handed_syncs()
        monkeypatch.setattr(os, "fsync", recording_fsync)
        mem.remember("Acme asked for a discount", now=NOW)
        monkeypatch.undo()
        assert handed_syncs() == handed + 1
        assert not [p for p in synced_here if "/journal/" in p]
        assert _syncer_threads() - before  # the group's worker, alive a while after its sync


# -- where the core cannot sync on its thread: the inline group ----------------------------------


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


def test_without_background_sync_the_journal_s_group_is_the_inline_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(groupsync, "BACKGROUND_SYNC", False)
    assert isinstance(group_sync(), InlineGroupSync)
    monkeypatch.setattr(groupsync, "BACKGROUND_SYNC", True)
    assert isinstance(group_sync(), _core.GroupSync)


def test_inline_every_wait_returns_after_a_sync_that_covers_its_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A writer's wait returns only once a sync made after its write covered its end offset, and
    waiting writers share syncs."""
    slow = _SlowSync()
    monkeypatch.setattr(groupsync, "sync", slow)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    group, write_lock, short = InlineGroupSync(), threading.Lock(), []

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
    assert len(slow.covered) < 80 / 2


def test_inline_a_waiter_syncs_once_for_everything_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The inline group syncs nothing at written(); the first wait syncs every ticket, flush none again."""
    slow = _SlowSync(delay=0)
    monkeypatch.setattr(groupsync, "sync", slow)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = InlineGroupSync()
    os.write(fd, b"x\n")
    first = group.written(fd)
    os.write(fd, b"y\n")
    second = group.written(fd)
    assert slow.covered == []
    group.wait(first)
    group.wait(second)
    group.flush()
    assert slow.covered == [4]
    os.close(fd)


def test_after_a_failed_sync_an_append_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a sync failed (the inline group's, whose sync a test can fail), a later append raises
    before a byte reaches the segment, and a ticket synced before stays good."""

    def broken(fd: int, policy: FsyncPolicy, **kwargs: Any) -> None:
        raise StorageError(5, "EIO")

    monkeypatch.setattr(groupsync, "BACKGROUND_SYNC", False)
    with Journal(tmp_path / "j", writable=True) as journal:
        journal.append([{"id": "a"}])
        first = journal.owed
        monkeypatch.setattr(groupsync, "sync", broken)
        with pytest.raises(StorageError, match="EIO"):
            journal.append([{"id": "b"}])
        size = sum(p.stat().st_size for p in (tmp_path / "j").iterdir())
        with pytest.raises(StorageError, match="earlier journal sync failed"):
            journal.append([{"id": "c"}])
        assert sum(p.stat().st_size for p in (tmp_path / "j").iterdir()) == size
        journal.wait_synced(first)
        monkeypatch.setattr(groupsync, "sync", sync)
        with pytest.raises(StorageError):
            journal.close()


# -- a window: fsync="interval" ------------------------------------------------------------------


def test_a_window_s_writes_share_one_sync_made_by_the_core(tmp_path: Path) -> None:
    """Many writes before the window ends cost no sync at once, one sync when it ends, none after."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = _core.GroupSync(0.2)
    try:
        before, start = handed_syncs(), time.monotonic()
        for _ in range(100):
            os.write(fd, b"x\n")
            group.written(fd)
        if time.monotonic() - start < 0.15:
            assert handed_syncs() == before
        assert _eventually(lambda: handed_syncs() == before + 1)
        time.sleep(0.3)
        assert handed_syncs() == before + 1  # nothing more to sync
        group.flush()
        assert handed_syncs() == before + 1
    finally:
        os.close(fd)


def test_flush_syncs_a_window_at_once(tmp_path: Path) -> None:
    """flush() before a descriptor closes syncs the window's writes without waiting for its end."""
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = _core.GroupSync(60)
    try:
        os.write(fd, b"a\n")
        group.written(fd)
        before, start = handed_syncs(), time.monotonic()
        group.flush()
        assert handed_syncs() == before + 1 and time.monotonic() - start < 30
        group.flush()
        assert handed_syncs() == before + 1  # nothing pending
    finally:
        os.close(fd)


@pytest.mark.skipif(sys.platform != "linux", reason="fsync of a pipe is EINVAL on Linux")
def test_a_failed_background_sync_is_raised_by_the_next_write_and_every_later_one() -> None:
    """A window's sync that failed surfaces as StorageError at the next write, and the group takes no more."""
    read, write = os.pipe()
    group = _core.GroupSync(0.01)
    os.write(write, b"x\n")
    group.written(write)
    assert _eventually(lambda: _refused(group))
    for _ in range(2):
        with pytest.raises(StorageError, match="earlier journal sync failed"):
            group.written(write)
    os.close(read)
    os.close(write)


def _refused(group: Any) -> bool:
    try:
        group.check()
    except StorageError:
        return True
    return False


@pytest.mark.parametrize("window", [-1.0, float("nan"), float("inf"), 3601.0])
def test_a_window_is_a_number_of_seconds(window: float) -> None:
    from cuemem.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="window"):
        _core.GroupSync(window)


def test_an_interval_journal_syncs_on_rotation_and_close_and_keeps_every_record(tmp_path: Path) -> None:
    """Appends across segment rotations under interval are all there after close and reopen."""
    journal = Journal(tmp_path / "j", fsync="interval", writable=True, segment_bytes=64)  # type: ignore[arg-type]
    before = sync_counts()[0]
    for i in range(20):
        journal.append([{"n": i}])
    assert len(journal.segments()) > 1
    # A sync as each segment is left (and at the close), and one a window: not one an append.
    assert sync_counts()[0] - before <= 2 * len(journal.segments()) + 2
    assert journal.owed == 0  # nothing a call waits for
    journal.close()
    assert [e.record["n"] for e in Journal(tmp_path / "j").read()] == list(range(20))


def test_memory_open_takes_interval_and_its_writes_survive_a_reopen(tmp_path: Path) -> None:
    """Memory.open(fsync="interval") remembers and recalls as always; a reopen finds every memory."""
    from datetime import date

    with Memory.open(tmp_path / "h", fsync="interval") as mem:
        ids = [mem.remember(f"note {i}", actors=["x"], now=date(2026, 6, 1)) for i in range(30)]
    with Memory.open(tmp_path / "h", read_only=True) as mem:
        assert mem.ids() == ids


def test_inline_a_window_is_synced_by_its_timer_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the core's thread a window's writes are synced once when it ends, with no one waiting."""
    slow = _SlowSync(delay=0)
    monkeypatch.setattr(groupsync, "sync", slow)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT)
    group = InlineGroupSync(0.05)
    for _ in range(10):
        os.write(fd, b"x\n")
        group.written(fd)
    assert _eventually(lambda: slow.covered == [20])
    group.flush()
    assert slow.covered == [20]
    os.close(fd)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
@pytest.mark.parametrize("fsync", ["always", "interval"])
def test_a_journal_inherited_across_fork_refuses_the_child_s_appends_and_never_hangs(tmp_path: Path, fsync: str) -> None:
    """The group's worker is the parent's: in a forked child an append raises ForkedHandleError
    at once (it would wait for a sync no thread makes) and a close returns; the parent goes on."""
    from cuemem.errors import ForkedHandleError

    journal = Journal(tmp_path / "j", fsync=fsync, writable=True)  # type: ignore[arg-type]
    journal.append([{"n": 0}])  # the worker is running, and may hold the group's lock at the fork
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            try:
                journal.append([{"n": "child"}])
                code = 1
            except ForkedHandleError:
                code = 0
            journal.close()
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20
    while (done := os.waitpid(pid, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if done[0] == 0:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung in its append or close")
    assert os.waitstatus_to_exitcode(done[1]) == 0
    journal.append([{"n": 1}])
    journal.close()
    assert [e.record["n"] for e in Journal(tmp_path / "j").read()] == [0, 1]
