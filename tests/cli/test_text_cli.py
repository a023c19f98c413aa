"""``cuemem recall`` with a question: positional text, ``--last``, JSON output, usage errors."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from click.testing import CliRunner

from cuemem import Memory
from cuemem.cli import main


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        mem.remember("Caroline called the adoption agency", id="recent", actors=["caroline"], occurred_at="2026-06-10", now=date(2026, 6, 10))
        mem.remember("Caroline read about adoption law", id="old", actors=["caroline"], occurred_at="2026-01-10", now=date(2026, 6, 10))
        mem.remember("Melanie painted a lake", id="paint", actors=["melanie"], occurred_at="2026-06-11", now=date(2026, 6, 11))
    return home


def _ids(result_output: str) -> list[str]:
    return [h["id"] for h in json.loads(result_output)["hits"]]


def test_recall_takes_a_question_and_last(tmp_path: Path) -> None:
    """The question ranks by text; ``--last month`` keeps the last 30 days up to --now."""
    home = _home(tmp_path)
    run = CliRunner().invoke
    r = run(main, ["recall", "--home", str(home), "what did Caroline say about the adoption agency", "--now", "2026-06-15", "--json"])
    assert r.exit_code == 0, r.output
    assert _ids(r.stdout) == ["recent", "old"]
    r = run(main, ["recall", "--home", str(home), "adoption", "--last", "month", "--now", "2026-06-15", "--json"])
    assert r.exit_code == 0, r.output
    assert _ids(r.stdout) == ["recent"]
    r = run(main, ["recall", "--home", str(home), "lake", "--cue", "actor=melanie", "--now", "2026-06-15"])
    assert r.exit_code == 0 and "Melanie painted a lake" in r.stdout


def test_recall_usage_errors(tmp_path: Path) -> None:
    """Text twice, --last with a time cue, or an unknown span are usage errors."""
    home = _home(tmp_path)
    run = CliRunner().invoke
    assert run(main, ["recall", "--home", str(home), "adoption", "--text", "adoption"]).exit_code == 2
    assert run(main, ["recall", "--home", str(home), "adoption", "--last", "month", "--cue", "time=2026"]).exit_code == 2
    assert run(main, ["recall", "--home", str(home), "adoption", "--last", "decade"]).exit_code == 2
