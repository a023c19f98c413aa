"""The fsync policy's platform fallbacks: no directory sync on Windows, no syncfs off Linux."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

import pytest

from cuemem.errors import StorageError
from cuemem.store import fsync
from cuemem.store.fsync import FsyncPolicy, place_files, stage_files, sync, sync_directory, write_atomic


class FsyncSpy:
    """Stands in for ``os.fsync``: records each descriptor's kind, fails directories with ``fail``."""

    def __init__(self, fail: int | None = None) -> None:
        self.calls: list[str] = []
        self.fail = fail
        self.real = os.fsync

    def __call__(self, fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        self.calls.append(kind)
        if self.fail is not None and kind == "dir":
            raise OSError(self.fail, os.strerror(self.fail))
        self.real(fd)


def test_without_directory_sync_no_directory_is_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where directories cannot be synced (Windows), sync_directory and write_atomic skip it."""
    spy = FsyncSpy()
    monkeypatch.setattr(os, "fsync", spy)
    monkeypatch.setattr(fsync, "DIRECTORY_SYNC", False)
    sync_directory(tmp_path / "never-created", FsyncPolicy.ALWAYS)  # not even opened
    write_atomic(tmp_path / "a.json", b"{}", FsyncPolicy.ALWAYS)
    assert (tmp_path / "a.json").read_bytes() == b"{}"
    assert spy.calls == ["file"]


def test_directory_sync_runs_where_the_platform_has_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On POSIX write_atomic syncs the file, then its directory."""
    spy = FsyncSpy()
    monkeypatch.setattr(os, "fsync", spy)
    monkeypatch.setattr(fsync, "DIRECTORY_SYNC", True)
    write_atomic(tmp_path / "a.json", b"{}", FsyncPolicy.ALWAYS)
    assert spy.calls == ["file", "dir"]


def test_a_file_system_without_directory_sync_is_not_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EINVAL from a directory's fsync means the file system has none: the write stands."""
    monkeypatch.setattr(os, "fsync", FsyncSpy(fail=errno.EINVAL))
    monkeypatch.setattr(fsync, "DIRECTORY_SYNC", True)
    write_atomic(tmp_path / "a.json", b"{}", FsyncPolicy.ALWAYS)
    assert (tmp_path / "a.json").read_bytes() == b"{}"


def test_a_failing_directory_sync_is_a_storage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Any other errno from a directory's fsync is a StorageError carrying it."""
    monkeypatch.setattr(os, "fsync", FsyncSpy(fail=errno.EIO))
    monkeypatch.setattr(fsync, "DIRECTORY_SYNC", True)
    with pytest.raises(StorageError) as info:
        sync_directory(tmp_path, FsyncPolicy.ALWAYS)
    assert info.value.errno == errno.EIO


def test_einval_from_a_file_is_still_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a directory may lack fsync: EINVAL on a file's is a StorageError."""

    def refuse(fd: int) -> None:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(os, "fsync", refuse)
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        with pytest.raises(StorageError) as info:
            sync(fd, FsyncPolicy.ALWAYS)
    finally:
        os.close(fd)
    assert info.value.errno == errno.EINVAL


def test_without_syncfs_a_batch_syncs_file_by_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Off Linux (no syncfs) a batch of notes fsyncs each staged file and the directory."""
    spy = FsyncSpy()
    monkeypatch.setattr(os, "fsync", spy)
    monkeypatch.setattr(fsync, "_syncfs", None)
    monkeypatch.setattr(fsync, "DIRECTORY_SYNC", True)
    files = [(tmp_path / f"n{i}.md", f"note {i}".encode()) for i in range(4)]
    staged = stage_files(tmp_path, files, FsyncPolicy.ALWAYS)
    assert spy.calls == ["file"] * 4 + ["dir"]
    place_files(tmp_path, staged, FsyncPolicy.ALWAYS)
    assert [p.read_bytes() for p, _ in files] == [d for _, d in files]


def test_the_syncfs_lookup_tolerates_a_missing_ctypes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ctypes (or off Linux) there is no syncfs, and no error."""
    monkeypatch.setitem(sys.modules, "ctypes", None)
    assert fsync._load_syncfs() is None
    monkeypatch.setattr(sys, "platform", "win32")
    assert fsync._load_syncfs() is None
