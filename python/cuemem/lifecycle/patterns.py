"""The extraction pattern table: which sentences are preferences, decisions, definitions.

Each :class:`Pattern` ties one regular expression to a :class:`Category`; a sentence
takes the category of the first pattern in the table that matches it. The default
table, :data:`DEFAULT_PATTERNS`, covers English and Japanese; users extend it by
passing their own patterns ahead of (or instead of) the defaults::

    table = (Pattern("price", Category.DEFINITION, "en", r"^(?P<subject>\\w+) costs .+$"), *DEFAULT_PATTERNS)

What a category means for the memory — tier, kind, salience, confidence — is the
:data:`RULES` table.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from ..errors import CueTypeError, InvalidArgumentError
from ..schema import Kind, Tier

__all__ = ["Category", "DEFAULT_PATTERNS", "Pattern", "RULES", "Rule"]


class Category(str, enum.Enum):
    """What an utterance is, as far as memory is concerned."""

    PREFERENCE = "preference"
    DECISION = "decision"
    DEFINITION = "definition"
    DISAMBIGUATION = "disambiguation"
    #: Small talk and thanks: never stored.
    GREETING = "greeting"
    ACKNOWLEDGEMENT = "acknowledgement"
    #: Nothing matched: held in working memory for the turn.
    UTTERANCE = "utterance"

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Rule:
    """Where a category of utterance goes, and how strongly it is remembered.

    Attributes:
        tier: The tier a candidate of this category is written to (``None``: dropped).
        kind: The kind of memory it becomes.
        salience: Its ``importance`` salience.
        confidence: The confidence extraction gives it (before the write gate).
    """

    tier: Tier | None
    kind: Kind
    salience: float
    confidence: float


#: Category -> where it goes. Preferences and decisions are long-term at 0.8,
#: definitions long-term at 0.65, disambiguations short-term (scoped to the session).
RULES: dict[Category, Rule] = {
    Category.PREFERENCE: Rule(Tier.LONG, Kind.PREFERENCE, 0.8, 0.95),
    Category.DECISION: Rule(Tier.LONG, Kind.SEMANTIC, 0.8, 0.95),
    Category.DEFINITION: Rule(Tier.LONG, Kind.SEMANTIC, 0.65, 0.9),
    Category.DISAMBIGUATION: Rule(Tier.SHORT, Kind.SEMANTIC, 0.5, 0.8),
    Category.GREETING: Rule(None, Kind.EPISODIC, 0.0, 0.0),
    Category.ACKNOWLEDGEMENT: Rule(None, Kind.EPISODIC, 0.0, 0.0),
    Category.UTTERANCE: Rule(Tier.WORKING, Kind.EPISODIC, 0.2, 0.6),
}


@dataclass(frozen=True)
class Pattern:
    """One row of the pattern table.

    Args:
        name: A label, shown on the candidates it produces.
        category: What a matching sentence is.
        language: ``"en"``, ``"ja"`` or any tag the user likes (informative only).
        regex: Searched in the sentence (trailing punctuation removed); a named group
            ``subject`` becomes the candidate's subject.
        questions: Whether the pattern may match a question (most may not: "Do you
            prefer tea?" states no preference).

    Raises:
        CueTypeError: ``regex`` is neither a string nor a compiled pattern.
        InvalidArgumentError: ``regex`` does not compile, or ``name`` is empty.
    """

    name: str
    category: Category
    language: str
    regex: str | re.Pattern[str]
    questions: bool = False
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidArgumentError(f"a pattern needs a name, got {self.name!r}")
        try:
            object.__setattr__(self, "category", Category(self.category))
        except ValueError:
            raise InvalidArgumentError(f"unknown category {self.category!r}; the categories are {[c.value for c in Category]}") from None
        if isinstance(self.regex, re.Pattern):
            compiled = self.regex
        elif isinstance(self.regex, str):
            try:
                compiled = re.compile(self.regex, re.IGNORECASE)
            except re.error as exc:
                raise InvalidArgumentError(f"pattern {self.name!r} does not compile: {exc}") from None
        else:
            raise CueTypeError(f"a pattern's regex must be a string or re.Pattern, got {type(self.regex).__name__}")
        object.__setattr__(self, "compiled", compiled)


_WHO = r"(?:i|we|the team|our team)"
_ARTICLE = r"(?:an?|the)"

#: The built-in English and Japanese patterns, checked in this order.
DEFAULT_PATTERNS: tuple[Pattern, ...] = (
    # -- dropped: a whole sentence of small talk ---------------------------------------
    Pattern("en-greeting", Category.GREETING, "en",
            r"^(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening|night)|bye|goodbye|see you(?: later| soon| tomorrow)?"
            r"|how are you(?: doing)?(?: today)?|nice to meet you)(?:[ ,]+(?:there|all|everyone|team|folks|again))*$", questions=True),
    Pattern("en-acknowledgement", Category.ACKNOWLEDGEMENT, "en",
            r"^(?:(?:ok(?:ay)?|sure|yes|yep|yeah|no problem|got it|sounds good|great|cool|perfect|noted|understood|will do|alright"
            r"|makes sense|thanks?(?: you)?(?: so much| a lot| very much)?|thx|ty)[ ,!.]*)+$"),
    Pattern("ja-greeting", Category.GREETING, "ja",
            r"^(?:こんにちは|こんばんは|おはよう(?:ございます)?|はじめまして|お疲れ(?:様|さま)です|よろしく(?:お願いします)?|さようなら|またね)[、。！!\s]*$",
            questions=True),
    Pattern("ja-acknowledgement", Category.ACKNOWLEDGEMENT, "ja",
            r"^(?:(?:はい|うん|了解(?:です|しました)?|わかりました|分かりました|承知(?:しました|いたしました)|ありがとう(?:ございます|ございました)?"
            r"|どうも|OK|オッケー|なるほど)[、。！!\s]*)+$"),
    # -- short-term: what a word means in this conversation ---------------------------------
    Pattern("en-here-means", Category.DISAMBIGUATION, "en",
            r"^(?:here|in this (?:context|conversation|thread|chat|session|project)|for (?:this|now)),?\s+(?:by\s+)?[\"'“]?"
            r"(?P<subject>\w[\w\- ]{0,40}?)[\"'”]?\s+(?:means|refers to|stands for|is short for)\s+\S.*$"),
    Pattern("en-when-i-say", Category.DISAMBIGUATION, "en",
            r"^(?:when|if) (?:i|we) say [\"'“]?(?P<subject>\w[\w\- ]{0,40}?)[\"'”]?,?\s+(?:i|we) mean\s+\S.*$"),
    Pattern("ja-kokodeno", Category.DISAMBIGUATION, "ja",
            r"^(?:ここでの|この(?:場|文脈|会話|スレッド|プロジェクト)での|今回の)「?(?P<subject>[^はがをに、「」]{1,30})」?(?:は|とは)\S.*$"),
    Pattern("ja-kokode-iu", Category.DISAMBIGUATION, "ja",
            r"^ここで(?:の)?「?(?P<subject>[^」と、]{1,30})」?と(?:言|い)う(?:の)?は\S.*$"),
    # -- long-term: preferences and decisions -----------------------------------------------
    Pattern("en-prefer", Category.PREFERENCE, "en",
            rf"^{_WHO} (?:really |strongly |generally |usually |always )?(?:prefer|would prefer|'d prefer)\s+(?:to\s+)?(?P<subject>.+?)"
            r"(?:\s+(?:over|to|rather than|instead of)\s+.+)?$"),
    Pattern("en-rather", Category.PREFERENCE, "en", rf"^{_WHO}(?:'d| would) rather\s+(?P<subject>.+?)(?:\s+than\s+.+)?$"),
    Pattern("en-my-x-is", Category.PREFERENCE, "en",
            r"^(?:my|our) (?P<subject>[\w\-]+(?: [\w\-]+){0,3}?) (?:is|are) (?!not\b)\S.*$"),
    Pattern("en-like", Category.PREFERENCE, "en",
            r"^i (?:really |do |much )?(?:like|love|hate|dislike|can't stand|don't like|do not like|always use|never use) (?P<subject>.+)$"),
    Pattern("en-decided", Category.DECISION, "en",
            rf"^{_WHO}(?: have|'ve| has| just)? (?:decided|agreed|chose|settled on|committed to)\b(?:\s+(?:to|that|on|upon))?\s+(?P<subject>\S.*)$"),
    Pattern("en-go-with", Category.DECISION, "en",
            r"^(?:let's|let us|we're going to|we are going to|we'll) (?:go with|use|stick with|switch to) (?P<subject>\S.*)$"),
    Pattern("en-decision-is", Category.DECISION, "en", r"^(?:the |our )?decision (?:is|was) (?:to |that )?(?P<subject>\S.*)$"),
    Pattern("ja-watashi-no", Category.PREFERENCE, "ja",
            r"^(?:私|わたし|僕|ぼく|俺|うち)の(?P<subject>[^はがを、]{1,30})は\S.*$"),
    Pattern("ja-suki", Category.PREFERENCE, "ja",
            r"^(?:(?:私|わたし|僕|ぼく|俺)は)?(?P<subject>[^、。はが]{1,30}?)(?:が|の方が)(?:好き|大好き|嫌い|いい|良い)(?:です|だ|だな)?$"),
    Pattern("ja-konomu", Category.PREFERENCE, "ja", r"^(?:(?:私|わたし|僕|ぼく)は)?(?P<subject>[^、。はが]{1,30}?)(?:を|の方を)好み(?:ます|たい)$"),
    Pattern("ja-kimeta", Category.DECISION, "ja",
            r"^(?:(?:私たち|我々|チーム)は)?(?P<subject>.{1,60}?)(?:に|と)(?:決めました|決定しました|決まりました|決めた|決定した)$"),
    Pattern("ja-kotoni", Category.DECISION, "ja",
            r"^(?:(?:私たち|我々|チーム)は)?(?P<subject>.{1,60}?)ことに(?:しました|した|決めました|決めた|なりました)$"),
    # -- long-term: definitions (the most general, so last) ---------------------------------
    Pattern("en-is-a", Category.DEFINITION, "en",
            rf"^(?!(?:this|that|it|he|she|they|there|here|what|who|which|i|we|you|these|those|today|tomorrow|yesterday|everything|something"
            rf"|nothing|everyone|someone)\b)(?:{_ARTICLE} )?(?P<subject>[A-Za-z0-9][\w\-.+#/]*(?: [\w\-.+#/]+){{0,4}}?) (?:is|are) "
            r"(?:an?|the|defined as|short for|a kind of|a type of) \S.*$"),
    Pattern("en-means", Category.DEFINITION, "en",
            r"^(?!(?:this|that|it|which|what)\b)(?:the term )?[\"'“]?(?P<subject>[A-Za-z0-9][\w\-.+#/]*(?: [\w\-.+#/]+){0,3}?)[\"'”]? "
            r"(?:means|refers to|stands for) \S.*$"),
    Pattern("ja-de-aru", Category.DEFINITION, "ja",
            r"^(?!(?:私|わたし|僕|俺|これ|それ|あれ|今日|明日|昨日|ここ)(?:は|とは))(?P<subject>[^、。はがを「」]{1,30})(?:は|とは)\S.*?"
            r"(?:である|であった|のことです|のことだ|のこと|を指す|を指します|を意味する|を意味します)$"),
    Pattern("ja-to-wa", Category.DEFINITION, "ja",
            r"^(?!(?:これ|それ|あれ)とは)(?P<subject>[^、。はがを「」]{1,30})とは\S.*(?:です|だ)$"),
)
