"""``AsyncMemory``: the :class:`~cuemem.Memory` facade for asyncio code.

Every method is the :class:`~cuemem.Memory` method of the same name, awaited: the call
runs on the handle's own worker thread, never on the event loop, so a slow recall, an
import or a job leaves the loop free to run other tasks. A handle has one worker thread
(calls on a ``Memory`` run one at a time anyway, under the home's guard), so calls run
in the order they were awaited; views made by :meth:`AsyncMemory.user` share it. The
clock is read as in ``Memory``: once per call, at its edge, when ``now`` is not given.

This module adds no logic: each method is one delegation, generated from the
``Memory`` method it names (so it takes exactly that method's arguments, raises its
errors and returns its result). Arguments are checked where ``Memory`` hands them, in the worker.
A hit's ``record`` is read from the journal on first access, as with ``Memory``: one
small read, on whichever thread touches it (``await mem.get(id)`` reads on the worker).

Example:
    >>> import asyncio, tempfile
    >>> from datetime import date
    >>> async def main() -> list[str]:
    ...     async with await AsyncMemory.open(tempfile.mkdtemp(), fsync="never") as mem:
    ...         eid = await mem.remember("Acme asked for a discount", actors=["acme"], now=date(2026, 6, 3))
    ...         res = await mem.recall({"actor": "acme"}, now=date(2026, 6, 10))
    ...         return [h.id == eid for h in res.hits]
    >>> asyncio.run(main())
    [True]
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from .home.forks import Birth, refuse_another_process
from .home.results import OpenReport
from .lifecycle.profiles import Profile
from .memory import Memory

__all__ = ["AsyncMemory"]

P = ParamSpec("P")
R = TypeVar("R")

#: ``Memory``'s public methods that have no ``AsyncMemory`` twin, and what to use instead.
NOT_MIRRORED = {
    "open": "AsyncMemory.open (a coroutine returning an AsyncMemory)",
    "close": "AsyncMemory.close (a coroutine; also async with)",
    "user": "AsyncMemory.user (a view that shares the worker thread)",
    "session": "a Session is a synchronous handle: AsyncMemory.memory.session(...), called through AsyncMemory.run",
    "worker": "a Worker is a synchronous handle: AsyncMemory.memory.worker(...), called through AsyncMemory.run",
}


def _summary(method: Callable[..., object]) -> str:
    """The first paragraph of ``method``'s docstring (its examples stay with ``Memory``)."""
    return " ".join((method.__doc__ or "").strip().split("\n\n")[0].split())


