"""Durability policy: when written bytes are forced to stable storage.

Three policies, chosen per home:

``FsyncPolicy.ALWAYS`` (the default)
    Every ``Journal.append`` call is one write per segment it touches followed by
    ``os.fsync`` before the call returns, so an acknowledged append survives a process
    crash and a power loss. A call with many records is one grouped commit: one fsync
    for the whole batch, not one per record. Creating a segment also fsyncs the journal
    directory, so the new file's name is durable too.

``FsyncPolicy.INTERVAL``
    The journal's appends are written at once and synced within 50 ms, one sync for every
    append of that window (:mod:`cuemem.store.groupsync`): an acknowledged append survives
    a process crash, and a machine crash or power loss may lose the last 50 ms of them.
    Everything else (note files, index caches, a forget's tombstones) is synced as under
    ``ALWAYS``. For callers who write often and choose that window.

``FsyncPolicy.NEVER``
    Writes go to the operating system's page cache and reach the disk when the kernel
    decides. An acknowledged append still survives the *process* dying (the kernel
    holds the bytes), but not a machine crash or power loss. Meant for throwaway homes:
    tests, benchmarks, scratch agents.

Every fsync cuemem performs goes through :func:`sync` (a file or directory descriptor),
so the policy is decided in one place, and every file replaced whole (note files, index
caches) goes through :func:`replace_file` — a temporary file beside it, synced, renamed
over it — alone (:func:`write_atomic`), or is staged and placed as a batch sharing one
flush (:func:`stage_files`, :func:`place_files`).

Portability: a directory is synced where the platform can (POSIX); Windows cannot open
a directory to fsync it, and there :func:`sync_directory` does nothing (NTFS journals
its own metadata), as it does on a file system that answers ``EINVAL`` (it has no
directory sync). ``syncfs`` is looked up through ``ctypes`` on Linux only; anywhere
else, or where the C library lacks it, batches sync file by file.

Every flush is counted (:func:`sync_counts`): a measurement of what a write costs in
syncs (``tests/store/test_fsync.py``, ``tests/jobs/test_job_syncs.py``), not a switch.
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path

from .. import _core
from ..errors import InvalidArgumentError, StorageError

__all__ = [
    "BACKGROUND_SYNC", "FsyncPolicy", "final_path", "handed_syncs", "pending_path", "place_files", "remove_quietly", "replace_file", "stage_files", "sync", "sync_counts",
    "sync_directory", "write_atomic",
]

#: Flushes made so far in this process by this module: [fsync calls, syncfs calls].
_COUNTS = [0, 0]


def sync_counts() -> tuple[int, int]:
    """How many flushes this process asked the file system for so far: ``(fsync calls, syncfs
    calls)``, this module's and the journal's group commit's (:func:`handed_syncs`); subtract
    two readings to count what one write cost."""
    return _COUNTS[0] + _core.group_syncs(), _COUNTS[1]


def handed_syncs() -> int:
    """How many of :func:`sync_counts`' fsync calls so far were made by the journal's group
    commit on the core's thread (:mod:`~cuemem.store.groupsync`), where ``os.fsync`` is not the
    function that makes them."""
    return _core.group_syncs()


class FsyncPolicy(str, Enum):
    """When writes are forced to disk; see the module docstring for the guarantees."""

    ALWAYS = "always"
    INTERVAL = "interval"
    NEVER = "never"


def sync(fd: int, policy: FsyncPolicy, *, directory: bool = False) -> None:
    """Forces ``fd``'s written bytes to disk under ``ALWAYS`` (and ``INTERVAL``, whose
    journal appends the core's group commit syncs within its window); nothing under ``NEVER``.

    Args:
        fd: an open file or directory descriptor.
        policy: the durability policy in force.
        directory: ``fd`` is a directory: a file system that cannot sync one (``EINVAL``)
            is not an error.

    Raises:
        StorageError: the file system refused the fsync.
    """
    if policy is FsyncPolicy.NEVER:
        return
    _COUNTS[0] += 1
    try:
        os.fsync(fd)
    except OSError as exc:
        if directory and exc.errno == errno.EINVAL:
            return
        raise StorageError(exc.errno or 0, f"fsync failed: {exc.strerror}") from exc



#: Whether the journal's group commit can sync on the core's thread here (POSIX descriptors).
BACKGROUND_SYNC = os.name == "posix"


#: Whether directories can be opened and fsynced here (not on Windows).
DIRECTORY_SYNC = os.name != "nt"


def sync_directory(path: Path, policy: FsyncPolicy) -> None:
    """Makes entries created in directory ``path`` durable (under ``ALWAYS``, where
    :data:`DIRECTORY_SYNC`; a file system answering ``EINVAL`` has nothing to sync).

    Args:
        path: the directory whose entries (new files) must survive a crash.
        policy: the durability policy in force.

    Raises:
        StorageError: the directory cannot be opened or fsynced.
    """
    if policy is FsyncPolicy.NEVER or not DIRECTORY_SYNC:
        return
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise StorageError(f"cannot open directory {path} to fsync it: {exc}") from exc
    try:
        sync(fd, policy, directory=True)
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes, policy: FsyncPolicy, *, mode: int | None = None) -> None:
    """Writes ``data`` to a temporary file beside ``path``, syncs it (as ``policy``
    says) and renames it over ``path``; the directory is left for the caller to sync.

    Args:
        mode: Permissions of a new file (an existing file keeps its own); default 0o644.

    Raises:
        OSError: the file system refused; no temporary file is left behind.
    """
    temp = path.with_name(f".{path.name}.tmp")
    _write_beside(path, temp, data, policy, mode)
    try:
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)
        raise


def _write_beside(path: Path, temp: Path, data: bytes, policy: FsyncPolicy, mode: int | None) -> None:
    """Writes ``data`` to ``temp`` (synced as ``policy`` says), with ``path``'s permissions
    if it exists, else ``mode`` (default 0o644).

    Raises:
        OSError: the file system refused; ``temp`` is removed.
    """
    try:
        keep = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        keep = 0o644 if mode is None else mode
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, keep)
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, keep)  # the umask and an old temporary file do not decide it
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            sync(fd, policy)
        finally:
            os.close(fd)
    except OSError:
        temp.unlink(missing_ok=True)
        raise


def write_atomic(path: Path, data: bytes, policy: FsyncPolicy = FsyncPolicy.ALWAYS) -> None:
    """Replaces ``path`` with ``data`` so that readers see the old file or the new one.

    Writes a temporary file beside it, syncs it, renames it over ``path`` and syncs
    the directory (each sync as ``policy`` says).

    Raises:
        StorageError: the file system refused; ``path`` is as it was and no temporary
            file is left behind.
    """
    try:
        replace_file(path, data, policy)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc}") from exc
    sync_directory(path.parent, policy)


#: What a staged file's name adds to its final name (after a leading dot).
PENDING_SUFFIX = ".pending"


def pending_path(path: Path) -> Path:
    """Where :func:`stage_files` writes ``path``'s new content: ``.<name>.pending`` beside it."""
    return path.with_name(f".{path.name}{PENDING_SUFFIX}")


