"""Dedupe quality on a labelled set, through the public ``Memory`` API only (D5, issue 28).

The set (:data:`DEFAULT_SET`, ``dedupe_set.yaml`` beside this module, written by hand)
holds cases of memories, each labelled ``duplicate`` — every pair of its memories is the
same event said twice or the same fact restated, so a merge of them is right — or
``distinct`` — look-alikes (a templated email from other people or days, recurring
stand-ups, templated tickets, the same words in other threads, facts about other people
or with other numbers), so a merge of any two of them is wrong.

:func:`evaluate` builds one home as a user would — every memory through plain
``Memory.remember``, on its own day — runs ``Memory.dedupe`` once, and reads the
proposals back with ``Memory.proposals``. A proposal merges its sources: each pair of
them is a predicted duplicate. A predicted pair is right when both memories belong to one
``duplicate`` case; any other (a look-alike pair, or two memories of different cases) is
a false merge. Precision is right pairs over predicted pairs, recall right pairs over the
pairs the ``duplicate`` cases hold. The harness ranks and filters nothing.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped, unused-ignore]

from ...errors import InvalidArgumentError
from ...memory import Memory

__all__ = ["DEFAULT_SET", "PRECISION_TARGET", "RECALL_TARGET", "Case", "DedupeEval", "evaluate", "load_set"]

#: The labelled set shipped with cuemem.
DEFAULT_SET = Path(__file__).with_name("dedupe_set.yaml")
#: The user every memory belongs to unless it names another.
USER = "u-me"
#: The day a memory happened (and was remembered) unless it says another.
DAY = date(2026, 3, 2)
#: The precision ``cuemem eval dedupe`` requires (a false merge costs more than a missed one).
PRECISION_TARGET = 0.95
#: The recall it requires.
RECALL_TARGET = 0.8
#: The labels a case may carry.
LABELS = ("duplicate", "distinct")
#: The fields a memory of the set may give beyond its text, day and hour.
_FIELDS = ("kind", "type", "actors", "thread", "subject", "outcome", "tier", "user")


@dataclass(frozen=True)
class Case:
    """One labelled case: its memories (each a ``remember`` call's arguments) and its label."""

    id: str
    label: str
    group: str
    memories: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class DedupeEval:
    """What :func:`evaluate` measured.

    Attributes:
        cases: Cases in the set.
        true_pairs: Pairs of the ``duplicate`` cases (what a perfect dedupe proposes).
        predicted: Pairs the proposals merge.
        right: Predicted pairs that are true duplicates.
        by_group: Per group: its label, its pairs, and how many of them were proposed.
        false_merges: Each wrong predicted pair: the two texts.
        missed: Each true pair not proposed: the two texts.
        proposals: Proposals the run made.
    """

    cases: int
    true_pairs: int
    predicted: int
    right: int
    by_group: dict[str, dict[str, Any]]
    false_merges: list[tuple[str, str]] = field(default_factory=list)
    missed: list[tuple[str, str]] = field(default_factory=list)
    proposals: int = 0

    @property
    def precision(self) -> float:
        """Right pairs over predicted pairs (1.0 when nothing was proposed)."""
        return self.right / self.predicted if self.predicted else 1.0

    @property
    def recall(self) -> float:
        """Right pairs over true pairs."""
        return self.right / self.true_pairs if self.true_pairs else 1.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the command line's shape)."""
        return {
            "cases": self.cases, "true_pairs": self.true_pairs, "predicted_pairs": self.predicted, "right_pairs": self.right,
            "precision": self.precision, "recall": self.recall, "proposals": self.proposals, "by_group": self.by_group,
            "false_merges": [list(p) for p in self.false_merges], "missed": [list(p) for p in self.missed],
        }


def load_set(path: Path | str | None = None) -> list[Case]:
    """The cases of the labelled set at ``path`` (default :data:`DEFAULT_SET`).

    Args:
        path: A YAML file: ``cases``, a list of ``{id, label, group, memories}``.

    Raises:
        InvalidArgumentError: the file is missing, or a case or memory is not as described.
    """
    source = DEFAULT_SET if path is None else Path(path)
    try:
        doc = yaml.safe_load(source.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InvalidArgumentError(f"cannot read the dedupe set {str(source)!r}: {exc}") from None
    raw = doc.get("cases") if isinstance(doc, dict) else None
    if not isinstance(raw, list) or not raw:
        raise InvalidArgumentError(f"the dedupe set {str(source)!r} holds no list of cases")
    cases: list[Case] = []
    seen: set[str] = set()
    for i, c in enumerate(raw):
        where = f"case {i + 1} of {str(source)!r}"
        if not isinstance(c, dict) or not isinstance(c.get("id"), str) or c.get("label") not in LABELS:
            raise InvalidArgumentError(f"{where}: needs an id and a label ({' or '.join(LABELS)})")
        if c["id"] in seen:
            raise InvalidArgumentError(f"{where}: the id {c['id']!r} is taken")
        seen.add(c["id"])
        memories = c.get("memories")
        if not isinstance(memories, list) or len(memories) < 2:
            raise InvalidArgumentError(f"{where}: needs at least two memories")
        for m in memories:
            if not isinstance(m, dict) or not isinstance(m.get("text"), str) or set(m) - {"text", "day", "at", *_FIELDS}:
                raise InvalidArgumentError(f"{where}: a memory is a text and some of day, at, {', '.join(_FIELDS)}; got {m!r}")
            try:
                _day(m.get("day"))
            except ValueError:
                raise InvalidArgumentError(f"{where}: day must be an ISO date, got {m.get('day')!r}") from None
            at = m.get("at", 9)
            if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at <= 23:
                raise InvalidArgumentError(f"{where}: at must be an hour from 0 to 23, got {at!r}")
        cases.append(Case(c["id"], c["label"], str(c.get("group", c["label"])), tuple(memories)))
    return cases


def _day(value: object) -> date:
    if value is None:
        return DAY
    if isinstance(value, date):
        return value
    return date.fromisoformat(str(value))


def evaluate(cases: Sequence[Case], *, home: Path | None = None) -> DedupeEval:
    """Writes ``cases`` into a new home as a user would, runs dedupe once and scores its proposals.

    Args:
        cases: The labelled set (:func:`load_set`).
        home: Where to build the home (default: a temporary directory, removed after).

    Raises:
        InvalidArgumentError: a memory's field is refused by ``remember``.
    """
    with tempfile.TemporaryDirectory(prefix="cuemem-eval-dedupe-") as tmp:
        path = Path(tmp) / "home" if home is None else Path(home)
        return _run(cases, path)


def _run(cases: Sequence[Case], path: Path) -> DedupeEval:
    case_of: dict[str, Case] = {}
    text_of: dict[str, str] = {}
    writes = []
    for case in cases:
        for i, m in enumerate(case.memories):
            day = _day(m.get("day"))
            at = datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(hours=int(m.get("at", 9 + i)))
            writes.append((at, case, m, day))
    writes.sort(key=lambda w: w[0])  # remembered in the order they happened, as a home fills
    last = writes[-1][0] if writes else datetime(DAY.year, DAY.month, DAY.day, tzinfo=timezone.utc)
    with Memory.open(path, fsync="never", user="*") as mem:
        for at, case, m, day in writes:
            fields: dict[str, Any] = {k: (tuple(v) if k == "actors" else v) for k, v in m.items() if k in _FIELDS and k != "user"}
            rid = mem.remember(m["text"], user_id=str(m.get("user", USER)), occurred_at=day, now=at, **fields)
            case_of[rid], text_of[rid] = case, m["text"]
        report = mem.dedupe(now=last + timedelta(days=1))
        proposals = [p for p in mem.proposals() if p.id in set(report.proposed)]
        predicted = {frozenset(pair) for p in proposals for pair in itertools.combinations([s.id for s in p.sources], 2)}
    truth: set[frozenset[str]] = set()
    pairs_of: dict[str, list[frozenset[str]]] = {}
    for case in cases:
        ids = [i for i, c in case_of.items() if c is case]
        pairs_of[case.id] = [frozenset(p) for p in itertools.combinations(ids, 2)]
        if case.label == "duplicate":
            truth.update(pairs_of[case.id])
    by_group: dict[str, dict[str, Any]] = {}
    for case in cases:
        g = by_group.setdefault(case.group, {"label": case.label, "cases": 0, "pairs": 0, "proposed": 0})
        g["cases"] += 1
        g["pairs"] += len(pairs_of[case.id])
        g["proposed"] += sum(p in predicted for p in pairs_of[case.id])
    right = predicted & truth

    def texts(pair: frozenset[str]) -> tuple[str, str]:
        a, b = sorted(pair)
        return text_of[a], text_of[b]

    return DedupeEval(
        cases=len(cases), true_pairs=len(truth), predicted=len(predicted), right=len(right), by_group=by_group,
        false_merges=[texts(p) for p in sorted(predicted - truth, key=sorted)],
        missed=[texts(p) for p in sorted(truth - predicted, key=sorted)], proposals=len(proposals),
    )
