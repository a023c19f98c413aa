"""``cuemem consolidate``, ``distill`` and ``maintain`` on a real home, in-process and from a shell."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date, datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from cuemem import Memory
from cuemem.cli import main


def run(*args: str) -> Result:
    """Invokes ``cuemem ARGS`` in-process."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with two repeated short-term items and a month of faded urgent calls."""
    path = tmp_path / "home"
    with Memory.open(path) as mem:
        for day in (1, 2):
            mem.remember("prefers tea", tier="short", subject="drink", now=datetime(2026, 6, day, 9, tzinfo=timezone.utc))
        for day in range(1, 6):
            mem.remember(f"call {day}", actors=["acme"], type="call", salience={"urgency": 0.9},
                         occurred_at=date(2026, 3, day), now=date(2026, 3, day))
    return path


def test_consolidate_prints_the_report(home: Path) -> None:
    """The command promotes the pair and prints what it did; --json gives the record."""
    out = run("consolidate", "--home", str(home), "--now", "2026-06-03T03:00", "--json")
    body = json.loads(out.output)
    assert body["job"] == "consolidate" and body["by_repetition"] == 1 and len(body["promoted"]) == 1
    with Memory.open(home, read_only=True) as mem:
        assert mem.get(body["promoted"][0]).tier.value == "long"
    assert "into 0 long-term" in run("consolidate", "--home", str(home), "--now", "2026-06-04T03:00").output


def test_distill_writes_rungs(home: Path) -> None:
    """The command abstracts the faded calls into one summary rung with a note file."""
    body = json.loads(run("distill", "--home", str(home), "--now", "2026-06-14T04:00", "--json").output)
    assert body["abstracted"] == 5 and body["by_level"] == {"summary": 1}
    (rid,) = body["rungs"]
    assert (home / "notes" / f"{rid}.md").read_text().startswith("---\nid: " + rid)


def test_distill_honours_max_sources(home: Path) -> None:
    """--max-sources limits the run and defers the rest."""
    body = json.loads(run("distill", "--home", str(home), "--now", "2026-06-14T04:00", "--max-sources", "2", "--json").output)
    assert (body["abstracted"], body["deferred"]) == (2, 3)


def test_maintain_runs_what_is_due(home: Path) -> None:
    """The first call runs every job, the next one at the same hour nothing."""
    body = json.loads(run("maintain", "--home", str(home), "--now", "2026-06-14T05:00", "--json").output)
    assert [r["job"] for r in body["ran"]] == ["expire", "consolidate", "distill", "policies", "dedupe"]
    assert run("maintain", "--home", str(home), "--now", "2026-06-14T06:00").output.startswith("nothing due")


def test_bad_input_is_a_clear_error(home: Path, tmp_path: Path) -> None:
    """A bad --now or --max-sources fails with a message and changes nothing."""
    before = b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl")))
    bad = CliRunner().invoke(main, ["distill", "--home", str(home), "--now", "yesterday"])
    assert bad.exit_code == 2 and "--now" in bad.output
    bad = CliRunner().invoke(main, ["distill", "--home", str(home), "--max-sources", "0"])
    assert bad.exit_code == 1 and "max_sources" in bad.output
    assert b"".join(p.read_bytes() for p in sorted((home / "journal").glob("*.jsonl"))) == before


def test_maintain_from_a_shell_like_cron(home: Path) -> None:
    """``python -m cuemem.cli maintain --home DIR`` works as a plain process (what cron runs)."""
    proc = subprocess.run([sys.executable, "-m", "cuemem.cli", "maintain", "--home", str(home), "--now", "2026-06-14T05:00"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("expire: 0 expired")
    assert "consolidate: consolidated 2 short-term item(s)" in proc.stdout
    assert "distill: distilled 6 of 6 faded memories into 1 rung(s)" in proc.stdout  # the calls, and the promoted tea


def test_demo_shows_a_consolidation_and_a_distillation(tmp_path: Path) -> None:
    """``demo`` promotes its short-term items and abstracts the faded part of its year, originals kept."""
    path = tmp_path / "demo"
    result = CliRunner(env={"COLUMNS": "240"}).invoke(main, ["demo", str(path), "-n", "500"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "into 2 long-term record(s) (1 by repetition, 1 by intensity" in result.output
    assert "recall shows the abstraction first" in result.output
    with Memory.open(path, read_only=True, user="*") as mem:
        raw = [mem.get(i) for i in mem.ids()]
        rungs = [e for e in raw if e.level.value != "raw"]
        assert rungs and all(src in mem for r in rungs for src in r.sources)
        assert sum(e.origin.value != "job" for e in raw) == 500 + 4
