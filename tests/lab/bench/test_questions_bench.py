"""The question benchmark (bench/questions.py) at a small size: a home built as a user builds one, three timed calls."""

from __future__ import annotations

from pathlib import Path

from cuemem.lab.bench.corpus import make_corpus
from cuemem.lab.bench.questions import KINDS, THREAD, build_home, measure_questions, questions


def test_questions_name_an_actor_and_words_of_their_episodes() -> None:
    """Each question names its actor and asks about words of that actor's narrative."""
    corpus = make_corpus(3_000, seed=4)
    asked = questions(corpus, 4)
    assert asked and all(q == f"what did {a} say about {w}?" and 2 <= len(w.split()) <= 4 for q, a, w in asked)


def test_the_home_holds_the_corpus_in_threads(tmp_path: Path) -> None:
    """Every episode is imported with its actors and a thread of ``THREAD`` consecutive episodes."""
    corpus = make_corpus(500, seed=2)
    with build_home(corpus, tmp_path / "h", 2) as mem:
        assert len(mem) == 500
        first, later = mem.get(mem.ids()[0]), mem.get(mem.ids()[THREAD])
        assert first.thread == "conversation-0" and later.thread == "conversation-1" and first.actors


def test_measure_reports_each_call_kind() -> None:
    """The result holds p50/p99 of plain, understood and cue + understood recalls, and their ratio."""
    result = measure_questions(3_000, seed=3, rounds=1)
    for kind in KINDS:
        assert result[kind]["p50_us"] > 0 and result[kind]["p99_us"] >= result[kind]["p50_us"]
    assert result["understood_over_plain_p50"] > 0 and result["questions"] > 0
