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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime

from ..timecues import find_time_cues

__all__ = [
    "FUNCTION_WORDS", "NAME_DIMENSIONS", "WHEN_WORDS", "Question", "Vocabulary", "content_words", "is_year", "read_question", "when_query",
]

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

#: Japanese question words that are not the start of other words, and polite question
#: endings at the end of the sentence, dropped from the BM25 query (replaced by a
#: space, so no character n-gram bridges the gap). Ambiguous kana (なん in なんば,
#: どう in どうぶつ, いつ in いつも) are left alone.
_JA_FUNCTION_RE = re.compile(
    r"何曜日|何年|何月|何日|何時|何を|何が|何の|何|いつ(?!も)|どこ(?!か)|誰|だれ(?!か)|どんな|どうして|なぜ|どのくらい|どれくらい"
    r"|(?:でしょうか|のですか|んですか|でしたか|ましたか|ですか|ますか)(?=[？?。！!\s]*$)"
)

_WORD = re.compile(r"\w+(?:['’]\w+)?")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s_\-]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_WHEN = re.compile(
    r"^\W*(?:(?:and|so|but|then|also)\s+)?(?:when|(?:what|which)\s+(?:year|month|day|date|time))\b|\bhow\s+long\b"
    r"|いつ(?!も)|何年|何月|何日|何曜日|何時|どのくらい|どれくらい",
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


def is_year(bucket: str) -> bool:
    """Whether a ``time`` bucket is a year ("2023", not "2023-05")."""
    return len(bucket) == 4


def _key(value: str) -> str:
    """How a cue value and a question's words are compared: no case, ``-``/``_``/space alike."""
    return _SEPARATORS.sub(" ", value.casefold()).strip()


class Vocabulary:
    """The cue values a question may name, by comparison key (built from the home's cue index)."""

    __slots__ = ("_latin", "_cjk", "_cjk_order", "_years")

    def __init__(self, values: Mapping[str, Iterable[str]], years: Iterable[str] = ()) -> None:
        """``values``: dimension -> its cue values; ``years``: the home's year buckets."""
        self._latin: dict[str, list[tuple[str, str]]] = {}
        self._cjk: dict[str, list[tuple[str, str]]] = {}
        self._cjk_order: list[str] | None = None  # CJK keys, longest first, made when first needed
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
        table = self._cjk if _CJK.search(key) else self._latin
        known = table.setdefault(key, [])
        if (dimension, value) not in known:
            known.append((dimension, value))
            if table is self._cjk:
                self._cjk_order = None

    def add_year(self, year: str) -> None:
        """Learns a year bucket the home holds."""
        self._years.add(year)

    @property
    def years(self) -> tuple[str, ...]:
        """Year buckets ("2023") the home holds: part of what "says when"."""
        return tuple(sorted(self._years))

    def __len__(self) -> int:
        return sum(len(v) for v in self._latin.values()) + sum(len(v) for v in self._cjk.values())

    def entries(self) -> list[tuple[str, str]]:
        """Every ``(dimension, value)`` learnt, sorted: what two vocabularies compare by."""
        return sorted(pair for table in (self._latin, self._cjk) for known in table.values() for pair in known)

    def find(
        self, question: str, live: Callable[[str, str], bool] | None = None,
    ) -> tuple[dict[str, list[str]], list[tuple[int, int]]]:
        """The cue values ``question`` names (dimension -> values) and the spans naming
        values of a dropped dimension (actors). The longest name wins where names
        overlap; a value ``live`` says no live memory carries is not named."""
        named: dict[str, list[str]] = {}
        spans: list[tuple[int, int]] = []

        def take(hits: list[tuple[str, str]], span: tuple[int, int]) -> bool:
            alive = [(d, v) for d, v in hits if live is None or live(d, v)]
            for dimension, value in alive:
                values = named.setdefault(dimension, [])
                if value not in values:
                    values.append(value)
                if dimension in _DROPPED:
                    spans.append(span)
            return bool(alive)

        if self._latin:
            words = [(m.start(), m.end(), _POSSESSIVE.sub("", m.group()).casefold()) for m in _WORD.finditer(question)]
            i = 0
            while i < len(words):
                for n in range(min(_MAX_NAME_WORDS, len(words) - i), 0, -1):  # longest run first
                    run = words[i : i + n]
                    hits = self._latin.get(" ".join(w for _, _, w in run))
                    if hits and take(hits, (run[0][0], run[-1][1])):
                        i += n
                        break
                else:
                    i += 1
        if self._cjk:
            if self._cjk_order is None:
                self._cjk_order = sorted(self._cjk, key=lambda k: (-len(k), k))
            taken: list[tuple[int, int]] = []
            for key in self._cjk_order:  # CJK has no case: search the question as written
                start = question.find(key)
                while start >= 0:
                    span = (start, start + len(key))
                    if not any(a < span[1] and span[0] < b for a, b in taken) and take(self._cjk[key], span):
                        taken.append(span)
                    start = question.find(key, start + len(key))
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
    live: Callable[[str, str], bool] | None = None,
) -> Question:
    """``question`` taken apart; each step can be switched off. ``live(dimension, value)``,
    when given, says whether a value still names a live memory (the vocabulary may
    hold values whose memories have been retired since).

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
        named, spans = vocabulary.find(text, live)
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
