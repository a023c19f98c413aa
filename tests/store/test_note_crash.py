"""SIGKILL at any instant of note writes (write_note, distill_policies, sync): no untracked note is ever adopted."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cuemem import Memory

WRITER = textwrap.dedent(
    """
    import sys
    from datetime import datetime, timedelta, timezone
    from cuemem import Memory
    home, seed = sys.argv[1], int(sys.argv[2])
    t = datetime(2026, 6, 1, tzinfo=timezone.utc) + timedelta(days=seed)
    with Memory.open(home) as mem:  # fsync="always": what is acknowledged is on disk
        print("ready", flush=True)
        i = 0
        while True:
            i += 1
            mem.write_note(f"n{i % 7}", f"body {i} of run {seed}", now=t)
            mem.remember(f"deal {i} lost on price", actors=["acme", f"p{i % 5}"], type="deal", outcome="negative",
                         tags=["price"], now=t)
            if i % 5 == 0:
                mem.distill_policies(now=t + timedelta(seconds=i))
            if i % 3 == 0:
                mem.sync(now=t)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killed_note_writers_leave_only_journaled_notes(tmp_path: Path) -> None:
    """After each kill, every note file is its journaled version: no edit to sync, no error, no leftover."""
    rng = random.Random(11)
    home = tmp_path / "home"
    for trial in range(6):
        with subprocess.Popen([sys.executable, "-c", WRITER, str(home), str(trial)], stdout=subprocess.PIPE, text=True) as proc:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.05, 0.6))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        with Memory.open(home, fsync="never") as mem:
            assert mem.open_report.note_errors == []
            assert mem.sync(now=None).updated == [], f"trial {trial}: a crash leftover passed for a person's edit"
            assert not [p.name for p in (home / "notes").iterdir() if p.name.startswith(".")]
            assert all(n.origin.value != "user" for n in mem.notes())
