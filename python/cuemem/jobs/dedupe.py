"""Dedupe (D5): near-duplicate memories, found and explained — proposed, never merged here.

The home finds the candidate pairs through its indexes (:func:`cuemem.jobs.home.run_dedupe`):
each memory new since the last run asks the text index for the few memories of the same
user whose narratives match its own best by BM25 — one core search per new memory,
never a loop over all pairs. This module judges each pair and groups the duplicates,
as pure functions of the two records and the config:

- **Comparable**: both are raw, not derived (no ``sources``), of the same user, kind,
  type and outcome, and neither is a version of a subject (versions have their own
  chain and the write gate already refuses a repeat).
- **Same facts**: the same numbers (``12%`` and ``15%`` differ, however alike the
  rest) and the same negation parity ("always" vs "never ... not").
- **Alike**: the words (CJK character bigrams) the two share, over the words of
  either (Jaccard), reach ``min_overlap``; or ``same_subject_overlap`` when both name
  the same subject. Two subjects that differ are never duplicates.

A group of duplicates becomes one proposal: keep its earliest record, retire the rest
as ``merged into <kept>``, with the evidence of every pair. A false merge costs more
than a missed one: the thresholds are high and every condition must hold.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgumentError
from ..policy.negation import parity

__all__ = ["DedupeConfig", "Match", "candidate_cues", "clusters", "compare", "words"]

_WORD = re.compile(r"[^\W_]+")
_DIGIT = re.compile(r"\d")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af々〆ー]")


@dataclass(frozen=True)
class DedupeConfig:
    """How alike two memories must be to be proposed as duplicates.

    Attributes:
        min_overlap: Shared words over the words of either (Jaccard) for two memories
            with no common subject.
        same_subject_overlap: The same, for two memories naming the same subject.
        neighbours: How many best text matches each new memory is compared with.
        min_words: Memories with fewer distinct words are left alone (too little to judge).
    """

    min_overlap: float = 0.85
    same_subject_overlap: float = 0.6
    neighbours: int = 5
    min_words: int = 3

    def __post_init__(self) -> None:
        for name in ("min_overlap", "same_subject_overlap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 < value <= 1.0:
                raise InvalidArgumentError(f"DedupeConfig.{name} must be a number in (0, 1], got {value!r}")
        for name in ("neighbours", "min_words"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgumentError(f"DedupeConfig.{name} must be an int >= 1, got {value!r}")


@dataclass(frozen=True)
class Match:
    """Two memories judged duplicates, and why.

    Attributes:
        first: The earlier record's id.
        second: The later record's id.
        overlap: Shared words over the words of either.
        evidence: One line a person reads.
    """

    first: str
    second: str
    overlap: float
    evidence: str


def words(text: str) -> frozenset[str]:
    """The distinct words of ``text``, case-folded; a run of CJK characters gives its bigrams."""
    out: set[str] = set()
    for token in _WORD.findall(text.casefold()):
        if _CJK.search(token) and len(token) > 1:
            out.update(token[i : i + 2] for i in range(len(token) - 1))
        else:
            out.add(token)
    return frozenset(out)


@functools.lru_cache(maxsize=1 << 16)
def _profile(text: str) -> tuple[frozenset[str], frozenset[str], int]:
    """The words of ``text``, those holding a digit, and its negation parity (a memory is
    compared with a few others in a run: each is read once)."""
    ws = words(text)
    return ws, frozenset(w for w in ws if _DIGIT.search(w)), parity(text)


def candidate_cues(stored: Mapping[str, Any]) -> dict[str, list[str]]:
    """The cues a duplicate of a stored episode must carry (what :func:`compare` requires
    equal and the cue index holds): its user, type and kind, and its outcome if it has one."""
    cues = {"user": [str(stored["user_id"])], "type": [str(stored["type"])], "kind": [str(stored["kind"])]}
    if stored.get("outcome") is not None:
        cues["outcome"] = [str(stored["outcome"])]
    return cues


def comparable(stored: Mapping[str, Any]) -> bool:
    """Whether a stored episode may be judged a duplicate at all: raw, not derived, untainted
    and reviewed, and no version of a subject (a long-term, non-episodic record with one)."""
    versioned = stored.get("tier") == "long" and stored.get("kind") != "episodic" and stored.get("subject") is not None
    return (
        stored.get("level") == "raw" and not stored.get("sources") and not stored.get("taint") and stored.get("reviewed", True) is True
        and not versioned
    )


def compare(first: Mapping[str, Any], second: Mapping[str, Any], config: DedupeConfig) -> Match | None:
    """The two stored episodes (``first`` the earlier) as duplicates, or None when any
    condition of the module fails."""
    if not (comparable(first) and comparable(second)) or first["id"] == second["id"]:
        return None
    for field in ("user_id", "kind", "type", "outcome"):
        if first.get(field) != second.get(field):
            return None
    s1, s2 = first.get("subject"), second.get("subject")
    if s1 is not None and s2 is not None and s1 != s2:
        return None
    (wa, na, pa), (wb, nb, pb) = _profile(str(first["narrative"])), _profile(str(second["narrative"]))
    if min(len(wa), len(wb)) < config.min_words or na != nb or pa != pb:
        return None
    shared = len(wa & wb)
    overlap = shared / len(wa | wb)
    same_subject = s1 is not None and s1 == s2
    if overlap < (config.same_subject_overlap if same_subject else config.min_overlap):
        return None
    numbers = sorted(na)
    evidence = (
        f"{second['id']} repeats {first['id']}: {shared} of {len(wa | wb)} words shared ({overlap:.0%})"
        + (f", same subject {s1!r}" if same_subject else "")
        + f", same user, kind {first.get('kind')}, type {first.get('type')}, outcome {first.get('outcome')}"
        + (f", same numbers {numbers}" if numbers else ", no numbers")
        + ", same negation"
    )
    return Match(str(first["id"]), str(second["id"]), overlap, evidence)


def clusters(matches: Sequence[Match], order: Mapping[str, int]) -> list[list[str]]:
    """The groups the matches join (union-find), each in ``order`` (row order: the earliest
    first, the one a merge keeps), groups by their first member."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for m in matches:
        ra, rb = find(m.first), find(m.second)
        if ra != rb:
            parent[max(ra, rb, key=order.__getitem__)] = min(ra, rb, key=order.__getitem__)
    groups: dict[str, list[str]] = {}
    for x in list(parent):
        groups.setdefault(find(x), []).append(x)
    return sorted((sorted(g, key=order.__getitem__) for g in groups.values() if len(g) > 1), key=lambda g: order[g[0]])
