"""``Guard``: one operation at a time on a home, and what ends with the outermost one.

Every call of the facade holds its home's guard (a reentrant lock: calls nest, a job's run
calls other methods). A shared home's writers hold the shared log's lock for a whole write
call, not one commit: :attr:`Guard.on_release` lets it go as the outermost call returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Guard"]


class Guard:
    """A reentrant lock that runs :attr:`on_release` when its outermost holder lets go."""

    __slots__ = ("_lock", "_depth", "on_release")

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._depth = 0
        #: Called (holding the lock) as the outermost holder lets go, or None.
        self.on_release: Callable[[], None] | None = None

    def __enter__(self) -> Guard:
        self._lock.acquire()
        self._depth += 1
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._depth == 1 and self.on_release is not None:
                self.on_release()
        finally:
            self._depth -= 1
            self._lock.release()

    def acquire(self, timeout: float) -> bool:
        """Takes the lock within ``timeout`` seconds, or returns False; pair with :meth:`release`."""
        if not self._lock.acquire(timeout=timeout):
            return False
        self._depth += 1
        return True

    def release(self) -> None:
        """Lets go of a lock :meth:`acquire` took (as leaving a ``with`` block)."""
        self.__exit__()
