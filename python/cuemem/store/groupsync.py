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
on a thread of its own (the *syncer*, started with the first such sync and let go at
:meth:`GroupSync.flush`), so the disk works while the writer goes on with what follows its
append (a commit applies it to the indexes), and the wait is only for what the sync has
left. What is written while it runs, the syncer syncs next, at once (a waiter that finds no
sync running leads one, as above).

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

__all__ = ["GroupSync", "IDLE"]

#: Seconds the syncer thread waits for a sync to start before it ends.
IDLE = 2.0


class GroupSync:
    """Tickets of one journal's unsynced appends, and the one sync that covers the waiting ones."""

    __slots__ = ("_cond", "_fd", "_written", "_synced", "_leading", "_failed", "_job", "_syncer")

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._fd: int | None = None  # the open segment holding tickets after _synced
        self._written = 0  # tickets handed out
        self._synced = 0  # tickets on disk
        self._leading = False
        self._failed: StorageError | None = None
        self._job: tuple[int, int] | None = None  # (descriptor, target) the syncer is to sync
        self._syncer: threading.Thread | None = None

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
        """Starts the sync of every ticket written so far on the syncer, unless one is running
        or none waits: the caller goes on while the disk works, and :meth:`wait` waits only for
        what is left. Its failure reaches the waiters as any sync's does; nothing is raised here."""
        with self._cond:
            self._queue()

    def _queue(self) -> None:
        """Hands the syncer the sync of every ticket written so far, if none runs and some
        waits (holding the condition)."""
        if self._leading or self._synced >= self._written or self._failed is not None or self._fd is None:
            return
        try:
            fd = os.dup(self._fd)
        except OSError:
            return  # no early sync: the first waiter leads one, and reports what fails
        self._leading = True
        self._job = (fd, self._written)
        if self._syncer is None:
            self._syncer = threading.Thread(target=self._run, name="cuemem-groupsync", daemon=True)
            try:
                self._syncer.start()
            except RuntimeError:  # no thread to be had: the first waiter leads the sync, as without one
                self._syncer = None
                self._drop_job()
                return
        self._cond.notify_all()

    def _drop_job(self) -> None:
        """Forgets the job no syncer will run (holding the condition): a waiter leads instead."""
        if self._job is not None:
            fd, self._job = self._job[0], None
            try:
                os.close(fd)
            except OSError:
                pass
            self._leading = False
            self._cond.notify_all()

    def _run(self) -> None:
        """The syncer: syncs each job it is handed, until :meth:`flush` lets it go or it has
        idled :data:`IDLE` seconds (the next :meth:`start` starts another)."""
        me = threading.current_thread()
        with self._cond:
            try:
                while True:
                    while self._job is None and self._syncer is me:
                        if not self._cond.wait(IDLE) and self._job is None and self._syncer is me:
                            self._syncer = None
                    if self._job is None:
                        return
                    fd, target = self._job
                    self._job = None
                    self._sync(fd, target)
                    if self._syncer is me:
                        self._queue()  # what was written meanwhile: the next sync starts at once
            finally:
                if self._syncer is me:  # a syncer that ends, however, is no longer counted on
                    self._syncer = None
                    self._drop_job()
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
            while self._leading:  # the syncer's sync first: it may cover every ticket
                self._cond.wait()
            self._syncer = None  # lets the syncer go (the next append starts another)
            self._cond.notify_all()
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
