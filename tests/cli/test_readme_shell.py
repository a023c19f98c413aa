"""The README's shell blocks of the command line (quick start, jobs, proposals, policies) run as written."""

from __future__ import annotations

import json
import re
import shlex
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuemem import Memory
from cuemem.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _block(first_command: str) -> list[str]:
    """The lines of the README's shell block that starts with ``first_command``."""
    (block,) = [b for b in BLOCK.findall(README.read_text(encoding="utf-8")) if b.startswith(first_command)]
    return [line for line in block.splitlines() if line.strip()]


def _home(root: Path) -> None:
    """A home for the blocks: Acme deals slipping on late legal reviews, one request noted twice."""
    with Memory.open(root, fsync="never") as mem:
        for i, day in enumerate((date(2026, 5, 4), date(2026, 5, 11), date(2026, 5, 18))):
            mem.remember(f"Acme deal {i} slipped: legal review late", actors=["acme"], type="deal", outcome="negative",
                         tags=["late-legal-review"], occurred_at=day, now=day)
        mem.remember("Kim asked for the invoice export as CSV files", actors=["kim"], now=date(2026, 5, 20))
        mem.remember("Kim asked for the invoice export as CSV files.", actors=["kim"], occurred_at=date(2026, 5, 20),
                     now=date(2026, 5, 21))  # the same request, written down again the next day: a duplicate
        mem.remember("Standup moved", tier="short", subject="standup", now=date(2026, 6, 1))
        mem.remember("Standup moved again", tier="short", subject="standup", now=date(2026, 6, 1))
        first = mem.ids()[0]
    (root / "golden.yaml").write_text(f"now: 2026-06-10\ncases:\n  - name: the late legal reviews\n    text: legal review late\n"
                                      f"    cues: {{actor: acme}}\n    expect: [{first}]\n")


def _run(line: str, root: Path, optional: bool, found: dict[str, str]) -> dict[str, object]:
    """Runs one README line (``[...]`` parts kept or dropped) and returns what it printed, parsed when JSON."""
    command = line.split("  #", 1)[0].strip()
    stdin = None
    if command.startswith("echo "):
        echoed, command = command.split("|", 1)
        stdin = shlex.split(echoed)[1] + "\n"
    command = re.sub(r"\[([^\]]*)\]", r"\1" if optional else "", command)
    args = [str(root) if a == "./h" else found.get(a, a) for a in shlex.split(command)][1:]
    result = CliRunner().invoke(main, args, input=stdin)
    assert result.exit_code == 0, (line, optional, result.output)
    return {"args": args, "output": result.output}


@pytest.mark.parametrize("optional", [False, True], ids=["as written", "with the optional parts"])
def test_the_readme_command_line_blocks_run(tmp_path: Path, optional: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command of the quick start, jobs, proposals and policies blocks exits 0 on a home like the README's."""
    root = tmp_path / "h"
    _home(root)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "episodes.jsonl").write_text(json.dumps({"narrative": "Imported: Globex renewal signed", "actors": ["globex"]}) + "\n")
    found: dict[str, str] = {}
    for first in ("cuemem remember --home ./h --actor acme", "cuemem consolidate", "cuemem policies", "cuemem dedupe"):
        for line in _block(first):
            if "bench-dedupe" in line:
                continue  # a benchmark: run on purpose, not by the tests
            if "pr-…" in line:
                listed = CliRunner().invoke(main, ["proposals", "--home", str(root), "--pending", "--json"])
                pending = json.loads(listed.output)
                assert pending, "the dedupe line proposed nothing to accept"
                found["pr-…"] = pending[0]["id"]
            _run(line, root, optional, found)
    with Memory.open(root, read_only=True) as mem:
        assert any(h.record.narrative == "Kim moved the sync to Thursdays" for h in mem.recall({}, k=50).hits)
        assert any(p.id == "pol-180fc7dd109629a5" for p in mem.policies())
        assert mem.recall({"actor": "globex"}).total == 1
