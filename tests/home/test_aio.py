"""AsyncMemory: Memory's methods awaited off the event loop, with Memory's results and errors."""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

import cuemem
from cuemem import AsyncMemory, Memory
from cuemem.aio import NOT_MIRRORED
from cuemem.errors import CueTypeError, HomeLockedError, SchemaError

DAY = date(2026, 6, 3)
LATER = date(2026, 6, 20)


def public_methods(cls: type) -> set[str]:
    """The public callables a class defines (properties left out)."""
    return {name for name, value in vars(cls).items() if not name.startswith("_") and callable(getattr(cls, name)) and not isinstance(value, property)}


def slow_records(count: int, pause: float) -> Iterator[dict[str, Any]]:
    """Import items that take ``pause`` seconds each to produce (blocking, as a slow source would)."""
    for i in range(count):
        time.sleep(pause)
        yield {"narrative": f"Call {i} with Acme about the renewal.", "actors": ["acme"], "type": "call", "occurred_at": "2026-06-01"}


async def ticks_during(call: Awaitable[object] | Callable[[], object]) -> tuple[int, object]:
    """How many times a 5 ms ticker task ran while ``call`` ran, and what it returned."""
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            await asyncio.sleep(0.005)
            ticks += 1

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)  # let the ticker start
    try:
        result = await call if inspect.isawaitable(call) else call()
    finally:
        stop.set()
        await task
    return ticks, result


def test_every_public_memory_method_has_an_async_twin_or_a_reason() -> None:
    """Each public Memory method is mirrored with Memory's own signature, or listed with what replaces it."""
    mirrored = public_methods(Memory) - set(NOT_MIRRORED)
    missing = sorted(mirrored - public_methods(AsyncMemory))
    assert missing == [], f"add `name = _off_loop(Memory.name)` to AsyncMemory for {missing}"
    assert set(NOT_MIRRORED) <= public_methods(Memory)
    for name in mirrored:
        twin = getattr(AsyncMemory, name)
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(Memory, name)), name
        assert twin.__doc__ and f"Memory.{name}" in twin.__doc__
    for name in ("open", "close", "user", "count", "contains", "run"):
        assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)), name
    assert inspect.signature(AsyncMemory.open) == inspect.signature(Memory.open)


def test_a_slow_call_leaves_the_event_loop_free(tmp_path: Path) -> None:
    """While an import spends ~0.5 s in its item source, another task keeps ticking; the same
    import called on the loop through the synchronous handle stops the ticker (the probe works)."""

    async def main() -> tuple[int, int, object, object]:
        async with await AsyncMemory.open(tmp_path / "home", fsync="never") as mem:
            free, report = await ticks_during(mem.import_records(slow_records(10, 0.05), now=DAY))
            blocked, same = await ticks_during(lambda: mem.memory.import_records(slow_records(10, 0.05), now=DAY))
            return free, blocked, report, same

    free, blocked, report, same = asyncio.run(main())
    assert isinstance(report, cuemem.ImportReport) and report.count == 10
    assert isinstance(same, cuemem.ImportReport) and same.count == 10
    assert free >= 20, free  # ~100 possible in 0.5 s; a blocked loop gives none
    assert blocked <= 1, blocked


def test_calls_run_on_one_worker_thread_in_order(tmp_path: Path) -> None:
    """Concurrent calls run on the handle's worker (not the loop's thread), in the order awaited."""

    async def main() -> tuple[list[str], list[str], set[str], str]:
        async with await AsyncMemory.open(tmp_path / "home", fsync="never") as mem:
            names: set[str] = set()

            def where() -> str:
                names.add(threading.current_thread().name)
                return threading.current_thread().name

            written = await asyncio.gather(*(mem.remember(f"Step {i} of the Acme rollout.", actors=["acme"], now=DAY) for i in range(12)))
            await mem.run(where)
            ids = await mem.ids()
            return list(written), ids, names, threading.current_thread().name

    written, ids, names, loop_thread = asyncio.run(main())
    assert ids == written
    assert len(names) == 1 and loop_thread not in names and next(iter(names)).startswith("cuemem")


def test_run_passes_arguments_and_drives_a_session_on_the_worker(tmp_path: Path) -> None:
    """``run(fn, *args, **kwargs)`` calls ``fn`` with them on the worker thread: a session made and used through
    ``mem.memory`` that way writes as that session, and the loop's thread never runs a call."""

    async def main() -> tuple[str, str | None, set[str], str]:
        async with await AsyncMemory.open(tmp_path / "home", fsync="never") as mem:
            threads: set[str] = set()

            def made(session_id: str) -> cuemem.Session:
                threads.add(threading.current_thread().name)
                return mem.memory.session(session_id)

            chat = await mem.run(made, "chat-1")
            (eid,) = await mem.run(chat.observe, "We decided to ship on Fridays.", now=DAY)
            found = await mem.run(lambda: chat.recall(text="when do we ship", now=DAY))
            threads.add(await mem.run(lambda: threading.current_thread().name))
            return eid, (await mem.get(found.hits[0].id)).session, threads, threading.current_thread().name

    eid, session, threads, loop_thread = asyncio.run(main())
    assert eid.startswith("ep-") and session == "chat-1"
    assert len(threads) == 1 and loop_thread not in threads


