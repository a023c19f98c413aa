"""Durability of the home (E5): a writer process SIGKILLed at random moments loses no acknowledged write.

The writer (``_memory_writer.py``) remembers and imports episodes and prints each id only
after the call returned. The parent kills it after a seeded random delay, then opens the
home: opening must succeed (for a reader and for the next writer), every acknowledged
id must be there with its own narrative, and each run's episodes must be contiguous,
without duplicates, with at most one unacknowledged call's worth beyond the acks.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest
from _memory_writer import NOW, acknowledged, narrative_for, spawn, wait_for_acks

from cuemem import Memory

#: The most episodes one call of the writer writes (``--batch`` upper bound below).
MAX_BATCH = 12
_SEQ = re.compile(r"^run (\d+) episode (\d+): ")


def check_home(mem: Memory, acked: dict[str, tuple[int, int]], runs: list[int], read: list[str]) -> None:
    """Every acknowledged id is present and the ``read`` ones intact; each run is a gap-free, duplicate-free prefix."""
    missing = [eid for eid in acked if eid not in mem]
    assert not missing, f"acknowledged but lost: {missing[:5]}"
    for eid in read:
        run, seq = acked[eid]
        episode = mem.get(eid)
        assert episode.narrative == narrative_for(run, seq) and f"run-{run}" in episode.actors
    every = mem.recall(None, k=max(1, len(mem)), now=NOW).hits if len(mem) else []
    assert len({h.id for h in every}) == len(every) == len(mem)
    for run in runs:
        hits = mem.recall({"actor": f"run-{run}"}, k=max(1, len(mem)), now=NOW).hits
        seqs = sorted(int(m.group(2)) for m in (_SEQ.match(h.record.narrative) for h in hits) if m and int(m.group(1)) == run)
        acks = sum(1 for r, _ in acked.values() if r == run)
        assert seqs == list(range(len(seqs))), f"run {run}: a gap or a duplicate"
        assert acks <= len(seqs) <= acks + MAX_BATCH, f"run {run}: {len(seqs)} stored for {acks} acknowledged"


def crash_trials(home: Path, trials: int, seed: int) -> None:
    """Runs ``trials`` writers on one home, SIGKILLing each at a random moment and checking the home after."""
    rng = random.Random(seed)
    acked: dict[str, tuple[int, int]] = {}
    runs: list[int] = []
    for trial in range(trials):
        run = seed * 1000 + trial
        options = [
            "--import-every", str(rng.choice([0, 2, 3, 5])),
            "--batch", str(rng.randint(2, MAX_BATCH)),
            "--save-every", str(rng.choice([0, 3, 7])),
        ]
        proc = spawn(home, run, *options)
        try:
            wait_for_acks(home, run, proc)
            time.sleep(rng.uniform(0.0, 0.25))
        finally:
            proc.kill()
            proc.wait()
        runs.append(run)
        new = {eid: (run, seq) for eid, seq in acknowledged(home, run)}
        earlier = rng.sample(sorted(acked), min(len(acked), 50))
        acked.update(new)
        with Memory.open(home, read_only=True) as reader:
            check_home(reader, acked, runs[-3:], [*new, *earlier])
        with Memory.open(home) as writer:
            check_home(writer, acked, runs[-3:], [*new, *earlier])
    with Memory.open(home, read_only=True) as reader:
        check_home(reader, acked, runs, list(acked))
    assert len(acked) >= trials


def test_killed_writers_lose_no_acknowledged_episode(tmp_path: Path) -> None:
    """Three writers killed at random moments: the home opens and holds every acknowledged episode."""
    crash_trials(tmp_path / "home", trials=3, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [2, 3])
def test_many_killed_writers_lose_no_acknowledged_episode(tmp_path: Path, seed: int) -> None:
    """Twenty-four kills per seed, imports and cache saves among the writes: nothing acknowledged is lost."""
    crash_trials(tmp_path / "home", trials=24, seed=seed)
