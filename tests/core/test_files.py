"""The core's file helpers as Python meets them: ``write_all`` (the journal's append)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cuemem import _core
from cuemem.errors import CueTypeError, StorageError

pytestmark = pytest.mark.skipif(not hasattr(_core, "write_all"), reason="the core writes POSIX descriptors only")


@pytest.mark.parametrize("size", [0, 1, 300, 64 * 1024 - 1, 64 * 1024, 3 * 1024 * 1024 + 7])
@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_write_all_writes_every_byte_short_or_long(tmp_path: Path, size: int, kind: type) -> None:
    """Short writes keep the GIL, long ones let it go: the file holds the bytes either way, appended."""
    data = kind(bytes(range(256)) * (size // 256) + bytes(size % 256))
    fd = os.open(tmp_path / "f", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        _core.write_all(fd, b"head\n")
        _core.write_all(fd, data)
    finally:
        os.close(fd)
    assert (tmp_path / "f").read_bytes() == b"head\n" + bytes(data)


def test_write_all_fails_typed_and_writes_nothing_it_cannot(tmp_path: Path) -> None:
    """A closed or read-only descriptor is a StorageError with its errno; a str is a CueTypeError."""
    path = tmp_path / "f"
    path.write_bytes(b"kept\n")
    closed = os.open(path, os.O_RDONLY)
    os.close(closed)
    with pytest.raises(StorageError) as bad:
        _core.write_all(closed, b"x")
    assert bad.value.errno == 9
    with pytest.raises(StorageError):
        _core.write_all(-1, b"x")
    read_only = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(StorageError):
            _core.write_all(read_only, bytearray(b"x"))
        with pytest.raises(CueTypeError):
            _core.write_all(read_only, "text")  # type: ignore[arg-type]
    finally:
        os.close(read_only)
    assert path.read_bytes() == b"kept\n"
