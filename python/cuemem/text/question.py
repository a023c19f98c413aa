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
  the turns that address that person. A person's name of several words is also named
  by its first word (a given name, in any case) or by another of its words written
  with its capital ("priya" and "Shah" name "Priya Shah").
- **Reporting verbs** ("say", "told", "mention") say how something was said, not what
  about: they leave the BM25 query when another word is left, so "what did Priya say
  about the discount?" ranks by "discount", not by every memory where someone says.
- **Irregular inflections** the stemmer cannot join ("said"/"say", "broke"/"break",
  "children"/"child") are added to the query in their other forms.
- **Pronouns** ("she", "they", "it") say the question refers to someone named before:
  :attr:`Question.refers` tells the recall to carry over what the question it follows
  named.
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
    "FUNCTION_WORDS", "IRREGULAR", "NAME_DIMENSIONS", "PRONOUNS", "REPORTING_VERBS", "WHEN_WORDS", "inflected", "Question", "Vocabulary", "content_words", "is_year", "read_question", "when_query",
]

#: Dimensions whose values a question may name.
NAME_DIMENSIONS: tuple[str, ...] = ("actor", "subject", "tag", "type")
#: Dimensions whose named values also leave the BM25 query.
_DROPPED = frozenset({"actor"})
#: Dimensions whose values name someone or something a pronoun can refer back to.
_POOLED = frozenset({"actor", "subject", "tag"})

#: English question and function words, dropped from the BM25 query.
FUNCTION_WORDS = frozenset("""
what when where who whom whose which why how did do does doing done was were is are am be been being has have had
would could should can will might may shall must she he her his him hers they them their theirs you your yours i me
my mine we us our ours it its about from kind sort some any there that this these those the a an of to in on at for
with by as and or not no ever also get got go going like likely both each all other others much many more most very
really just something anything thing things one ones else
""".split())

#: Verbs of saying: they leave the BM25 query when another content word is left.
REPORTING_VERBS = frozenset("""
say says said saying tell tells told telling mention mentions mentioned mentioning talk talks talked talking
""".split())

#: Personal pronouns that refer back to someone or something named before.
PRONOUNS = frozenset("he she him her his hers they them their theirs it its".split())

#: English irregular forms the stemmer does not join, one family a line: a query word
#: of a family brings the family's other forms into the query. Light verbs ("take",
#: "make", like "have", "get", "go" and "do" among the function words) are left out:
#: they mean little on their own.
IRREGULAR: tuple[tuple[str, ...], ...] = tuple(tuple(line.split()) for line in """
say said
tell told
buy bought
bring brought
think thought
teach taught
catch caught
fight fought
seek sought
break broke broken
choose chose chosen
speak spoke spoken
write wrote written
drive drove driven
ride rode ridden
rise rose risen
eat ate eaten
fall fell fallen
give gave given
see saw seen
know knew known
grow grew grown
throw threw thrown
fly flew flown
draw drew drawn
wear wore worn
tear tore torn
steal stole stolen
forget forgot forgotten
begin began begun
drink drank drunk
sing sang sung
swim swam swum
run ran
come came
become became
win won
lose lost
leave left
keep kept
sleep slept
feel felt
meet met
send sent
spend spent
build built
lend lent
pay paid
lay laid
find found
hold held
sell sold
hear heard
stand stood
understand understood
sit sat
hang hung
feed fed
lead led
read
bite bit bitten
hide hid hidden
shake shook shaken
child children
person people
man men
woman women
wife wives
knife knives
life lives
mouse mice
foot feet
tooth teeth
""".strip().splitlines() if len(line.split()) > 1)

