"""Reading files the home keeps as regular files only, and hint files only up to their bound."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from cuemem.errors import StorageError
from cuemem.store.regular import read_regular


def test_a_file_within_the_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "hint.json"
    path.write_bytes(b"x" * 10)
    assert read_regular(path, 10) == b"x" * 10
    assert read_regular(path) == b"x" * 10


def test_a_file_past_the_limit_is_refused_not_read(tmp_path: Path) -> None:
    """One byte past the limit is an EFBIG StorageError naming the file (an OSError, as its
    readers treat an unreadable hint); without a limit the same file is read whole."""
    path = tmp_path / "hint.json"
    path.write_bytes(b"x" * 11)
    with pytest.raises(StorageError, match="hint.json holds more than 10 bytes") as info:
        read_regular(path, 10)
    assert info.value.errno == errno.EFBIG and isinstance(info.value, OSError)
    assert read_regular(path) == b"x" * 11


def test_a_file_that_grows_past_the_limit_after_it_was_opened_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The size checked at the open may be stale: no more than limit + 1 bytes are read, and
    reading that many is refused too."""
    import cuemem.store.regular as regular

    path = tmp_path / "hint.json"
    path.write_bytes(b"x" * 5)
    real_open = regular.open_regular

    def open_then_grow(p: str | os.PathLike[str]) -> tuple[object, int]:
        handle, size = real_open(p)
        with open(path, "ab") as f:
            f.write(b"y" * 100)
        return handle, size

    monkeypatch.setattr(regular, "open_regular", open_then_grow)
    with pytest.raises(StorageError, match="holds more than 10 bytes"):
        read_regular(path, 10)