def test_results_equal_the_synchronous_ones(tmp_path: Path) -> None:
    """Writes through AsyncMemory, then the same questions through it and through a Memory
    reader of the same home, give equal answers: cue and text recall, get, history, stats."""
    home = tmp_path / "home"

    async def write_and_ask() -> dict[str, Any]:
        async with await AsyncMemory.open(home, fsync="never") as mem:
            deal = await mem.remember("Acme wants a 12% discount before Q3.", actors=["acme"], type="deal", importance=0.6, now=DAY)
            await mem.remember("Checkout outage hit Acme for ten minutes.", actors=["acme"], type="incident", outcome="negative", risk=0.8, now=DAY)
            await mem.remember("Lunch with the Globex team.", actors=["globex"], now=DAY)
            observed = await mem.observe("My favorite editor is vim.", now=DAY)
            cue = await mem.recall({"actor": "acme"}, now=LATER)
            text = await mem.recall(text="discount for Acme", now=LATER)
            return {
                "deal": deal, "observed": observed,
                "cue": [(h.id, h.score) for h in cue.hits], "text": [(h.id, h.score, h.bm25) for h in text.hits],
                "get": (await mem.get(deal)).narrative, "history": [v.id for v in await mem.history("favorite editor")],
                "count": await mem.count(), "contains": await mem.contains(deal), "stats": (await mem.stats()).episodes,
            }

    got = asyncio.run(write_and_ask())
    with Memory.open(home, read_only=True) as mem:
        cue = mem.recall({"actor": "acme"}, now=LATER)
        text = mem.recall(text="discount for Acme", now=LATER)
        assert got["cue"] == [(h.id, h.score) for h in cue.hits] and len(cue.hits) == 2
        assert got["text"] == [(h.id, h.score, h.bm25) for h in text.hits] and got["text"][0][0] == got["deal"]
        assert got["get"] == mem.get(got["deal"]).narrative
        assert got["history"] == [v.id for v in mem.history("favorite editor")] == got["observed"]
        assert got["count"] == len(mem) == got["stats"] == mem.stats().episodes
        assert got["contains"] is True


def test_errors_are_memorys_typed_errors(tmp_path: Path) -> None:
    """A bad argument raises the same CuememError subclass as Memory, and the handle stays usable."""

    async def main() -> None:
        async with await AsyncMemory.open(tmp_path / "home", fsync="never") as mem:
            with pytest.raises(SchemaError):
                await mem.remember(123)  # type: ignore[arg-type]
            with pytest.raises(CueTypeError):
                await mem.recall(text=5, now=DAY)  # type: ignore[call-overload]
            with pytest.raises(cuemem.UnknownDimensionError):
                await mem.recall({"colour": "red"}, now=DAY)
            with pytest.raises(cuemem.InvalidArgumentError):
                await mem.recall(text="   ", now=DAY)
            assert await mem.remember("Still works.", now=DAY)
        with pytest.raises(cuemem.InvalidArgumentError):
            await AsyncMemory.open(tmp_path / "other", lock_timeout=-1)

    asyncio.run(main())


def test_closing_releases_the_home_and_views_close_nothing(tmp_path: Path) -> None:
    """async with closes the handle (the writer lock is free after); a user() view's close
    leaves its parent open; closing twice is harmless."""
    home = tmp_path / "home"

    async def main() -> str:
        mem = await AsyncMemory.open(home, fsync="never")
        with pytest.raises(HomeLockedError):
            Memory.open(home)  # the async handle holds the writer lock
        view = await mem.user("u1")
        eid = await view.remember("Alice prefers mornings.", now=DAY)
        await view.close()
        assert await mem.contains(eid)  # the parent is still open
        assert view.scope == "u1" and mem.scope is None and view.path == mem.path
        await mem.close()
        await mem.close()
        with pytest.raises(cuemem.ReadOnlyError):  # as a closed Memory: no writes, reads still answer
            await mem.remember("Too late.", now=DAY)
        assert [h.id for h in (await mem.recall({"user": "u1"}, now=DAY)).hits] == [eid]
        return eid

    eid = asyncio.run(main())
    with Memory.open(home) as again:  # the lock was released
        assert eid in again.user("u1")
