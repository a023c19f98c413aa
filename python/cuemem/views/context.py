"""Budgeted context (C5): the memories a task needs, coarsened to fit a token budget.

The candidates are this turn's working memory that shares a word with the query and
the hits of a text recall (short- and long-term memory; quarantined ones only when
asked). Each is ranked by relevance times trust:

- relevance: a hit's score over the best hit's; a working item's share of the query's
  content words (function words left out);
- trust: 1 for a reviewed, untainted memory, 0.75 for a reviewed tainted one or a
  working item (said this turn), 0.5 for a quarantined one or a working item said
  tainted (those two only when asked for).

Each item has four views, from the richest: the full text, a *section* (its first
paragraph, at most :data:`SECTION_CHARS`), an *outline* line (its first sentence, at
most :data:`OUTLINE_CHARS`) and a bare *pointer*. Fitting the budget:

1. every candidate, best first, enters as a pointer while pointers fit — so the
   items shown are a prefix of the ranking, and a larger budget never shows fewer;
2. then, one view at a time (outline, section, full), each item in rank order is
   coarsened one step less if the difference fits.

The whole is never over budget: every item's line is counted as it is shown.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..errors import CueTypeError
from ..home.results import Hit, RecallResult
from ..lifecycle.review import Provenance
from ..lifecycle.tiers import WorkingItem
from ..text.question import content_words
from .tokens import TokenCounter, check_budget, check_counter, counted

__all__ = ["Context", "ContextItem", "ContextView", "build_context"]

#: The longest section view.
SECTION_CHARS = 600
#: The longest outline view.
OUTLINE_CHARS = 120

_WORDS = re.compile(r"\w+")
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s")


class ContextView(str, enum.Enum):
    """How much of an item the context shows, from the least."""

    POINTER = "pointer"
    OUTLINE = "outline"
    SECTION = "section"
    FULL = "full"

    def __str__(self) -> str:
        return str(self.value)


_ORDER = (ContextView.POINTER, ContextView.OUTLINE, ContextView.SECTION, ContextView.FULL)


@dataclass(frozen=True)
class ContextItem:
    """One item of a context, as shown.

    Attributes:
        id: The record id (``ep-...``) or working-memory id (``wm-...``).
        view: How much of it is shown.
        text: What is shown of it (empty for a pointer).
        line: The line it takes in :attr:`Context.text`.
        tokens: What that line costs.
        score: Its rank: relevance times trust.
        tier: ``working``, ``short`` or ``long``.
        provenance: Origin, session, source, review state and taint. A working-memory
            item (said this turn) counts as reviewed unless said tainted.
        evidence: Its pointer, then the records it derives from.
    """

    id: str
    view: ContextView
    text: str
    line: str
    tokens: int
    score: float
    tier: str
    provenance: Provenance
    evidence: tuple[str, ...]

    @property
    def reviewed(self) -> bool:
        """Reviewed: not in quarantine."""
        return self.provenance.reviewed

    @property
    def taint(self) -> bool:
        """Derived from external content."""
        return self.provenance.taint


@dataclass(frozen=True)
class Context:
    """What :meth:`cuemem.Memory.context` returns: the items shown, best first."""

    query: str
    budget: int
    items: list[ContextItem] = field(default_factory=list)
    #: Candidates the budget could not show even as pointers.
    left_out: int = 0

    @property
    def tokens(self) -> int:
        """What the items cost, together (at most :attr:`budget`)."""
        return sum(i.tokens for i in self.items)

    @property
    def text(self) -> str:
        """The items' lines, best first: what to put in a prompt."""
        return "".join(i.line for i in self.items)


@dataclass
class _Candidate:
    id: str
    full: str
    score: float
    tier: str
    provenance: Provenance
    evidence: tuple[str, ...]

    def views(self) -> dict[ContextView, str]:
        return {ContextView.POINTER: "", ContextView.OUTLINE: outline(self.full), ContextView.SECTION: section(self.full), ContextView.FULL: self.full}

    def line(self, text: str) -> str:
        p = self.provenance
        flags = "" if p.reviewed and not p.taint else (" (quarantined)" if not p.reviewed else " (tainted)")
        flat = " ".join(text.split())
        return f"- [{self.id}]{flags} {flat}\n" if flat else f"- [{self.id}]{flags}\n"


