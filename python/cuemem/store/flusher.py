"""``Flusher``: the journal's syncs under ``fsync="interval"``, at most a window after each write.

Under :attr:`FsyncPolicy.INTERVAL <cuemem.store.fsync.FsyncPolicy.INTERVAL>` an append
returns once its bytes are written (the kernel holds them: a process crash loses nothing);
a thread of the flusher syncs the segment within :data:`WINDOW` seconds of the first write
not yet synced, however many appends came meanwhile — one sync for all of them. A machine
crash or power loss may lose the appends of that last window. The writer flushes before it
closes a segment (rotation, an import's segment joining, close), so no window spans two
files. A sync the thread could not make is raised by the next append (or close).
"""

from __future__ import annotations

import threading
import time

from ..errors import StorageError
from .fsync import FsyncPolicy, sync

__all__ = ["WINDOW", "Flusher"]

#: The longest an appended byte waits for its sync under ``fsync="interval"``, in seconds.
WINDOW = 0.05


class Flusher:
    """Syncs one journal's last segment within ``window`` seconds of its unsynced writes."""

    __slots__ = ("_window", "_cond", "_fd", "_due", "_thread", "_closed", "_error")

    def __init__(self, window: float = WINDOW) -> None:
        self._window = window
        self._cond = threading.Condition()
        self._fd: int | None = None
        self._due: float | None = None  # when the oldest unsynced write must be synced (monotonic)
        self._thread: threading.Thread | None = None
        self._closed = False
        self._error: StorageError | None = None

    def written(self, fd: int) -> None:
        """Notes bytes written to ``fd`` (the segment being appended to), to be synced within the window.

        Raises:
            StorageError: an earlier background sync failed (those appends may be lost).
        """
        with self._cond:
            self._raise()
            if self._fd is not None and self._fd != fd:
                self._sync()
            self._fd = fd
            if self._due is None:
                self._due = time.monotonic() + self._window
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, name="cuemem-flusher", daemon=True)
                    self._thread.start()
                self._cond.notify()

    def flush(self) -> None:
        """Syncs what is written now (before its descriptor is closed).

        Raises:
            StorageError: this or an earlier sync failed.
        """
        with self._cond:
            self._sync()
            self._raise()

    def close(self) -> None:
        """Flushes and stops the thread. Idempotent."""
        with self._cond:
            self._closed = True
            self._cond.notify()
            try:
                self._sync()
                self._raise()
            finally:
                self._fd = None
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        with self._cond:
            while not self._closed:
                if self._due is None:
                    self._cond.wait()
                    continue
                left = self._due - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                else:
                    self._sync()

    def _sync(self) -> None:
        """Syncs the pending descriptor (the caller holds the condition's lock)."""
        if self._fd is None or self._due is None:
            return
        self._due = None
        try:
            sync(self._fd, FsyncPolicy.ALWAYS)
        except StorageError as exc:
            self._error = exc

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise StorageError(error.errno or 0, f"a background sync of the journal failed; the appends before it may be lost: {error}")
