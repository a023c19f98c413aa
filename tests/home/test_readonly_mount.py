"""A home on a read-only mount: a read-only handle recalls by cues and by text; a writable open is a typed error."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cuemem import Memory, StorageError

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _run(*cmd: str) -> bool:
    return shutil.which(cmd[0]) is not None and subprocess.run(cmd, capture_output=True).returncode == 0


@pytest.fixture()
def mounted(tmp_path: Path) -> Iterator[Path]:
    """A home written in ``src``, seen through a read-only bind mount (skips where mounts are not allowed)."""
    src, mnt = tmp_path / "src", tmp_path / "mnt"
    mnt.mkdir()
    with Memory.open(src / "h", fsync="never") as mem:
        mem.remember("the apple pie recipe uses cinnamon", id="pie", actors=["ann"], now=NOW)
    if not _run("mount", "--bind", str(src), str(mnt)):
        pytest.skip("bind mounts are not allowed here")
    try:
        if not _run("mount", "-o", "remount,ro,bind", str(mnt)):
            pytest.skip("read-only remounts are not allowed here")
        yield mnt / "h"
    finally:
        _run("umount", str(mnt))


def test_a_reader_on_a_read_only_mount_recalls_by_cues_and_text(mounted: Path) -> None:
    """The text index opens without writing a lock file; both kinds of recall answer."""
    with Memory.open(mounted, read_only=True) as mem:
        assert mem.open_report.text == "loaded"
        assert [h.id for h in mem.recall(text="apple pie", now=NOW).hits] == ["pie"]
        assert [h.id for h in mem.recall({"actor": "ann"}, now=NOW).hits] == ["pie"]
        mem.refresh()


def test_a_writable_open_on_a_read_only_mount_is_a_storage_error(mounted: Path) -> None:
    """No lock can be taken: StorageError naming the mount's error, nothing written."""
    with pytest.raises(StorageError, match="Read-only file system"):
        Memory.open(mounted)
