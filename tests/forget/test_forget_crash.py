"""Crash trials of forget: a real process SIGKILLed at random instants of a forget.

After each kill the home must open (a writable open carries out an interrupted
forget) and be in the state before the forget or the one after it: every record of
the subject intact, or every one erased with no file holding its text — never some
of each — while every other record keeps its bytes.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

from cuemem import ForgottenError, Memory

WRITER = Path(__file__).with_name("_forget_writer.py")
MARK = "zebracode"


def _make(root: Path) -> tuple[list[str], dict[str, str]]:
    """A home of bystanders and a subject of 300 records whose narratives hold MARK."""
    with Memory.open(root, fsync="never") as mem:
        doomed = mem.import_records(
            [{"narrative": f"{MARK} item {i} of the secret project", "subject": "secret project", "actors": ["ann"]} for i in range(300)],
            now=date(2026, 5, 1),
        ).ids
        kept = mem.import_records([{"narrative": f"bystander {i} note", "actors": ["bob"]} for i in range(700)], now=date(2026, 5, 1)).ids
        mem.consolidate(now=date(2026, 5, 2))
        return doomed, {k: mem.get(k).narrative for k in kept}


def _run(home: Path, delay: float | None) -> bool:
    """Runs the writer and kills it ``delay`` seconds after it opened (None: let it finish); whether it finished."""
    proc = subprocess.Popen([sys.executable, str(WRITER), str(home), "secret project"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line == b"open\n", proc.stderr.read() if proc.stderr else line
    if delay is None:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        return True
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    return b"done" in out


def _check(home: Path, doomed: list[str], kept: dict[str, str]) -> str:
    """The state the home is in ("before" or "after"), checked whole."""
    with Memory.open(home, fsync="never") as mem:
        report = mem.open_report
        assert report.journal_problems == [] and report.skipped_records == [], report
        assert {k: mem.get(k).narrative for k in kept} == kept
        erased = 0
        for eid in doomed:
            try:
                assert MARK in mem.get(eid).narrative
            except ForgottenError:
                erased += 1
        assert erased in (0, len(doomed)), f"{erased} of {len(doomed)} erased: a half-done forget"
        hits = mem.recall({"subject": "secret project"}, now=date(2026, 6, 2), k=5).total
        assert hits == (0 if erased else len(doomed)) or erased == 0
    if erased:
        holding = [p for p in home.rglob("*") if p.is_file() and MARK.encode() in p.read_bytes()]
        assert holding == [], holding
        assert not (home / ".forget.json").exists()
        return "after"
    return "before"


def _trials(tmp_path: Path, n: int) -> set[str]:
    base = tmp_path / "base"
    doomed, kept = _make(base)
    timed = tmp_path / "timed"
    shutil.copytree(base, timed)
    start = time.monotonic()
    _run(timed, None)
    span = time.monotonic() - start
    assert _check(timed, doomed, kept) == "after"
    rng = random.Random(1234)
    seen = set()
    for trial in range(n):
        home = tmp_path / f"trial-{trial}"
        shutil.copytree(base, home)
        finished = _run(home, rng.uniform(0.0, span))
        state = _check(home, doomed, kept)
        assert state == "after" or not finished
        seen.add(state)
    return seen


def test_a_forget_killed_at_random_instants_leaves_the_state_before_or_after(tmp_path: Path) -> None:
    """A few kills: each trial's home is wholly before or wholly after the forget."""
    assert _trials(tmp_path, 4) <= {"before", "after"}


@pytest.mark.slow
def test_many_kills_during_forget(tmp_path: Path) -> None:
    """Many kills: both outcomes occur, and nothing in between."""
    assert _trials(tmp_path, 40) == {"before", "after"}
