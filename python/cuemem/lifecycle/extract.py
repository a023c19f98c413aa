"""Heuristic extraction (B2): text -> candidate memories, with no model involved.

The text is split into sentences; each sentence takes the category of the first
pattern of the table that matches it (:mod:`cuemem.lifecycle.patterns`), and the
category's rule gives the tier, kind, salience and confidence. Greetings and
acknowledgements are dropped; a sentence no pattern matches is an *utterance*, held in
working memory for the turn. Extraction is a pure function of its arguments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from ..errors import CueTypeError, InvalidArgumentError
from ..schema import Kind, Tier
from ..schema.fields import to_datetime
from .patterns import DEFAULT_PATTERNS, RULES, Category, Pattern

__all__ = ["Candidate", "classify", "extract", "plain", "sentences", "subject_key"]

#: Sentences longer than this are never classified (they stay utterances).
MAX_SENTENCE = 1_000

_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
_TRAILING = re.compile(r"[\s.!?。！？、,]+$")
_QUESTION = re.compile(r"(?:[?？]|か[。]?)\s*$")
_SPACES = re.compile(r"\s+")
_EDGE = re.compile(r"^[\s\"'“”「」『』]+|[\s\"'“”「」『』]+$")
_ARTICLE = re.compile(r"^(?:the|an?)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """One sentence extraction proposes to remember.

    Attributes:
        text: The sentence, as written (trimmed).
        category: What it is (:class:`~cuemem.lifecycle.patterns.Category`).
        tier: Where it goes: long-term, short-term or working memory.
        kind: The kind of memory it becomes.
        subject: What it is about (from the pattern's ``subject`` group), or None.
        salience: Its ``importance`` salience.
        confidence: How sure extraction is, before the write gate weighs the origin.
        session: The session it was said in (disambiguations are scoped to it).
        pattern: The name of the pattern that matched (None for an utterance).
        at: The instant it was observed.
    """

    text: str
    category: Category
    tier: Tier
    kind: Kind
    subject: str | None
    salience: float
    confidence: float
    session: str | None
    pattern: str | None
    at: datetime


def sentences(text: str) -> list[str]:
    """The non-blank sentences of ``text``, trimmed, in order.

    A sentence ends at ``.``, ``!`` or ``?`` followed by white space, at ``。``, ``！``
    or ``？``, or at a line break; "3.5" and "e.g.x" stay whole.

    Example:
        >>> sentences("Hi! I prefer tea. 私の猫はミケです。ありがとう")
        ['Hi!', 'I prefer tea.', '私の猫はミケです。', 'ありがとう']
    """
    return [s.strip() for s in _SPLIT.split(text) if s.strip()]


def classify(sentence: str, patterns: Sequence[Pattern] = DEFAULT_PATTERNS) -> tuple[Pattern | None, str | None]:
    """The first pattern matching ``sentence`` and the subject it captured.

    Trailing punctuation is ignored; a question matches only patterns that allow
    questions; a sentence longer than :data:`MAX_SENTENCE` matches nothing.
    """
    if len(sentence) > MAX_SENTENCE:
        return None, None
    body = _TRAILING.sub("", sentence)
    if not body:
        return None, None
    question = _QUESTION.search(sentence) is not None
    for pattern in patterns:
        if question and not pattern.questions:
            continue
        match = pattern.compiled.search(body)
        if match is None:
            continue
        subject = match.groupdict().get("subject")
        return pattern, _clean_subject(subject)
    return None, None


def extract(
    text: str,
    *,
    now: datetime | date,
    session: str | None = None,
    patterns: Sequence[Pattern] | None = None,
) -> list[Candidate]:
    """Candidate memories in ``text``: one per sentence that is not small talk.

    Example:
        >>> from datetime import datetime, timezone
        >>> now = datetime(2026, 6, 15, tzinfo=timezone.utc)
        >>> [(c.category.value, c.tier.value, c.subject, c.salience) for c in extract(
        ...     "Thanks! My favorite editor is vim. Here PR means pull request.", now=now)]
        [('preference', 'long', 'favorite editor', 0.8), ('disambiguation', 'short', 'PR', 0.5)]

    Args:
        text: What was said or written; any string.
        now: When it was observed (a date means its midnight UTC).
        session: The conversation it belongs to; short-term candidates are scoped to it.
        patterns: The pattern table (default :data:`~cuemem.lifecycle.patterns.DEFAULT_PATTERNS`).

    Raises:
        CueTypeError: ``text`` is not a string, ``now`` not a date or datetime,
            ``session`` not a string, or ``patterns`` not a sequence of patterns.
        InvalidArgumentError: ``session`` is blank.
    """
    if not isinstance(text, str):
        raise CueTypeError(f"text must be a string, got {type(text).__name__}")
    at = instant(now)
    scope = session_id(session)
    table = pattern_table(patterns)
    out: list[Candidate] = []
    for sentence in sentences(text):
        pattern, subject = classify(sentence, table)
        category = Category.UTTERANCE if pattern is None else pattern.category
        rule = RULES[category]
        if rule.tier is None:
            continue
        out.append(Candidate(
            text=sentence, category=category, tier=rule.tier, kind=rule.kind, subject=subject, salience=rule.salience,
            confidence=rule.confidence, session=scope, pattern=None if pattern is None else pattern.name, at=at,
        ))
    return out


def subject_key(subject: str) -> str:
    """The form under which versions of a subject are grouped: case-folded, spaces collapsed.

    Example:
        >>> subject_key("  Favorite   Editor ") == subject_key("favorite editor")
        True
    """
    return _SPACES.sub(" ", subject).strip().casefold()


def plain(sentence: str) -> str:
    """A sentence reduced to what it says: case, spacing and end punctuation aside.

    Example:
        >>> plain("My favorite  editor is VIM!") == plain("my favorite editor is vim")
        True
    """
    return _TRAILING.sub("", _SPACES.sub(" ", sentence).strip()).casefold()


def instant(now: object) -> datetime:
    """``now`` as an aware UTC datetime.

    Raises:
        CueTypeError: ``now`` is not a date or datetime.
    """
    if not isinstance(now, date):
        raise CueTypeError(f"now must be a datetime or a date, got {type(now).__name__}")
    return to_datetime(now, "now")


def session_id(session: object) -> str | None:
    """A validated session label (None for none).

    Raises:
        CueTypeError: not a string.
        InvalidArgumentError: blank, longer than 100 characters, or holding control
            characters or lone surrogates.
    """
    if session is None:
        return None
    if not isinstance(session, str):
        raise CueTypeError(f"session must be a string, got {type(session).__name__}")
    label = session.strip()
    if not label or len(label) > 100 or not label.isprintable():
        raise InvalidArgumentError(f"session must be 1-100 printable characters, got {session!r}")
    try:
        label.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgumentError(f"session is not valid Unicode text: {session!r}") from None
    return label


def pattern_table(patterns: object) -> tuple[Pattern, ...]:
    """A checked pattern table (the defaults for None).

    Raises:
        CueTypeError: not a sequence of :class:`Pattern`.
    """
    if patterns is None:
        return DEFAULT_PATTERNS
    if isinstance(patterns, (str, bytes)) or not isinstance(patterns, Sequence):
        raise CueTypeError(f"patterns must be a sequence of Pattern, got {type(patterns).__name__}")
    table = tuple(patterns)
    for p in table:
        if not isinstance(p, Pattern):
            raise CueTypeError(f"patterns must hold Pattern objects, got {type(p).__name__}")
    return table


def _clean_subject(subject: str | None) -> str | None:
    if subject is None:
        return None
    cleaned = _ARTICLE.sub("", _EDGE.sub("", subject))
    cleaned = _SPACES.sub(" ", cleaned).strip()
    return cleaned[:200] or None
