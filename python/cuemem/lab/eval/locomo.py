"""LoCoMo turn-level evidence recall through ``Memory.recall`` — what a user gets.

One home per conversation, recorded the way a user records a conversation: each
dialog turn is remembered with its dia_id as ``id``, the speaker as ``actors``, the
session date as ``occurred_at``, the session as its ``thread``, and the text (with a
shared image's caption) as narrative. Every question is then asked as it is written,
``Memory.recall(text=question, now=...)``, and nothing else happens: no re-ranking,
boosting or filtering here. The turns it returns are scored against the question's
evidence: ``R@k = |gold ∩ top k| / |gold|``, averaged per category and over
categories 1–4 (5, adversarial, apart). Sessions are scored too: ranked by their best
returned turn (the order in which the hits first reach them, out of the first
:data:`SESSION_DEPTH` hits), ``S@k`` is the share of questions with an evidence session
among the first ``k`` sessions (recall_any). Each conversation's own numbers are kept
beside the totals, so a change that helps on the whole can be seen to cost none of
them. The data file is read from where it lies, never copied.

The ablation rows switch the product's own options (:class:`~cuemem.TextWeights`),
one step at a time from the blend alone to the defaults:

- ``plain``: :meth:`TextWeights.plain` — the question as the BM25 query.
- ``function words``: question and function words leave the query.
- ``names``: names the home knows (here the speakers) are boosted, actors leave the query.
- ``time``: time phrases boost their days; "when" questions favour turns that say when.
- ``context``: a turn gains shares of its thread neighbours' and its thread's best
  score — the defaults, what ``Memory.recall(text=...)`` does unless told otherwise.
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

from ...errors import InvalidArgumentError, MissingFileError
from ...memory import Memory
from ...text import Embedder, TextWeights

#: The ablation steps: a label and the :class:`TextWeights` fields switched on (to
#: their defaults) at that step, cumulatively.
STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("plain", ()),
    ("function words", ("function_words",)),
    ("names", ("names", "name_boost")),
    ("time", ("time", "time_boost", "when_boost")),
    ("context", ("neighbour_share", "neighbour_window", "thread_share")),
)

#: Categories scored together (5, adversarial, is reported apart).
SCORED = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KS = (1, 5, 10)
#: Session-level cut-offs: sessions ranked by their best returned turn.
SESSION_KS = (1, 5)
#: Hits asked for per question: the first ``max(KS)`` are scored as turns, all of them rank sessions.
SESSION_DEPTH = 50

_DIA = re.compile(r"D:?(\d+):(\d+)")
_SESSION_DATE = re.compile(r"(?:(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+)?(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})")
_MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"], start=1)}


def ablations() -> list[tuple[str, TextWeights]]:
    """The cumulative ablation steps as (label, weights); the last is ``TextWeights()``."""
    default, on, out = TextWeights(), {}, []
    for label, names in STEPS:
        on.update({name: getattr(default, name) for name in names})
        out.append((label, TextWeights.plain(**on)))
    return out


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
    """Recall@k per category and overall (categories 1-4), per ablation step, and per conversation."""

    #: Ablation step (e.g. "names") -> "overall" or category name -> {"R@1": ..., "S@5": ...}.
    table: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    #: Questions per category name.
    counts: dict[str, int] = field(default_factory=dict)
    #: Ablation step -> conversation (sample id) -> its categories 1-4 {"R@1": ..., "S@5": ...}.
    conversations: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"recall": self.table, "questions": self.counts, "conversations": self.conversations}


def session_of(dia_id: str) -> str:
    """The session of a turn id (``"D3:5"`` -> ``"D3"``)."""
    return dia_id.split(":", 1)[0]


def sessions_ranked(ids: Iterable[str]) -> list[str]:
    """The sessions of ``ids`` (turn ids, best first), each ranked by its best turn.

    Example:
        >>> sessions_ranked(["D3:5", "D1:2", "D3:1", "D2:9"])
        ['D3', 'D1', 'D2']
    """
    return list(dict.fromkeys(session_of(i) for i in ids))


def build_home(conv: Conversation, home: Path, analyzer: str = "stem-bigram", embedder: Embedder | None = None) -> Memory:
    """A home holding ``conv`` as a user records it (see the module docs); the caller closes it."""
    mem = Memory.open(home, fsync="never", text_analyzer=analyzer, embedder=embedder)
    mem.import_records(
        [
            {"narrative": t.text, "id": t.dia_id, "actors": [t.speaker], "occurred_at": t.occurred_at.isoformat(), "type": "turn",
             "thread": f"session-{t.session}"}
            for t in conv.turns
        ],
        now=_end(conv),
    )
    return mem


def _end(conv: Conversation) -> datetime:
    """The conversation's last day: when its questions are asked."""
    return datetime.combine(max(t.occurred_at for t in conv.turns), datetime.min.time())


def evaluate(
    conversations: Iterable[Conversation],
    *,
    steps: Sequence[tuple[str, TextWeights]] | None = None,
    analyzer: str = "stem-bigram",
    embedder: Embedder | None = None,
    progress: Callable[[str], None] | None = None,
) -> EvalReport:
    """Scores every question of ``conversations`` under each (label, weights) step
    (default: :func:`ablations`), through plain ``Memory.recall(text=question)``; with
    an ``embedder`` the homes keep vectors, for steps that weigh them."""
    steps = list(steps) if steps is not None else ablations()
    sums: dict[str, dict[str, dict[str, float]]] = {label: {} for label, _ in steps}
    per_conv: dict[str, dict[str, dict[str, float]]] = {label: {} for label, _ in steps}
    counts: dict[str, int] = {}
    metrics = [f"R@{k}" for k in KS] + [f"S@{k}" for k in SESSION_KS]
    for conv in conversations:
        if progress is not None:
            progress(conv.sample_id)
        now = _end(conv)
        with tempfile.TemporaryDirectory(prefix="cuemem-locomo-") as tmp, build_home(conv, Path(tmp), analyzer, embedder) as mem:
            for q in conv.questions:
                gold = set(q.evidence)
                if not gold:
                    continue
                cat = CATEGORY_NAMES.get(q.category, str(q.category))
                counts[cat] = counts.get(cat, 0) + 1
                gold_sessions = {session_of(d) for d in gold}
                for label, weights in steps:
                    got = [h.id for h in mem.recall(text=q.text, k=SESSION_DEPTH, now=now, weights=weights).hits]
                    sessions = sessions_ranked(got)
                    scored = {f"R@{k}": len(gold & set(got[:k])) / len(gold) for k in KS}
                    scored |= {f"S@{k}": float(bool(gold_sessions & set(sessions[:k]))) for k in SESSION_KS}
                    groups = [(sums[label], cat)]
                    if q.category in SCORED:
                        groups += [(sums[label], "overall"), (per_conv[label], conv.sample_id)]
                    for table, group in groups:
                        acc = table.setdefault(group, dict.fromkeys(metrics, 0.0) | {"n": 0.0})
                        acc["n"] += 1
                        for m in metrics:
                            acc[m] += scored[m]
    counts["overall"] = sum(n for c, n in counts.items() if c in {CATEGORY_NAMES[i] for i in SCORED})
    report = EvalReport(counts=counts)
    for label in sums:
        report.table[label] = {g: {m: 100.0 * v / acc["n"] for m, v in acc.items() if m != "n"} for g, acc in sums[label].items()}
        report.conversations[label] = {
            c: {m: 100.0 * v / acc["n"] for m, v in acc.items() if m != "n"} for c, acc in per_conv[label].items()
        }
    return report
