"""Judging a situation (D3): which policies apply, ranked, with conflicts grouped.

A policy applies when every cue of its cause holds in the situation. The book keeps,
per cue, the policies whose cause holds it; a situation gathers the lists of its cues
and counts, per policy, how many of its cues matched (in a dict for a few thousand
postings, with ``np.bincount`` beyond). A policy applies when that count equals its cause's length, so a
judgement costs the postings of the situation's cues, not the number of policies.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain

import numpy as np
import numpy.typing as npt

from ..errors import CueTypeError
from ..schema.policy import Policy

__all__ = ["Judgement", "PolicyBook"]

# Postings at or below which a situation is counted in a dict rather than with numpy.
_SMALL = 256


@dataclass(frozen=True, slots=True)
class Judgement:
    """The policies that apply to a situation and the conflicts among them."""

    #: The situation judged: dimension -> values.
    situation: dict[str, list[str]]
    #: Applicable policies, most confident first, then most specific, then by id.
    policies: list[Policy]
    #: Groups of applicable policies that contradict each other, returned together.
    conflicts: list[tuple[Policy, ...]]
    #: Applicable policies resting on tainted evidence alone: reported, not applied
    #: (``judge(..., include_tainted=True)`` applies them).
    withheld: list[Policy] = field(default_factory=list)

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
        """Indexes ``policies``.

        Raises:
            CueTypeError: an item is not a :class:`~cuemem.policy.Policy`.
        """
        for p in policies:
            if not isinstance(p, Policy):
                raise CueTypeError(f"a policy book holds Policy objects, got {type(p).__name__}")
        self._policies = sorted(policies, key=lambda p: (-p.confidence, -len(p.cause), p.id))
        self._by_id = {p.id: p for p in self._policies}
        lists: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, p in enumerate(self._policies):
            for cue in dict.fromkeys(p.cause):
                lists[cue].append(i)
        self._lists: dict[tuple[str, str], list[int]] = dict(lists)
        self._postings: dict[tuple[str, str], npt.NDArray[np.intp]] = {c: np.asarray(v, dtype=np.intp) for c, v in lists.items()}
        # A policy without a cause applies nowhere: a length no count can reach.
        self._length_list = [len(set(p.cause)) or -1 for p in self._policies]
        self._lengths = np.asarray(self._length_list, dtype=np.intp)
        self._values = sorted({v for _, v in lists}, key=lambda v: (-len(v), v))
        self._cues_of: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for d, v in lists:
            self._cues_of[v.casefold()].append((d, v))
        self._component = _components(self._policies)
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
        cues = [(d, v) for d, vs in situation.items() for v in dict.fromkeys(vs) if (d, v) in self._lists]
        if sum(len(self._lists[c]) for c in cues) <= _SMALL:
            # Few postings: counting them in a dict beats whole-book array passes.
            hits = Counter(chain.from_iterable(self._lists[c] for c in cues))
            lengths = self._length_list
            applicable = sorted(i for i, n in hits.items() if n == lengths[i])
        else:
            counts = np.bincount(np.concatenate([self._postings[c] for c in cues]), minlength=len(self._policies))
            applicable = np.flatnonzero(counts == self._lengths).tolist()
        chosen = [self._policies[i] for i in applicable]  # the book's order is the ranking
        groups: dict[int, list[Policy]] = {}
        for i in applicable:
            c = self._component.get(i)
            if c is not None:
                groups.setdefault(c, []).append(self._policies[i])
        conflicts = [tuple(g) for g in groups.values() if len(g) > 1]
        return Judgement({d: list(vs) for d, vs in situation.items()}, chosen, conflicts)


def _components(policies: Sequence[Policy]) -> dict[int, int]:
    """Position -> its group of policies linked by contradictions (only positions with a link).

    Two applicable policies of one group contradict each other directly or through
    others; a judgement returns each group's applicable members together.
    """
    at = {p.id: i for i, p in enumerate(policies)}
    parent = list(range(len(policies)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    linked: set[int] = set()
    for i, p in enumerate(policies):
        for q in p.contradicts:
            j = at.get(q)
            if j is not None:
                linked.update((i, j))
                a, b = root(i), root(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return {i: root(i) for i in sorted(linked)}
