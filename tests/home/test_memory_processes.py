"""Several processes on one home (E5): one writer at a time, readers follow with ``refresh``."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest
from _memory_writer import LOCKED, NOW, acknowledged, errors, narrative_for, spawn, wait_for_acks

from cuemem import Memory
from cuemem.errors import ForkedHandleError, HomeLockedError


def journal_bytes(home: Path) -> bytes:
    """Every journal segment's bytes, in order."""
    return b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))


def all_ids(mem: Memory) -> list[str]:
    """Every id the handle indexes, through a cue-less recall (one hit per row)."""
    return [h.id for h in mem.recall(None, k=max(1, len(mem)), now=NOW).hits] if len(mem) else []


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty home, created and closed."""
    path = tmp_path / "home"
    Memory.open(path).close()
    return path


def test_a_reader_sees_every_acknowledged_episode_exactly_once(home: Path) -> None:
    """While another process writes, each ``refresh`` shows every episode acknowledged before it, once."""
    proc = spawn(home, 7, "--count", "60", "--import-every", "4", "--batch", "6", "--pause", "0.002")
    refreshes = 0
    with Memory.open(home, read_only=True) as reader:
        try:
            seen = 0
            while True:
                done = proc.poll() is not None
                acks = acknowledged(home, 7)
                seen += reader.refresh()
                refreshes += 1
                ids = all_ids(reader)
                assert len(set(ids)) == len(ids) == len(reader) == seen
                assert {eid for eid, _ in acks} <= set(ids)
                if done:
                    break
        finally:
            proc.kill()
            proc.wait()
        assert proc.returncode == 0, errors(home, 7)
        acks = acknowledged(home, 7)
        assert [seq for _, seq in acks] == list(range(60))
        assert sorted(all_ids(reader)) == sorted(eid for eid, _ in acks) and len(reader) == 60
        assert all(reader.get(eid).narrative == narrative_for(7, seq) for eid, seq in acks)
        assert reader.refresh() == 0
    assert refreshes >= 1


def test_a_reader_opened_mid_write_catches_up_to_the_end(home: Path) -> None:
    """A reader opened while a writer runs starts from what is committed and reaches the writer's final state."""
    proc = spawn(home, 8, "--count", "40", "--pause", "0.002")
    try:
        wait_for_acks(home, 8, proc, count=5)
        with Memory.open(home, read_only=True) as reader:
            assert len(reader) >= 5
            assert proc.wait(timeout=60) == 0, errors(home, 8)
            reader.refresh()
            assert sorted(all_ids(reader)) == sorted(eid for eid, _ in acknowledged(home, 8))
    finally:
        proc.kill()
        proc.wait()


def test_a_reader_lives_through_a_writer_crash(home: Path) -> None:
    """A reader open while a writer is SIGKILLed and the next one seals the torn tail sees every record once."""
    with Memory.open(home, read_only=True) as reader:
        crashed = spawn(home, 12, "--import-every", "3", "--batch", "8")
        try:
            wait_for_acks(home, 12, crashed, count=10)
        finally:
            crashed.kill()
            crashed.wait()
        reader.refresh()
        assert {eid for eid, _ in acknowledged(home, 12)} <= set(all_ids(reader))
        after = spawn(home, 13, "--count", "10", "--import-every", "2")
        assert after.wait(timeout=60) == 0, errors(home, 13)
        reader.refresh()
        ids = all_ids(reader)
        assert len(ids) == len(set(ids)) == len(reader)
        assert {eid for run in (12, 13) for eid, _ in acknowledged(home, run)} <= set(ids)
        with Memory.open(home, read_only=True) as fresh:
            assert sorted(all_ids(fresh)) == sorted(ids)


def test_a_second_writer_process_is_refused_at_once(home: Path) -> None:
    """While this process holds the home, a writer process gets HomeLockedError and writes nothing."""
    with Memory.open(home) as mem:
        eid = mem.remember("held here", now=NOW)
        before = journal_bytes(home)
        proc = spawn(home, 9, "--count", "3")
        assert proc.wait(timeout=60) == LOCKED
        assert errors(home, 9) == "locked\n" and acknowledged(home, 9) == []
        assert journal_bytes(home) == before
    with Memory.open(home, read_only=True) as reader:
        assert all_ids(reader) == [eid]


