"""The shell blocks of the README and docs/ (quick start, text recall, jobs, proposals, policies) run as written."""

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

ROOT = Path(__file__).resolve().parents[2]
#: The documents whose shell blocks a reader runs: the README, then every page of docs/.
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The first line of the README's shell quick start.
QUICK_START = "cuemem init ./h                              # make the home"
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.DOTALL | re.MULTILINE)
#: Every shell block of the documents, by the start of its first line, with the test that runs it as written.
RUN_BY = {
    "pip install . && cuemem demo": "none: it builds the package (the demo's tour is tests/demo/)",
    "pip install '.[test]' && cargo test --locked && pytest": "none: it is the test run itself (.ci/run runs it verbatim)",
    QUICK_START: "tests/cli/test_readme_shell.py",
    "cuemem init ./talk": "tests/cli/test_readme_shell.py",
    "cuemem consolidate": "tests/cli/test_readme_shell.py",
    "cuemem dedupe": "tests/cli/test_readme_shell.py",
    "cuemem policies": "tests/cli/test_readme_shell.py",
    "cuemem init ./h                                # once: make the home": "tests/cli/test_cli_trust.py",
    "cuemem forget --home ./h --of-user alice": "tests/cli/test_cli_forget.py",
    "cuemem shared up ./pg": "tests/postgres/test_readme_shared.py",
}


def shell_blocks() -> list[tuple[Path, str]]:
    """Every shell block of the documents, with the document that holds it."""
    return [(d, b) for d in DOCUMENTS for b in BLOCK.findall(d.read_text(encoding="utf-8"))]


def _block(first_command: str) -> list[str]:
    """The lines of the one shell block (in the README or docs/) that starts with ``first_command``."""
    (block,) = [b for _, b in shell_blocks() if b.startswith(first_command)]
    return [line for line in block.splitlines() if line.strip()]


def test_every_shell_block_of_the_documents_is_run_by_a_test() -> None:
    """Each shell block of the README and docs/ starts as one that a test runs as written (or says why none does),
    and every block the tests run is still in the documents."""
    blocks = shell_blocks()
    unclaimed = [(str(d.relative_to(ROOT)), b.splitlines()[0]) for d, b in blocks if not any(b.startswith(k) for k in RUN_BY)]
    assert not unclaimed, f"shell blocks no test runs: {unclaimed}"
    for first in RUN_BY:
        assert any(b.startswith(first) for _, b in blocks), f"no document holds the block starting {first!r}"
    for first, runner in RUN_BY.items():
        if runner.startswith("tests/"):
            assert (ROOT / runner).is_file(), runner


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
    command, _, redirect = command.partition(" > ")
    args = [str(root) if a == "./h" else found.get(a, a) for a in shlex.split(command)][1:]
    result = CliRunner().invoke(main, args, input=stdin)
    assert result.exit_code == 0, (line, optional, result.output)
    if redirect:  # "> FILE": the output goes to the file (relative to the working directory)
        Path(redirect.strip()).write_text(result.stdout, encoding="utf-8")
    return {"args": args, "output": result.output}


@pytest.mark.parametrize("optional", [False, True], ids=["as written", "with the optional parts"])
def test_the_readme_command_line_blocks_run(tmp_path: Path, optional: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command of the quick start, jobs, proposals and policies blocks exits 0 on a home like the documents'."""
    root = tmp_path / "h"
    _home(root)
    monkeypatch.chdir(tmp_path)
    found: dict[str, str] = {}
    for first in (QUICK_START, "cuemem consolidate", "cuemem policies", "cuemem dedupe"):
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
        assert mem.history("office")[0].episode.narrative == "The office is in Lyon."  # imported from the example file


def test_the_quick_start_runs_twice_in_a_fresh_directory_and_every_command_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The quick start's shell block, as written, in an empty directory and then again there: each
    command exits 0 and prints something (a recall right after a remember finds it)."""
    monkeypatch.chdir(tmp_path)
    for run in (1, 2):
        for line in _block(QUICK_START):
            result = _run(line, tmp_path / "h", False, {})
            printed = result["output"] if " > " not in line else Path(line.split(" > ")[1].split()[0]).read_text(encoding="utf-8")
            assert str(printed).strip(), (run, line)
            if "--cue actor=acme --k 5" in line or "time=June 2026" in line:
                assert "Acme" in str(printed), (run, line, printed)
    with Memory.open(tmp_path / "h", read_only=True) as mem:
        assert len(mem.recall({"actor": "acme", "time": "June 2026"}).hits) == 4  # the example's deal and outage, imported twice


def test_a_mistyped_home_is_an_error_and_only_init_creates_one(tmp_path: Path) -> None:
    """`cuemem remember --home ./typo` creates nothing and says how to make a home; `cuemem init` does."""
    typo = tmp_path / "typo-home"
    refused = CliRunner().invoke(main, ["remember", "--home", str(typo), "x"])
    assert refused.exit_code == 1 and f"cuemem init {typo}" in refused.stderr and not typo.exists()
    for command in (["recall", "--home", str(typo)], ["mcp", "--home", str(typo)], ["import", "f.jsonl", "--home", str(typo)]):
        (tmp_path / "f.jsonl").write_text("{}\n")
        assert CliRunner().invoke(main, command).exit_code != 0 and not typo.exists(), command
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("print()\n")
    busy = CliRunner().invoke(main, ["init", str(tmp_path / "src")])
    assert busy.exit_code == 1 and "not a cuemem home" in busy.stderr
    assert sorted(p.name for p in (tmp_path / "src").iterdir()) == ["main.py"]
    assert CliRunner().invoke(main, ["init", str(typo)]).exit_code == 0
    assert CliRunner().invoke(main, ["remember", "--home", str(typo), "x", "--now", "2026-06-01"]).exit_code == 0


def test_import_example_and_help_give_the_line_format() -> None:
    """`cuemem import --example` prints JSONL every line of which the import accepts; --help names the keys."""
    from cuemem.schema.spec import IMPORT_KEYS

    example = CliRunner().invoke(main, ["import", "--example"])
    assert example.exit_code == 0
    lines = [json.loads(line) for line in example.stdout.splitlines()]
    assert len(lines) >= 3 and all("narrative" in line and set(line) <= IMPORT_KEYS for line in lines)
    helped = CliRunner().invoke(main, ["import", "--help"]).stdout
    assert all(key in helped for key in IMPORT_KEYS) and '"narrative"' in helped


def test_the_text_recall_shell_block_runs_twice_and_finds_what_it_wrote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/text-recall.md's shell block (its own home, ./talk) runs as written, twice in one directory, and
    each recall finds Caroline's memory (the benchmark line aside: it needs the LoCoMo data)."""
    monkeypatch.chdir(tmp_path)
    for run in (1, 2):
        for line in _block("cuemem init ./talk"):
            if "eval locomo" in line:
                continue
            out = _run(line, tmp_path / "h", False, {})
            if " recall " in line:
                assert "adoption agency" in str(out["output"]), (run, line)
