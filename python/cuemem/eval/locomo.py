"""LoCoMo turn-level evidence recall through ``Memory.recall``.

One home per conversation: each dialog turn is an episode (``id`` = its dia_id, the
speaker as actor, the session date as ``occurred_at``, the text as narrative, an
image's caption appended). Every question goes through ``Memory.recall(text=...)``
and the turns it returns are scored against the question's evidence:
``R@k = |gold ∩ top k| / |gold|``, averaged per category and over categories 1–4
(5, adversarial, apart). The data file is read from where it lies, never copied.

Methods, each general (no question is special-cased), switched on one by one so the
report shows what each one moves:

- ``bm25``: the question as the text query.
- ``terms``: question words and function words ("what", "did", "she", "about", ...)
  are dropped from the query: they match most turns and carry no topic.
- ``names``: speaker names found in the question are dropped from the text query
  (every turn of a two-person conversation is one of theirs, so a name mostly adds
  noise through the turns that address the other speaker by name) and the named
  speaker's own turns get a small boost.
- ``time``: time phrases in the question ("in May 2023", "last week") become time
  cues; turns of the sessions they name are boosted rather than required. A
  question asking "when" boosts turns that say when ("yesterday", "last week",
  a weekday, a month, a year): the answer's type.
- ``context``: a turn's score gains a share of its neighbours' (the turn before and
  after in the same session), since an answer often spans a question and its reply,
  and a share of its session's best score, since the hits of the right session
  cluster.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ..errors import InvalidArgumentError, MissingFileError
from ..memory import Memory
from ..text import TextWeights
from ..timecues import find_time_cues

#: The methods, in the order they are switched on.
METHODS: tuple[str, ...] = ("bm25", "terms", "names", "time", "context")

#: Categories scored together (5, adversarial, is reported apart).
SCORED = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (1, 5, 10)

_DIA = re.compile(r"D:?(\d+):(\d+)")
_SESSION_DATE = re.compile(r"(?:(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+)?(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})")
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"], start=1)}

#: Pool read from the text index before the methods re-rank.
POOL = 60
#: Share of a neighbour's score a turn gains (``context``).
NEIGHBOUR_SHARE = 0.5
#: Share of its session's best score a turn gains (``context``).
SESSION_SHARE = 0.2
#: Boost of a turn spoken by a speaker the question names (``names``), of the best score.
SPEAKER_BOOST = 0.2
#: Boost of a turn in a session a time phrase names (``time``), of the best score.
TIME_BOOST = 0.30
#: Boost of a turn that says when, for a question asking when (``time``), of the best score.
WHEN_BOOST = 0.2

#: Question and function words dropped by ``terms``.
FUNCTION_WORDS = frozenset("""
what when where who whom whose which why how did do does doing done was were is are am be been being has have had
would could should can will might may shall must she he her his him hers they them their theirs you your yours i me
my mine we us our ours it its about from kind sort some any there that this these those the a an of to in on at for
with by as and or not no ever also get got go going like likely
""".split())

_WORD = re.compile(r"\w+(?:'\w+)?")
_WHEN = re.compile(r"^\s*(?:when|what\s+(?:year|month|day|date|time))\b|\bhow\s+long\b", re.IGNORECASE)
_SAYS_WHEN = re.compile(
    r"\b(?:yesterday|today|tomorrow|tonight|ago|last|next|recently|weekend|(?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"january|february|march|april|may|june|july|august|september|october|november|december|\d{4}|week|month|year)s?\b",
    re.IGNORECASE,
)


def content_terms(question: str) -> str:
    """``question`` without question and function words (itself if nothing is left)."""
    kept = [w for w in _WORD.findall(question) if w.lower() not in FUNCTION_WORDS]
    return " ".join(kept) if kept else question


@dataclass(frozen=True)
class Turn:
    """One dialog turn."""

    dia_id: str
    speaker: str
    text: str
    session: int
    occurred_at: date


@dataclass(frozen=True)
class Question:
    """One question with its evidence turns."""

    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    """A LoCoMo sample: two speakers, their turns and the questions about them."""

    sample_id: str
    speakers: tuple[str, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def _session_date(raw: str) -> date:
    m = _SESSION_DATE.search(raw)
    if m is None or m.group(5).lower() not in _MONTHS:
        raise InvalidArgumentError(f"unreadable session date {raw!r}")
    return date(int(m.group(6)), _MONTHS[m.group(5).lower()], int(m.group(4)))


def _dia(raw: str) -> str | None:
    m = _DIA.search(raw)
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


def load_locomo(path: str | Path) -> list[Conversation]:
    """The conversations of a LoCoMo JSON file.

    Raises:
        MissingFileError: no file at ``path``.
        InvalidArgumentError: the file is not LoCoMo-shaped.
    """
    p = Path(path)
    if not p.is_file():
        raise MissingFileError(2, f"no LoCoMo file at {p}")
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
        out: list[Conversation] = []
        for sample in raw:
            conv = sample["conversation"]
            turns: list[Turn] = []
            n = 1
            while f"session_{n}" in conv:
                when = _session_date(conv[f"session_{n}_date_time"])
                for t in conv[f"session_{n}"]:
                    text = t["text"]
                    if t.get("blip_caption"):
                        text = f"{text} [shares an image: {t['blip_caption']}]"
                    dia = _dia(t["dia_id"])
                    if dia is not None:
                        turns.append(Turn(dia, t["speaker"], text, n, when))
                n += 1
            questions = []
            for q in sample["qa"]:
                gold = tuple(d for d in (_dia(e) for ev in q.get("evidence", []) for e in ev.split(";")) if d is not None)
                questions.append(Question(str(q["question"]), gold, int(q["category"])))
            out.append(Conversation(str(sample.get("sample_id", len(out))), (conv["speaker_a"], conv["speaker_b"]), tuple(turns), tuple(questions)))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InvalidArgumentError(f"{p} is not a LoCoMo file: {exc}") from None
    return out


@dataclass
class EvalReport:
    """Recall@k per category and overall (categories 1-4), per method set."""

    #: Method set (e.g. "bm25+names") -> "overall" or category name -> {"R@1": ...}.
    table: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: Questions per category name.
    counts: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"recall": self.table, "questions": self.counts}


def _actor(name: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-") or "speaker"


class _Ranker:
    """Ranks the turns of one conversation's home for a question, with chosen methods."""

    def __init__(self, mem: Memory, conv: Conversation, methods: frozenset[str], weights: TextWeights) -> None:
        self.mem = mem
        self.conv = conv
        self.methods = methods
        self.weights = weights
        self.turn = {t.dia_id: t for t in conv.turns}
        self.order = [t.dia_id for t in conv.turns]
        self.index = {d: i for i, d in enumerate(self.order)}
        self.now = datetime.combine(max(t.occurred_at for t in conv.turns), datetime.min.time())
        self.names = {s.lower(): s for s in conv.speakers}

    def rank(self, question: str, k: int) -> list[str]:
        text = question
        asks_when = _WHEN.search(question) is not None
        named: set[str] = set()
        if "names" in self.methods:
            for lower, name in self.names.items():
                pattern = re.compile(rf"\b{re.escape(lower)}(?:'s)?\b", re.IGNORECASE)
                if pattern.search(text):
                    named.add(name)
                    text = pattern.sub(" ", text)
        buckets: tuple[str, ...] = ()
        if "time" in self.methods:
            buckets, text = find_time_cues(text, now=self.now)
        if "terms" in self.methods:
            text = content_terms(text)
        if not re.search(r"\w", text):
            text = question
        res = self.mem.recall(text=text, k=max(POOL, k), now=self.now, weights=self.weights)
        scores = {h.id: h.score for h in res.hits}
        if "context" in self.methods:
            base = dict(scores)
            for d, s in base.items():
                i = self.index[d]
                for j in (i - 1, i + 1):
                    if 0 <= j < len(self.order) and self.turn[self.order[j]].session == self.turn[d].session:
                        n = self.order[j]
                        scores[n] = scores.get(n, 0.0) + NEIGHBOUR_SHARE * s
            best: dict[int, float] = {}
            for d, s in base.items():
                best[self.turn[d].session] = max(best.get(self.turn[d].session, 0.0), s)
            for d in scores:
                scores[d] += SESSION_SHARE * best.get(self.turn[d].session, 0.0)
        top = max(scores.values(), default=0.0)
        if named and top > 0:
            for d in scores:
                if self.turn[d].speaker in named:
                    scores[d] += SPEAKER_BOOST * top
        if "time" in self.methods and asks_when and top > 0:
            for d in scores:
                if _SAYS_WHEN.search(self.turn[d].text):
                    scores[d] += WHEN_BOOST * top
        if buckets and top > 0:
            days = set(buckets)
            for d in scores:
                t = self.turn[d].occurred_at
                if {t.isoformat(), t.isoformat()[:7], t.isoformat()[:4]} & days:
                    scores[d] += TIME_BOOST * top
        return [d for d, _ in sorted(scores.items(), key=lambda kv: (-kv[1], self.index[kv[0]]))][:k]


