"""The dedupe labelled set and its harness (eval/dedupe.py): product precision and recall through the public API."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuemem.errors import InvalidArgumentError
from cuemem.lab.eval.dedupe import DEFAULT_SET, PRECISION_TARGET, RECALL_TARGET, evaluate, load_set


def test_the_shipped_set_holds_both_duplicates_and_look_alikes() -> None:
    """At least fifty cases of each label, across the kinds of look-alike a home is full of."""
    cases = load_set()
    labels = [c.label for c in cases]
    assert labels.count("duplicate") >= 50 and labels.count("distinct") >= 50
    assert {"templated-people", "templated-day", "standup", "ticket", "thread", "other-fact", "numbers"} <= {c.group for c in cases}


def test_dedupe_meets_its_targets_on_the_shipped_set(tmp_path: Path) -> None:
    """Precision at least 0.95 and recall at least 0.8; no look-alike group has a pair proposed."""
    report = evaluate(load_set(), home=tmp_path / "h")
    assert report.precision >= PRECISION_TARGET and report.recall >= RECALL_TARGET, report.to_json()
    assert all(g["proposed"] == 0 for g in report.by_group.values() if g["label"] == "distinct")
    assert report.right == report.true_pairs - len(report.missed)


def test_the_scores_count_pairs_across_cases_as_false(tmp_path: Path) -> None:
    """A merge of two cases' memories is a false merge; a duplicate case proposed is right; one missed is counted."""
    path = tmp_path / "set.yaml"
    path.write_text("""
cases:
  - {id: a, label: duplicate, memories: [{text: "The VPN needs a hardware key.", kind: semantic},
                                          {text: "The VPN needs a hardware key", kind: semantic, day: 2026-04-01}]}
  - {id: b, label: distinct, memories: [{text: "the VPN needs a hardware key!", kind: semantic, day: 2026-05-01},
                                         {text: "Lunch is at noon on Fridays.", kind: semantic}]}
  - {id: c, label: duplicate, memories: [{text: "Priya is away until the 14th."}, {text: "Priya is on leave until the 14th."}]}
""", encoding="utf-8")
    report = evaluate(load_set(path))
    assert (report.true_pairs, report.predicted, report.right, report.proposals) == (2, 3, 1, 1)
    assert (report.precision, report.recall) == (1 / 3, 0.5)
    assert len(report.false_merges) == 2 and report.missed == [("Priya is away until the 14th.", "Priya is on leave until the 14th.")]


@pytest.mark.parametrize("text", [
    "cases: []",
    "cases: [{id: a, label: maybe, memories: [{text: x}, {text: y}]}]",
    "cases: [{id: a, label: duplicate, memories: [{text: x}]}]",
    "cases: [{id: a, label: duplicate, memories: [{text: x}, {text: y, colour: red}]}]",
    "cases: [{id: a, label: duplicate, memories: [{text: x}, {text: y}]}, {id: a, label: distinct, memories: [{text: x}, {text: y}]}]",
    "cases: [oops",
    "cases: [{id: a, label: duplicate, memories: [{text: x, day: someday}, {text: y}]}]",
    "cases: [{id: a, label: duplicate, memories: [{text: x, at: 25}, {text: y}]}]",
])
def test_a_malformed_set_is_refused(tmp_path: Path, text: str) -> None:
    """No cases, an unknown label, a lone memory, an unknown field, a repeated id, bad YAML, a bad day or hour: InvalidArgumentError."""
    path = tmp_path / "set.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidArgumentError):
        load_set(path)
    with pytest.raises(InvalidArgumentError):
        load_set(tmp_path / "missing.yaml")
    assert DEFAULT_SET.is_file()
