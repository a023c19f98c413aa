"""A job run's notes are flushed with O(1) syncs, counted as they reach a real file system."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.store import fsync
from cuemem.store.fsync import handed_syncs, sync_counts

NOW = datetime(2026, 6, 14, 4, tzinfo=timezone.utc)
MARCH = date(2026, 3, 2)


class FsyncCounter:
    """Counts ``os.fsync`` calls and passes each through to the real one (a measurement)."""

    def __init__(self) -> None:
        self.calls = 0
        self.real = os.fsync

    def __call__(self, fd: int) -> None:
        self.calls += 1
        self.real(fd)


@pytest.fixture
def counter(monkeypatch: pytest.MonkeyPatch) -> Iterator[FsyncCounter]:
    spy = FsyncCounter()
    monkeypatch.setattr(os, "fsync", spy)
    yield spy


def _outcomes(path: Path, n: int) -> None:
    """A home whose outcomes yield ``n`` policies (two slipped deals of their own type per actor)."""
    with Memory.open(path, fsync="never") as mem:
        for i in range(n):
            for j in range(2):
                mem.remember(f"The deal with vendor{i} slipped ({j})", type=f"deal{i}", actors=[f"vendor{i}"], outcome="negative",
                             occurred_at=MARCH, now=MARCH)


def _faded(path: Path, n: int) -> None:
    """A home of ``n`` subjects with two faded calls each (``n`` rungs at ``NOW``)."""
    with Memory.open(path, fsync="never") as mem:
        for i in range(n):
            for j in range(2):
                mem.remember(f"call about topic{i} ({j})", type="call", subject=f"topic{i}", occurred_at=MARCH, now=MARCH)


def _syncs(path: Path, job: Callable[[Memory], int], counter: FsyncCounter) -> tuple[int, int]:
    """(notes the job wrote, flushes it cost) on a durable handle, by the module's count and by ``os.fsync``'s."""
    with Memory.open(path) as mem:
        before, calls, handed = sync_counts(), counter.calls, handed_syncs()
        written = job(mem)
        after = sync_counts()
        # Every fsync went through store/fsync: Python's, the syncer thread's of the journal,
        # and the core's of a batch's files (made where there is no syncfs); os.fsync sees
        # only the first.
        by_core = (after[0] - before[0]) - (counter.calls - calls) - (handed_syncs() - handed)
        assert by_core == 0 if fsync._syncfs is not None else by_core >= 0
        return written, (after[0] - before[0]) + (after[1] - before[1])


def _policies(mem: Memory) -> int:
    return len(mem.distill_policies(now=NOW).written)


def _rungs(mem: Memory) -> int:
    return len(mem.distill(now=NOW).rungs)


def _costs(
    root: Path, fill: Callable[[Path, int], None], job: Callable[[Memory], int], counter: FsyncCounter, sizes: tuple[int, ...]
) -> list[int]:
    """The syncs of one job run on a home filled with each of ``sizes`` items (each run writes as many notes)."""
    costs = []
    for n in sizes:
        fill(root / str(n), n)
        written, syncs = _syncs(root / str(n), job, counter)
        assert written == n
        costs.append(syncs)
    return costs


@pytest.mark.skipif(fsync._syncfs is None, reason="no syncfs here: a batch syncs file by file")
@pytest.mark.parametrize(("fill", "job"), [(_outcomes, _policies), (_faded, _rungs)], ids=["policies", "distillation"])
def test_a_job_run_costs_the_same_few_syncs_for_ten_notes_or_two_hundred(
    tmp_path: Path, counter: FsyncCounter, fill: Callable[[Path, int], None], job: Callable[[Memory], int]
) -> None:
    """Policy mining and distillation flush their notes with a constant number of syncs, whatever the note count."""
    costs = _costs(tmp_path, fill, job, counter, (10, 200))
    assert costs[0] == costs[1] and costs[1] <= 8, costs


def test_without_syncfs_a_batch_syncs_each_file_then_the_directory(
    tmp_path: Path, counter: FsyncCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where there is no syncfs, the notes of a run cost one fsync each, plus the same few as with it."""
    monkeypatch.setattr(fsync, "_syncfs", None)
    costs = _costs(tmp_path, _outcomes, _policies, counter, (10, 50))
    assert costs[1] - costs[0] == 40, costs
