"""Reading a text query as a question (SPEC C2, C3, C7), in English and Japanese.

A question carries more than its topic words. :func:`read_question` takes it apart,
once per recall, into what each part is good for:

- **Question and function words** ("what", "did", "she", "about"; 何, いつ, ですか)
  match most memories and carry no topic: they leave the BM25 query.
- **Names the home knows.** Words (or runs of up to three words, or for Japanese a
  substring) equal to a cue value of the home's ``actor``, ``subject``, ``tag`` or
  ``type`` dimension — compared without case, with ``-``/``_``/space alike — become
  boosts of the memories carrying that value. Actors also leave the BM25 query: who
  took part is what the boost carries, and in a conversation a name mostly matches
  the turns that address that person.
- **Time phrases** ("in May 2023", "last week", 先週), read against ``now`` as the
  ``time`` cue reads them, become boosts of the memories of those days (or, when
  asked, a cue that narrows).
- **The question's type.** A question asking *when* ("when", "what year", "how
  long", いつ, 何年) favours memories that say when: a time word, a weekday, a month
  or a year the home holds.

Nothing here reads the home or the clock: the vocabulary and ``now`` are arguments.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime

from ..timecues import find_time_cues

__all__ = ["FUNCTION_WORDS", "NAME_DIMENSIONS", "Question", "Vocabulary", "read_question"]

#: Dimensions whose values a question may name.
NAME_DIMENSIONS: tuple[str, ...] = ("actor", "subject", "tag", "type")
#: Dimensions whose named values also leave the BM25 query.
_DROPPED = frozenset({"actor"})

#: English question and function words, dropped from the BM25 query.
FUNCTION_WORDS = frozenset("""
what when where who whom whose which why how did do does doing done was were is are am be been being has have had
would could should can will might may shall must she he her his him hers they them their theirs you your yours i me
my mine we us our ours it its about from kind sort some any there that this these those the a an of to in on at for
with by as and or not no ever also get got go going like likely
""".split())

#: Japanese question words and polite question endings, dropped from the BM25 query
#: (longest first, replaced by a space so no character n-gram bridges the gap).
_JA_FUNCTION = sorted(
    """何時 何曜日 何年 何月 何日 何を 何が 何の 何 なに なん いつ頃 いつ どこ どちら だれ 誰 どの どんな どう どうして なぜ
    どのくらい どれくらい どれ位 でしたか ましたか ですか ますか でしょうか のですか んですか か？ か?""".split(),
    key=len, reverse=True,
)
_JA_FUNCTION_RE = re.compile("|".join(re.escape(w) for w in _JA_FUNCTION))

_WORD = re.compile(r"\w+(?:['’]\w+)?")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s_\-]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_WHEN = re.compile(
    r"^\s*(?:when|what\s+(?:year|month|day|date|time))\b|\bhow\s+long\b|いつ|何年|何月|何日|何曜日|何時|どのくらい|どれくらい",
    re.IGNORECASE,
)

#: Words that say when, as the BM25 query of "memories that say when" (the home's
#: years are added to it).
WHEN_WORDS: tuple[str, ...] = tuple("""
yesterday today tomorrow tonight ago last next recently weekend week month year
monday tuesday wednesday thursday friday saturday sunday
january february march april may june july august september october november december
昨日 今日 明日 先週 今週 来週 先月 今月 来月 去年 昨年 今年 来年 週末 曜日 先日 最近
""".split())

#: The longest run of words compared with a cue value.
_MAX_NAME_WORDS = 3


def _key(value: str) -> str:
    """How a cue value and a question's words are compared: no case, ``-``/``_``/space alike."""
    return _SEPARATORS.sub(" ", value.casefold()).strip()


