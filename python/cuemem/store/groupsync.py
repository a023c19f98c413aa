"""Group commit: one fsync for the appends of every thread waiting for it, or of a window.

Under :attr:`FsyncPolicy.ALWAYS <cuemem.store.fsync.FsyncPolicy.ALWAYS>` a write call of a
shared handle appends its records holding the home's guard, and waits for their sync after it
lets the guard go (:meth:`Guard.defer <cuemem.home.guard.Guard.defer>`). Each append takes a
ticket (``written(fd)``, the open segment's descriptor), and the caller later waits for it
(``wait(ticket)``); no call returns before its bytes are on disk.

The syncing is the core's (:class:`cuemem._core.GroupSync`, ``rust/src/groupsync.rs``): a worker
thread of the group's own syncs the segment whenever a ticket is unsynced, each sync covering
every ticket handed out before it began. It needs no GIL, so the disk works from the moment a
line is appended while the writer's Python goes on (a commit applies its records meanwhile);
while one sync runs the other threads append, and the next sync, which starts as soon as that
one ends, covers them all. No waiter leads a sync, so none has to get the GIL back for the next
one to start. A wait releases the GIL. Where the disk is fast and one writer's writes come one
after another, a waiter polls for its sync and the worker for the next ticket, briefly, before
either sleeps (a sleeping thread is woken late): a durable write then costs little more than its
fsync, for CPU time while it waits. Several writers' threads need the cores: then no one polls
(tickets of different threads tell), and one waiter and one worker of the process poll at a
time, whatever their homes.

The worker is its process's: in a child forked from it the group takes no ticket, and a write
raises :class:`~cuemem.errors.ForkedHandleError` (a home's handle is refused there before that).

Under :attr:`FsyncPolicy.INTERVAL <cuemem.store.fsync.FsyncPolicy.INTERVAL>` the same group has a
window (:data:`WINDOW`): the worker syncs a ticket at most that long after it was written, one
sync for every append of the window, and no call waits for it (an acknowledged append survives
a process crash; a machine crash may lose the last window). Its thread needs no GIL either, so
a busy writer does not starve it, nor does it wake to take the GIL at every write.

The journal calls ``flush()`` before it closes a segment (a rotation, a rewind, a close): every
ticket is synced and the worker lets its duplicate of the descriptor go, so a sync never meets
a closed or reused one.

A sync that fails fails every call whose ticket it had not covered, and every later write
(``check()`` before an append; :class:`StorageError`; reopen the home, whose open reads the
journal as it is on disk): what the kernel kept of those bytes is unknown. A call whose bytes an
earlier sync covered returns. Under ``interval`` the same holds: the next append raises, and
every one after it.

Where the core cannot sync a descriptor on its thread (not POSIX), :class:`InlineGroupSync` keeps
the same contract with the first waiter syncing for everyone written so far (and a timer thread
ending each window).
"""

from __future__ import annotations

import threading
from typing import Protocol

from .. import _core
from ..errors import StorageError
from .fsync import BACKGROUND_SYNC, FsyncPolicy, sync

__all__ = ["WINDOW", "GroupSyncLike", "InlineGroupSync", "group_sync"]

#: The longest an appended byte waits for its sync under ``fsync="interval"``, in seconds.
WINDOW = 0.05


class GroupSyncLike(Protocol):
    """What the journal asks of a group commit (see the module docstring)."""

    def written(self, fd: int, /) -> int: ...
    def wait(self, ticket: int, /) -> None: ...
    def flush(self) -> None: ...
    def check(self) -> None: ...


def group_sync(window: float = 0.0) -> GroupSyncLike:
    """A new journal's group commit, syncing a ticket at most ``window`` seconds after it was
    written (0: at once); the core's where it can sync on its own thread."""
    return _core.GroupSync(window) if BACKGROUND_SYNC else InlineGroupSync(window)


class InlineGroupSync:
    """The group commit without the core's thread: a waiter whose ticket is unsynced syncs every
    ticket written so far, outside the lock, while the others wait for that sync or append; with
    a window, a timer thread syncs them once it ends."""

    __slots__ = ("_cond", "_fd", "_written", "_synced", "_syncing", "_failed", "_window", "_timer")

    def __init__(self, window: float = 0.0) -> None:
        self._cond = threading.Condition()
        self._fd: int | None = None
        self._written = 0
        self._synced = 0
        self._syncing = False  # a waiter's sync runs
        self._failed: StorageError | None = None
        self._window = window
        self._timer: threading.Timer | None = None  # the window's end, while one is open

    def written(self, fd: int) -> int:
        """A ticket for bytes just written to ``fd`` (the open segment).

        Raises:
            StorageError: an earlier sync failed.
        """
        with self._cond:
            self._refuse()
            self._fd = fd
            self._written += 1
            if self._window > 0 and self._timer is None:
                self._timer = threading.Timer(self._window, self._window_ends, args=(self._written,))
                self._timer.daemon = True
                self._timer.start()
            return self._written

    def _window_ends(self, first: int) -> None:
        """Syncs the window's tickets (a failure is raised by the next write)."""
        with self._cond:
            self._timer = None
        try:
            self.wait(first)
        except StorageError:
            pass  # recorded: the next written() or check() raises it

    def wait(self, ticket: int) -> None:
        """Returns once ``ticket``'s bytes are on disk, syncing them (and every later append) if no one is.

        Raises:
            StorageError: the sync covering ``ticket`` failed, or an earlier one did.
        """
        with self._cond:
            ticket = min(ticket, self._written)
            while self._synced < ticket:
                if self._failed is not None:
                    raise self._failed
                if self._syncing:
                    self._cond.wait()
                    continue
                target, fd = self._written, self._fd
                assert fd is not None, "unsynced tickets without an open segment"
                self._syncing = True
                failure: StorageError | None = None
                self._cond.release()
                try:
                    sync(fd, FsyncPolicy.ALWAYS)
                except StorageError as exc:
                    failure = exc
                finally:
                    self._cond.acquire()
                    self._syncing = False
                    self._cond.notify_all()
                if failure is not None:
                    self._failed = self._failed or failure
                else:
                    self._synced = max(self._synced, target)

    def flush(self) -> None:
        """Syncs every ticket, before the journal closes the segment they are in.

        Raises:
            StorageError: the sync failed, or an earlier one did.
        """
        self.wait(self._written)
        with self._cond:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._fd = None
            self._refuse()

    def check(self) -> None:
        """Refuses a write once a sync has failed (call it before writing a byte).

        Raises:
            StorageError: an earlier sync failed.
        """
        with self._cond:
            self._refuse()

    def _refuse(self) -> None:
        if self._failed is not None:
            raise StorageError(f"an earlier journal sync failed ({self._failed}); reopen the home") from self._failed
