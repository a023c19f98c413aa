"""The fsync policy's platform fallbacks: no directory sync on Windows, no syncfs off Linux."""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

import pytest

from cuemem.errors import InvalidArgumentError, StorageError
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
    """Off Linux (no syncfs) a batch of notes fsyncs each staged file (in the core) and the directory."""
    spy = FsyncSpy()
    monkeypatch.setattr(os, "fsync", spy)
    monkeypatch.setattr(fsync, "_syncfs", None)
    monkeypatch.setattr(fsync, "DIRECTORY_SYNC", True)
    files = [(f"n{i}.md", f"note {i}".encode()) for i in range(4)]
    before = fsync.sync_counts()
    staged = stage_files(tmp_path, files, FsyncPolicy.ALWAYS)
    assert spy.calls == ["dir"] and fsync.sync_counts()[0] - before[0] == 4 + 1
    place_files(tmp_path, staged, FsyncPolicy.ALWAYS)
    assert [(tmp_path / n).read_bytes() for n, _ in files] == [d for _, d in files]


def test_a_batch_is_staged_hidden_then_placed_with_the_stats_of_its_files(tmp_path: Path) -> None:
    """Staging writes only ``.<name>.pending`` files; placing renames them and says what a stat reads."""
    (tmp_path / "old.md").write_bytes(b"old")
    files = [("new.md", b"new text"), ("old.md", b"replaced")]
    staged = stage_files(tmp_path, files, FsyncPolicy.NEVER)
    assert staged == ["new.md", "old.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".new.md.pending", ".old.md.pending", "old.md"]
    assert (tmp_path / "old.md").read_bytes() == b"old"
    stats = place_files(tmp_path, staged, FsyncPolicy.NEVER)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.md", "old.md"]
    assert (tmp_path / "old.md").read_bytes() == b"replaced"
    for name, got in zip(staged, stats):
        st = os.stat(tmp_path / name)
        assert got == (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


@pytest.mark.skipif(os.name != "posix", reason="permissions are POSIX modes")
def test_a_staged_file_keeps_the_permissions_of_the_file_it_replaces(tmp_path: Path) -> None:
    """A replaced file keeps its mode; a new one gets the mode asked for, whatever the umask."""
    (tmp_path / "kept.md").write_bytes(b"x")
    os.chmod(tmp_path / "kept.md", 0o640)
    old = os.umask(0o077)
    try:
        staged = stage_files(tmp_path, [("kept.md", b"y"), ("fresh.md", b"z")], FsyncPolicy.NEVER, mode=0o644)
    finally:
        os.umask(old)
    place_files(tmp_path, staged, FsyncPolicy.NEVER)
    assert stat.S_IMODE(os.stat(tmp_path / "kept.md").st_mode) == 0o640
    assert stat.S_IMODE(os.stat(tmp_path / "fresh.md").st_mode) == 0o644


@pytest.mark.parametrize("blocker", ["folder", "dangling link"])
def test_a_batch_meeting_something_that_is_not_a_file_writes_nothing(tmp_path: Path, blocker: str) -> None:
    """A folder (or a link to nothing) where a file goes: a StorageError naming it, and no pending file is left."""
    if blocker == "folder":
        (tmp_path / "n2.md").mkdir()
    else:
        os.symlink(tmp_path / "nowhere", tmp_path / "n2.md")
    files = [(f"n{i}.md", b"text") for i in range(5)]
    with pytest.raises(StorageError, match="n2.md"):
        stage_files(tmp_path, files, FsyncPolicy.ALWAYS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n2.md"]


@pytest.mark.parametrize("name", ["../escape.md", "sub/n.md", "..", "."])
def test_a_name_that_is_not_one_entry_of_the_directory_is_refused(tmp_path: Path, name: str) -> None:
    """The core writes only directory entries of ``directory``: a path elsewhere is a StorageError."""
    inner = tmp_path / "inner"
    inner.mkdir()
    with pytest.raises(StorageError):
        stage_files(inner, [(name, b"x")], FsyncPolicy.NEVER)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["inner"]


def test_placing_what_was_never_staged_is_a_storage_error(tmp_path: Path) -> None:
    """A rename that fails names the pending file; what was placed before it stays placed."""
    staged = stage_files(tmp_path, [("a.md", b"a")], FsyncPolicy.NEVER)
    with pytest.raises(StorageError, match=r"\.b\.md\.pending"):
        place_files(tmp_path, [*staged, "b.md"], FsyncPolicy.NEVER)
    assert (tmp_path / "a.md").read_bytes() == b"a"


def test_the_syncfs_lookup_tolerates_a_missing_ctypes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ctypes (or off Linux) there is no syncfs, and no error."""
    monkeypatch.setitem(sys.modules, "ctypes", None)
    assert fsync._load_syncfs() is None
    monkeypatch.setattr(sys, "platform", "win32")
    assert fsync._load_syncfs() is None


def test_a_batch_naming_a_file_twice_is_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    """Two entries of one name would race for one pending file: an InvalidArgumentError, nothing written."""
    with pytest.raises(InvalidArgumentError, match="twice"):
        stage_files(tmp_path, [("a.md", b"1"), ("b.md", b"2"), ("a.md", b"3")], FsyncPolicy.ALWAYS)
    assert list(tmp_path.iterdir()) == []
