"""The writer lock: one holder at a time across processes, released when the holder dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cuemem.errors import HomeLockedError, InvalidArgumentError, StorageError
from cuemem.store.lock import WriterLock

#: A child that takes the lock, says so, then waits (or releases after ``hold`` seconds).
HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from cuemem.store.lock import WriterLock
    lock = WriterLock(Path(sys.argv[1]))
    lock.acquire(timeout=30)
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    lock.release()
    print("released", flush=True)
    time.sleep(60)
    """
)

Spawn = Callable[[float], "subprocess.Popen[str]"]


@pytest.fixture
def lock_path(tmp_path: Path) -> Path:
    """Where the lock file goes."""
    return tmp_path / "writer.lock"


@pytest.fixture
def spawn(lock_path: Path) -> Iterator[Spawn]:
    """Starts holder processes and kills whatever is left of them at the end."""
    procs: list[subprocess.Popen[str]] = []

    def start(hold: float) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(lock_path), str(hold)],
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "held"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def test_acquire_release_and_context_manager(lock_path: Path) -> None:
    """A free lock is taken, reported held, released, and taken again."""
    lock = WriterLock(lock_path)
    lock.acquire()
    assert lock.held
    assert lock_path.read_text().strip() == str(os.getpid())
    lock.release()
    assert not lock.held
    lock.release()  # releasing twice is harmless
    with WriterLock(lock_path) as again:
        assert again.held
    assert not again.held


def test_second_lock_in_the_same_process_is_refused(lock_path: Path) -> None:
    """Two lock objects on one file exclude each other even inside one process."""
    with WriterLock(lock_path):
        with pytest.raises(HomeLockedError) as info:
            WriterLock(lock_path).acquire()
    assert info.value.filename == str(lock_path)
    assert f"process {os.getpid()}" in str(info.value)


def test_another_process_is_refused_with_the_holder_named(lock_path: Path, spawn: Spawn) -> None:
    """While a child holds the lock, acquire fails naming the file and the child's pid."""
    proc = spawn(60)
    with pytest.raises(HomeLockedError) as info:
        WriterLock(lock_path).acquire()
    assert isinstance(info.value, BlockingIOError)
    assert str(lock_path) in str(info.value)
    assert f"process {proc.pid}" in str(info.value)


def test_waiting_acquire_succeeds_after_the_holder_releases(lock_path: Path, spawn: Spawn) -> None:
    """acquire(timeout) keeps trying and gets the lock once the child lets go."""
    proc = spawn(0.3)
    lock = WriterLock(lock_path)
    lock.acquire(timeout=30)
    try:
        assert lock.held
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "released"
    finally:
        lock.release()


def test_lock_is_released_when_the_holder_is_killed(lock_path: Path, spawn: Spawn) -> None:
    """A SIGKILLed holder leaves the lock free (the kernel drops flock locks)."""
    proc = spawn(60)
    with pytest.raises(HomeLockedError):
        WriterLock(lock_path).acquire()
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with WriterLock(lock_path) as lock:
        assert lock.held
        assert lock_path.read_text().strip() == str(os.getpid())


@pytest.mark.parametrize("timeout", [-1.0, float("nan"), float("inf"), "1", True])
def test_bad_timeouts_are_refused(lock_path: Path, timeout: object) -> None:
    """A negative, non-finite or non-numeric timeout is an InvalidArgumentError."""
    lock = WriterLock(lock_path)
    with pytest.raises(InvalidArgumentError):
        lock.acquire(timeout=timeout)  # type: ignore[arg-type]
    assert not lock.held


def test_missing_directory_is_a_storage_error(tmp_path: Path) -> None:
    """A lock file in a directory that does not exist cannot be opened."""
    with pytest.raises(StorageError):
        WriterLock(tmp_path / "nope" / "writer.lock").acquire()
