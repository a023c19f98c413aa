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

A writer may also start the sync of what it wrote at once (:meth:`GroupSync.start`): it runs
on the core's syncer thread (:class:`cuemem._core.Syncer`, through :func:`~.fsync.sync_later`),
which needs no GIL, so the disk works while the writer's Python goes on with what follows its
append (a commit applies it to the indexes), and the wait is only for what the sync has left.
The first waiter to need that sync collects its outcome (:func:`~.fsync.synced`, without the
GIL); what was written meanwhile, the next waiter syncs itself, leading as above. A Python
thread could not do this: it would need the GIL the writer holds while it applies, and the
sync would start only after.

A sync that fails fails every call whose ticket it had not yet covered, and every later
write: what the kernel kept of those bytes is unknown, so the journal appends no more
(:meth:`GroupSync.check` before each append; :class:`StorageError`; reopen the home, whose
open reads the journal as it is on disk). A call whose bytes an earlier sync covered returns.
"""

from __future__ import annotations

import os
import threading

from .. import _core
from ..errors import StorageError
from .fsync import BACKGROUND_SYNC, FsyncPolicy, sync, sync_later, synced

__all__ = ["GroupSync"]


class GroupSync:
    """Tickets of one journal's unsynced appends, and the one sync that covers the waiting ones."""

    __slots__ = ("_cond", "_fd", "_written", "_synced", "_leading", "_failed", "_syncer", "_jobs", "_started")

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._fd: int | None = None  # the open segment holding tickets after _synced
        self._written = 0  # tickets handed out
        self._synced = 0  # tickets on disk
        self._leading = False  # a sync runs (a waiter's, or the started one)
        self._failed: StorageError | None = None
        self._syncer: _core.Syncer | None = None  # made with the first started sync
        self._jobs = 0  # started syncs so far (the syncer's job numbers)
        self._started: tuple[int, int] | None = None  # (job, target) of the started sync not yet collected

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

    def start(self) -> None:
        """Starts the sync of every ticket written so far on the core's syncer thread, unless
        a sync is running or none waits: the caller goes on while the disk works, and
        :meth:`wait` waits only for what is left. Its failure reaches the waiters as any
        sync's does; nothing is raised here (a sync that cannot start is led by a waiter)."""
        with self._cond:
            if self._leading or self._synced >= self._written or self._failed is not None or self._fd is None or not BACKGROUND_SYNC:
                return
            if self._syncer is None:
                self._syncer = _core.Syncer()
            try:
                fd = os.dup(self._fd)
            except OSError:
                return  # no early sync: the first waiter leads one, and reports what fails
            self._jobs += 1
            if sync_later(self._syncer, fd, self._jobs):
                self._leading = True
                self._started = (self._jobs, self._written)

    def _collect(self) -> None:
        """Waits for the started sync's outcome outside the condition (held on entry and on
        return), and records it unless another waiter already did."""
        assert self._started is not None and self._syncer is not None
        job, target = self._started
        syncer = self._syncer
        self._cond.release()
        failure: StorageError | None = None
        try:
            synced(syncer, job)
        except StorageError as exc:
            failure = exc
        finally:
            self._cond.acquire()
        if self._started is None or self._started[0] != job:
            return  # another waiter recorded it
        self._started = None
        self._leading = False
        if failure is not None:
            self._failed = failure
        else:
            self._synced = max(self._synced, target)
        self._cond.notify_all()

    def _sync(self, fd: int, target: int) -> StorageError | None:
        """Syncs ``fd`` (a duplicate, closed here) up to ticket ``target``, outside the condition
        (held on entry and on return); the failure, if any, fails every later wait."""
        self._cond.release()
        failure: StorageError | None = None
        try:
            sync(fd, FsyncPolicy.ALWAYS)
        except StorageError as exc:
            failure = exc
        finally:
            try:
                os.close(fd)
            except OSError as exc:  # a file system that reports a write-back error at close
                if failure is None:
                    failure = StorageError(exc.errno or 0, f"closing the journal after its sync failed: {exc.strerror}")
            self._cond.acquire()
            self._leading = False
            self._cond.notify_all()
        if failure is not None:
            self._failed = failure
        else:
            self._synced = max(self._synced, target)
        return failure

    def wait(self, ticket: int) -> None:
        """Returns once ``ticket``'s bytes are on disk, syncing them (and every later append) if no one is.

        Raises:
            StorageError: the sync covering ``ticket`` failed, or an earlier one did.
        """
        with self._cond:
            ticket = min(ticket, self._written)  # no ticket beyond those handed out: no endless wait
            while self._synced < ticket:
                self._raise()
                if self._started is not None:
                    self._collect()
                    continue
                if self._leading:
                    self._cond.wait()
                    continue
                target = self._written
                try:
                    fd = os.dup(self._require_fd())
                except OSError as exc:
                    raise StorageError(exc.errno or 0, f"cannot sync the journal: {exc.strerror}") from None
                self._leading = True
                failure = self._sync(fd, target)
                if failure is not None:
                    raise failure

    def flush(self) -> None:
        """Syncs every ticket now, before the journal closes the segment they are in.

        Raises:
            StorageError: the sync failed, or an earlier one did.
        """
        with self._cond:
            while self._leading:  # the running sync first: it may cover every ticket
                if self._started is not None:
                    self._collect()
                else:
                    self._cond.wait()
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
