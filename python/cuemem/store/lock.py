"""The writer lock: one writing process per home, any number of readers.

The lock is an exclusive lock on a lock file, taken through ``portalocker``: ``flock``
on POSIX, ``msvcrt.locking`` on Windows. Both belong to the open file (a descriptor or
handle), so two :class:`WriterLock` objects on the same path exclude each other even
inside one process, and the operating system drops the lock when the holding process
exits or dies (even by ``SIGKILL``), so a crashed writer never leaves a home locked.
Readers take no lock: they only read the append-only journal.

The holder writes its pid into the file so a refused writer can say who holds the lock.
The pid is advisory: where the platform keeps a locked file's bytes from other
processes (Windows), the refusal names "another process" instead.

No POSIX-only module is imported here; ``portalocker`` picks the platform's call. It is
imported by the first :meth:`WriterLock.acquire`: a read-only handle, which takes no lock,
does not load it (nor the package metadata it reads when imported).
"""

from __future__ import annotations

import errno
import math
import os
import time
from pathlib import Path
from types import TracebackType

from .. import _scalars
from ..errors import HomeLockedError, InvalidArgumentError, StorageError

__all__ = ["WriterLock"]

#: Seconds between attempts while :meth:`WriterLock.acquire` waits.
POLL_INTERVAL = 0.02

#: Bytes read back as the holder's pid: enough for any pid and its newline.
_PID_BYTES = 32


class WriterLock:
    """An exclusive, process-scoped lock on ``path`` (created if missing).

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> with tempfile.TemporaryDirectory() as home:
        ...     with WriterLock(Path(home) / "writer.lock") as lock:
        ...         lock.held
        True
    """

    __slots__ = ("_fd", "_path")

    def __init__(self, path: Path) -> None:
        self._path = Path(path)
        self._fd: int | None = None

    @property
    def path(self) -> Path:
        """The lock file."""
        return self._path

    @property
    def held(self) -> bool:
        """Whether this object currently holds the lock."""
        return self._fd is not None

    def acquire(self, timeout: float = 0.0) -> None:
        """Takes the lock, waiting up to ``timeout`` seconds for another holder to let go.

        Acquiring a lock this object already holds does nothing.

        Args:
            timeout: seconds to keep retrying; ``0`` tries once.

        Raises:
            InvalidArgumentError: ``timeout`` is negative or not finite.
            HomeLockedError: another holder kept the lock for the whole timeout; the
                message names the lock file and the holder's pid when known.
            StorageError: the lock file cannot be opened, locked or written.
        """
        seconds = _scalars.as_real(timeout)
        if seconds is None:
            raise InvalidArgumentError(f"timeout must be a number of seconds, got {timeout!r}")
        if not math.isfinite(seconds) or seconds < 0:
            raise InvalidArgumentError(f"timeout must be finite and >= 0, got {timeout!r}")
        if self._fd is not None:
            return
        import portalocker

        exclusive_now = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING  # one attempt, not waiting
        try:
            # No O_TRUNC: a contender must not erase the holder's pid before it is refused.
            fd = os.open(self._path, os.O_RDWR | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644)
        except OSError as exc:
            raise StorageError(f"cannot open lock file {self._path}: {exc}") from exc
        deadline = time.monotonic() + seconds
        while True:
            try:
                portalocker.lock(fd, exclusive_now)
                break
            except portalocker.AlreadyLocked:
                if time.monotonic() >= deadline:
                    holder = _read_pid(fd)
                    os.close(fd)
                    raise _locked(self._path, holder) from None
                time.sleep(POLL_INTERVAL)
            except (portalocker.LockException, OSError) as exc:
                os.close(fd)
                raise StorageError(f"cannot lock {self._path}: {exc}") from exc
        try:
            _write_pid(fd, os.getpid())
        except OSError as exc:
            os.close(fd)
            raise StorageError(f"cannot write lock file {self._path}: {exc}") from exc
        self._fd = fd

    def release(self) -> None:
        """Lets the lock go; releasing a lock this object does not hold does nothing."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass  # the pid is advisory; the lock itself goes with the descriptor
        os.close(fd)  # closing the descriptor is what lets the lock go, on every platform

    def abandon(self) -> None:
        """Closes this process's descriptor of an inherited lock without letting the lock go
        (a forked child's copy: the parent's descriptor keeps it) and without touching the file."""
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"WriterLock({str(self._path)!r}, held={self.held})"


def _write_pid(fd: int, pid: int) -> None:
    """Replaces the lock file's content with ``pid`` and a newline (held lock only).

    Raises:
        OSError: the file system refused.
    """
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    data = f"{pid}\n".encode("ascii")
    while data:
        data = data[os.write(fd, data) :]
    os.lseek(fd, 0, os.SEEK_SET)  # where Windows' byte-range lock starts: keep it there


def _read_pid(fd: int) -> int | None:
    """The pid the current holder wrote into the lock file, if readable."""
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        text = os.read(fd, _PID_BYTES).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _locked(path: Path, holder: int | None) -> HomeLockedError:
    """The error for a lock another process holds."""
    who = f"process {holder}" if holder is not None else "another process"
    return HomeLockedError(errno.EWOULDBLOCK, f"writer lock held by {who} (one writer per home)", str(path))
