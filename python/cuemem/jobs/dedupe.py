"""Dedupe (D5): duplicate memories, found and explained — proposed, never merged here.

**Two memories are duplicates only when they are the same event or the same fact**
(:data:`RULE`). Alike words are not enough: a home is full of look-alikes that are
different events — a templated email from another person, the stand-up of another day,
the same ticket template for another bug. So the rule first asks what each memory is
*about*, its identity (:func:`identity`), and only then how alike its words are:

- **Comparable**: both are raw, not derived (no ``sources``), untainted and reviewed,
  and neither is a version of a subject (versions have their own chain and the write
  gate already refuses a repeat).
- **The same event** (episodic memories): the same user, type and outcome, the same day
  of occurrence, the same actors and the same thread (or none for both), and no two
  different subjects. Episodes of different days, different actors or different
  threads are never duplicates, however alike their words.
- **The same fact** (semantic, procedural, preference and policy memories): the same
  user, kind, type and outcome, and the same subject (or none for both) — a fact said
  again another day is still the one fact.
- **Nothing said differs**: the same numbers (``12%`` and ``15%`` differ, however alike
  the rest), the same negation parity ("always" vs "never ... not"), and no name in one
  that the other lacks (a capitalised word within a sentence — a person, a company, a
  place, a month — written in one and absent from the other: "... from Globex, Jonas
  Silva" and "... from Globex, Aisha Shah" are two people).
- **Said alike**: the content words the two share (:func:`content_words`: function words
  left out, plural and verb endings folded, CJK as character bigrams), over the content
  words of either (Jaccard), reach ``min_overlap``; ``same_subject_overlap`` for two
  facts of the one subject (the subject already says they are about the same thing).

The home finds the candidates by that identity (:func:`identity_cues`,
:func:`cuemem.jobs.home.run_dedupe`): the memories of one identity are compared pair by
pair, and a large group asks the text index for each member's best matches among the
group instead. A group of duplicates becomes one proposal: keep its earliest record,
retire the rest as ``merged into <kept>``, with the evidence of every pair and
:func:`why` — the rule, said of that group. A false merge costs more than a missed one:
every condition must hold.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import _scalars
from ..errors import InvalidArgumentError
from ..policy.negation import parity

__all__ = [
    "RULE", "DedupeConfig", "Match", "clusters", "comparable", "compare", "content_words", "identity", "identity_cues",
    "names", "why", "words",
]

#: The rule, in one sentence a person reads (every proposal's ``why`` says it of its group).
RULE = (
    "two memories are duplicates only when they are the same event (episodic: the same day, the same actors, the same thread) "
    "or the same fact (the same subject), and say nothing different (the same numbers, the same negation, no name in one only) "
    "in nearly the same words"
)

_WORD = re.compile(r"[^\W_]+")
_DIGIT = re.compile(r"\d")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af々〆ー]")
#: What ends a sentence: the word after it is capitalised by grammar, not because it is a name.
_SENTENCE_END = re.compile(r"[.!?:;\n\"“(\[]")
#: Function words: they carry no content of their own, so rewording changes them freely.
_FUNCTION_WORDS = frozenset("""
a an the and or but nor of to in on at for from by with about as into onto over under after before than then so
is are was were be been being am has have had having do does did done will would shall should can could may might must
it its this that these those there here i we you he she they me us him her them my our your his their mine ours yours
also just again too very really up out all some any each every both either neither other another such if now once only still
yet not no never
""".split())
#: Doubled consonants a stripped ending leaves ("shipped" -> "shipp" -> "ship"), except those English doubles in a stem.
_KEPT_DOUBLES = frozenset("lsfz")


@dataclass(frozen=True)
class DedupeConfig:
    """How alike two memories of one identity must be to be proposed as duplicates.

    Attributes:
        min_overlap: Shared content words over the content words of either (Jaccard).
        same_subject_overlap: The same, for two facts (not events) of one subject.
        neighbours: In a group of one identity too large to compare pair by pair, how
            many best text matches each new memory is compared with.
        min_words: Memories with fewer distinct words are left alone (too little to judge).
    """

    min_overlap: float = 0.85
    same_subject_overlap: float = 0.6
    neighbours: int = 5
    min_words: int = 3

    def __post_init__(self) -> None:
        for name in ("min_overlap", "same_subject_overlap"):
            value = getattr(self, name)
            share = _scalars.as_real(value)
            if share is None or not 0.0 < share <= 1.0:
                raise InvalidArgumentError(f"DedupeConfig.{name} must be a number in (0, 1], got {value!r}")
            object.__setattr__(self, name, share)
        for name in ("neighbours", "min_words"):
            value = getattr(self, name)
            number = _scalars.as_int(value)
            if number is None or number < 1:
                raise InvalidArgumentError(f"DedupeConfig.{name} must be an int >= 1, got {value!r}")
            object.__setattr__(self, name, number)


@dataclass(frozen=True)
class Match:
    """Two memories judged duplicates, and why.

    Attributes:
        first: The earlier record's id.
        second: The later record's id.
        overlap: Shared content words over the content words of either.
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
        out.update(_pieces(token))
    return frozenset(out)


