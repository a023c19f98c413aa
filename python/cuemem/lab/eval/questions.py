"""The everyday-question suite: questions people ask of small homes, through ``Memory.recall``.

The suite (``everyday/*.json``, written for this evaluation and kept with it) holds
several small homes — a team lead's notes, a family's, an on-call log, chats with
friends — and the demo home (:func:`cuemem.lab.demo.generate_year`, a fixed seed), each
with questions and the memories that answer them. A question has a ``kind``:

- ``name``: it names someone or something the home knows, and little else matches
  ("Is Priya away?", "Rose");
- ``paraphrase``: it says in other words what the memory says;
- ``when`` / ``who``: it asks when, or who;
- ``topic``: its words are the memory's words;
- ``follow-up``: it comes after another question of the same exchange and refers to it
  ("what is he allergic to?"): asked through one :class:`~cuemem.session.Session`,
  whose recalls are a thread of questions.

Each home is built as a user builds it (``Memory.import_records`` of its memories,
with the actors, days, threads and types they carry) and every question is asked as
written, ``recall(text=question, now=...)``; nothing else happens. ``R@k`` is the share
of questions with at least one expected memory among the first ``k`` hits (a demo
question's expected memories are every memory its rule selects: look-alike templated
memories answer it alike). ``non-empty`` is the share, among questions naming an
actor of the home (the whole name, or one of its words written as in the name), that
got any hit at all.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

from ...errors import InvalidArgumentError, MissingFileError
from ...memory import Memory
from ...text import Embedder, TextWeights

__all__ = ["KINDS", "KS", "Case", "Suite", "SuiteReport", "evaluate_suites", "load_suite", "load_suites", "names_known"]

#: The question kinds, in report order.
KINDS: tuple[str, ...] = ("name", "paraphrase", "when", "who", "topic", "follow-up")
#: The cut-offs reported.
KS: tuple[int, ...] = (1, 3)

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Case:
    """One question, its kind, the memories that answer it, and its exchange (0: asked alone)."""

    text: str
    kind: str
    expect: tuple[str, ...]
    exchange: int = 0


@dataclass(frozen=True)
class Suite:
    """One home of the suite: how it is built and the questions asked of it."""

    name: str
    now: datetime
    memories: tuple[Mapping[str, Any], ...]
    demo: Mapping[str, int] | None
    #: Questions asked alone, then the exchanges (lists of cases asked in order through one session).
    cases: tuple[Case, ...]
    exchanges: tuple[tuple[Case, ...], ...]

    def records(self) -> list[Mapping[str, Any]]:
        """The memories to import (the demo's, generated, or the file's)."""
        if self.demo is None:
            return list(self.memories)
        from ..demo import generate_year

        d = self.demo
        episodes = generate_year(episodes=int(d["episodes"]), users=int(d.get("users", 1)), seed=int(d.get("seed", 7)))
        return [{k: v for k, v in e.items() if k != "user_id"} for e in episodes]

    def all_cases(self) -> list[Case]:
        """Every question, the exchanges' included."""
        return [*self.cases, *(c for ex in self.exchanges for c in ex)]


def _case(raw: Mapping[str, Any], where: str, exchange: int = 0) -> Case:
    text, kind, expect = raw.get("q"), raw.get("kind"), raw.get("expect")
    if not isinstance(text, str) or not text.strip():
        raise InvalidArgumentError(f"{where}: a question needs a non-empty 'q'")
    if kind not in KINDS:
        raise InvalidArgumentError(f"{where}: {text!r} has kind {kind!r}, not one of {list(KINDS)}")
    if not isinstance(expect, list) or not expect or not all(isinstance(e, str) for e in expect):
        raise InvalidArgumentError(f"{where}: {text!r} needs 'expect', a non-empty list of memory ids")
    return Case(text, kind, tuple(expect), exchange)


def load_suite(path: str | Path) -> Suite:
    """One home of the suite from its JSON file.

    Raises:
        MissingFileError: no file at ``path``.
        InvalidArgumentError: the file is not a suite home.
    """
    p = Path(path)
    if not p.is_file():
        raise MissingFileError(2, f"no suite file at {p}")
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
        now = datetime.fromisoformat(raw["now"]).replace(tzinfo=timezone.utc)
        cases = tuple(_case(q, p.name) for q in raw["questions"])
        exchanges = tuple(
            tuple(_case(q, p.name, n) for q in ex["thread"]) for n, ex in enumerate(raw.get("followups", []), start=1)
        )
        return Suite(str(raw["name"]), now, tuple(raw.get("memories", [])), raw.get("demo"), cases, exchanges)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidArgumentError(f"{p} is not a suite home: {exc!r}") from None


