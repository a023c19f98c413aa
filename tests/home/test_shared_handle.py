"""One Memory handle shared by threads (memory.py's guard): no error, no lost or doubled write."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

from cuemem import Memory, Scheduler

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)
WRITES = 150


def test_writers_and_readers_hammering_one_handle(tmp_path: Path) -> None:
    """Two writers, a cue reader, a text reader and an observer on one handle; the result equals its rebuild."""
    errors: list[BaseException] = []
    written: list[str] = []
    stop = threading.Event()

    def guarded(fn: object) -> threading.Thread:
        def run() -> None:
            try:
                fn()  # type: ignore[operator]
            except BaseException as exc:  # noqa: BLE001 - the test reports every failure
                errors.append(exc)
        return threading.Thread(target=run)

    with Memory.open(tmp_path, fsync="never") as mem:

        def writer(tag: str) -> None:
            for i in range(WRITES):
                written.append(mem.remember(f"{tag} note {i} about acme", actors=["acme", tag], now=NOW + timedelta(seconds=i)))

        def cue_reader() -> None:
            while not stop.is_set():
                for hit in mem.recall({"actor": "acme"}, k=5, now=NOW).hits:
                    assert hit.record.id == hit.id

        def text_reader() -> None:
            while not stop.is_set():
                mem.recall(text="acme note", k=5, now=NOW)

        def observer() -> None:
            for i in range(30):
                mem.observe(f"The billing database is a cluster of {i + 2} nodes.", now=NOW + timedelta(minutes=i))

        writers = [guarded(lambda t=t: writer(t)) for t in ("w1", "w2")]
        others = [guarded(cue_reader), guarded(text_reader)]
        observing = guarded(observer)
        for t in [*writers, *others, observing]:
            t.start()
        for t in [*writers, observing]:
            t.join()
        stop.set()
        for t in others:
            t.join()
        assert errors == []
        assert len(written) == len(set(written)) == 2 * WRITES and set(written) <= set(mem.ids())
        assert len(mem.history("billing database")) == 30
        live = (mem.ids(), mem._home.lifecycle.to_json(), mem.recall({"actor": "acme"}, k=10, now=NOW).hits)
        mem.rebuild()
        assert (mem.ids(), mem._home.lifecycle.to_json()) == live[:2]
        assert [h.id for h in mem.recall({"actor": "acme"}, k=10, now=NOW).hits] == [h.id for h in live[2]]


def test_a_scheduler_beside_an_agent_loop_leaves_the_handle_working(tmp_path: Path) -> None:
    """docs/home.md's recipe: a running Scheduler and remember/recall calls on the same handle."""
    clock = [NOW]
    with Memory.open(tmp_path, fsync="never") as mem:
        scheduler = Scheduler(mem, clock=lambda: clock[0], max_sleep=0.001).start()
        try:
            for i in range(200):
                mem.remember(f"turn {i}", tier="short", now=clock[0])
                mem.recall({"tier": "short"}, k=3, now=clock[0])
                clock[0] += timedelta(hours=1)
        finally:
            scheduler.stop()
        assert len(mem) >= 200 and mem.recall({}, k=1, now=clock[0]).total >= 0
        mem.remember("after the scheduler", now=clock[0])


def test_a_callback_may_use_the_handle_that_calls_it(tmp_path: Path) -> None:
    """An import's progress callback and a distillation's summarizer run inside the call and may call the same handle."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("the first note about acme", actors=["acme"], now=NOW)
        seen: list[int] = []

        def progress(done: int, total: int) -> None:
            seen.append(mem.recall({"actor": "acme"}, now=NOW).total)  # re-entrant: no deadlock, the import not yet visible

        report = mem.import_records([{"narrative": f"acme note {i}", "actors": ["acme"]} for i in range(5)], now=NOW, progress=progress)
        assert len(report.ids) == 5 and seen and all(n == 1 for n in seen)
        assert mem.recall({"actor": "acme"}, now=NOW).total == 6
