"""``cuemem dedupe``, ``proposals``, ``review`` of a proposal and ``stats`` with regret (cli/maintenance.py), in-process."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cuemem import Memory
from cuemem.cli import main

T0 = datetime(2026, 6, 1, 9, tzinfo=timezone.utc)


def run(*args: str) -> Result:
    """Invokes ``cuemem ARGS`` in-process."""
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home holding one pair of near-duplicates and one other memory."""
    path = tmp_path / "home"
    with Memory.open(path) as mem:
        mem.remember("The office moves to Lyon in September", now=T0)
        mem.remember("the office moves to Lyon in September.", now=T0 + timedelta(hours=1))
        mem.remember("Globex renewed the support contract", now=T0)
    return path


def test_dedupe_proposes_and_review_accepts(home: Path) -> None:
    """dedupe writes one proposal; proposals and review list it; review accept makes the change; stats shows the job's acceptance."""
    body = json.loads(run("dedupe", "--home", str(home), "--now", "2026-06-02T03:30", "--json").output)
    (pid,) = body["proposed"]
    assert body["job"] == "dedupe" and body["checked"] == 3
    (listed,) = json.loads(run("proposals", "--home", str(home), "--json").output)
    assert (listed["id"], listed["status"], listed["action"]) == (pid, "pending", "merge") and listed["changes"]
    (item,) = json.loads(run("review", "--home", str(home), "--json").output)
    assert (item["id"], item["kind"], item["reason"]) == (pid, "proposal", "dedupe: merge")
    table = run("proposals", "--home", str(home))
    assert pid in table.output and "pending" in table.output
    assert run("review", "accept", "--home", str(home), pid, "--now", "2026-06-02T09:00").output.strip() == f"accepted {pid}"
    assert json.loads(run("proposals", "--home", str(home), "--pending", "--json").output) == []
    stats = json.loads(run("stats", "--home", str(home), "--json").output)
    assert stats["proposals"] == [{"job": "dedupe", "pending": 0, "accepted": 1, "rejected": 0, "acceptance_rate": 1.0, "regretted": 0,
                                   "regret_rate": 0.0}]
    table = " ".join(run("stats", "--home", str(home)).output.split())
    assert "acceptance 100%" in table and "regret 0%" in table


def test_a_conflicting_accept_is_one_line_and_exit_status_1(home: Path) -> None:
    """Accepting a proposal twice fails with one line, the journal unchanged."""
    (pid,) = json.loads(run("dedupe", "--home", str(home), "--now", "2026-06-02T03:30", "--json").output)["proposed"]
    run("review", "reject", "--home", str(home), pid, "--now", "2026-06-02T09:00")
    before = b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))
    again = run("review", "accept", "--home", str(home), pid, "--now", "2026-06-02T10:00")
    assert again.exit_code == 1 and "already rejected" in again.output
    assert b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl"))) == before
