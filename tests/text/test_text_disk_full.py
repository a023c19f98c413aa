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
    """A tmpfs of ``kib`` KiB at ``mount`` (root only; the test is skipped where it cannot be mounted)."""
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root and mount(8)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_while_the_text_index_is_built_is_a_storage_error(tmp_path: Path) -> None:
    """The journal fits the disk, its text index does not: opening raises StorageError with ENOSPC."""
    base = tmp_path / "h"
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
    with Memory.open(base, fsync="never") as mem:
        mem.import_records(
            [{"narrative": " ".join(f"{words[(i * 7 + j) % 12]}{i % 977}x{j}" for j in range(40))} for i in range(2000)],
            now=date(2026, 1, 1),
        )
    shutil.rmtree(base / "index")
    journal = sum(p.stat().st_size for p in (base / "journal").iterdir())
    with _small_disk(tmp_path / "disk", journal // 1024 + 160) as disk:  # the journal and a little: not its text index
        home = disk / "h"
        shutil.copytree(base, home)
        with pytest.raises(StorageError) as caught:
            Memory.open(home, fsync="never").close()
    assert caught.value.errno == errno.ENOSPC and "no space left on device" in str(caught.value).lower()
