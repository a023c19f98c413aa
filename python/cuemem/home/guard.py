"""``Guard``: one operation at a time on a home, and what ends with the outermost one.

Every call of the facade holds its home's guard (a reentrant lock: calls nest, a job's run
calls other methods). A shared home's writers hold the shared log's lock for a whole write
call, not one commit: :attr:`Guard.on_release` lets it go as the outermost call returns.
What a call must wait for but need not hold the guard for — the sync of its journal
appends — it defers (:meth:`Guard.defer`): run by the same thread once it has let the guard go,
before the call returns, so other threads' calls go on meanwhile (group commit).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from .forks import Birth, refuse_another_process

__all__ = ["Guard"]

_get_ident = threading.get_ident


class Guard:
    """A reentrant lock that runs :attr:`on_release` when its outermost holder lets go."""

    __slots__ = ("_lock", "_depth", "_owner", "_deferred", "_birth", "on_release")

    def __init__(self) -> None:
        self._birth = Birth()  # the process whose threads may take it (see home/forks.py)
        self._lock = threading.RLock()
        self._depth = 0
        self._owner: int | None = None
        self._deferred: list[Callable[[], None]] = []
        #: Called (holding the lock) as the outermost holder lets go, or None.
        self.on_release: Callable[[], None] | None = None

    def __enter__(self) -> Guard:
        # A forked child's thread is refused (ForkedHandleError): the lock's state is its
        # parent's, and another thread may have held it at the fork, never to let go here.
        if not self._birth.here():
            refuse_another_process(self._birth)
        self._lock.acquire()
        self._depth += 1
        self._owner = _get_ident()
        return self

    def __exit__(self, kind: object, value: object, trace: object) -> None:
        deferred = None
        try:
            if self._depth == 1:
                if self._deferred:
                    deferred, self._deferred = self._deferred, []
                if self.on_release is not None:
                    self.on_release()
        finally:
            self._depth -= 1
            if not self._depth:
                self._owner = None
            self._lock.release()
            if deferred:
                for wait in deferred:  # before the call returns: it acknowledges no unsynced write
                    wait()

    def holds(self) -> bool:
        """Whether the calling thread holds the guard."""
        return self._owner == _get_ident()

    def outermost(self) -> bool:
        """Whether the calling thread holds the guard once: its call is not inside another."""
        return self._depth == 1 and self.holds()

    def defer(self, wait: Callable[[], None]) -> None:
        """Runs ``wait`` once the calling thread's outermost hold ends, after the lock is let go.

        Raises:
            RuntimeError: the calling thread does not hold the guard (a bug of the caller).
        """
        if not self.holds():
            raise RuntimeError("Guard.defer outside the guard")
        self._deferred.append(wait)

    def acquire(self, timeout: float) -> bool:
        """Takes the lock within ``timeout`` seconds, or returns False; pair with :meth:`release`.

        Raises:
            ForkedHandleError: as entering the guard.
        """
        refuse_another_process(self._birth)
        if not self._lock.acquire(timeout=timeout):
            return False
        self._depth += 1
        self._owner = _get_ident()
        return True

    def release(self) -> None:
        """Lets go of a lock :meth:`acquire` took (as leaving a ``with`` block)."""
        self.__exit__(None, None, None)
