"""Time cues in words (SPEC C7): resolution to buckets, bucket recognition, free-text scan."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cuemem.errors import CueTypeError, TimeCueError
from cuemem.timecues import ACCEPTED_FORMS, MAX_DAYS, find_time_cues, is_bucket, resolve_time_cue

SAT = date(2026, 1, 3)  # a Saturday in the first ISO week of 2026 (Monday 2025-12-29)
MID = date(2026, 6, 17)  # a Wednesday


def days(first: str, count: int) -> tuple[str, ...]:
    """Consecutive day buckets starting at ``first``."""
    start = date.fromisoformat(first)
    return tuple((start + timedelta(days=i)).isoformat() for i in range(count))


CASES: list[tuple[str, date, tuple[str, ...]]] = [
    # absolute, each granularity
    ("2026", MID, ("2026",)),
    ("2026-06", MID, ("2026-06",)),
    ("2026-06-07", MID, ("2026-06-07",)),
    ("2026-6-7", MID, ("2026-06-07",)),
    ("2026/06/07", MID, ("2026-06-07",)),
    ("2026/06", MID, ("2026-06",)),
    ("June 2026", MID, ("2026-06",)),
    ("jun 2026", MID, ("2026-06",)),
    ("Sept 2025", MID, ("2025-09",)),
    ("June 7, 2026", MID, ("2026-06-07",)),
    ("Jun. 7th, 2026", MID, ("2026-06-07",)),
    ("7 June 2026", MID, ("2026-06-07",)),
    ("2026年", MID, ("2026",)),
    ("2026年6月", MID, ("2026-06",)),
    ("2026年6月7日", MID, ("2026-06-07",)),
    ("２０２６年６月７日", MID, ("2026-06-07",)),
    ("2024-02-29", MID, ("2024-02-29",)),
    ("Feb 29, 2028", MID, ("2028-02-29",)),
    # case and whitespace
    ("  JUNE 2026\n", MID, ("2026-06",)),
    ("Last   Week", MID, days("2026-06-08", 7)),
    # relative, mid-year
    ("today", MID, ("2026-06-17",)),
    ("yesterday", MID, ("2026-06-16",)),
    ("this week", MID, days("2026-06-15", 3)),
    ("last week", MID, days("2026-06-08", 7)),
    ("this month", MID, ("2026-06",)),
    ("last month", MID, ("2026-05",)),
    ("this year", MID, ("2026",)),
    ("last year", MID, ("2025",)),
    ("last 3 days", MID, days("2026-06-15", 3)),
    ("past 1 day", MID, ("2026-06-17",)),
    # relative, across month and year boundaries
    ("last month", SAT, ("2025-12",)),
    ("last week", SAT, days("2025-12-22", 7)),
    ("this week", SAT, days("2025-12-29", 6)),
    ("yesterday", date(2026, 1, 1), ("2025-12-31",)),
    ("yesterday", date(2024, 3, 1), ("2024-02-29",)),
    ("yesterday", date(2025, 3, 1), ("2025-02-28",)),
    ("this week", date(2026, 6, 15), ("2026-06-15",)),
    ("last 3 days", date(2024, 3, 1), ("2024-02-28", "2024-02-29", "2024-03-01")),
    ("last year", SAT, ("2025",)),
    # Japanese
    ("今日", MID, ("2026-06-17",)),
    ("本日", MID, ("2026-06-17",)),
    ("昨日", SAT, ("2026-01-02",)),
    ("今週", SAT, days("2025-12-29", 6)),
    ("先週", SAT, days("2025-12-22", 7)),
    ("今月", SAT, ("2026-01",)),
    ("先月", SAT, ("2025-12",)),
    ("今年", SAT, ("2026",)),
    ("去年", SAT, ("2025",)),
    ("昨年", SAT, ("2025",)),
    ("過去3日間", MID, days("2026-06-15", 3)),
]


@pytest.mark.parametrize(("text", "now", "expected"), CASES)
def test_resolve_table(text: str, now: date, expected: tuple[str, ...]) -> None:
    """Each accepted form resolves to the documented buckets."""
    assert resolve_time_cue(text, now=now) == expected


def test_now_as_datetime_uses_its_calendar_day() -> None:
    """A datetime ``now`` counts by its own calendar day, whatever its time zone."""
    late = datetime(2026, 6, 17, 23, 59, tzinfo=timezone.utc)
    tokyo = datetime(2026, 6, 18, 8, 0, tzinfo=timezone(timedelta(hours=9)))
    assert resolve_time_cue("today", now=late) == ("2026-06-17",)
    assert resolve_time_cue("today", now=tokyo) == ("2026-06-18",)
    assert resolve_time_cue("today", now=datetime(2026, 6, 17, 12)) == ("2026-06-17",)


@pytest.mark.parametrize(
    "text",
    [
        "2026-02-30",
        "2025-02-29",
        "2026-13",
        "2026-00-10",
        "0000",
        "June 31, 2026",
        "31 Apr 2026",
        "2026年2月30日",
        "last 0 days",
        f"last {MAX_DAYS + 1} days",
    ],
)
def test_impossible_dates_raise(text: str) -> None:
    """A cue of an accepted shape that names no real date or span raises TimeCueError."""
    with pytest.raises(TimeCueError):
        resolve_time_cue(text, now=MID)


@pytest.mark.parametrize(
    "text", ["", "   ", "next week", "tomorrow", "2026-06-07T10:00", "June", "Junes 2026", "一昨日", "26-06", "20260"]
)
def test_unknown_phrases_raise_listing_the_forms(text: str) -> None:
    """Anything else raises TimeCueError whose message lists every accepted form."""
    with pytest.raises(TimeCueError) as info:
        resolve_time_cue(text, now=MID)
    message = str(info.value)
    assert all(form in message for form in ACCEPTED_FORMS)


@pytest.mark.parametrize("text", ["yesterday", "last week", "last 2 days", "last month", "last year"])
def test_relative_cues_before_year_one_raise(text: str) -> None:
    """A relative cue that reaches before 0001-01-01 raises TimeCueError, not OverflowError."""
    with pytest.raises(TimeCueError):
        resolve_time_cue(text, now=date.min)


def test_wrong_argument_types_raise_cue_type_error() -> None:
    """Non-string cues and non-date ``now`` raise CueTypeError."""
    with pytest.raises(CueTypeError):
        resolve_time_cue(2026, now=MID)  # type: ignore[arg-type]
    with pytest.raises(CueTypeError):
        resolve_time_cue("today", now="2026-06-17")  # type: ignore[arg-type]
    with pytest.raises(CueTypeError):
        find_time_cues(b"today", now=MID)  # type: ignore[arg-type]
    with pytest.raises(CueTypeError):
        is_bucket(2026)  # type: ignore[arg-type]


@given(now=st.dates(min_value=date(2, 1, 1)), n=st.integers(min_value=1, max_value=MAX_DAYS))
@example(now=date(2024, 3, 1), n=366)
def test_last_n_days_ends_today(now: date, n: int) -> None:
    """"last N days" is N distinct consecutive day buckets, the last one ``now``'s day."""
    buckets = resolve_time_cue(f"last {n} days", now=now)
    parsed = [date.fromisoformat(b) for b in buckets]
    assert len(set(buckets)) == n == len(buckets)
    assert parsed[-1] == now
    assert all(b - a == timedelta(days=1) for a, b in zip(parsed, parsed[1:]))
    assert all(is_bucket(b) for b in buckets)