def test_a_waiting_writer_succeeds_after_the_holder_closes(home: Path) -> None:
    """A writer process holds the home: opening fails at once, and succeeds with ``lock_timeout`` once it closes."""
    proc = spawn(home, 10, "--count", "2", "--hold", "0.5")
    try:
        wait_for_acks(home, 10, proc, count=2)
        with pytest.raises(HomeLockedError) as info:
            Memory.open(home)
        assert isinstance(info.value, BlockingIOError)
        with Memory.open(home, lock_timeout=60) as mem:
            assert proc.wait(timeout=60) == 0, errors(home, 10)
            assert sorted(all_ids(mem)) == sorted(eid for eid, _ in acknowledged(home, 10))
            mine = mem.remember("after the first writer", now=NOW)
    finally:
        proc.kill()
        proc.wait()
    with Memory.open(home, read_only=True) as reader:
        assert len(reader) == 3 and mine in reader


def test_a_writer_process_waits_for_this_one_with_lock_timeout(home: Path) -> None:
    """A writer process given ``lock_timeout`` gets the home once this process closes it, and writes."""
    mem = Memory.open(home)
    try:
        proc = spawn(home, 11, "--count", "2", "--lock-timeout", "60")
    finally:
        mem.close()
    assert proc.wait(timeout=60) == 0, errors(home, 11)
    with Memory.open(home, read_only=True) as reader:
        assert sorted(all_ids(reader)) == sorted(eid for eid, _ in acknowledged(home, 11)) and len(reader) == 2


def test_two_writer_handles_in_one_process_exclude_each_other(home: Path) -> None:
    """The lock is per handle: a second writable ``Memory.open`` in the same process is refused too."""
    with Memory.open(home):
        with pytest.raises(HomeLockedError):
            Memory.open(home)
        with Memory.open(home, read_only=True) as reader:
            assert len(reader) == 0
    Memory.open(home).close()


# -- fork: a child opens its own handle; its parent's is refused, and untouched ---------------

_FORK = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


def _used_every_parallel_path(path: Path, fsync: str = "never") -> Memory:
    """A writer that has surveyed many note files, imported, built and searched the text index,
    rebuilt its caches and run a decay pass (maintain): each parallel path of the core has run."""
    mem = Memory.open(path, fsync=fsync)
    for i in range(200):
        mem.write_note(f"pref-{i}", f"Preference {i}: tea before meetings", now=NOW)
    for i in range(50):
        mem.remember(f"The renewal call number {i} went well", actors=["kim"], now=NOW)
    mem.import_records([{"narrative": f"batch item {i}", "actors": ["lee"]} for i in range(2000)], now=NOW)
    mem.sync(now=NOW)
    assert mem.recall(text="renewal call", now=NOW).hits
    mem.rebuild()
    mem.maintain(now=NOW)
    return mem


def _child_work(path: str, other: str, queue: Any) -> None:
    """In the child: the parent's home opened read-only, another home opened and written."""
    try:
        with Memory.open(path, read_only=True) as reader:
            found = len(reader.recall(text="renewal call", now=NOW).hits)
        with Memory.open(other, fsync="never") as mem:
            for i in range(120):
                mem.write_note(f"n-{i}", "a child's note", now=NOW)
            mem.remember("the child's own memory", now=NOW)
            mem.import_records([{"narrative": f"batch item {i}"} for i in range(2000)], now=NOW)
            mem.sync(now=NOW)
            mine = len(mem.recall(text="child memory", now=NOW).hits)
        queue.put(("ok", found, mine))
    except BaseException as exc:  # the parent asserts on what happened
        queue.put(("error", repr(exc), 0))


@_FORK
@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_a_child_forked_after_every_parallel_path_opens_and_uses_a_home(tmp_path: Path, method: str) -> None:
    """A child forked (or forkserver-started) after the parent ran the notes survey, an import,
    the text index, a rebuild and a decay pass opens homes and uses them normally: no hang."""
    ctx = multiprocessing.get_context(method)
    with _used_every_parallel_path(tmp_path / "home"):
        queue = ctx.Queue()
        child = ctx.Process(target=_child_work, args=(str(tmp_path / "home"), str(tmp_path / "other"), queue))
        child.start()
        child.join(120)
        alive = child.is_alive()
        if alive:
            child.kill()
        assert not alive, "the child hung"
        assert queue.get(timeout=10) == ("ok", 10, 1)
        assert child.exitcode == 0