def _pieces(token: str) -> tuple[str, ...]:
    """A case-folded word as :func:`words` counts it: itself, or for a run holding CJK characters its bigrams."""
    if _CJK.search(token) and len(token) > 1:
        return tuple(token[i : i + 2] for i in range(len(token) - 1))
    return (token,)


def _fold(word: str) -> str:
    """``word`` with its plural or verb ending folded ("moves", "moved", "moving" -> "mov")."""
    if _CJK.search(word) or _DIGIT.search(word) or len(word) <= 3:
        return word
    stem = word
    if stem.endswith("ies") and len(stem) > 4:
        stem = stem[:-3] + "y"
    elif stem.endswith("ing") and len(stem) > 5:
        stem = stem[:-3]
    elif stem.endswith("ed") and len(stem) > 4:
        stem = stem[:-2]
    elif stem.endswith("s") and not stem.endswith("ss"):
        stem = stem[:-1]
    if stem != word and len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in _KEPT_DOUBLES and not word.endswith("s"):
        stem = stem[:-1]
    return stem[:-1] if stem.endswith("e") and len(stem) > 3 else stem


def content_words(text: str) -> frozenset[str]:
    """What ``text`` says, as words: its :func:`words` but function words, each folded (:func:`_fold`)."""
    return frozenset(_fold(w) for w in words(text) if w not in _FUNCTION_WORDS)


def names(text: str) -> frozenset[str]:
    """The capitalised words of ``text`` that grammar does not capitalise (not the first of a
    sentence, not "I"), case-folded and split as :func:`words` splits them: the names of
    people, companies, places, months."""
    out: set[str] = set()
    end = -1
    for m in _WORD.finditer(text):
        token = m.group()
        initial = end < 0 or _SENTENCE_END.search(text, end, m.start()) is not None
        end = m.end()
        if not initial and len(token) > 1 and token[0].isupper():
            out.update(_pieces(token.casefold()))
    return frozenset(out)


@functools.lru_cache(maxsize=1 << 16)
def _profile(text: str) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str], int]:
    """The words of ``text``, its content words, those holding a digit, its names and its
    negation parity (a memory is compared with a few others in a run: each is read once)."""
    ws = words(text)
    return ws, content_words(text), frozenset(w for w in ws if _DIGIT.search(w)), names(text), parity(text)


def _actors(stored: Mapping[str, Any]) -> tuple[str, ...]:
    """The actors of a stored episode, case-folded and sorted (their order says nothing)."""
    actors = stored.get("actors")
    return tuple(sorted({" ".join(str(a).casefold().split()) for a in actors})) if actors else ()


def _episodic(stored: Mapping[str, Any]) -> bool:
    return bool(stored.get("kind", "episodic") == "episodic")


def identity(stored: Mapping[str, Any]) -> tuple[Any, ...]:
    """What a stored episode is about, as the rule reads it: two duplicates have the same.

    An event (episodic): its user, kind, type, outcome, day of occurrence, actors (a
    case-folded set) and thread. A fact (any other kind): its user, kind, type, outcome
    and subject.

    Args:
        stored: A stored episode (``Episode.to_json`` form).
    """
    base = (stored.get("user_id"), stored.get("kind", "episodic"), stored.get("type"), stored.get("outcome"))
    if _episodic(stored):
        return (*base, str(stored.get("occurred_at") or "")[:10], _actors(stored), stored.get("thread"))
    return (*base, stored.get("subject"))


