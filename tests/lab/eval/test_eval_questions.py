"""The everyday-question suite (eval/questions.py): its labels point at real memories, and it runs through Memory.recall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuemem.cli import main
from cuemem.errors import InvalidArgumentError, MissingFileError
from cuemem.lab.eval.questions import KINDS, evaluate_suites, load_suite, load_suites, names_known

TINY = {
    "name": "tiny",
    "now": "2026-03-10",
    "memories": [
        {"id": "a", "narrative": "Priya is on vacation until the 14th.", "actors": ["Priya"], "occurred_at": "2026-03-02"},
        {"id": "b", "narrative": "Kim moved the weekly sync to Thursdays.", "actors": ["Kim"], "occurred_at": "2026-02-27"},
        {"id": "c", "narrative": "Kim is allergic to peanuts.", "actors": ["Kim"], "occurred_at": "2026-01-27"},
    ],
    "questions": [
        {"q": "Is Priya away?", "kind": "name", "expect": ["a"]},
        {"q": "when is the weekly sync", "kind": "when", "expect": ["b"]},
        {"q": "what is the capital of France", "kind": "topic", "expect": ["c"]},
    ],
    "followups": [{"thread": [
        {"q": "What did Kim move?", "kind": "name", "expect": ["b"]},
        {"q": "what is he allergic to?", "kind": "follow-up", "expect": ["c"]},
    ]}],
}


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    (tmp_path / "tiny.json").write_text(json.dumps(TINY), encoding="utf-8")
    return tmp_path


def test_the_shipped_suite_has_200_questions_of_every_kind_over_several_homes() -> None:
    """At least 200 questions, every kind asked, the demo home among at least five homes."""
    suites = load_suites()
    cases = [c for s in suites for c in s.all_cases()]
    assert len(cases) >= 200 and len(suites) >= 5
    assert {c.kind for c in cases} == set(KINDS)
    assert "demo" in {s.name for s in suites} and all(s.exchanges for s in suites if s.name != "demo")


def test_every_label_points_at_a_memory_of_its_home() -> None:
    """Each expected id is the id of a memory the home is built from (the demo's generated ones too), and ids are unique."""
    for suite in load_suites():
        ids = [r["id"] for r in suite.records()]
        assert len(ids) == len(set(ids)), suite.name
        for case in suite.all_cases():
            assert set(case.expect) <= set(ids), (suite.name, case.text)


def test_the_suite_runs_through_recall_and_scores_per_kind(tiny: Path) -> None:
    """Found questions score 100, the unanswerable one 0, the follow-up is answered through its session, misses are listed."""
    report = evaluate_suites(load_suites(tiny))
    table = report.table["all"]
    assert table["name"]["R@1"] == 100.0 and table["when"]["R@3"] == 100.0 and table["follow-up"]["R@1"] == 100.0
    assert table["topic"]["R@3"] == 0.0 and table["overall"]["n"] == 5
    assert table["overall"]["R@3"] == pytest.approx(80.0)
    assert [m[2] for m in report.misses] == ["what is the capital of France"]
    assert report.named == 2 and report.non_empty == 100.0


def test_cli_reports_the_suite_as_json(tiny: Path) -> None:
    """``cuemem eval questions PATH --json`` prints the table and the non-empty share."""
    result = CliRunner().invoke(main, ["eval", "questions", str(tiny), "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.output[result.output.index("{"):])
    assert body["recall"]["tiny"]["overall"]["n"] == 5 and body["non_empty"] == 100.0


def test_cli_prints_a_table_per_kind_and_the_misses(tiny: Path) -> None:
    """Without --json a table names each kind; --misses lists what was missed."""
    result = CliRunner().invoke(main, ["eval", "questions", str(tiny), "--misses"])
    assert result.exit_code == 0, result.output
    assert "follow-up" in result.output and "capital of France" in result.output and "2/2" in result.output


def test_a_bad_suite_file_is_refused(tmp_path: Path) -> None:
    """A missing file, an unknown kind or an empty expectation is a clear error."""
    with pytest.raises(MissingFileError):
        load_suite(tmp_path / "nope.json")
    bad = dict(TINY, questions=[{"q": "x", "kind": "riddle", "expect": ["a"]}])
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match="riddle"):
        load_suite(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text(json.dumps(dict(TINY, questions=[{"q": "x", "kind": "name", "expect": []}])), encoding="utf-8")
    with pytest.raises(InvalidArgumentError, match="expect"):
        load_suite(tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InvalidArgumentError):
        load_suite(tmp_path / "bad.json")


def test_a_name_is_known_by_the_whole_name_or_a_word_of_it() -> None:
    """The eval's own rule for "the question names a known actor"."""
    assert names_known("what did Kim change", ["Kim"])
    assert names_known("When is priya back?", ["Priya Shah"]) and names_known("Did Shah call?", ["Priya Shah"])
    assert not names_known("did shah call?", ["Priya Shah"]) and not names_known("who called?", ["Priya Shah"])
