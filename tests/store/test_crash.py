"""Crashes and concurrent readers: a real writer process, killed at random moments.

The writer (``_crash_writer.py``) prints a sequence number only after ``append`` has
returned. The test SIGKILLs it after a seeded random delay, reopens the journal and
checks: opening never fails, every acknowledged record is present and intact, nothing
appears twice, and each crash leaves at most one damaged line.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from _crash_writer import make_record

from cuemem.store.fsync import FsyncPolicy
from cuemem.store.journal import Journal, Position, ProblemKind

WRITER = Path(__file__).with_name("_crash_writer.py")
PAYLOAD_MAX = 200_000

CatchUp = Callable[[Journal, "subprocess.Popen[bytes]"], Iterator[int]]


def start_writer(root: Path, trial: int, *options: str) -> subprocess.Popen[bytes]:
    """Starts the writer on ``root/journal``; its stdout and stderr go to files in ``root``."""
    with open(root / f"acks-{trial}.txt", "wb") as out, open(root / f"err-{trial}.txt", "wb") as err:
        return subprocess.Popen(
            [sys.executable, str(WRITER), str(root / "journal"), "--trial", str(trial), *options],
            stdout=out,
            stderr=err,
        )


def acknowledged(root: Path, trial: int) -> list[int]:
    """The sequence numbers the writer acknowledged (complete lines only)."""
    text = (root / f"acks-{trial}.txt").read_text()
    return [int(line) for line in text.split("\n")[:-1]]


def wait_for_first_ack(root: Path, trial: int, proc: subprocess.Popen[bytes]) -> None:
    """Blocks until the writer has acknowledged a record; fails if it died first."""
    ack_file = root / f"acks-{trial}.txt"
    deadline = time.monotonic() + 60
    while b"\n" not in ack_file.read_bytes():
        if proc.poll() is not None:
            pytest.fail(f"writer exited early: {(root / f'err-{trial}.txt').read_text()}")
        if time.monotonic() > deadline:
            pytest.fail("writer acknowledged nothing within a minute")
        time.sleep(0.005)


def check_journal(journal: Journal, acks: dict[int, list[int]], crashes: int) -> None:
    """Every acknowledged record is there once and intact; damage is bounded by crashes."""
    entries = list(journal.read())
    trials = [e.record["trial"] for e in entries]
    assert trials == sorted(trials), "records of one writer run are contiguous, runs in order"
    for trial, acked in acks.items():
        seqs = [e.record["seq"] for e in entries if e.record["trial"] == trial]
        assert seqs == list(range(len(seqs))), f"trial {trial}: a gap or a duplicate"
        assert len(seqs) >= len(acked), f"trial {trial}: acknowledged records lost"
        assert acked == list(range(len(acked)))
    for e in entries:
        assert e.record == make_record(e.record["trial"], e.record["seq"], PAYLOAD_MAX)
    problems = journal.problems
    assert len(problems) <= crashes
    torn = [p for p in problems if p.kind is ProblemKind.TORN]
    assert len(torn) <= 1
    if torn:
        assert torn[0].position >= journal.head(), "only the last line may be torn"


def crash_trials(root: Path, trials: int, seed: int) -> None:
    """Runs ``trials`` writer processes on one journal, killing each at a random moment."""
    rng = random.Random(seed)
    acks: dict[int, list[int]] = {}
    for trial in range(trials):
        proc = start_writer(root, trial, "--seed", str(seed + trial), "--payload-max", str(PAYLOAD_MAX))
        try:
            wait_for_first_ack(root, trial, proc)
            time.sleep(rng.uniform(0.0, 0.15))
        finally:
            proc.kill()
            proc.wait()
        acks[trial] = acknowledged(root, trial)
        check_journal(Journal(root / "journal"), acks, crashes=trial + 1)
    with Journal(root / "journal", fsync=FsyncPolicy.NEVER, writable=True) as writer:
        writer.append([make_record(trials, 0, PAYLOAD_MAX)])
        acks[trials] = [0]
    reader = Journal(root / "journal")
    check_journal(reader, acks, crashes=trials)
    assert all(p.kind is ProblemKind.INVALID for p in reader.problems), "sealed on writable open"


def test_acknowledged_appends_survive_sigkill(tmp_path: Path) -> None:
    """Three writers killed mid-run lose no acknowledged record and duplicate none."""
    crash_trials(tmp_path, trials=3, seed=20260601)


@pytest.mark.slow
def test_acknowledged_appends_survive_many_sigkills(tmp_path: Path) -> None:
    """Twenty-five writers killed at random moments on one journal."""
    crash_trials(tmp_path, trials=25, seed=7)


def catch_up_by_head(journal: Journal, writer: subprocess.Popen[bytes]) -> Iterator[int]:
    """The documented loop: read up to a head taken before each pass."""
    last = Position.start()
    while True:
        finished = writer.poll() is not None
        stop = journal.head()
        for entry in journal.read(last, stop):
            yield entry.record["seq"]
        last = stop
        if finished:
            return
        time.sleep(0.002)


def catch_up_by_entry_end(journal: Journal, writer: subprocess.Popen[bytes]) -> Iterator[int]:
    """The other exact loop: read to the end, resume from the last entry's end."""
    last = Position.start()
    while True:
        finished = writer.poll() is not None
        for entry in journal.read(last):
            yield entry.record["seq"]
            last = entry.end
        if finished:
            return
        time.sleep(0.002)


@pytest.mark.parametrize("catch_up", [catch_up_by_head, catch_up_by_entry_end])
def test_reader_catches_up_with_a_live_writer_exactly_once(tmp_path: Path, catch_up: CatchUp) -> None:
    """A reader polling while another process appends (and rotates) sees each record once."""
    count = 400
    writer = start_writer(
        tmp_path,
        0,
        *("--count", str(count), "--segment-bytes", "4096", "--payload-max", "700"),
        *("--fsync", "never", "--pause", "0.001", "--max-batch", "5"),
    )
    try:
        wait_for_first_ack(tmp_path, 0, writer)
        reader = Journal(tmp_path / "journal")
        seen = list(catch_up(reader, writer))
    finally:
        if writer.poll() is None:
            writer.kill()
        writer.wait()
    assert writer.returncode == 0, (tmp_path / "err-0.txt").read_text()
    assert seen == list(range(count))
    assert reader.problems == []
    assert len(reader.segments()) > 1
