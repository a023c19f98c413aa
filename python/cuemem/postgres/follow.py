"""``Follower``: a thread that wakes a shared home's handle when another process commits.

It ``LISTEN``s on the home's channel on a connection of its own and, for each commit of
its log past what the mirror holds, calls ``wake`` with the commit's last ``seq`` (which
catches the handle up, under its guard, if the mirror is still behind it then: a commit of
the handle's own is usually notified before its call has taken in its result). A
notification can be lost (a dropped connection): the follower then reconnects and wakes
the handle once (``wake(None)``: whatever the log holds), and every write call catches up
anyway before it decides.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg

from .target import Target

__all__ = ["Follower"]

_log = logging.getLogger("cuemem.home")


class Follower:
    """Calls ``wake(seq)`` after each commit to log ``log`` past ``seen()``."""

    def __init__(self, target: Target, channel: str, log: str, seen: Callable[[], int], wake: Callable[[int | None], None]) -> None:
        self._target = target
        self._channel = channel
        self._log = log
        self._seen = seen
        self._wake = wake
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"cuemem-follow-{log}", daemon=True)

    def start(self) -> None:
        """Starts following."""
        self._thread.start()

    def _run(self) -> None:
        retry = 0.1
        while not self._stop.is_set():
            try:
                with psycopg.connect(self._target.conninfo, autocommit=True, connect_timeout=10) as conn:
                    conn.execute(f"LISTEN {self._channel}")
                    retry = 0.1
                    self._call(None)  # whatever was committed while no one listened
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5, stop_after=1):
                            log, _, seq = note.payload.rpartition(" ")
                            if log == self._log and seq.isdigit() and int(seq) > self._seen():
                                self._call(int(seq))
            except psycopg.Error as exc:
                _log.debug("following %s: %s; reconnecting", self._target.shown, exc)
                self._stop.wait(retry)
                retry = min(retry * 2, 5.0)

    def _call(self, seq: int | None) -> None:
        try:
            self._wake(seq)
        except Exception as exc:  # a failed catch-up is retried by the next commit or call
            _log.warning("catching up with %s failed: %s", self._target.shown, exc)

    @property
    def stopped(self) -> bool:
        """Whether :meth:`stop` was called."""
        return self._stop.is_set()

    def stop(self) -> None:
        """Stops the thread (within half a second). Idempotent."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