@given(now=st.dates(min_value=date(2, 1, 1)))
def test_weeks_are_iso_weeks(now: date) -> None:
    """"last week" is Monday..Sunday before this week; "this week" runs Monday..today."""
    last = [date.fromisoformat(b) for b in resolve_time_cue("last week", now=now)]
    this = [date.fromisoformat(b) for b in resolve_time_cue("this week", now=now)]
    assert [d.weekday() for d in last] == list(range(7))
    assert [d.weekday() for d in this] == list(range(now.weekday() + 1))
    assert this[-1] == now and last[-1] + timedelta(days=1) == this[0]


@given(now=st.dates(min_value=date(2, 1, 1)))
def test_months_and_years_step_back_one(now: date) -> None:
    """"last month" and "last year" are the buckets just before ``now``'s month and year."""
    (last_month,) = resolve_time_cue("last month", now=now)
    first_of_month = now.replace(day=1)
    assert last_month == (first_of_month - timedelta(days=1)).isoformat()[:7]
    assert resolve_time_cue("last year", now=now) == (f"{now.year - 1:04d}",)
    assert resolve_time_cue("this month", now=now) == (now.isoformat()[:7],)


def _oracle_is_bucket(value: str) -> bool:
    """Whether datetime parsing accepts ``value`` as a canonical year, month or day."""
    for fmt, width in (("%Y", 4), ("%Y-%m", 7), ("%Y-%m-%d", 10)):
        try:
            parsed = datetime.strptime(value, fmt)
        except ValueError:
            continue
        if parsed.date().isoformat()[:width] == value:
            return True
    return False


