"""Contradictions between policies: same subject, opposite negation parity.

Two mined policies contradict when they ask to mitigate and to reinforce the very same
cause. Two written ones contradict when they are about the same subject and say the
same thing with opposite parity ("do X" vs "don't X", 「Xする」 vs 「Xしない」). Both
sides are flagged; nothing is resolved on anyone's behalf.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence

from ..schema.policy import Policy, Polarity
from .negation import content, parity, similarity

__all__ = ["SAME_CONTENT", "contradicting_pairs", "flag_contradictions"]

#: Content similarity (Jaccard) at or above which two written statements say the same thing.
SAME_CONTENT = 0.75


def _topic(policy: Policy) -> str:
    return policy.subject.casefold().strip()


def _sign(policy: Policy) -> int:
    if policy.generated:
        return 1 if policy.polarity is Polarity.MITIGATE else 0
    return parity(policy.statement)


def contradicting_pairs(policies: Sequence[Policy]) -> list[tuple[str, str]]:
    """Ids of every contradicting pair, each pair sorted, the list sorted."""
    by_topic: dict[str, list[Policy]] = defaultdict(list)
    for p in policies:
        if p.subject:
            by_topic[_topic(p)].append(p)
    pairs: set[tuple[str, str]] = set()
    for group in by_topic.values():
        if len(group) < 2:
            continue
        if all(p.generated for p in group) and len({p.polarity for p in group}) == 1:
            continue  # mined, all pulling one way: nothing to compare
        said = {p.id: content(p.statement) for p in group if not p.generated}
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                if a.id == b.id or _sign(a) == _sign(b):
                    continue
                if a.generated and b.generated:
                    same = a.cause == b.cause
                elif a.generated or b.generated:
                    same = False  # a mined cause and a sentence are not comparable word by word
                else:
                    same = similarity(said[a.id], said[b.id]) >= SAME_CONTENT
                if same:
                    pairs.add((min(a.id, b.id), max(a.id, b.id)))
    return sorted(pairs)


def flag_contradictions(policies: Sequence[Policy]) -> list[Policy]:
    """The policies with ``contradicts`` filled in from :func:`contradicting_pairs`."""
    other: dict[str, set[str]] = defaultdict(set)
    for a, b in contradicting_pairs(policies):
        other[a].add(b)
        other[b].add(a)
    return [dataclasses.replace(p, contradicts=tuple(sorted(other[p.id]))) if p.id in other or p.contradicts else p for p in policies]
