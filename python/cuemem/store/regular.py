"""Opening a file that must be a regular file, never waiting on one that is not.

A FIFO in place of a file blocks an ``open`` for reading until something writes to it; a
device or ``/proc/self/mem`` reads forever or fails. A file the home reads whole (a
forget's intent, a cache or hint file under ``index/``) or a user hands over (an import)
is refused unless it is a regular file (after links are resolved): checked before the
open, then opened without blocking and checked again, so a file swapped for a FIFO in
between is refused too. A hint file (a small JSON file cuemem writes beside its caches) is
read up to :data:`HINT_BYTES`: one that is larger is no hint cuemem wrote, and is refused
rather than read whole into memory.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from ..errors import InvalidArgumentError, StorageError

__all__ = ["HINT_BYTES", "open_regular", "read_regular"]

#: The most a hint file is read of (its writer keeps it far smaller: a fingerprint per
#: journal segment, a line per note).
HINT_BYTES = 64 << 20


def open_regular(path: str | os.PathLike[str]) -> tuple[BinaryIO, int]:
    """The regular file at ``path``, open for reading, and its size.

    Raises:
        InvalidArgumentError: it is not a regular file (the message names what it is).
        FileNotFoundError: there is nothing there.
        StorageError: it cannot be opened.
    """
    try:
        _regular(os.stat(path).st_mode, path)
        handle = open(path, "rb", opener=_nonblocking)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StorageError(exc.errno or 0, f"cannot read {os.fspath(path)}: {exc.strerror}") from None
    try:
        info = os.fstat(handle.fileno())
        _regular(info.st_mode, path)
    except BaseException:
        handle.close()
        raise
    return handle, info.st_size


def read_regular(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file at ``path``, a file the home keeps (a cache, a hint):
    what is not a regular file is an error its reader treats as it treats an unreadable one.
    With ``limit`` (:data:`HINT_BYTES` for a hint), a file of more bytes is such an error
    too, and no more than ``limit + 1`` bytes of it are read (it may grow meanwhile).

    Raises:
        FileNotFoundError: there is nothing there.
        StorageError: it is not a regular file (EINVAL), it holds more than ``limit`` bytes
            (EFBIG), or it cannot be read.
    """
    try:
        handle, size = open_regular(path)
    except InvalidArgumentError as exc:
        raise StorageError(errno.EINVAL, str(exc)) from None
    with handle:
        if limit is not None and size > limit:
            raise StorageError(errno.EFBIG, _too_big(path, limit))
        try:
            data = handle.read() if limit is None else handle.read(limit + 1)
        except OSError as exc:
            raise StorageError(exc.errno or 0, f"cannot read {os.fspath(path)}: {exc.strerror}") from None
    if limit is not None and len(data) > limit:
        raise StorageError(errno.EFBIG, _too_big(path, limit))
    return data


def _too_big(path: str | os.PathLike[str], limit: int) -> str:
    return f"{os.fspath(path)} holds more than {limit} bytes: no file cuemem wrote there is that large"


def _regular(mode: int, path: str | os.PathLike[str]) -> None:
    if not stat.S_ISREG(mode):
        kind = (
            "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
        )
        raise InvalidArgumentError(f"{os.fspath(path)} is {kind}, not a regular file")


def _nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