def identity_cues(key: tuple[Any, ...]) -> dict[str, list[str]]:
    """The cues every memory of the identity ``key`` (:func:`identity`) carries, as the cue
    index holds them: its user, kind and type, its outcome if any, and for an event its day
    and thread if any, for a fact its subject if any (the actors are compared, not cued)."""
    user, kind, type_, outcome, *rest = key
    cues = {"user": [str(user)], "type": [str(type_)], "kind": [str(kind)]}
    if outcome is not None:
        cues["outcome"] = [str(outcome)]
    if kind == "episodic":
        day, _, thread = rest
        if day:
            cues["time"] = [day]
        if thread is not None:
            cues["thread"] = [str(thread)]
    elif rest[0] is not None:
        cues["subject"] = [str(rest[0])]
    return cues


def comparable(stored: Mapping[str, Any]) -> bool:
    """Whether a stored episode may be judged a duplicate at all: raw, not derived, untainted
    and reviewed, and no version of a subject (a long-term, non-episodic record with one)."""
    versioned = stored.get("tier") == "long" and stored.get("kind") != "episodic" and stored.get("subject") is not None
    return (
        stored.get("level") == "raw" and not stored.get("sources") and not stored.get("taint") and stored.get("reviewed", True) is True
        and not versioned
    )


def _about(stored: Mapping[str, Any]) -> str:
    """The identity two duplicates share, as the evidence says it."""
    if _episodic(stored):
        actors = ", ".join(str(a) for a in stored.get("actors") or ()) or "none"
        thread = stored.get("thread")
        return (f"the same event: episodic, on {str(stored.get('occurred_at'))[:10]}, actors {actors}, "
                f"thread {'none' if thread is None else repr(thread)}")
    subject = stored.get("subject")
    return f"the same fact: {stored.get('kind')}, " + ("no subject" if subject is None else f"subject {subject!r}")


def compare(first: Mapping[str, Any], second: Mapping[str, Any], config: DedupeConfig) -> Match | None:
    """The two stored episodes as duplicates, or None when any condition of the rule (the module's) fails.

    Args:
        first: The earlier stored episode (``Episode.to_json`` form; the fields the rule reads).
        second: The later one.
        config: The bars of word overlap and the fewest words judged.
    """
    if not (comparable(first) and comparable(second)) or first["id"] == second["id"] or identity(first) != identity(second):
        return None
    s1, s2 = first.get("subject"), second.get("subject")
    if s1 is not None and s2 is not None and s1 != s2:  # an event filed under two subjects is two events
        return None
    (wa, ca, na, ma, pa), (wb, cb, nb, mb, pb) = _profile(str(first["narrative"])), _profile(str(second["narrative"]))
    if min(len(wa), len(wb)) < config.min_words or not ca or not cb or na != nb or pa != pb or (ma - wb) or (mb - wa):
        return None
    shared = len(ca & cb)
    union = len(ca | cb)
    overlap = shared / union
    one_subject = s1 is not None and not _episodic(first)
    if overlap < (config.same_subject_overlap if one_subject else config.min_overlap):
        return None
    numbers = sorted(na)
    evidence = (
        f"{second['id']} repeats {first['id']}, {_about(first)}; {shared} of {union} content words shared ({overlap:.0%})"
        + (f", same numbers {numbers}" if numbers else ", no numbers")
        + ", same negation, no name in one only"
        + f"; same user, type {first.get('type')}, outcome {first.get('outcome')}"
    )
    return Match(str(first["id"]), str(second["id"]), overlap, evidence)


def why(kept: Mapping[str, Any], merged: Sequence[str]) -> str:
    """Why a group is proposed for a merge: the rule (:data:`RULE`), said of the group.

    Args:
        kept: The stored episode a merge keeps (the group's earliest).
        merged: The ids of those it retires.
    """
    kept_id = str(kept["id"])
    verb = "says" if len(merged) == 1 else "say"
    if _episodic(kept):
        same = (f"the same event — {kept.get('type')} of {str(kept.get('occurred_at'))[:10]}, with the same actors, "
                "in the same thread")
    else:
        subject = kept.get("subject")
        same = f"the same fact — {kept.get('kind')}, " + ("with no subject" if subject is None else f"of the subject {subject!r}")
    return (
        f"{', '.join(merged)} {verb} what {kept_id} says about {same}: the same numbers and negation, no name in one only, "
        f"and nearly the same words (dedupe merges only duplicates: {RULE}). Accepting keeps the earliest and retires the rest "
        "(the journal keeps them)."
    )


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
