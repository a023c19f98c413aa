"""One call run on a thread of its own while the caller goes on (the core releases the GIL).

:class:`Aside` starts the call on a new thread, or makes it at once on the caller's
thread when no thread can be had (a process at its limit). :meth:`Aside.wait` returns
once the call has ended, also when an interrupt comes meanwhile (the call works on state
the caller shares: the interrupt is raised once it has ended), and :meth:`Aside.result`
raises the call's error on the caller's thread. A replay's decoding ahead
(:mod:`.decoding`), the text index's feed (:class:`~.textindex.TextFeed`) and the caches'
save beside the row indexes (:meth:`~.caches.Caches.saving`) run so; each has ended when
the call that started it returns.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Aside"]

T = TypeVar("T")


class Aside(Generic[T]):
    """``call(*args)`` on a thread named ``name`` (see the module docs)."""

    __slots__ = ("_thread", "_result", "_error", "_ended")

    def __init__(self, call: Callable[..., T], *args: Any, name: str) -> None:
        self._result: T | None = None
        self._error: BaseException | None = None
        self._ended = threading.Event()
        self._thread: threading.Thread | None = threading.Thread(target=self._run, args=(call, args), name=name, daemon=True)
        try:
            self._thread.start()
        except RuntimeError:  # no thread to be had: made here, in turn
            self._thread = None
            self._run(call, args)

    def _run(self, call: Callable[..., T], args: tuple[Any, ...]) -> None:
        try:
            self._result = call(*args)
        except BaseException as exc:  # handed to the caller, raised there
            self._error = exc
        finally:
            self._ended.set()

    def wait(self) -> None:
        """Returns once the call has ended (at once from the call's own thread); an
        interrupt that comes meanwhile is raised after."""
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return
        # The call's own event, not the thread's join: a join a signal broke into may count
        # the thread as ended when it is not (Python 3.11), an event waited for again may not.
        interrupted: BaseException | None = None
        while not self._ended.is_set():
            try:
                self._ended.wait()
            except BaseException as exc:  # a KeyboardInterrupt while waiting
                interrupted = exc
        while True:  # the call has ended: what is left of the thread is its return
            try:
                thread.join()
                break
            except BaseException as exc:
                interrupted = exc
        self._thread = None
        if interrupted is not None:
            raise interrupted

    @property
    def error(self) -> BaseException | None:
        """The call's error, once it has ended (:meth:`wait`)."""
        return self._error

    def result(self) -> T:
        """The call's result, once it has ended; its error, raised here."""
        self.wait()
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]  # set when the call returned
