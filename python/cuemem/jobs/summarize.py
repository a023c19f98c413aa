"""Summaries of the memories a rung abstracts: a deterministic extractive default and
the interface a language model can be plugged in through (never required).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..schema import Level
from ..home.items import Item

__all__ = ["ExtractiveSummarizer", "Summarizer", "SummaryRequest"]


@dataclass(frozen=True)
class SummaryRequest:
    """What a summarizer is asked to abstract.

    Attributes:
        level: The rung being written (summary, pattern, principle or policy).
        topic: What the group shares, for people: ``"subject acme-renewal"``,
            ``"everything else"``.
        sources: The memories abstracted, in the order they occurred.
        sample: How many of them the summary may quote.
    """

    level: Level
    topic: str
    sources: Sequence[Item]
    sample: int


@runtime_checkable
class Summarizer(Protocol):
    """Turns a group of memories into the text of their rung.

    Implementations must be deterministic for distillation to be: the same request
    must give the same text. A summarizer that calls a language model should cache
    by request.
    """

    def __call__(self, request: SummaryRequest) -> str: ...


class ExtractiveSummarizer:
    """The default: a headline of counts and dates, then the most salient sources quoted.

    The headline names the level, the topic, how many memories, their date range,
    their most common types and outcomes and who took part; then up to ``sample``
    source narratives, strongest first (ties: earliest), are quoted verbatim.

    Example:
        >>> from datetime import date, datetime, timezone
        >>> def item(i, text, urgency):
        ...     return Item(f"e{i}", text, "u", "call", "positive", ("acme",), "renewal", (), "episodic",
        ...                 "long", "raw", (0.0, urgency, 0.0, 0.0, 0.0, 0.0, 0.0), 1.0,
        ...                 date(2026, 3, i), datetime(2026, 3, i, tzinfo=timezone.utc), False)
        >>> req = SummaryRequest(Level.SUMMARY, "subject renewal", [item(1, "Asked for terms", 0.2),
        ...                      item(2, "Agreed on 12%", 0.9)], sample=1)
        >>> print(ExtractiveSummarizer()(req))
        summary of 2 memories about subject renewal, 2026-03-01 to 2026-03-02: 2 call; outcomes 2 positive; with acme.
        - 2026-03-02 Agreed on 12%
    """

    def __call__(self, request: SummaryRequest) -> str:
        items = list(request.sources)
        first = min(it.occurred_at for it in items).isoformat()
        last = max(it.occurred_at for it in items).isoformat()
        types = _top(Counter(it.type for it in items))
        outcomes = _top(Counter(it.outcome for it in items if it.outcome is not None))
        actors = [a for a, _ in sorted(Counter(a for it in items for a in it.actors).items(), key=lambda kv: (-kv[1], kv[0]))[:5]]
        span = first if first == last else f"{first} to {last}"
        head = f"{request.level.value} of {len(items)} memories about {request.topic}, {span}: {types}"
        if outcomes:
            head += f"; outcomes {outcomes}"
        if actors:
            head += f"; with {', '.join(actors)}"
        quoted = sorted(items, key=lambda it: (-it.peak, it.occurred_at, it.id))[: request.sample]
        lines = [head + "."]
        for it in quoted:
            text = " ".join(it.narrative.split())
            lines.append(f"- {it.occurred_at.isoformat()} {text[:200]}")
        return "\n".join(lines)


def _top(counts: Counter[str], n: int = 3) -> str:
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return ", ".join(f"{c} {v}" for v, c in ranked)
