"""Time cues in words: "2026-06", "June 2026", "last week", "先週" -> time buckets (SPEC C7).

The cue index stores every memory under three ``time`` buckets, one per granularity:
``"2026"``, ``"2026-06"`` and ``"2026-06-07"``. A time cue resolves to the buckets it
covers, at the coarsest granularity that is exact: a month is one month bucket, a week
is its day buckets. Recall then takes the union of those posting lists.

Relative phrases are read against ``now``, an argument; nothing here reads the clock.
The calendar day of ``now`` is the day as written: a naive datetime is taken as it
stands, an aware one in its own time zone (pass a UTC datetime for UTC days).

Decisions the specification left open:

* ``this week`` is the ISO week so far: Monday up to and including ``now``'s day.
* ``last week`` is the whole previous ISO week, Monday to Sunday.
* ``last N days`` (and ``past N days``, ``過去N日``) ends *today*: ``now``'s day and the
  ``N - 1`` days before it, so something that happened this morning is found.
  ``1 <= N <= 366``.
* In free text (:func:`find_time_cues`) a bare year counts only after "in" or
  "during" ("in 2026") or with 年 ("2026年"): "the 2026 budget" or "2000 seats" are
  not time cues. A phrase that looks like a cue but names no real date
  ("2026-02-30", "last 900 days") is left in the text.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from .errors import CueTypeError, TimeCueError

__all__ = ["ACCEPTED_FORMS", "MAX_DAYS", "find_time_cues", "is_bucket", "resolve_time_cue"]

MAX_DAYS = 366
"""The largest N in "last N days"."""

ACCEPTED_FORMS: tuple[str, ...] = (
    "YYYY",
    "YYYY-MM",
    "YYYY-MM-DD",
    "YYYY/MM",
    "YYYY/MM/DD",
    "June 2026",
    "June 7, 2026",
    "7 June 2026",
    "2026年",
    "2026年6月",
    "2026年6月7日",
    "today",
    "yesterday",
    "this week",
    "last week",
    "this month",
    "last month",
    "this year",
    "last year",
    f"last N days (1 <= N <= {MAX_DAYS})",
    "今日",
    "本日",
    "昨日",
    "今週",
    "先週",
    "今月",
    "先月",
    "今年",
    "去年",
    "昨年",
    "過去N日",
)
"""The forms :func:`resolve_time_cue` understands, as listed in its error message."""

_MONTHS: dict[str, int] = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}

_DIGIT = "[0-9０-９]"  # int() reads full-width digits too, common in Japanese text
_YEAR = f"(?P<y>{_DIGIT}{{4}})"
_MON = f"(?P<m>{_DIGIT}{{1,2}})"
_DAY = f"(?P<d>{_DIGIT}{{1,2}})"
_NAME = "(?P<name>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORDINAL = "(?:st|nd|rd|th)?"
_WORD_START = r"(?<!\w)"
_WORD_END = r"(?!\w)"
_NUM_START = f"(?<!{_DIGIT})"
_NUM_END = f"(?!{_DIGIT})"
_YEAR_END = f"(?!\\w|[-/]{_DIGIT})"  # a year, not the start of "2026-06"

_BUCKET = re.compile(r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2}))?)?", re.ASCII)

# Phrases a scan may take along with a cue: "in June 2026", "on 2026-06-07",
# "last week's".
_PREPOSITION_BEFORE = re.compile(r"(?<!\w)(?:in|on|during)\s+$", re.IGNORECASE)
_POSSESSIVE_AFTER = re.compile(r"['’]s(?!\w)", re.IGNORECASE)

_Resolver = Callable[[re.Match[str], date], tuple[str, ...]]


@dataclass(frozen=True)
class _Form:
    """One accepted phrase: its pattern, how it resolves, and where it may appear."""

    pattern: re.Pattern[str]
    resolve: _Resolver
    english: bool  # may take a preposition before it and "'s" after it in a scan
    in_text: bool  # recognised inside free text, not only as a whole cue


def _year_bucket(year: int) -> str:
    return f"{year:04d}"


def _month_bucket(year: int, month: int) -> str:
    return f"{year:04d}-{month:02d}"


def _day_buckets(first: date, count: int) -> tuple[str, ...]:
    return tuple((first + timedelta(days=i)).isoformat() for i in range(count))


def _checked_day(year: int, month: int, day: int, text: str) -> date:
    try:
        return date(year, month, day)
    except ValueError:
        raise TimeCueError(f"time cue {text!r} is not a valid date") from None


def _abs_year(m: re.Match[str], _today: date) -> tuple[str, ...]:
    year = int(m["y"])
    _checked_day(year, 1, 1, m[0])
    return (_year_bucket(year),)


def _abs_month(m: re.Match[str], _today: date) -> tuple[str, ...]:
    year, month = int(m["y"]), int(m["m"])
    _checked_day(year, month, 1, m[0])
    return (_month_bucket(year, month),)


def _abs_day(m: re.Match[str], _today: date) -> tuple[str, ...]:
    return (_checked_day(int(m["y"]), int(m["m"]), int(m["d"]), m[0]).isoformat(),)


def _named_month(m: re.Match[str], _today: date) -> tuple[str, ...]:
    year, month = int(m["y"]), _MONTHS[m["name"].lower()]
    _checked_day(year, month, 1, m[0])
    return (_month_bucket(year, month),)


def _named_day(m: re.Match[str], _today: date) -> tuple[str, ...]:
    return (_checked_day(int(m["y"]), _MONTHS[m["name"].lower()], int(m["d"]), m[0]).isoformat(),)


def _today(_m: re.Match[str], today: date) -> tuple[str, ...]:
    return (today.isoformat(),)


def _yesterday(_m: re.Match[str], today: date) -> tuple[str, ...]:
    return ((today - timedelta(days=1)).isoformat(),)


def _this_week(_m: re.Match[str], today: date) -> tuple[str, ...]:
    weekday = today.weekday()
    return _day_buckets(today - timedelta(days=weekday), weekday + 1)


def _last_week(_m: re.Match[str], today: date) -> tuple[str, ...]:
    return _day_buckets(today - timedelta(days=today.weekday() + 7), 7)


def _this_month(_m: re.Match[str], today: date) -> tuple[str, ...]:
    return (_month_bucket(today.year, today.month),)


def _last_month(m: re.Match[str], today: date) -> tuple[str, ...]:
    year, month = (today.year, today.month - 1) if today.month > 1 else (today.year - 1, 12)
    if year < 1:
        raise TimeCueError(f"time cue {m[0]!r} falls before year 1")
    return (_month_bucket(year, month),)


def _this_year(_m: re.Match[str], today: date) -> tuple[str, ...]:
    return (_year_bucket(today.year),)


def _last_year(m: re.Match[str], today: date) -> tuple[str, ...]:
    if today.year <= 1:
        raise TimeCueError(f"time cue {m[0]!r} falls before year 1")
    return (_year_bucket(today.year - 1),)


def _last_n_days(m: re.Match[str], today: date) -> tuple[str, ...]:
    n = int(m["n"])
    if not 1 <= n <= MAX_DAYS:
        raise TimeCueError(f"time cue {m[0]!r}: N must be between 1 and {MAX_DAYS}, got {n}")
    return _day_buckets(today - timedelta(days=n - 1), n)


def _form(pattern: str, resolve: _Resolver, *, english: bool, in_text: bool = True) -> _Form:
    return _Form(re.compile(pattern, re.IGNORECASE), resolve, english, in_text)


def _words(pattern: str) -> str:
    return _WORD_START + pattern + _WORD_END


def _number(pattern: str) -> str:
    return _NUM_START + pattern + _NUM_END


# Longer forms first: at one position a scan keeps the longest match, then the first form.
_FORMS: tuple[_Form, ...] = (
    _form(_number(f"{_YEAR}(?P<sep>[-/]){_MON}(?P=sep){_DAY}"), _abs_day, english=True),
    _form(_number(f"{_YEAR}(?P<sep>[-/]){_MON}"), _abs_month, english=True),
    _form(_WORD_START + f"{_NAME}\\s+{_DAY}{_ORDINAL}(?:,\\s*|\\s+){_YEAR}" + _WORD_END, _named_day, english=True),
    _form(_WORD_START + f"{_DAY}{_ORDINAL}\\s*{_NAME}(?:,\\s*|\\s+){_YEAR}" + _WORD_END, _named_day, english=True),
    _form(_WORD_START + f"{_NAME}(?:,\\s*|\\s+){_YEAR}" + _WORD_END, _named_month, english=True),
    _form(_NUM_START + f"{_YEAR}\\s*年\\s*{_MON}\\s*月\\s*{_DAY}\\s*日", _abs_day, english=False),
    _form(_NUM_START + f"{_YEAR}\\s*年\\s*{_MON}\\s*月", _abs_month, english=False),
    _form(_NUM_START + f"{_YEAR}\\s*年", _abs_year, english=False),
    _form(_WORD_START + f"(?:in|during)\\s+{_YEAR}" + _YEAR_END, _abs_year, english=False),
    _form(_NUM_START + _YEAR + _YEAR_END, _abs_year, english=True, in_text=False),
    _form(_words("today") + "|本日|今日", _today, english=True),
    _form(_words("yesterday") + "|(?<!一)昨日", _yesterday, english=True),
    _form(_words(r"this\s+week") + "|今週", _this_week, english=True),
    _form(_words(r"last\s+week") + "|先週", _last_week, english=True),
    _form(_words(r"this\s+month") + "|今月", _this_month, english=True),
    _form(_words(r"last\s+month") + "|先月", _last_month, english=True),
    _form(_words(r"this\s+year") + "|今年", _this_year, english=True),
    _form(_words(r"last\s+year") + "|去年|(?<!一)昨年", _last_year, english=True),
    _form(_words(f"(?:last|past)\\s+(?P<n>{_DIGIT}{{1,4}})\\s+days?"), _last_n_days, english=True),
    _form(f"過去\\s*(?P<n>{_DIGIT}{{1,4}})\\s*日間?", _last_n_days, english=False),
)


def _calendar_day(now: datetime | date) -> date:
    if isinstance(now, datetime):
        return now.date()
    if isinstance(now, date):
        return now
    raise CueTypeError(f"now must be a datetime or a date, got {type(now).__name__}")


def _resolve(form: _Form, match: re.Match[str], today: date) -> tuple[str, ...]:
    try:
        return form.resolve(match, today)
    except (OverflowError, ValueError) as exc:
        if isinstance(exc, TimeCueError):
            raise
        raise TimeCueError(f"time cue {match[0]!r} falls outside the calendar") from None


def resolve_time_cue(text: str, *, now: datetime | date) -> tuple[str, ...]:
    """The time buckets a time cue covers, oldest first.

    Matching ignores case and surrounding whitespace. Absolute cues resolve to one
    bucket of their own granularity; relative ones are read against ``now``'s day.

    Example:
        >>> from datetime import date
        >>> resolve_time_cue("June 2026", now=date(2026, 7, 1))
        ('2026-06',)
        >>> resolve_time_cue("last week", now=date(2026, 1, 3))[:2]
        ('2025-12-22', '2025-12-23')

    Args:
        text: the cue, one of :data:`ACCEPTED_FORMS`.
        now: the moment relative phrases are read against.

    Raises:
        CueTypeError: ``text`` is not a string or ``now`` is not a date or datetime.
        TimeCueError: ``text`` is none of the accepted forms (the message lists them),
            names a date that does not exist ("2026-02-30"), or reaches outside the
            calendar (years 1 to 9999).
    """
    if not isinstance(text, str):
        raise CueTypeError(f"a time cue must be a string, got {type(text).__name__}")
    today = _calendar_day(now)
    cue = text.strip()
    for form in _FORMS:
        match = form.pattern.fullmatch(cue)
        if match is not None:
            return _resolve(form, match, today)
    raise TimeCueError(f"not a time cue: {text!r}; accepted forms: {' | '.join(ACCEPTED_FORMS)}")


def is_bucket(value: str) -> bool:
    """Whether ``value`` already is a time bucket: ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``.

    Only the canonical forms count (ASCII digits, zero-padded, a real date from year 1).

    Args:
        value: the string to test.

    Raises:
        CueTypeError: ``value`` is not a string.
    """
    if type(value) is str:
        return _canonical_bucket(value)  # remembered: a recall's time cues are mostly a few buckets
    if not isinstance(value, str):
        raise CueTypeError(f"a time bucket must be a string, got {type(value).__name__}")
    return bool(_canonical_bucket.__wrapped__(value))  # a subclass of str: read, not kept


@functools.lru_cache(maxsize=4096)
def _canonical_bucket(value: str) -> bool:
    """:func:`is_bucket` of a plain string (a pure function of it, so its answers are kept)."""
    match = _BUCKET.fullmatch(value)
    if match is None:
        return False
    year, month, day = match.groups()
    try:
        date(int(year), int(month or 1), int(day or 1))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    buckets: tuple[str, ...]


def _hits(text: str, today: date) -> list[_Hit]:
    """Every resolvable cue in ``text``, widened to its preposition and possessive."""
    found: list[tuple[int, int, int, _Form, re.Match[str]]] = []
    for order, form in enumerate(_FORMS):
        if form.in_text:
            found.extend((m.start(), -m.end(), order, form, m) for m in form.pattern.finditer(text))
    found.sort(key=lambda f: f[:3])
    hits: list[_Hit] = []
    taken = 0
    for start, neg_end, _order, form, match in found:
        if start < taken:
            continue
        end = -neg_end
        try:
            buckets = _resolve(form, match, today)
        except TimeCueError:
            taken = end  # "2026-02-30" stays whole, not "2026-02" plus "-30"
            continue
        if form.english:
            before = _PREPOSITION_BEFORE.search(text, taken, start)
            if before is not None:
                start = before.start()
            after = _POSSESSIVE_AFTER.match(text, end)
            if after is not None:
                end = after.end()
        hits.append(_Hit(start, end, buckets))
        taken = end
    return hits


def find_time_cues(text: str, *, now: datetime | date) -> tuple[tuple[str, ...], str]:
    """Time cues inside free text, and the text without them.

    Scans ``text`` (a question, say) for the phrases :func:`resolve_time_cue` accepts
    and returns the union of their buckets (sorted, no repeats) with the text that
    remains once the phrases are cut out, for text recall. An English cue takes a
    preposition before it ("in", "on", "during") and a possessive after it ("'s")
    along. Where a cut leaves whitespace on either side, one space remains. Phrases
    that name no real date are left in the text and yield nothing.

    Example:
        >>> from datetime import date
        >>> find_time_cues("what did Caroline say last week about the adoption agency",
        ...                now=date(2026, 1, 3))[1]
        'what did Caroline say about the adoption agency'

    Args:
        text: free text.
        now: the moment relative phrases are read against.

    Raises:
        CueTypeError: ``text`` is not a string or ``now`` is not a date or datetime.
    """
    if not isinstance(text, str):
        raise CueTypeError(f"text must be a string, got {type(text).__name__}")
    today = _calendar_day(now)
    hits = _hits(text, today)
    if not hits:
        return (), text
    buckets: set[str] = set()
    pieces: list[str] = []
    cursor = 0
    for hit in hits:
        buckets.update(hit.buckets)
        pieces.append(text[cursor : hit.start])
        cursor = hit.end
    pieces.append(text[cursor:])
    rest = pieces[0]
    for piece in pieces[1:]:
        if rest[-1:].isspace() or piece[:1].isspace():
            left, right = rest.rstrip(), piece.lstrip()
            rest = left + " " + right if left and right else left + right
        else:
            rest += piece
    return tuple(sorted(buckets)), rest.strip()