def load_suites(directory: str | Path | None = None) -> list[Suite]:
    """Every home of the suite (default: the one shipped with cuemem), by file name."""
    where = Path(directory) if directory is not None else Path(str(resources.files("cuemem.lab.eval") / "everyday"))
    return [load_suite(p) for p in sorted(where.glob("*.json"))]


def names_known(question: str, actors: Iterable[str]) -> bool:
    """Whether ``question`` names one of ``actors``: the whole name, or a word of it written
    as in the name (a capital kept), or its first word in any case.

    Example:
        >>> names_known("When is priya back?", ["Priya Shah"]), names_known("the air is dry", ["Kestrel Air"])
        (True, False)
    """
    words = _WORD.findall(question)
    lowered = {w.casefold() for w in words}
    text = " ".join(words).casefold()
    for actor in actors:
        parts = _WORD.findall(actor)
        if not parts:
            continue
        if f" {' '.join(parts).casefold()} " in f" {text} " or parts[0].casefold() in lowered or any(p in words for p in parts):
            return True
    return False


@dataclass
class SuiteReport:
    """R@k per question kind and overall, per home and for the whole suite."""

    #: "all" or a home's name -> "overall" or a kind -> {"R@1": ..., "R@3": ..., "n": ...}.
    table: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: Questions naming a known actor, and how many of them got at least one hit.
    named: int = 0
    named_answered: int = 0
    #: The questions missed at R@3: (home, kind, question, the ids returned).
    misses: list[tuple[str, str, str, list[str]]] = field(default_factory=list)

    @property
    def non_empty(self) -> float:
        """The share (percent) of questions naming a known actor that got any hit."""
        return 100.0 * self.named_answered / self.named if self.named else 100.0

    def as_json(self) -> dict[str, Any]:
        return {"recall": self.table, "named": self.named, "named_answered": self.named_answered, "non_empty": self.non_empty,
                "misses": [list(m) for m in self.misses]}


def evaluate_suites(
    suites: Sequence[Suite],
    *,
    progress: Callable[[str], None] | None = None,
    k: int = 10,
    weights: TextWeights | None = None,
    embedder: Embedder | None = None,
) -> SuiteReport:
    """Asks every question of ``suites`` through plain ``Memory.recall(text=question)`` (a
    follow-up through its exchange's session) and scores the hits (see the module docs).

    Args:
        suites: The homes and their questions.
        progress: Called with each home's name as it is asked.
        k: Hits asked for per question.
        weights: The recall's :class:`~cuemem.TextWeights` (default: the handle's).
        embedder: Homes are opened with it (for ``weights`` that weigh vectors).
    """
    sums: dict[str, dict[str, dict[str, float]]] = {}
    report = SuiteReport()

    def score(home: str, case: Case, got: list[str], actors: set[str]) -> None:
        hit = {kk: float(bool(set(case.expect) & set(got[:kk]))) for kk in KS}
        for where in (home, "all"):
            for group in (case.kind, "overall"):
                acc = sums.setdefault(where, {}).setdefault(group, {f"R@{kk}": 0.0 for kk in KS} | {"n": 0.0})
                acc["n"] += 1
                for kk in KS:
                    acc[f"R@{kk}"] += hit[kk]
        if not hit[max(KS)]:
            report.misses.append((home, case.kind, case.text, got[: max(KS)]))
        if names_known(case.text, actors):
            report.named += 1
            report.named_answered += bool(got)

    for suite in suites:
        if progress is not None:
            progress(suite.name)
        records = suite.records()
        actors = {a for r in records for a in r.get("actors", ())}
        with tempfile.TemporaryDirectory(prefix="cuemem-questions-") as tmp, Memory.open(Path(tmp), fsync="never", embedder=embedder) as mem:
            mem.import_records(records, now=suite.now)
            for case in suite.cases:
                got = [h.id for h in mem.recall(text=case.text, k=k, now=suite.now, weights=weights).hits]
                score(suite.name, case, got, actors)
            for n, exchange in enumerate(suite.exchanges, start=1):
                session = mem.session(f"questions-{n}")
                for case in exchange:
                    got = [h.id for h in session.recall(text=case.text, k=k, now=suite.now, weights=weights).hits]
                    score(suite.name, case, got, actors)
    for where, per in sums.items():
        report.table[where] = {
            g: {m: (v if m == "n" else 100.0 * v / acc["n"]) for m, v in acc.items()} for g, acc in per.items()
        }
    return report
