"""``explain``: a policy's lineage down to the episodes, as text for a terminal."""

from __future__ import annotations

from dataclasses import dataclass

from .. import _scalars
from ..errors import InvalidArgumentError
from ..schema import Episode
from ..schema.policy import Policy, cause_key

__all__ = ["Explanation"]


@dataclass(frozen=True, slots=True)
class Explanation:
    """A policy with the records it rests on: its evidence, its counter-examples, its rivals."""

    policy: Policy
    #: The supporting episodes, oldest first (those still in the home).
    evidence: list[Episode]
    #: Same cause, other outcome, oldest first.
    counter_examples: list[Episode]
    #: The policies it contradicts.
    contradicts: list[Policy]
    #: Evidence ids the home no longer resolves.
    missing: list[str]

    def render(self, limit: int | None = None) -> str:
        """The lineage as an indented tree of plain text lines, at most ``limit`` episodes per list (None: all).

        Raises:
            CueTypeError: ``limit`` is not an integer. InvalidArgumentError: it is negative.
        """
        if limit is not None:
            limit = _scalars.integer(limit, "limit")
            if limit < 0:
                raise InvalidArgumentError(f"limit must be at least 0, got {limit}")
        p = self.policy
        lines = [
            f"{p.id}  {p.polarity.value}  confidence {p.confidence:.3f}" + ("  [tainted]" if p.taint else ""),
            f"  {p.statement}",
            f"  cause: {cause_key(p.cause) or '(none: applies nowhere)'}",
        ]
        if p.span:
            lines.append(f"  span: {p.span[0].isoformat()} .. {p.span[1].isoformat()}   scope: {', '.join(p.scope) or '-'}")
        lines.append(f"  evidence ({len(self.evidence)}):")
        lines += _listing(self.evidence, limit)
        lines += [f"    {m}  (not in this home)" for m in self.missing]
        lines.append(f"  counter-examples ({len(self.counter_examples)}):")
        lines += _listing(self.counter_examples, limit)
        if self.contradicts:
            lines.append("  contradicted by:")
            lines += [f"    {q.id}  {q.polarity.value}  {q.statement}" for q in self.contradicts]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def _listing(episodes: list[Episode], limit: int | None) -> list[str]:
    shown = episodes if limit is None else episodes[:limit]
    more = [f"    ... and {len(episodes) - len(shown)} more"] if len(shown) < len(episodes) else []
    return [f"    {_episode(e)}" for e in shown] + more


def _episode(e: Episode) -> str:
    outcome = e.outcome.value if e.outcome else "-"
    return f"{e.occurred_at.isoformat()}  {e.id}  [{e.type}, {outcome}]  {e.narrative}"
