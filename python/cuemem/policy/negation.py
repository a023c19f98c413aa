"""Negation parity of a statement in English or Japanese, and what it says without it.

"Deploy on Fridays" and "Don't deploy on Fridays" say the same thing with opposite
parity; so do 「金曜日にデプロイする」 and 「金曜日にデプロイしない」. A statement's parity
is the number of negation markers it holds, modulo 2 ("never skip the review" is
negative; "don't ever not review" is positive again). Its *content* is the set of
what remains once markers, filler words and verb endings are gone: English words, and
character bigrams for Japanese, which has no spaces.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["content", "parity", "similarity"]

_EN_NEGATION = re.compile(
    r"\b(?:not|no|never|don't|dont|doesn't|didn't|isn't|aren't|wasn't|weren't|won't|can't|cannot|"
    r"shouldn't|mustn't|avoid|stop)\b|n't\b"
)
# Longest first, so one marker is counted once: 「しないで」 is one negation, not two.
_JA_NEGATION = ("なかった", "ないで", "ません", "べからず", "禁止", "するな", "ない", "ず")
# Words that hold a marker's kana without negating: 必ず (always), まず (first), はず
# (expected), ずつ (each), ずっと (all along), 少ない (few), 危ない (dangerous).
_JA_NOT_NEGATION = ("必ず", "まず", "はず", "ずつ", "ずっと", "少ない", "危ない")
_JA_ENDINGS = re.compile(r"(?:ください|しましょう|します|する|して|した|し|ます|です|だ|る|。|、)+$")
_FILLER = frozenset({"do", "does", "did", "to", "the", "a", "an", "please", "always", "should", "must", "we", "you", "i", "ever"})
_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff々〆ー]+")


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


def parity(text: str) -> int:
    """1 when ``text`` holds an odd number of negation markers, else 0.

    Example:
        >>> parity("Deploy on Fridays"), parity("Don't deploy on Fridays"), parity("金曜日にデプロイしない")
        (0, 1, 1)
    """
    t = _normal(text)
    count = len(_EN_NEGATION.findall(t))
    for run in _CJK.findall(t):
        for word in _JA_NOT_NEGATION:
            run = run.replace(word, " ")
        for marker in _JA_NEGATION:
            count += run.count(marker)
            run = run.replace(marker, " ")
    return count % 2


def content(text: str) -> frozenset[str]:
    """What ``text`` says with negation, filler and verb endings removed: words and CJK bigrams.

    Example:
        >>> content("Don't deploy on Fridays") == content("Deploy on Fridays")
        True
        >>> content("金曜日にデプロイしない") == content("金曜日にデプロイする")
        True
    """
    t = _normal(text)
    out: set[str] = set()
    latin = _EN_NEGATION.sub(" ", _CJK.sub(" ", t))
    out.update(w for w in _WORD.findall(latin) if w not in _FILLER)
    for run in _CJK.findall(t):
        for marker in _JA_NEGATION:
            run = run.replace(marker, "")
        run = _JA_ENDINGS.sub("", run)
        if len(run) == 1:
            out.add(run)
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return frozenset(out)


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard similarity of two contents (1.0 for two empty ones)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
