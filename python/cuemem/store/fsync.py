"""Durability policy: when written bytes are forced to stable storage.

Two policies, chosen per journal:

``FsyncPolicy.ALWAYS`` (the default)
    Every ``Journal.append`` call is one write per segment it touches followed by
    ``os.fsync`` before the call returns, so an acknowledged append survives a process
    crash and a power loss. A call with many records is one grouped commit: one fsync
    for the whole batch, not one per record. Creating a segment also fsyncs the journal
    directory, so the new file's name is durable too.

``FsyncPolicy.NEVER``
    Writes go to the operating system's page cache and reach the disk when the kernel
    decides. An acknowledged append still survives the *process* dying (the kernel
    holds the bytes), but not a machine crash or power loss. Meant for throwaway homes:
    tests, benchmarks, scratch agents.

Every fsync cuemem performs goes through :func:`sync` (a file or directory descriptor),
so the policy is decided in one place.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path

from ..errors import StorageError

__all__ = ["FsyncPolicy", "replace_file", "sync", "sync_directory", "write_atomic"]


class FsyncPolicy(str, Enum):
    """When writes are forced to disk; see the module docstring for the guarantees."""

    ALWAYS = "always"
    NEVER = "never"


def sync(fd: int, policy: FsyncPolicy) -> None:
    """Forces ``fd``'s written bytes to disk under ``ALWAYS``; does nothing under ``NEVER``.

    Args:
        fd: an open file or directory descriptor.
        policy: the durability policy in force.

    Raises:
        StorageError: the file system refused the fsync.
    """
    if policy is FsyncPolicy.NEVER:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        raise StorageError(f"fsync failed: {exc}") from exc


def sync_directory(path: Path, policy: FsyncPolicy) -> None:
    """Makes entries created in directory ``path`` durable (under ``ALWAYS``).

    Args:
        path: the directory whose entries (new files) must survive a crash.
        policy: the durability policy in force.

    Raises:
        StorageError: the directory cannot be opened or fsynced.
    """
    if policy is FsyncPolicy.NEVER:
        return
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        raise StorageError(f"cannot open directory {path} to fsync it: {exc}") from exc
    try:
        sync(fd, policy)
    finally:
        os.close(fd)


def replace_file(path: Path, data: bytes, policy: FsyncPolicy) -> None:
    """Writes ``data`` to a temporary file beside ``path``, syncs it (as ``policy``
    says) and renames it over ``path``; the directory is left for the caller to sync.

    Raises:
        OSError: the file system refused; no temporary file is left behind.
    """
    temp = path.with_name(f".{path.name}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            sync(fd, policy)
        finally:
            os.close(fd)
        os.replace(temp, path)
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
