"""A handle across ``fork``: the child lets go of its parent's handles and opens its own.

A forked child (multiprocessing's ``fork`` start method, a pre-forking server's
workers) inherits a copy of every open :class:`~cuemem.home.home.Home` but none of the
threads behind them: the text index's writer threads, a guard another thread held, the
journal's syncer. Its copy of the writer lock's descriptor would keep the home locked after the
parent lets go, and a close in the child would save the parent's caches and unlock the
parent's lock. So right after a fork, in the child, every home open in the parent is
*abandoned* (:meth:`Home.abandon <cuemem.home.home.Home.abandon>`): marked closed
without a step of its own — no file written, no lock released, no thread joined — its
lock's descriptor closed (the parent keeps the lock) and its native writer dropped
untouched. A call through such a handle raises :class:`~cuemem.errors.ForkedHandleError`;
the child opens the home again, as any process does. The core's thread pool is made
anew in the child by the core itself.
"""

from __future__ import annotations

import os
import weakref
from pathlib import Path
from typing import Protocol

from .. import _core
from ..errors import ForkedHandleError

__all__ = ["Abandonable", "Birth", "close_descriptors_of", "refuse_another_process", "track"]


class Abandonable(Protocol):
    """An open handle a forked child gives up (a :class:`~cuemem.home.home.Home`)."""

    def abandon(self) -> None:
        """Marks it closed without finalizing anything of it (the parent still owns it)."""
        ...


_open: weakref.WeakSet[Abandonable] = weakref.WeakSet()
#: Homes a child abandoned: kept, so that nothing of them is ever finalized here.
_abandoned: list[Abandonable] = []


class Birth:
    """The process a handle was opened in: its id (to name it) and the core's fork generation
    (:func:`cuemem._core.fork_generation`). A forked child's generation is moved on inside
    ``fork`` itself, before any code of the child runs, whoever forked it (``os.fork``,
    multiprocessing, C code) and whatever at-fork hooks run first; and unlike a process id it
    never comes back (the first process of a new PID namespace has its parent's id). Asked
    at every call of a handle: a load, where ``getpid`` is a system call."""

    __slots__ = ("pid", "generation")

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.generation = _core.fork_generation()

    def here(self) -> bool:
        """Whether this is still the process it was made in."""
        return self.generation == _core.fork_generation()


def refuse_another_process(birth: Birth) -> None:
    """Refuses a call in a process other than the one ``birth`` is of: the one that opened the handle.

    Raises:
        ForkedHandleError: this process is a child forked after the handle was opened.
    """
    if not birth.here():
        raise ForkedHandleError(
            f"this handle was opened in process {birth.pid}, and this is process {os.getpid()} (a forked child): "
            "open the home again in this process"
        )


def track(home: Abandonable) -> None:
    """Keeps ``home`` in the set a forked child abandons."""
    _open.add(home)


def close_descriptors_of(path: Path) -> None:
    """Closes this process's descriptors of the file at ``path`` (Linux: as ``/proc/self/fd``
    lists them; elsewhere nothing). A lock taken by ``flock`` stays with the other copies of
    its descriptor: a forked child closing its own lets nothing go for the parent."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return
    target = str(path)
    for name in names:
        try:
            if os.readlink(f"/proc/self/fd/{name}") == target:
                os.close(int(name))
        except (OSError, ValueError):
            continue


def _after_fork_in_child() -> None:
    inherited = list(_open)
    _open.clear()
    _abandoned.extend(inherited)  # first: nothing of them is finalized here, whatever happens next
    for home in inherited:
        try:
            home.abandon()
        except Exception:  # e.g. a native object another parent thread was inside at the fork: the next home still goes
            continue


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_after_fork_in_child)