def stage_files(directory: Path, files: Sequence[tuple[str, bytes]], policy: FsyncPolicy, *, mode: int | None = None) -> list[str]:
    """Writes each ``(name, data)`` to its hidden pending file in ``directory``
    (``.<name>.pending``, :func:`pending_path`), durable as a batch (as ``policy`` says);
    nothing is replaced yet. :func:`place_files` renames them into place — after the caller
    has recorded what they hold, so that a crash between the two leaves files that recovery
    can finish or discard, never a file nobody wrote.

    The files are written by the core, in parallel and without the GIL. A pending file gets
    the permissions of the file it will replace, else ``mode`` (default 0o644), whatever the
    umask. A batch of many files (a job's notes) is flushed with one ``syncfs`` of their
    file system where the platform has it — about the cost of two per-file fsyncs, and like
    them it reports write-back errors — else each file is synced, then the directory.

    Returns:
        The names staged, in order (what :func:`place_files` takes).

    Raises:
        InvalidArgumentError: a name is given twice (nothing is written).
        StorageError: something that is not a file stands at a name, or the file system
            refused; no pending file of the batch is left.
    """
    if not files:
        return []
    names = [name for name, _ in files]
    if len(set(names)) != len(names):
        raise InvalidArgumentError("a batch of files names one file twice: each name is staged once")
    batched = policy is FsyncPolicy.ALWAYS and _syncfs is not None and len(files) > 2
    sync_each = policy is not FsyncPolicy.NEVER and not batched
    try:
        directory.mkdir(parents=True, exist_ok=True)
        _core.write_pending(directory, files, mode=0o644 if mode is None else mode, sync_each=sync_each)
        if sync_each:
            _COUNTS[0] += len(files)
        if batched:
            _sync_file_system(directory)
        else:
            sync_directory(directory, policy)
    except (OSError, StorageError) as exc:
        for name in names:
            remove_quietly(directory / f".{name}{PENDING_SUFFIX}")
        if isinstance(exc, StorageError):
            raise
        raise StorageError(exc.errno or 0, f"cannot write under {directory}: {exc.strerror}") from None
    return names


def place_files(directory: Path, names: Sequence[str], policy: FsyncPolicy) -> list[tuple[int, int, int, int] | None]:
    """Renames the staged pending files of ``names`` over their names, in order, then syncs
    the directory.

    Returns:
        What a stat of each placed file reads, ``(size, mtime_ns, ctime_ns, inode)``, or
        None where it failed.

    Raises:
        StorageError: the file system refused; files not yet renamed stay pending.
    """
    if not names:
        return []
    stats = _core.place_pending(directory, list(names))
    sync_directory(directory, policy)
    return stats


def remove_quietly(path: Path) -> None:
    """Deletes ``path`` if it can (a leftover: a file missing or kept is no error)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def final_path(pending: Path) -> Path:
    """The file a pending file becomes (the inverse of :func:`pending_path`)."""
    name = pending.name
    if not (name.startswith(".") and name.endswith(PENDING_SUFFIX)):
        raise ValueError(f"{pending} is not a pending file")
    return pending.with_name(name[1 : -len(PENDING_SUFFIX)])


def _load_syncfs() -> Callable[[int], int] | None:
    """``syncfs(2)`` where the C library has it (Linux), else None (also without ``ctypes``)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn: Callable[[int], int] = libc.syncfs
    except (ImportError, OSError, AttributeError):
        return None
    return fn


_syncfs = _load_syncfs()


def _sync_file_system(directory: Path) -> None:
    """Flushes the file system holding ``directory`` with one ``syncfs`` call.

    Raises:
        StorageError: the flush failed.
    """
    assert _syncfs is not None
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot open {directory} to flush it: {exc.strerror}") from None
    _COUNTS[1] += 1
    try:
        if _syncfs(fd) != 0:
            import ctypes  # present: _syncfs came from it

            err = ctypes.get_errno()
            raise StorageError(err, f"syncfs of {directory} failed: {os.strerror(err)}")
    finally:
        os.close(fd)