def outline(text: str) -> str:
    """The first sentence of ``text``, at most :data:`OUTLINE_CHARS` (cut at a word)."""
    first = _SENTENCE.split(" ".join(text.split()), maxsplit=1)[0]
    return _cut(first, OUTLINE_CHARS)


def section(text: str) -> str:
    """The first paragraph of ``text``, at most :data:`SECTION_CHARS` (cut at a word)."""
    paragraph = text.strip().split("\n\n", 1)[0]
    return _cut(" ".join(paragraph.split()), SECTION_CHARS)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut + " …"


def _words(text: str) -> set[str]:
    """The content words of ``text``, without case (question and function words left out)."""
    return {w.casefold() for w in _WORDS.findall(content_words(text))}


def _candidates(query: str, hits: Sequence[Hit], working: Sequence[WorkingItem], include_quarantined: bool) -> list[_Candidate]:
    words = _words(query)
    out: list[_Candidate] = []
    for w in working:
        said = _words(w.text)
        share = len(words & said) / len(words) if words else 0.0
        if share > 0 and (include_quarantined or not w.taint):
            said_by = Provenance(w.id, w.origin, w.candidate.session, None, w.taint, not w.taint)
            out.append(_Candidate(w.id, w.text, (0.5 if w.taint else 0.75) * share, "working", said_by, (f"working: {w.id}",)))
    best = max((h.score for h in hits), default=0.0) or 1.0
    for h in hits:
        e = h.record
        trust = 0.5 if not e.reviewed else (0.75 if e.taint else 1.0)
        out.append(_Candidate(
            e.id, e.narrative, trust * max(h.score, 0.0) / best, e.tier.value, Provenance.of(e),
            (f"journal: {e.id}", *(f"journal: {s}" for s in e.sources)),
        ))
    return sorted(out, key=lambda c: -c.score)  # stable: the recall's own order among equals


def gather(
    query: object, budget_tokens: object, count_tokens: object, recall: Callable[[str], RecallResult],
    working: Callable[[], Sequence[WorkingItem]], include_quarantined: bool,
) -> Context:
    """``Memory.context``: the arguments checked, then :func:`build_context` of ``recall(query)``'s
    hits and ``working()``'s items.

    Raises:
        CueTypeError, InvalidArgumentError: a bad query, budget or counter.
    """
    if not isinstance(query, str):
        raise CueTypeError(f"query must be a string, got {type(query).__name__}")
    budget = check_budget(budget_tokens)
    counter = check_counter(count_tokens)
    found = recall(query)
    return build_context(query, found.hits, working(), budget, counter, include_quarantined)


def build_context(
    query: str, hits: Sequence[Hit], working: Sequence[WorkingItem], budget: int, counter: TokenCounter, include_quarantined: bool = False,
) -> Context:
    """The context of ``query`` within ``budget`` tokens (see the module docstring); working
    memory said in a tainted session only with ``include_quarantined``."""
    ranked = _candidates(query, hits, working, include_quarantined)
    shown: list[tuple[_Candidate, dict[ContextView, str], int, int]] = []  # candidate, views, level, cost
    used = 0
    for c in ranked:
        cost = counted(counter, c.line(""))
        if used + cost > budget:
            break
        shown.append((c, c.views(), 0, cost))
        used += cost
    for level in range(1, len(_ORDER)):
        for i, (c, views, at, cost) in enumerate(shown):
            if at != level - 1:
                continue
            text = views[_ORDER[level]]
            if text == views[_ORDER[at]]:
                shown[i] = (c, views, level, cost)  # no richer: the same line
                continue
            richer = counted(counter, c.line(text))
            if used - cost + richer <= budget:
                shown[i] = (c, views, level, richer)
                used += richer - cost
    items = []
    for c, views, level, cost in shown:
        text = views[_ORDER[level]]
        # Shown text that is also a richer view (a one-sentence memory is its own outline) is reported as the richest.
        view = [v for v in _ORDER if views[v] == text][-1]
        items.append(ContextItem(c.id, view, text, c.line(text), cost, round(c.score, 6), c.tier, c.provenance, c.evidence))
    return Context(query, budget, items, left_out=len(ranked) - len(shown))