class Vocabulary:
    """The cue values a question may name, by comparison key (built from the home's cue index)."""

    __slots__ = ("_latin", "_cjk", "_years")

    def __init__(self, values: Mapping[str, Iterable[str]], years: Iterable[str] = ()) -> None:
        """``values``: dimension -> its cue values; ``years``: the home's year buckets."""
        self._latin: dict[str, list[tuple[str, str]]] = {}
        self._cjk: list[tuple[str, str, str]] = []
        self._years: set[str] = set()
        for dimension, names in values.items():
            for value in names:
                self.add(dimension, value)
        for year in years:
            self.add_year(year)

    def add(self, dimension: str, value: str) -> None:
        """Learns one cue value (a value already known is a no-op)."""
        key = _key(value)
        if len(key) < 2 or key in FUNCTION_WORDS:
            return
        if _CJK.search(key):
            entry = (key, dimension, value)
            if entry not in self._cjk:
                self._cjk.append(entry)
                self._cjk.sort(key=lambda t: -len(t[0]))
        else:
            known = self._latin.setdefault(key, [])
            if (dimension, value) not in known:
                known.append((dimension, value))

    def add_year(self, year: str) -> None:
        """Learns a year bucket the home holds."""
        self._years.add(year)

    @property
    def years(self) -> tuple[str, ...]:
        """Year buckets ("2023") the home holds: part of what "says when"."""
        return tuple(sorted(self._years))

    def __len__(self) -> int:
        return sum(len(v) for v in self._latin.values()) + len(self._cjk)

    def find(self, question: str) -> tuple[dict[str, list[str]], list[tuple[int, int]]]:
        """The cue values ``question`` names (dimension -> values) and the spans naming
        values of a dropped dimension (actors)."""
        named: dict[str, list[str]] = {}
        spans: list[tuple[int, int]] = []

        def take(dimension: str, value: str, span: tuple[int, int]) -> None:
            values = named.setdefault(dimension, [])
            if value not in values:
                values.append(value)
            if dimension in _DROPPED:
                spans.append(span)

        if self._latin:
            words = [(m.start(), m.end(), _POSSESSIVE.sub("", m.group()).casefold()) for m in _WORD.finditer(question)]
            i = 0
            while i < len(words):
                for n in range(min(_MAX_NAME_WORDS, len(words) - i), 0, -1):  # longest run first
                    run = words[i : i + n]
                    hits = self._latin.get(" ".join(w for _, _, w in run))
                    if hits:
                        for dimension, value in hits:
                            take(dimension, value, (run[0][0], run[-1][1]))
                        i += n
                        break
                else:
                    i += 1
        if self._cjk:
            folded = question.casefold()
            for key, dimension, value in self._cjk:
                start = folded.find(key)
                while start >= 0:
                    take(dimension, value, (start, start + len(key)))
                    start = folded.find(key, start + len(key))
        return named, spans


@dataclass(frozen=True)
class Question:
    """A text query taken apart (see the module docs).

    Attributes:
        query: What BM25 ranks by: the question without what the other parts took.
        named: Dimension -> the cue values the question names.
        buckets: Time buckets its time phrases name.
        asks_when: Whether it asks when (or how long).
    """

    query: str
    named: dict[str, list[str]]
    buckets: tuple[str, ...]
    asks_when: bool


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    out = list(text)
    for a, b in spans:
        out[a:b] = " " * (b - a)
    return "".join(out)


def content_words(text: str) -> str:
    """``text`` without question and function words (English and Japanese)."""
    text = _JA_FUNCTION_RE.sub(" ", text)
    return " ".join(w for w in _WORD.findall(text) if _POSSESSIVE.sub("", w).casefold() not in FUNCTION_WORDS)


def read_question(
    question: str,
    *,
    now: datetime | date,
    vocabulary: Vocabulary | None,
    function_words: bool = True,
    names: bool = True,
    time: bool = True,
) -> Question:
    """``question`` taken apart; each step can be switched off.

    When nothing is left for BM25 (a question made only of names or function words),
    the query falls back to the question as asked, so a recall still ranks by text.

    Example:
        >>> from datetime import date
        >>> v = Vocabulary({"actor": ["caroline", "melanie"]})
        >>> q = read_question("When did Caroline go to the LGBTQ support group?", now=date(2023, 6, 1), vocabulary=v)
        >>> q.query, q.named, q.asks_when
        ('LGBTQ support group', {'actor': ['caroline']}, True)
    """
    text = question
    named: dict[str, list[str]] = {}
    if names and vocabulary is not None:
        named, spans = vocabulary.find(text)
        text = _blank(text, spans)
    buckets: tuple[str, ...] = ()
    if time:
        buckets, text = find_time_cues(text, now=now)
    if function_words:
        text = content_words(text)
    if not _WORD.search(text):
        text = question
    return Question(query=text, named=named, buckets=tuple(buckets), asks_when=bool(_WHEN.search(question)))


def when_query(vocabulary: Vocabulary | None) -> str:
    """The BM25 query of "memories that say when": :data:`WHEN_WORDS` and the home's years."""
    years = vocabulary.years if vocabulary is not None else ()
    return " ".join((*WHEN_WORDS, *years))