def _off_loop(method: Callable[Concatenate[Memory, P], R]) -> Callable[Concatenate[AsyncMemory, P], Coroutine[Any, Any, R]]:
    """The coroutine method that runs ``method`` on the handle's worker thread."""
    name = method.__name__

    async def call(self: AsyncMemory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self.run(functools.partial(method, self._memory, *args, **kwargs))

    functools.update_wrapper(call, method, assigned=(), updated=())  # __wrapped__: Memory's signature
    call.__name__ = name
    call.__qualname__ = f"AsyncMemory.{name}"
    call.__doc__ = f"Awaitable :meth:`Memory.{name} <cuemem.Memory.{name}>`, run off the event loop: {_summary(method)}"
    return call


def _opener(open_: Callable[P, Memory]) -> Callable[P, Coroutine[Any, Any, AsyncMemory]]:
    """``AsyncMemory.open``: :meth:`Memory.open` with the same arguments, run on a new worker."""

    async def open(*args: P.args, **kwargs: P.kwargs) -> AsyncMemory:
        worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cuemem")
        try:
            memory = await asyncio.get_running_loop().run_in_executor(worker, functools.partial(open_, *args, **kwargs))
        except BaseException:
            worker.shutdown(wait=False)
            raise
        return AsyncMemory(memory, worker)

    functools.update_wrapper(open, open_, assigned=(), updated=())
    open.__name__, open.__qualname__ = "open", "AsyncMemory.open"
    open.__doc__ = f"Awaitable :meth:`Memory.open <cuemem.Memory.open>`: the same arguments, an AsyncMemory. {_summary(open_)}"
    return open


class AsyncMemory:
    """An agent's memory for asyncio code: :class:`~cuemem.Memory`, awaited, off the loop.

    Open one with ``await AsyncMemory.open(home, ...)`` (the arguments of
    :meth:`Memory.open`) and close it with ``await mem.close()`` or ``async with``.
    ``len(mem)`` and ``id in mem`` become ``await mem.count()`` and ``await mem.contains(id)``.
    """

    __slots__ = ("_memory", "_worker", "_owner", "_birth")

    def __init__(self, memory: Memory, worker: ThreadPoolExecutor, *, owner: bool = True) -> None:
        self._memory = memory
        self._worker = worker
        self._owner = owner  # a view (``user()``) shares its parent's worker and does not close it
        self._birth = Birth()  # a forked child has no worker thread: its calls are refused (home/forks.py)

    open = staticmethod(_opener(Memory.open))

    @property
    def memory(self) -> Memory:
        """The synchronous handle underneath (its calls block: make them through :meth:`run`)."""
        return self._memory

    async def run(self, call: Callable[..., R], /, *args: Any, **kwargs: Any) -> R:
        """Runs ``call(*args, **kwargs)`` on this handle's worker thread and returns its result.

        For what has no async twin — a :class:`~cuemem.Session`, say. ``call`` works on
        the synchronous handle underneath, :attr:`memory` (the same home, lock and scope);
        calling it directly would block the loop, so hand the work to ``run``::

            session = await mem.run(mem.memory.session, "chat-1")
            ids = await mem.run(session.observe, "We decided to ship on Fridays.", now=day)
            result = await mem.run(lambda: session.recall(text="when do we ship", now=day))

        Calls run one at a time, in the order awaited, with every other call of this
        handle. Once the handle is closed its worker is gone, and calls run on the loop's
        default executor: as with a closed ``Memory``, reads still answer and writes raise
        ``ReadOnlyError``.
        """
        refuse_another_process(self._birth)
        loop = asyncio.get_running_loop()
        work = functools.partial(call, *args, **kwargs) if args or kwargs else call
        try:
            pending = loop.run_in_executor(self._worker, work)
        except RuntimeError:  # the worker was shut down by close()
            pending = loop.run_in_executor(None, work)
        return await pending

    async def close(self) -> None:
        """:meth:`Memory.close`, then the worker thread stops. Idempotent; a view closes nothing,
        and neither does a handle a forked child inherited."""
        if not self._owner or not self._birth.here():
            return
        await self.run(self._memory.close)  # idempotent, as Memory.close is
        self._worker.shutdown(wait=False)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    async def user(self, user_id: str) -> AsyncMemory:
        """:meth:`Memory.user`: a view scoped to ``user_id``, sharing this handle's worker."""
        view = await self.run(functools.partial(self._memory.user, user_id))
        return AsyncMemory(view, self._worker, owner=False)

    async def count(self) -> int:
        """``len(memory)``: the live memories this handle sees."""
        return await self.run(self._memory.__len__)

    async def contains(self, id: str) -> bool:
        """``id in memory``: whether this handle sees a live memory with that id."""
        return await self.run(functools.partial(self._memory.__contains__, id))

    # -- attributes read without a call (no I/O) ---------------------------------------

    @property
    def path(self) -> Path:
        """The home directory."""
        return self._memory.path

    @property
    def open_report(self) -> OpenReport:
        """How the home came up (:attr:`Memory.open_report`)."""
        return self._memory.open_report

    @property
    def text_report(self) -> str:
        """How the text index came up (:attr:`Memory.text_report`)."""
        return self._memory.text_report

    @property
    def profile(self) -> Profile:
        """The failure-cost profile this handle was opened with."""
        return self._memory.profile

    @property
    def scope(self) -> str | None:
        """The user this handle is scoped to, ``"*"``, or None (:attr:`Memory.scope`)."""
        return self._memory.scope

    def __repr__(self) -> str:
        return f"AsyncMemory({str(self._memory.path)!r})"

    # -- every other public method of Memory, awaited ---------------------------------

    tainted = _off_loop(Memory.tainted)
    taint_session = _off_loop(Memory.taint_session)
    remember = _off_loop(Memory.remember)
    import_jsonl = _off_loop(Memory.import_jsonl)
    import_records = _off_loop(Memory.import_records)
    recall = _off_loop(Memory.recall)
    get = _off_loop(Memory.get)
    cue_values = _off_loop(Memory.cue_values)
    ids = _off_loop(Memory.ids)
    refresh = _off_loop(Memory.refresh)
    write_note = _off_loop(Memory.write_note)
    notes = _off_loop(Memory.notes)
    sync = _off_loop(Memory.sync)
    save_index = _off_loop(Memory.save_index)
    rebuild = _off_loop(Memory.rebuild)
    stats = _off_loop(Memory.stats)
    observe = _off_loop(Memory.observe)
    approvals = _off_loop(Memory.approvals)
    review = _off_loop(Memory.review)
    forget = _off_loop(Memory.forget)
    dedupe = _off_loop(Memory.dedupe)
    golden = _off_loop(Memory.golden)
    proposals = _off_loop(Memory.proposals)
    update = _off_loop(Memory.update)
    accept = _off_loop(Memory.accept)
    approve = _off_loop(Memory.approve)
    reject = _off_loop(Memory.reject)
    history = _off_loop(Memory.history)
    as_of = _off_loop(Memory.as_of)
    working = _off_loop(Memory.working)
    keep = _off_loop(Memory.keep)
    end_turn = _off_loop(Memory.end_turn)
    expire = _off_loop(Memory.expire)
    distill_policies = _off_loop(Memory.distill_policies)
    policies = _off_loop(Memory.policies)
    judge = _off_loop(Memory.judge)
    explain = _off_loop(Memory.explain)
    autoload = _off_loop(Memory.autoload)
    context = _off_loop(Memory.context)
    consolidate = _off_loop(Memory.consolidate)
    distill = _off_loop(Memory.distill)
    maintain = _off_loop(Memory.maintain)
    last_run = _off_loop(Memory.last_run)
    next_due = _off_loop(Memory.next_due)
