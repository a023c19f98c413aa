"""The LoCoMo evaluation on a small hand-made file of the same shape (the real data is a benchmark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from cuemem.cli import main
from cuemem.errors import InvalidArgumentError, MissingFileError
from cuemem.eval import evaluate, load_locomo
from cuemem.eval.locomo import method_sets

SAMPLE = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
            {"speaker": "Melanie", "dia_id": "D1:2", "text": "That sounds lovely. How was it?"},
            {"speaker": "Caroline", "dia_id": "D1:3", "text": "Very moving, I felt accepted."},
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Melanie", "dia_id": "D2:1", "text": "We painted a sunrise at the lake.", "blip_caption": "a painting of a lake"},
            {"speaker": "Caroline", "dia_id": "D2:2", "text": "Adoption agencies are next on my list."},
        ],
    },
    "qa": [
        {"question": "What did Melanie paint?", "answer": "a sunrise", "evidence": ["D2:1"], "category": 4},
        {"question": "When did Caroline go to the support group?", "answer": "7 May 2023", "evidence": ["D:1:1"], "category": 2},
        {"question": "Which agencies is Caroline looking into?", "answer": "adoption", "evidence": ["D2:2"], "category": 1},
        {"question": "What did Caroline paint?", "evidence": [], "category": 5},
    ],
}]


@pytest.fixture()
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(SAMPLE), encoding="utf-8")
    return path


def test_load_reads_turns_dates_captions_and_evidence(locomo_file: Path) -> None:
    """Sessions become dated turns, captions join the text, malformed evidence ids are normalised."""
    (conv,) = load_locomo(locomo_file)
    assert [t.dia_id for t in conv.turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    assert conv.turns[3].occurred_at.isoformat() == "2023-06-20" and "a painting of a lake" in conv.turns[3].text
    assert conv.questions[1].evidence == ("D1:1",)


def test_evaluate_scores_each_method_set(locomo_file: Path) -> None:
    """Every method set reports R@1/5/10 per category and overall; easy questions are found."""
    report = evaluate(load_locomo(locomo_file))
    assert list(report.table) == ["bm25", "bm25+terms", "bm25+terms+names", "bm25+terms+names+time", "bm25+terms+names+time+context"]
    for per in report.table.values():
        assert per["single-hop"]["R@1"] == 100.0
        assert per["overall"]["R@10"] == 100.0
        assert 0.0 <= per["overall"]["R@1"] <= per["overall"]["R@5"] <= per["overall"]["R@10"] <= 100.0
    assert report.counts == {"single-hop": 1, "temporal": 1, "multi-hop": 1, "overall": 3}
    assert len(method_sets()) == 5


def test_bad_files_raise_typed_errors(tmp_path: Path) -> None:
    """A missing file and a file of another shape are typed errors."""
    with pytest.raises(MissingFileError):
        load_locomo(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"conversation": {}}]), encoding="utf-8")
    with pytest.raises(InvalidArgumentError):
        load_locomo(bad)


def test_cli_eval_locomo_json(locomo_file: Path) -> None:
    """``cuemem eval locomo PATH --json`` prints the recall table."""
    result = CliRunner().invoke(main, ["eval", "locomo", str(locomo_file), "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["recall"]["bm25"]["overall"]["R@10"] == 100.0