_FAMILY: dict[str, tuple[str, ...]] = {form: family for family in IRREGULAR for form in family}

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

    __slots__ = ("_latin", "_cjk", "_cjk_order", "_years", "_given", "_part")

    def __init__(self, values: Mapping[str, Iterable[str]], years: Iterable[str] = ()) -> None:
        """``values``: dimension -> its cue values; ``years``: the home's year buckets."""
        self._latin: dict[str, list[tuple[str, str]]] = {}
        self._cjk: dict[str, list[tuple[str, str]]] = {}
        self._cjk_order: list[str] | None = None  # CJK keys, longest first, made when first needed
        self._years: set[str] = set()
        # A word of an actor's name -> the (dimension, value)s it is part of, in the order learnt
        # (a dict as an ordered set: a common first name is part of thousands of names).
        self._given: dict[str, dict[tuple[str, str], None]] = {}  # an actor's first word
        self._part: dict[str, dict[tuple[str, str], None]] = {}  # an actor's later words; named if capitalised
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
            elif dimension in _DROPPED:
                self._add_parts(dimension, value)

    def _add_parts(self, dimension: str, value: str) -> None:
        """Learns the words of an actor's name of several words (see the module docs)."""
        parts = _WORD.findall(value)
        if len(parts) < 2:
            return
        for i, part in enumerate(parts):
            folded = part.casefold()
            if len(folded) < 3 or folded in FUNCTION_WORDS:
                continue
            table = self._given if i == 0 else self._part
            table.setdefault(folded, {})[dimension, value] = None

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
        overlap; a value ``live`` says no live memory carries is not named. A word of a
        name of several words names it too (see the module docs) but stays in the query."""
        named: dict[str, dict[str, None]] = {}  # dimension -> its values, in the order found (an ordered set)
        spans: list[tuple[int, int]] = []

        def take(hits: list[tuple[str, str]], span: tuple[int, int], blank: bool = True) -> bool:
            alive = [(d, v) for d, v in hits if live is None or live(d, v)]
            for dimension, value in alive:
                named.setdefault(dimension, {})[value] = None
                if dimension in _DROPPED and blank:
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
                    start, end, word = words[i]
                    hits = [*self._given.get(word, ()), *(self._part.get(word, ()) if question[start].isupper() else ())]
                    if hits:  # a part of a name stays in the BM25 query: the word may be an ordinary one
                        take(hits, (start, end), blank=False)
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
        return {dimension: list(values) for dimension, values in named.items()}, spans


@dataclass(frozen=True)
class Question:
    """A text query taken apart (see the module docs).

    Attributes:
        query: What BM25 ranks by: the question without what the other parts took.
        named: Dimension -> the cue values the question names.
        buckets: Time buckets its time phrases name.
        asks_when: Whether it asks when (or how long).
        refers: Whether it holds a pronoun ("she", "it") and names no one: it refers to
            someone the question it follows named.
    """

    query: str
    named: dict[str, list[str]]
    buckets: tuple[str, ...]
    asks_when: bool
    refers: bool = False


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    out = list(text)
    for a, b in spans:
        out[a:b] = " " * (b - a)
    return "".join(out)


def content_words(text: str) -> str:
    """``text`` without question and function words (English and Japanese), and without
    reporting verbs when another word is left.

    Example:
        >>> content_words("What did Kim say about the budget?"), content_words("What was said?")
        ('Kim budget', 'said')
    """
    text = _JA_FUNCTION_RE.sub(" ", text)
    words = [w for w in _WORD.findall(text) if _POSSESSIVE.sub("", w).casefold() not in FUNCTION_WORDS]
    topic = [w for w in words if w.casefold() not in REPORTING_VERBS]
    return " ".join(topic or words)


def inflected(text: str) -> str:
    """``text`` with the other forms of its irregular words added (:data:`IRREGULAR`).

    Example:
        >>> inflected("what did the cat break")
        'what did the cat break broke broken'
    """
    extra: list[str] = []
    for w in _WORD.findall(text):
        for form in _FAMILY.get(w.casefold(), ()):
            if form != w.casefold() and form not in extra:
                extra.append(form)
    return f"{text} {' '.join(extra)}" if extra else text


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
    if function_words:
        text = inflected(text)
    refers = not any(d in _POOLED for d in named) and any(w.casefold() in PRONOUNS for w in _WORD.findall(question))
    return Question(query=text, named=named, buckets=tuple(buckets), asks_when=bool(_WHEN.search(question)), refers=refers)


def when_query(vocabulary: Vocabulary | None) -> str:
    """The BM25 query of "memories that say when": :data:`WHEN_WORDS` and the home's years."""
    years = vocabulary.years if vocabulary is not None else ()
    return " ".join((*WHEN_WORDS, *years))
