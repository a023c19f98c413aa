"""A full disk while the text index is built is a StorageError naming it, not a bare CuememError."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.errors import StorageError


@contextlib.contextmanager
def _small_disk(mount: Path, kib: int) -> Iterator[Path]:
    """A tmpfs of ``kib`` KiB at ``mount``. Mounting needs root: elsewhere the test is skipped,
    unless ``CUEMEM_REQUIRE_TMPFS`` is set (``.ci/run`` sets it), where that is a failure."""
    mount.mkdir()
    unable = pytest.fail if os.environ.get("CUEMEM_REQUIRE_TMPFS") else pytest.skip
    if os.geteuid() != 0 or shutil.which("mount") is None:
        unable("mounting a small tmpfs needs root and mount(8)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        unable(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _journal_only(tmp_path: Path, records: int, words_each: int, vocabulary: int) -> tuple[Path, int]:
    """A home of ``records`` memories whose index was deleted (the next open builds it), and its journal's size."""
    base = tmp_path / "h"
    words = [f"w{i}x" for i in range(vocabulary)]
    with Memory.open(base, fsync="never") as mem:
        mem.import_records(
            [{"narrative": " ".join(words[(i * 7919 + j * 104729) % vocabulary] for j in range(words_each))} for i in range(records)],
            now=date(2026, 1, 1),
        )
    shutil.rmtree(base / "index")
    return base, sum(p.stat().st_size for p in (base / "journal").iterdir())


def _open_on_a_small_disk(tmp_path: Path, base: Path, kib: int) -> pytest.ExceptionInfo[StorageError]:
    with _small_disk(tmp_path / "disk", kib) as disk:
        home = disk / "h"
        shutil.copytree(base, home)
        with pytest.raises(StorageError) as caught:
            Memory.open(home, fsync="never").close()
    assert caught.value.errno == errno.ENOSPC and "no space left on device" in str(caught.value).lower()
    return caught


def test_a_full_disk_while_the_text_index_is_committed_is_a_storage_error(tmp_path: Path) -> None:
    """The journal fits the disk, its text index does not: opening raises StorageError with ENOSPC."""
    base, journal = _journal_only(tmp_path, 2000, 40, 12 * 977)
    _open_on_a_small_disk(tmp_path, base, journal // 1024 + 160)  # the journal and a little: not its text index


def test_a_full_disk_in_the_text_writer_s_threads_is_a_storage_error(tmp_path: Path) -> None:
    """Enough text that the writer's threads write segments while documents are still fed:
    the disk fills in one of them, and what learns of it first (a hand-over of documents to
    the threads, or the commit that joins them) is a StorageError with ENOSPC (it was a bare
    CuememError, "an error occurred in a thread")."""
    base, journal = _journal_only(tmp_path, 100_000, 60, 50_000)
    _open_on_a_small_disk(tmp_path, base, journal // 1024 + 300)
