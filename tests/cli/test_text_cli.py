"""``cuemem recall`` with a question: positional text, ``--last``, JSON output, usage errors."""

from __future__ import annotations

import json
import shlex
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
    """The question ranks by text; ``--last month`` is the previous calendar month (as the cue), ``--days 30`` the last 30 days."""
    home = _home(tmp_path)
    run = CliRunner().invoke
    r = run(main, ["recall", "--home", str(home), "what did Caroline say about the adoption agency", "--now", "2026-06-15", "--json"])
    assert r.exit_code == 0, r.output
    assert _ids(r.stdout) == ["recent", "old"]
    r = run(main, ["recall", "--home", str(home), "adoption", "--last", "month", "--now", "2026-07-02", "--json"])
    assert r.exit_code == 0, r.output
    assert _ids(r.stdout) == ["recent"]
    cue = run(main, ["recall", "--home", str(home), "adoption", "--cue", "time=last month", "--now", "2026-07-02", "--json"])
    assert _ids(cue.stdout) == ["recent"]  # one meaning of "last month"
    assert _ids(run(main, ["recall", "--home", str(home), "adoption", "--last", "month", "--now", "2026-06-15", "--json"]).stdout) == []
    r = run(main, ["recall", "--home", str(home), "adoption", "--days", "30", "--now", "2026-06-15", "--json"])
    assert r.exit_code == 0 and _ids(r.stdout) == ["recent"]
    r = run(main, ["recall", "--home", str(home), "lake", "--cue", "actor=melanie", "--now", "2026-06-15"])
    assert r.exit_code == 0 and "Melanie painted a lake" in r.stdout


def test_recall_usage_errors(tmp_path: Path) -> None:
    """Text twice, --last with a time cue, or an unknown span are usage errors."""
    home = _home(tmp_path)
    run = CliRunner().invoke
    assert run(main, ["recall", "--home", str(home), "adoption", "--text", "adoption"]).exit_code == 2
    assert run(main, ["recall", "--home", str(home), "adoption", "--last", "month", "--cue", "time=2026"]).exit_code == 2
    assert run(main, ["recall", "--home", str(home), "adoption", "--last", "decade"]).exit_code == 2
    assert run(main, ["recall", "--home", str(home), "adoption", "--last", "month", "--days", "30"]).exit_code == 2
    assert run(main, ["recall", "--home", str(home), "adoption", "--days", "0"]).exit_code == 2


def test_the_documented_text_recall_command_finds_what_its_block_wrote(tmp_path: Path) -> None:
    """docs/text-recall.md's ``cuemem recall ... --last month --now 2026-07-05`` returns the June memory its block wrote."""
    home = tmp_path / "h"
    with Memory.open(home, fsync="never") as mem:
        adoption = mem.remember("Caroline called the adoption agency about the home study", actors=["caroline"],
                                occurred_at=date(2026, 6, 2), now=date(2026, 6, 2))
    page = (Path(__file__).resolve().parents[2] / "docs" / "text-recall.md").read_text(encoding="utf-8")
    line = next(x for x in page.splitlines() if x.startswith('cuemem recall --home ./talk "what did Caroline say'))
    args = shlex.split(line)[1:]
    args[args.index("./talk")] = str(home)
    r = CliRunner().invoke(main, [*args, "--json"])
    assert r.exit_code == 0, r.output
    assert _ids(r.stdout) == [adoption]