@_FORK
@pytest.mark.parametrize("fsync", ["never", "interval", "always"])
def test_a_handle_inherited_across_fork_is_refused_in_the_child_and_left_to_the_parent(tmp_path: Path, fsync: str) -> None:
    """The child's inherited handle raises ForkedHandleError and closing it touches nothing:
    the parent still holds the writer lock, writes and closes as before (its group commit
    goes on), and once the parent has closed, the home is free for another writer
    although the child still lives."""
    path = tmp_path / "home"
    mem = _used_every_parallel_path(path, fsync)
    read, write = os.pipe()
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, wait for the parent to close, then exit without finalizers
        code = 0
        try:
            try:
                mem.remember("written from the child", now=NOW)
                code = 1
            except ForkedHandleError:
                pass
            try:
                mem.recall(text="renewal", now=NOW)
                code = code or 2
            except ForkedHandleError:
                pass
            mem.close()
            os.write(write, b"ready")
            os.read(go_read, 1)
        finally:
            os._exit(code)
    try:
        assert os.read(read, 5) == b"ready"
        with pytest.raises(HomeLockedError):
            Memory.open(path).close()  # the child's close let nothing go
        mem.remember("written by the parent after the fork", now=NOW)
        mem.close()
        with Memory.open(path) as again:  # the child lives on with its copy of the descriptor closed
            assert again.recall(text="written by the parent after the fork", now=NOW, k=1).hits
            assert all("from the child" not in h.record.narrative for h in again.recall(text="written from the child", now=NOW).hits)
    finally:
        os.write(go_write, b"x")
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@_FORK
def test_an_async_handle_inherited_across_fork_is_refused_not_hung(tmp_path: Path) -> None:
    """AsyncMemory's worker thread is its parent's: in a forked child an awaited call raises
    ForkedHandleError at once (it used to wait forever for a worker that does not exist)."""
    import asyncio

    from cuemem import AsyncMemory

    async def opened() -> AsyncMemory:
        mem = await AsyncMemory.open(tmp_path / "home", fsync="never")
        await mem.remember("from the parent", now=NOW)
        return mem

    async def in_child(mem: AsyncMemory) -> int:
        try:
            await asyncio.wait_for(mem.remember("from the child", now=NOW), 10)
        except ForkedHandleError:
            await mem.close()  # closes nothing
            return 0
        return 1

    async def afterwards(mem: AsyncMemory) -> int:
        found = len((await mem.recall(text="from the parent", now=NOW, k=5)).hits)
        await mem.close()
        return found

    mem = asyncio.run(opened())
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            code = asyncio.run(in_child(mem))
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert asyncio.run(afterwards(mem)) == 1


def _refused_in_child(mem: Memory, fork: Any) -> int:
    """Forks with ``fork`` and has the child try a write through ``mem``: the child's exit
    code (0: refused with ForkedHandleError, 1: the write was taken, 2: something else)."""
    pid = fork()
    if pid == 0:
        code = 2
        try:
            try:
                mem.remember("written by the forked child", now=NOW)
                code = 1
            except ForkedHandleError:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@_FORK
def test_a_child_forked_by_c_code_is_refused_although_python_s_fork_hooks_never_ran(tmp_path: Path) -> None:
    """C code's ``fork`` runs none of Python's at-fork hooks (the home is not abandoned there):
    the handle still knows it is in another process, from the core's fork generation, which
    ``fork`` itself moves on; the parent's journal is untouched and it writes on."""
    import ctypes

    libc_fork = ctypes.PyDLL(None).fork  # the C library's own (PyDLL: the GIL stays held across the call)
    path = tmp_path / "home"
    mem = Memory.open(path, fsync="never")  # no group commit, whose core would refuse the child on its own
    mem.remember("written by the parent first", now=NOW)
    before = journal_bytes(path)
    assert _refused_in_child(mem, libc_fork) == 0
    assert journal_bytes(path) == before
    mem.remember("written by the parent after the fork", now=NOW)
    mem.close()
    with Memory.open(path, read_only=True) as again:
        assert sorted(h.record.narrative for h in again.recall(None, k=5, now=NOW).hits) == [
            "written by the parent after the fork", "written by the parent first",
        ]


@_FORK
def test_a_child_is_refused_even_by_an_at_fork_hook_that_runs_before_cuemem_s(tmp_path: Path) -> None:
    """An at-fork hook registered before cuemem was imported (by the program, or a library
    imported first) runs in the child before cuemem's own: a write it makes through an
    inherited handle is refused all the same."""
    import subprocess
    import sys

    script = f"""
import os
result = []
def hook():
    try:
        MEM.remember("written from the child's hook", now="2026-01-01")
        result.append("taken")
    except Exception as exc:
        result.append(type(exc).__name__)
    os.write(1, (result[-1] + "\\n").encode())
os.register_at_fork(after_in_child=hook)
from cuemem import Memory
MEM = Memory.open({str(tmp_path / "home")!r}, fsync="never")
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print("parent holds", len(MEM))
MEM.close()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["ForkedHandleError", "parent", "holds", "0"], done.stdout + done.stderr
