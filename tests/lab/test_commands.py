"""``cuemem eval dedupe`` (lab/commands.py, through the cuemem command line): the labelled set's precision and recall, exit status 1 below target."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cuemem.cli import main


def test_eval_dedupe_reports_precision_and_recall() -> None:
    """The shipped set: JSON with both scores at target, exit status 0; the table names every group."""
    run = CliRunner().invoke(main, ["eval", "dedupe", "--json"])
    assert run.exit_code == 0, run.output
    body = json.loads(run.output)
    assert body["precision"] >= 0.95 and body["recall"] >= 0.8 and body["cases"] >= 100
    table = CliRunner().invoke(main, ["eval", "dedupe"])
    assert table.exit_code == 0 and "precision 1.000" in table.output and "templated-people" in table.output


def test_eval_dedupe_fails_below_target(tmp_path: Path) -> None:
    """A set whose duplicates are all paraphrases: recall 0, exit status 1, the misses listed."""
    path = tmp_path / "set.yaml"
    path.write_text("cases: [{id: a, label: duplicate, memories: [{text: 'Priya is away until the 14th.'}, "
                    "{text: 'Priya is on leave until the 14th.'}]}]\n", encoding="utf-8")
    run = CliRunner().invoke(main, ["eval", "dedupe", str(path)])
    assert run.exit_code == 1 and "missed: 'Priya is away until the 14th.'" in run.output and "recall 0.000" in run.output