def _build(conv: Conversation, home: Path, analyzer: str) -> Memory:
    mem = Memory.open(home, fsync="never", text_analyzer=analyzer)
    mem.import_records(
        [{"narrative": t.text, "id": t.dia_id, "actors": [_actor(t.speaker)], "occurred_at": t.occurred_at.isoformat(), "type": "turn"} for t in conv.turns],
        now=datetime.combine(max(t.occurred_at for t in conv.turns), datetime.min.time()),
    )
    return mem


def method_sets(methods: Sequence[str] = METHODS) -> list[frozenset[str]]:
    """The cumulative method sets: bm25, bm25+names, bm25+names+time, ..."""
    return [frozenset(methods[: i + 1]) for i in range(len(methods))]


def _label(methods: frozenset[str]) -> str:
    return "+".join(m for m in METHODS if m in methods)


def evaluate(
    conversations: Iterable[Conversation],
    *,
    sets: Sequence[frozenset[str]] | None = None,
    analyzer: str = "stem-bigram",
    weights: TextWeights | None = None,
    progress: Callable[[str], None] | None = None,
) -> EvalReport:
    """Scores every question of ``conversations`` under each method set."""
    sets = list(sets) if sets is not None else method_sets()
    weights = weights or TextWeights()
    sums: dict[str, dict[str, dict[str, float]]] = {_label(s): {} for s in sets}
    counts: dict[str, int] = {}
    for conv in conversations:
        if progress is not None:
            progress(conv.sample_id)
        with tempfile.TemporaryDirectory(prefix="cuemem-locomo-") as tmp, _build(conv, Path(tmp), analyzer) as mem:
            rankers = [(_label(s), _Ranker(mem, conv, s, weights)) for s in sets]
            for q in conv.questions:
                gold = set(q.evidence)
                if not gold:
                    continue
                cat = CATEGORY_NAMES.get(q.category, str(q.category))
                counts[cat] = counts.get(cat, 0) + 1
                for label, ranker in rankers:
                    got = ranker.rank(q.text, max(KS))
                    per = sums[label]
                    for group in ([cat, "overall"] if q.category in SCORED else [cat]):
                        acc = per.setdefault(group, {f"R@{k}": 0.0 for k in KS} | {"n": 0.0})
                        acc["n"] += 1
                        for k in KS:
                            acc[f"R@{k}"] += len(gold & set(got[:k])) / len(gold)
    counts["overall"] = sum(n for c, n in counts.items() if c in {CATEGORY_NAMES[i] for i in SCORED})
    report = EvalReport(counts=counts)
    for label, per in sums.items():
        report.table[label] = {g: {m: 100.0 * v / acc["n"] for m, v in acc.items() if m != "n"} for g, acc in per.items()}
    return report
