"""``cuemem forget`` (cli/forget.py): the receipt as a table or JSON, exit codes, dry runs."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from click.testing import CliRunner

from cuemem import Memory
from cuemem.cli import main


def _home(root: Path) -> tuple[str, str]:
    with Memory.open(root, fsync="never") as mem:
        return (
            mem.remember("The garage code is 5512wx", subject="garage", now=date(2026, 1, 1)),
            mem.remember("The garden needs water", now=date(2026, 1, 1)),
        )


def test_forget_prints_a_receipt_and_a_dry_run_changes_nothing(tmp_path: Path) -> None:
    """--dry-run --json is the plan; then the real run erases and says how many lines it overwrote."""
    secret, other = _home(tmp_path / "h")
    runner = CliRunner()
    plan = runner.invoke(main, ["forget", "--home", str(tmp_path / "h"), "--subject", "garage", "--dry-run", "--json"])
    assert plan.exit_code == 0, plan.output
    body = json.loads(plan.output)
    assert body["dry_run"] and body["forgotten"] == [secret]
    assert b"5512wx" in (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes()
    done = runner.invoke(main, ["forget", "--home", str(tmp_path / "h"), secret])
    assert done.exit_code == 0, done.output
    assert "erased 1 record(s)" in done.output and "1 journal line(s) overwritten" in done.output
    assert b"5512wx" not in (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes()
    with Memory.open(tmp_path / "h", read_only=True) as mem:
        assert mem.get(other).narrative == "The garden needs water"


def test_forget_without_a_target_is_a_usage_error_and_a_known_refusal_an_operation_error(tmp_path: Path) -> None:
    """No target: exit 2; an id already erased: exit 1 with cuemem's message; --retire keeps the line."""
    secret, other = _home(tmp_path / "h")
    runner = CliRunner()
    assert runner.invoke(main, ["forget", "--home", str(tmp_path / "h")]).exit_code == 2
    assert runner.invoke(main, ["forget", "--home", str(tmp_path / "h"), "--retire", other, "--json"]).exit_code == 0
    assert b"garden" in (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes()
    assert runner.invoke(main, ["forget", "--home", str(tmp_path / "h"), secret]).exit_code == 0
    again = runner.invoke(main, ["forget", "--home", str(tmp_path / "h"), secret])
    assert again.exit_code == 1 and "already erased" in again.output


def test_the_documented_forget_commands_run_as_written(tmp_path: Path) -> None:
    """Each command of docs/forget.md's shell block runs in order (``ep-…``: a record of the home) and exits 0."""
    import re
    import shlex

    page = (Path(__file__).resolve().parents[2] / "docs" / "forget.md").read_text(encoding="utf-8")
    block = page.split("From a shell (`--json` prints the receipt):", 1)[1]
    block = re.search(r"```sh\n(.*?)```", block, re.DOTALL).group(1)  # type: ignore[union-attr]
    root = tmp_path / "h"
    with Memory.open(root, fsync="never", user="*") as mem:
        mem.remember("The bank PIN is 4012", subject="bank", now=date(2026, 1, 1))
        page = mem.remember("A post about banks", origin="external", source="https://example.com/post", now=date(2026, 1, 1))
        mem.remember("Alice's note", user_id="alice", now=date(2026, 1, 1))
        other = mem.remember("Something else", now=date(2026, 1, 1))
    for line in block.splitlines():
        args = [str(root) if a == "./h" else other if a == "ep-…" else a for a in shlex.split(line.split("  #", 1)[0])[1:]]
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, (line, r.output)
    with Memory.open(root, read_only=True) as mem:  # alice's records are gone: one user again
        assert [h.record.narrative for h in mem.recall({}, now=date(2026, 1, 2), include_quarantined=True).hits] == ["The bank PIN is 4012"]
        assert mem.get(page).source == "https://example.com/post"  # retired: kept for audit
