"""Several processes on one home (E5): one writer at a time, readers follow with ``refresh``."""

from __future__ import annotations

from pathlib import Path

import pytest
from _memory_writer import LOCKED, NOW, acknowledged, errors, narrative_for, spawn, wait_for_acks

from cuemem import Memory
from cuemem.errors import HomeLockedError


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
