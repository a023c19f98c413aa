"""Judging a situation (D3): which policies apply, ranked, with conflicts grouped.

A policy applies when every cue of its cause holds in the situation. The book keeps,
per cue, the numpy array of policies whose cause holds it; a situation gathers the
arrays of its cues and counts, per policy, how many of its cues matched
(``np.bincount``). A policy applies when that count equals its cause's length, so a
judgement costs the postings of the situation's cues, not the number of policies.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .model import Policy

__all__ = ["Judgement", "PolicyBook"]


@dataclass(frozen=True, slots=True)
class Judgement:
    """The policies that apply to a situation and the conflicts among them."""

    #: The situation judged: dimension -> values.
    situation: dict[str, list[str]]
    #: Applicable policies, most confident first, then most specific, then by id.
    policies: list[Policy]
    #: Groups of applicable policies that contradict each other, returned together.
    conflicts: list[tuple[Policy, ...]]

    @property
    def evidence(self) -> dict[str, tuple[str, ...]]:
        """Policy id -> the ids of the episodes it rests on."""
        return {p.id: p.evidence for p in self.policies}


class PolicyBook:
    """An immutable set of policies, indexed for :meth:`judge`.

    Example:
        >>> from cuemem.policy import Polarity, Policy
        >>> p = Policy("pol-1", Polarity.MITIGATE, (("actor", "acme"), ("type", "deal")), "Avoid acme deals.",
        ...            ("ep-1", "ep-2"), (), 0.9, 1.2, None, ("default",))
        >>> book = PolicyBook([p])
        >>> [q.id for q in book.judge({"type": ["deal"], "actor": ["acme", "kim"]}).policies]
        ['pol-1']
        >>> book.judge({"type": ["deal"]}).policies
        []
    """

    def __init__(self, policies: Sequence[Policy]) -> None:
        self._policies = sorted(policies, key=lambda p: (-p.confidence, -len(p.cause), p.id))
        self._by_id = {p.id: p for p in self._policies}
        lists: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, p in enumerate(self._policies):
            for cue in dict.fromkeys(p.cause):
                lists[cue].append(i)
        self._postings: dict[tuple[str, str], npt.NDArray[np.intp]] = {c: np.asarray(v, dtype=np.intp) for c, v in lists.items()}
        self._lengths = np.asarray([len(set(p.cause)) for p in self._policies], dtype=np.intp)
        self._values = sorted({v for _, v in lists}, key=lambda v: (-len(v), v))
        self._cues_of: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for d, v in lists:
            self._cues_of[v.casefold()].append((d, v))
        pattern = "|".join(re.escape(v.casefold()) for v in self._values)
        self._words = re.compile(rf"(?<![\w-])(?:{pattern})(?![\w-])") if pattern else None

    def __len__(self) -> int:
        return len(self._policies)

    def __iter__(self) -> Iterator[Policy]:
        return iter(self._policies)

    def get(self, id: str) -> Policy | None:
        """The policy with this id, or None."""
        return self._by_id.get(id)

    def cues_in(self, text: str) -> dict[str, list[str]]:
        """The causes' cue values that occur in ``text`` as whole words (case-insensitive)."""
        out: dict[str, list[str]] = defaultdict(list)
        if self._words is None:
            return {}
        for match in self._words.finditer(text.casefold()):
            for d, v in self._cues_of[match.group(0)]:
                if v not in out[d]:
                    out[d].append(v)
        return dict(out)

    def judge(self, situation: Mapping[str, Sequence[str]]) -> Judgement:
        """The policies whose whole cause holds in ``situation`` (dimension -> values)."""
        arrays = [self._postings[(d, v)] for d, vs in situation.items() for v in dict.fromkeys(vs) if (d, v) in self._postings]
        if arrays:
            hits = np.bincount(np.concatenate(arrays), minlength=len(self._policies))
            applicable = np.flatnonzero(hits == self._lengths).tolist()
        else:
            applicable = []
        chosen = [self._policies[i] for i in applicable]  # the book's order is the ranking
        return Judgement({d: list(vs) for d, vs in situation.items()}, chosen, _conflicts(chosen))


def _conflicts(policies: Sequence[Policy]) -> list[tuple[Policy, ...]]:
    """Connected groups of contradicting policies among ``policies``, in ranking order."""
    order = {p.id: i for i, p in enumerate(policies)}
    links: dict[str, set[str]] = defaultdict(set)
    for p in policies:
        for q in p.contradicts:
            if q in order:
                links[p.id].add(q)
                links[q].add(p.id)
    groups: list[tuple[Policy, ...]] = []
    seen: set[str] = set()
    for p in policies:
        if p.id in seen or p.id not in links:
            continue
        members, todo = set(), [p.id]
        while todo:
            x = todo.pop()
            if x not in members:
                members.add(x)
                todo += links[x] - members
        seen |= members
        groups.append(tuple(policies[i] for i in sorted(order[m] for m in members)))
    return groups
