"""``GroupSync``: one fsync for the appends of every thread waiting on it (group commit).

Under :attr:`FsyncPolicy.ALWAYS <cuemem.store.fsync.FsyncPolicy.ALWAYS>` a write call of a
shared handle appends its records holding the home's guard, and waits for their sync after it
lets the guard go (:meth:`Guard.defer <cuemem.home.guard.Guard.defer>`). Each append takes a
ticket (:meth:`GroupSync.written`); a waiter whose ticket is not yet synced either becomes the
leader — it syncs everything written so far, outside any lock — or waits for the leader's sync
to cover it. While one thread syncs, the others append: with several writers, one sync serves
many calls, and no call returns before its bytes are on disk.

The segment a ticket was written to stays open until its sync: the journal calls
:meth:`GroupSync.flush` before it closes a segment (rotation, a rewind, close), and the
leader syncs a duplicate of the descriptor, so a rotation during a sync never syncs a closed
or reused one.

A sync that fails fails every call whose ticket it had not yet covered, and every later
write: what the kernel kept of those bytes is unknown, so the journal appends no more
(:meth:`GroupSync.check` before each append; :class:`StorageError`; reopen the home, whose
open reads the journal as it is on disk). A call whose bytes an earlier sync covered returns.
"""

from __future__ import annotations

import os
import threading

from ..errors import StorageError
from .fsync import FsyncPolicy, sync

__all__ = ["GroupSync"]


class GroupSync:
    """Tickets of one journal's unsynced appends, and the one sync that covers the waiting ones."""

    __slots__ = ("_cond", "_fd", "_written", "_synced", "_leading", "_failed")

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._fd: int | None = None  # the open segment holding tickets after _synced
        self._written = 0  # tickets handed out
        self._synced = 0  # tickets on disk
        self._leading = False
        self._failed: StorageError | None = None

    def check(self) -> None:
        """Refuses a write once a sync has failed (call it before writing a byte).

        Raises:
            StorageError: an earlier sync failed.
        """
        with self._cond:
            self._raise()

    def written(self, fd: int) -> int:
        """A ticket for bytes just written to ``fd`` (the open segment); pass it to :meth:`wait`.

        Raises:
            StorageError: an earlier sync failed.
        """
        with self._cond:
            self._raise()
            self._fd = fd
            self._written += 1
            return self._written

    def wait(self, ticket: int) -> None:
        """Returns once ``ticket``'s bytes are on disk, syncing them (and every later append) if no one is.

        Raises:
            StorageError: the sync covering ``ticket`` failed, or an earlier one did.
        """
        with self._cond:
            ticket = min(ticket, self._written)  # no ticket beyond those handed out: no endless wait
            while self._synced < ticket:
                self._raise()
                if self._leading:
                    self._cond.wait()
                    continue
                target = self._written
                try:
                    fd = os.dup(self._require_fd())
                except OSError as exc:
                    raise StorageError(exc.errno or 0, f"cannot sync the journal: {exc.strerror}") from None
                self._leading = True
                self._cond.release()
                failure: StorageError | None = None
                try:
                    sync(fd, FsyncPolicy.ALWAYS)
                except StorageError as exc:
                    failure = exc
                finally:
                    os.close(fd)
                    self._cond.acquire()
                    self._leading = False
                    self._cond.notify_all()
                if failure is not None:
                    self._failed = failure
                    raise failure
                self._synced = max(self._synced, target)

    def flush(self) -> None:
        """Syncs every ticket now, before the journal closes the segment they are in.

        Raises:
            StorageError: the sync failed, or an earlier one did.
        """
        with self._cond:
            if self._synced < self._written and self._failed is None:
                try:
                    sync(self._require_fd(), FsyncPolicy.ALWAYS)
                except StorageError as exc:
                    self._failed = exc
                else:
                    self._synced = self._written
                self._cond.notify_all()
            self._fd = None
            self._raise()

    def _require_fd(self) -> int:
        """The open segment (there is one while a ticket is unsynced)."""
        assert self._fd is not None, "unsynced tickets without an open segment"
        return self._fd

    def _raise(self) -> None:
        """Raises the failure of an earlier sync, if one failed."""
        if self._failed is not None:
            raise StorageError(f"an earlier journal sync failed ({self._failed}); reopen the home") from self._failed
