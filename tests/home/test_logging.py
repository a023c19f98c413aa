"""Logging: cuemem logs through ``logging`` under ``cuemem.*``, silent unless the application (or ``cuemem -v``) asks."""

from __future__ import annotations

import logging
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuemem import Memory
from cuemem.cli import main

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def test_an_open_logs_how_the_home_came_up(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """INFO on ``cuemem.home``: the path, the episode count, how the indexes came up; a rebuild and a job run too."""
    with caplog.at_level(logging.INFO, logger="cuemem"):
        with Memory.open(tmp_path, fsync="never") as mem:
            mem.remember("one", tier="short", now=NOW)
            mem.rebuild()
            mem.maintain(now=NOW)
    messages = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert any(n == "cuemem.home" and lvl == logging.INFO and f"opened {tmp_path}" in m for n, lvl, m in messages)
    assert any("rebuilding every index" in m for _, _, m in messages)
    assert any(n == "cuemem.jobs" and "job expire ran" in m for n, _, m in messages)


def test_a_skipped_record_is_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A journal line a person broke is reported in the open report and logged as a WARNING."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("kept", now=NOW)
    (segment,) = sorted((tmp_path / "journal").glob("*.jsonl"))
    with segment.open("a", encoding="utf-8") as f:
        f.write('{"op": "remember", "episode": {"id": "x"}}\n')
    with caplog.at_level(logging.WARNING, logger="cuemem"), Memory.open(tmp_path, fsync="never") as mem:
        assert mem.open_report.skipped_records
    assert any(r.levelno == logging.WARNING and "skipped" in r.getMessage() for r in caplog.records)


def test_the_library_prints_nothing_by_default(tmp_path: Path) -> None:
    """Imported as a library with no logging set up, a home with a broken record writes nothing to stderr."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        mem.remember("kept", now=NOW)
    (segment,) = sorted((home / "journal").glob("*.jsonl"))
    with segment.open("a", encoding="utf-8") as f:
        f.write('{"op": "remember", "episode": {"id": "x"}}\n')
    code = f"import cuemem; cuemem.Memory.open({str(home)!r}, fsync='never').close()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr == ""


def test_the_cli_logs_with_v_and_stays_quiet_with_q(tmp_path: Path) -> None:
    """``cuemem -v`` logs the open on stderr; ``-q`` shows no warnings."""
    Memory.open(tmp_path, fsync="never").close()
    loud = CliRunner().invoke(main, ["-v", "stats", "--home", str(tmp_path)])
    assert loud.exit_code == 0 and "INFO cuemem.home: opened" in loud.stderr
    quiet = CliRunner().invoke(main, ["-q", "stats", "--home", str(tmp_path)])
    assert quiet.exit_code == 0 and "cuemem.home" not in quiet.stderr
