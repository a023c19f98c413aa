"""The life-cycle commands on a real home: observe, approvals, approve, reject, history, as-of, expire."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from cuemem import Memory
from cuemem.cli import main


def run(*args: str) -> Result:
    """Invokes ``cuemem ARGS`` in-process."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_observe_history_and_as_of(tmp_path: Path) -> None:
    """Two facts on one subject: history lists both, as-of picks by valid and known time."""
    home = str(tmp_path)
    run("init", home)  # only init makes a home
    first = run("observe", "--home", home, "--now", "2026-06-01", "My favorite editor is vim.")
    second = run("observe", "--home", home, "--now", "2026-06-10", "Hi! My favorite editor is emacs.")
    assert first.exit_code == second.exit_code == 0
    old, new = first.stdout.split()[0], second.stdout.split()[0]
    chain = json.loads(run("history", "--home", home, "favorite editor", "--json").stdout)
    assert [(v["id"], v["current"], v["superseded_by"]) for v in chain] == [(old, False, new), (new, True, None)]
    assert chain[0]["valid_to"] == "2026-06-10T00:00:00+00:00"
    table = run("history", "--home", home, "favorite editor").stdout
    assert "superseded" in table and "current" in table and "2 version(s)" in table
    assert run("as-of", "--home", home, "favorite editor", "--valid-at", "2026-06-05").stdout.startswith(old)
    assert run("as-of", "--home", home, "favorite editor", "--valid-at", "2026-06-10").stdout.startswith(new)
    known = run("as-of", "--home", home, "favorite editor", "--valid-at", "2026-06-10", "--known-at", "2026-06-09T23:59:59")
    assert known.stdout.startswith(old)
    assert "nothing known" in run("as-of", "--home", home, "favorite editor", "--valid-at", "2026-05-01").stdout


def test_the_approval_queue_from_the_command_line(tmp_path: Path) -> None:
    """Under --profile high a preference waits; approve writes it, reject drops the other."""
    home = str(tmp_path)
    run("init", home)  # only init makes a home
    a = run("observe", "--home", home, "--profile", "high", "--now", "2026-06-01", "My favorite editor is vim.").stdout.strip()
    b = run("observe", "--home", home, "--profile", "high", "--now", "2026-06-01", "My favorite shell is zsh.").stdout.strip()
    listed = json.loads(run("approvals", "--home", home, "--json").stdout)
    assert [(x["id"], x["reason"]) for x in listed] == [(a, "sensitive"), (b, "sensitive")]
    assert a in run("approvals", "--home", home).stdout
    assert run("approve", "--home", home, a, "--now", "2026-06-02").stdout.strip() == a
    assert run("reject", "--home", home, b, "--now", "2026-06-02").exit_code == 0
    again = CliRunner().invoke(main, ["approve", "--home", home, b, "--now", "2026-06-03"])
    assert again.exit_code == 1 and "already rejected" in again.stderr
    with Memory.open(tmp_path, read_only=True) as mem:
        assert a in mem and b not in mem and mem.approvals() == []


def test_expire_and_bad_input(tmp_path: Path) -> None:
    """expire reports what it retired; an unknown approval id and a bad time are clean errors."""
    home = str(tmp_path)
    run("init", home)  # only init makes a home
    run("observe", "--home", home, "--now", "2026-06-01T10:00:00", "Here PR means pull request.")
    assert "expired 0 short-term" in run("expire", "--home", home, "--now", "2026-06-15T09:59:59").stdout
    assert "expired 1 short-term" in run("expire", "--home", home, "--now", "2026-06-15T10:00:00").stdout
    missing = CliRunner().invoke(main, ["approve", "--home", home, "ep-nope"])
    assert missing.exit_code == 1 and "no queued write" in missing.stderr
    bad = CliRunner().invoke(main, ["as-of", "--home", home, "x", "--valid-at", "soon"])
    assert bad.exit_code == 2 and "not an ISO date" in bad.stderr


def test_promote_makes_an_agents_short_term_memory_last(tmp_path: Path) -> None:
    """`cuemem promote ID` writes a long-term successor on a person's say-so: expiry at the short-term TTL then
    retires the agent's original but not the promoted memory; an unknown id is a clean error."""
    from datetime import datetime, timedelta, timezone

    home = tmp_path / "h"
    day = datetime(2026, 6, 1, tzinfo=timezone.utc)
    with Memory.open(home) as mem:
        agents = mem.remember("Deploys happen on Fridays.", origin="agent", now=day)
        other = mem.remember("The standup is at nine.", origin="agent", now=day)
        assert mem.get(agents).tier.value == "short"
    promoted = run("promote", "--home", str(home), agents, "--now", "2026-06-02", "--json")
    assert promoted.exit_code == 0, promoted.stderr
    body = json.loads(promoted.stdout)
    assert body["promoted"] == agents and body["tier"] == "long"
    assert "expired" in run("expire", "--home", str(home), "--now", (day + timedelta(days=15)).isoformat()).stdout
    with Memory.open(home, read_only=True) as mem:
        left = {h.id for h in mem.recall({}, k=10, now=day + timedelta(days=15)).hits}
        assert left == {body["id"]} and other not in left
    missing = run("promote", "--home", str(home), "ep-nope")
    assert missing.exit_code == 1 and "error:" in missing.stderr