bucketish = st.one_of(
    st.dates().map(lambda d: d.isoformat()),
    st.dates().map(lambda d: d.isoformat()[:7]),
    st.dates().map(lambda d: d.isoformat()[:4]),
    st.from_regex(r"\A[0-9]{4}(-[0-9]{1,3}(-[0-9]{1,3})?)?\Z"),
    st.text(alphabet="0123456789-/ ０１２", max_size=12),
    st.text(max_size=12),
)


@given(value=bucketish)
@example(value="2024-02-29")
@example(value="2025-02-29")
@example(value="0000")
@example(value="2026-06\n")
@example(value="２０２６")
def test_is_bucket_agrees_with_datetime_parsing(value: str) -> None:
    """is_bucket accepts exactly the canonical strings datetime parsing reads back unchanged."""
    assert is_bucket(value) == _oracle_is_bucket(value)


@given(value=bucketish)
def test_buckets_resolve_to_themselves(value: str) -> None:
    """A string that is already a bucket resolves to exactly itself."""
    if is_bucket(value):
        assert resolve_time_cue(value, now=MID) == (value,)


@given(text=st.text(max_size=40), now=st.dates())
@example(text="last 99999 days", now=date.min)
@example(text="2026-02-30", now=MID)
@example(text="yesterday", now=date.min)
@example(text="last week", now=date(1, 1, 3))
def test_arbitrary_text_raises_only_time_cue_error(text: str, now: date) -> None:
    """On any text, resolve returns buckets or raises TimeCueError, and find never raises."""
    try:
        buckets = resolve_time_cue(text, now=now)
    except TimeCueError:
        pass
    else:
        assert buckets and all(is_bucket(b) for b in buckets)
    found, rest = find_time_cues(text, now=now)
    assert all(is_bucket(b) for b in found)
    assert len(rest) <= len(text)


@given(
    phrase=st.sampled_from(["last week", "yesterday", "June 2026", "2026-06-07", "this month", "past 5 days"]),
    before=st.sampled_from(["what did Caroline say", "notes", "Acme deal"]),
    after=st.sampled_from(["about the adoption agency", "?", ""]),
)
def test_find_agrees_with_resolve(phrase: str, before: str, after: str) -> None:
    """A cue inside a sentence yields the buckets it resolves to alone and leaves the rest."""
    text = " ".join(p for p in (before, phrase, after) if p)
    buckets, rest = find_time_cues(text, now=MID)
    assert buckets == tuple(sorted(resolve_time_cue(phrase, now=MID)))
    assert rest == " ".join(p for p in (before, after) if p)


@pytest.mark.parametrize(
    ("text", "buckets", "rest"),
    [
        (
            "what did Caroline say last week about the adoption agency",
            days("2025-12-22", 7),
            "what did Caroline say about the adoption agency",
        ),
        ("what happened in June 2026 with Acme?", ("2026-06",), "what happened with Acme?"),
        ("last week's incidents", days("2025-12-22", 7), "incidents"),
        ("calls on 2025-12-30 and yesterday", ("2025-12-30", "2026-01-02"), "calls and"),
        ("田中さんと先週話した件", days("2025-12-22", 7), "田中さんと話した件"),
        ("去年の予算", ("2025",), "の予算"),
        ("the 2026 budget", (), "the 2026 budget"),
        ("we closed 2000 seats in 2025", ("2025",), "we closed 2000 seats"),
        ("plans for 2026年6月", ("2026-06",), "plans for"),
        ("moved on 2026-02-30, oddly", (), "moved on 2026-02-30, oddly"),
        ("login 2026-06", ("2026-06",), "login"),
        ("one sentence with no cue", (), "one sentence with no cue"),
        ("todays yesterdays", (), "todays yesterdays"),
        ("一昨日の会議", (), "一昨日の会議"),
    ],
)
def test_find_time_cues_examples(text: str, buckets: tuple[str, ...], rest: str) -> None:
    """Free-text scanning finds the documented cues and cuts them, with their preposition, out."""
    assert find_time_cues(text, now=SAT) == (buckets, rest)
