"""The schema: enums, shared field validators, and the episode's rules, cues and JSON form."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import pickle
from collections.abc import Callable
from datetime import date, datetime, timedelta, timezone, tzinfo
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import AXES
from cuemem.errors import InvalidIdError, SchemaError
from cuemem.schema import Band, Episode, Kind, Level, Origin, Outcome, Tier, band_of
from cuemem.schema import fields as f

UTC = timezone.utc
T = datetime(2026, 6, 7, 9, 30, tzinfo=UTC)
BAD_IDS = ["", "../x", "a/b", "a\\b", "a\x00b", ".hidden", ".", "..", " a", "a b", "a\nb", "é", "x" * 129, 5, None]


def make(**overrides: Any) -> Episode:
    """An episode with the required fields filled in."""
    kwargs: dict[str, Any] = {"narrative": "Met Kim about the renewal", "id": "ep-1", "recorded_at": T}
    kwargs.update(overrides)
    return Episode.create(**kwargs)


# --- enums -----------------------------------------------------------------------------


def test_enums_are_strings_looked_up_by_value() -> None:
    """A member is its value: lookup by value gives the member, json writes the value."""
    assert Outcome("positive") is Outcome.POSITIVE
    assert cast(str, Kind.POLICY) == "policy" and str(Level.PATTERN) == "pattern"
    assert json.dumps([Tier.SHORT, Origin.JOB, Band.MED]) == '["short", "job", "med"]'
    assert [m.value for m in Outcome] == ["positive", "negative", "pending", "none"]
    assert [m.value for m in Kind] == ["episodic", "semantic", "procedural", "preference", "policy"]
    assert [m.value for m in Level] == ["raw", "summary", "pattern", "principle", "policy"]
    assert [m.value for m in Tier] == ["working", "short", "long"]
    assert [m.value for m in Origin] == ["user", "agent", "external", "job"]


@pytest.mark.parametrize(
    ("importance", "band"),
    [(1.0, Band.HIGH), (0.7, Band.HIGH), (0.6999, Band.MED), (0.4, Band.MED), (0.3999, Band.LOW), (0.0, Band.LOW), (1, Band.HIGH)],
)
def test_band_thresholds(importance: float, band: Band) -> None:
    """High from 0.7, med from 0.4, low below."""
    assert band_of(importance) is band


@pytest.mark.parametrize("bad", [-0.1, 1.01, math.nan, True, "0.5"])
def test_band_of_refuses_what_is_not_an_importance(bad: Any) -> None:
    """A band exists only for an importance in [0, 1]."""
    with pytest.raises(SchemaError) as err:
        band_of(bad)
    assert err.value.field == "importance"


# --- field validators ----------------------------------------------------------------


@pytest.mark.parametrize("good", ["a", "ep-1", "2026-06-07:x", "A.b_c", "x" * 128, "a..b"])
def test_validate_id_accepts_safe_names(good: str) -> None:
    """Letters, digits and ``._:-`` up to 128 characters, not starting with a dot."""
    assert f.validate_id(good) == good


@pytest.mark.parametrize("bad", BAD_IDS)
def test_validate_id_refuses_anything_that_could_leave_a_directory(bad: Any) -> None:
    """Separators, dots first, whitespace, control and non-ASCII characters, length, non-strings."""
    with pytest.raises(InvalidIdError) as err:
        f.validate_id(bad, "sources")
    assert err.value.field == "sources"


@pytest.mark.parametrize("good", [0, 1, 0.5, 0.0, 1.0])
def test_unit_accepts_numbers_in_range(good: float) -> None:
    """Any real number in [0, 1] comes back as a float."""
    assert f.unit(good, "risk") == good and type(f.unit(good, "risk")) is float


@pytest.mark.parametrize("bad", [-1e-9, 1.0000001, math.nan, math.inf, -math.inf, True, False, "0.5", None, [0.5]])
def test_unit_refuses_the_rest(bad: Any) -> None:
    """Out of range, non-finite, bools and strings are errors naming the field."""
    with pytest.raises(SchemaError) as err:
        f.unit(bad, "confidence")
    assert err.value.field == "confidence"


def test_to_date_reads_dates_datetimes_and_iso_strings() -> None:
    """A date as is, a datetime's UTC date, a naive datetime as UTC, ``YYYY-MM-DD``."""
    late_in_new_york = datetime(2026, 6, 7, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
    assert f.to_date(date(2026, 6, 7), "d") == date(2026, 6, 7)
    assert f.to_date(late_in_new_york, "d") == date(2026, 6, 8)
    assert f.to_date(datetime(2026, 6, 7, 23, 59), "d") == date(2026, 6, 7)
    assert f.to_date("2026-06-07", "d") == date(2026, 6, 7)
    # Strings read as every time argument reads them (parse_instant): a date-time string is its UTC date, as
    # the datetime is; the slashed calendar date of time cues is the same day.
    assert f.to_date("2026-06-07T23:30-05:00", "d") == date(2026, 6, 8)
    assert f.to_date("2026/06/07", "d") == f.to_date("2026-06-07T00:00Z", "d") == date(2026, 6, 7)


@pytest.mark.parametrize("bad", ["2026-6-7", "2026-06-07T25:00", "20260607", "2026-02-30", "2026/02/30", "07/06/2026", "June", 20260607, None])
def test_to_date_refuses_other_forms(bad: Any) -> None:
    """Anything but a date, a datetime or a real date (or date-time) in the instant forms is an error naming the field."""
    with pytest.raises(SchemaError) as err:
        f.to_date(bad, "occurred_at")
    assert err.value.field == "occurred_at"


def test_to_datetime_gives_aware_utc() -> None:
    """Naive is UTC, offsets are converted, ``Z`` is UTC, a date is its midnight."""
    tokyo = timezone(timedelta(hours=9))
    assert f.to_datetime(datetime(2026, 6, 7, 9), "t") == datetime(2026, 6, 7, 9, tzinfo=UTC)
    converted = f.to_datetime(datetime(2026, 6, 7, 9, tzinfo=tokyo), "t")
    assert converted == datetime(2026, 6, 7, 0, tzinfo=UTC) and converted.tzinfo is UTC
    assert f.to_datetime("2026-06-07T09:00:00Z", "t") == datetime(2026, 6, 7, 9, tzinfo=UTC)
    assert f.to_datetime("2026-06-07T09:00:00+09:00", "t").hour == 0
    assert f.to_datetime(date(2026, 6, 7), "t") == datetime(2026, 6, 7, tzinfo=UTC)


@pytest.mark.parametrize("bad", ["yesterday", "2026-06-07T25:00", "", 1_750_000_000, None, datetime.min.replace(tzinfo=timezone(timedelta(hours=1)))])
def test_to_datetime_refuses_other_forms(bad: Any) -> None:
    """Non-ISO strings, numbers, None and times outside the UTC range name the field."""
    with pytest.raises(SchemaError) as err:
        f.to_datetime(bad, "recorded_at")
    assert err.value.field == "recorded_at"


def test_text_tuple_strips_dedupes_and_keeps_order() -> None:
    """Items are stripped; the first of each duplicate stays where it was."""
    assert f.text_tuple([" kim ", "acme", "kim", "アクメ"], "actors") == ("kim", "acme", "アクメ")
    assert f.text_tuple((), "actors") == ()


@pytest.mark.parametrize("bad", ["kim", ["kim", ""], ["  "], [1], {"kim"}, None, ["\ud800"]])
def test_text_tuple_refuses_strings_blanks_and_non_lists(bad: Any) -> None:
    """A bare string is an error, not a list of characters; so are blank or non-str items."""
    with pytest.raises(SchemaError) as err:
        f.text_tuple(bad, "tags")
    assert err.value.field == "tags"


# --- episode: examples -----------------------------------------------------------------


def test_create_fills_the_documented_defaults() -> None:
    """Defaults: user default, type note, dates from recorded_at, all axes present."""
    e = make()
    assert (e.user_id, e.type, e.outcome, e.actors, e.tags, e.sources) == ("default", "note", None, (), (), ())
    assert e.occurred_at == date(2026, 6, 7)
    assert e.valid_from == datetime(2026, 6, 7, tzinfo=UTC) and e.valid_to is None
    assert (e.origin, e.tier, e.kind, e.level) == (Origin.USER, Tier.LONG, Kind.EPISODIC, Level.RAW)
    assert (e.importance, e.risk, e.confidence, e.taint, e.reviewed) == (0.0, 0.0, 1.0, False, True)
    assert list(e.salience) == list(AXES) and set(e.salience.values()) == {0.0}


def test_occurred_at_defaults_to_the_utc_date_of_recorded_at() -> None:
    """Recorded late in the evening west of UTC: the next day in UTC."""
    e = make(recorded_at=datetime(2026, 6, 7, 22, tzinfo=timezone(timedelta(hours=-4))))
    assert e.recorded_at == datetime(2026, 6, 8, 2, tzinfo=UTC) and e.occurred_at == date(2026, 6, 8)


def test_derived_buckets_and_band() -> None:
    """Buckets are year, month, day of occurred_at; the band follows importance."""
    e = make(occurred_at="2025-01-31", importance=0.4)
    assert e.time_buckets == ("2025", "2025-01", "2025-01-31")
    assert e.importance_band is Band.MED


def test_salience_carries_importance_and_risk() -> None:
    """The importance and risk axes always equal the fields; other axes default to 0."""
    e = make(importance=0.8, risk=0.3, salience={"urgency": 0.5, "importance": 0.8})
    assert e.salience == {"importance": 0.8, "urgency": 0.5, "risk": 0.3, "novelty": 0.0, "affect": 0.0, "actionability": 0.0, "reinforcement": 0.0}


def test_salience_is_read_only_but_a_dict() -> None:
    """Mutation raises; pickling, copying, asdict and json still work."""
    e = make(importance=0.9, salience={"affect": 0.2})
    with pytest.raises(TypeError):
        e.salience["importance"] = 0.0
    with pytest.raises(TypeError):
        e.salience.update(risk=1.0)
    assert e.salience["importance"] == 0.9
    assert pickle.loads(pickle.dumps(e)) == e and copy.deepcopy(e) == e
    assert dataclasses.asdict(e)["salience"]["affect"] == 0.2
    assert json.loads(json.dumps(e.salience))["affect"] == 0.2
    assert hash(e) == hash(copy.deepcopy(e))


def test_enum_members_and_values_are_both_accepted() -> None:
    """``origin=Origin.AGENT`` and ``origin="agent"`` give the same episode."""
    assert make(origin=Origin.AGENT, tier="short", kind=Kind.PREFERENCE, level="summary", outcome=Outcome.NEGATIVE) == make(
        origin="agent", tier=Tier.SHORT, kind="preference", level=Level.SUMMARY, outcome="negative"
    )


def test_outcome_none_and_the_string_none_stay_distinct() -> None:
    """None means no outcome recorded; "none" is the recorded outcome none."""
    assert make(outcome=None).outcome is None
    assert make(outcome="none").outcome is Outcome.NONE


def test_text_fields_are_normalized_as_documented() -> None:
    """Subject, actors and tags are stripped; the narrative is kept exactly."""
    e = make(narrative="  keep me\n", subject="  renewal ", actors=["kim", " kim"], tags=["q3"])
    assert (e.narrative, e.subject, e.actors, e.tags) == ("  keep me\n", "renewal", ("kim",), ("q3",))


CASES: list[tuple[dict[str, Any], str]] = [
    ({"id": "../x"}, "id"),
    ({"user_id": "a/b"}, "user_id"),
    ({"type": "Meeting"}, "type"),
    ({"type": "x" * 65}, "type"),
    ({"narrative": "   "}, "narrative"),
    ({"narrative": None}, "narrative"),
    ({"outcome": "great"}, "outcome"),
    ({"actors": "kim"}, "actors"),
    ({"occurred_at": "07/06/2026"}, "occurred_at"),
    ({"importance": 1.5}, "importance"),
    ({"risk": -0.1}, "risk"),
    ({"salience": {"fun": 0.5}}, "salience"),
    ({"salience": {"urgency": 2.0}}, "salience"),
    ({"salience": {"importance": 0.5}}, "salience"),
    ({"salience": [("urgency", 0.5)]}, "salience"),
    ({"confidence": math.nan}, "confidence"),
    ({"subject": ""}, "subject"),
    ({"tags": [""]}, "tags"),
    ({"recorded_at": "now"}, "recorded_at"),
    ({"valid_from": "soon"}, "valid_from"),
    ({"valid_to": datetime(2026, 6, 7, tzinfo=UTC)}, "valid_to"),
    ({"valid_from": T, "valid_to": T - timedelta(seconds=1)}, "valid_to"),
    ({"origin": "robot"}, "origin"),
    ({"tier": "medium"}, "tier"),
    ({"kind": "fact"}, "kind"),
    ({"level": "top"}, "level"),
    ({"sources": ["ok", ".."]}, "sources"),
    ({"supersedes": "ep-1"}, "supersedes"),
    ({"supersedes": "a b"}, "supersedes"),
    ({"taint": 1}, "taint"),
    ({"reviewed": "yes"}, "reviewed"),
]


@pytest.mark.parametrize(("overrides", "field"), CASES)
def test_each_rule_names_its_field(overrides: dict[str, Any], field: str) -> None:
    """Every broken rule is a SchemaError whose ``field`` is the field that broke it."""
    with pytest.raises(SchemaError) as err:
        make(**overrides)
    assert err.value.field == field
    assert field in str(err.value)


def test_ids_raise_invalid_id_error() -> None:
    """Bad ids are the InvalidIdError subclass, which callers may catch alone."""
    for field in ("id", "user_id", "supersedes"):
        with pytest.raises(InvalidIdError):
            make(**{field: "a/b"})


# --- episode: JSON ---------------------------------------------------------------------


def test_json_form_is_plain_and_round_trips() -> None:
    """ISO dates, enum values, lists, derived keys; back to an equal episode."""
    e = make(outcome="positive", importance=0.75, actors=["kim"], valid_to="2027-01-01T00:00:00Z", sources=["j:1"])
    d = e.to_json()
    assert d["occurred_at"] == "2026-06-07" and d["recorded_at"] == "2026-06-07T09:30:00+00:00"
    assert d["valid_to"] == "2027-01-01T00:00:00+00:00" and d["outcome"] == "positive" and d["actors"] == ["kim"]
    assert d["time_buckets"] == ["2026", "2026-06", "2026-06-07"] and d["importance_band"] == "high"
    assert Episode.from_json(json.loads(json.dumps(d))) == e


def test_from_json_fills_defaults_for_missing_optional_keys() -> None:
    """Only id, narrative and recorded_at are required."""
    e = Episode.from_json({"id": "x", "narrative": "n", "recorded_at": "2026-06-07T00:00:00Z"})
    assert e == Episode.create("n", id="x", recorded_at=datetime(2026, 6, 7, tzinfo=UTC))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"time_buckets": ["2026", "2026-06", "2026-06-08"]}, "time_buckets"),
        ({"time_buckets": "2026"}, "time_buckets"),
        ({"importance_band": "low"}, "importance_band"),
        ({"colour": "red"}, "colour"),
        ({"importance": 0.1}, "salience"),
    ],
)
def test_from_json_refuses_inconsistent_or_unknown_keys(change: dict[str, Any], field: str) -> None:
    """Derived keys must agree, unknown keys are errors, axes must match the fields."""
    d = make(importance=0.75).to_json() | change
    with pytest.raises(SchemaError) as err:
        Episode.from_json(d)
    assert err.value.field == field


@pytest.mark.parametrize("missing", ["id", "narrative", "recorded_at"])
def test_from_json_requires_the_required_keys(missing: str) -> None:
    """A record without id, narrative or recorded_at names the missing key."""
    d = make().to_json()
    del d[missing]
    with pytest.raises(SchemaError) as err:
        Episode.from_json(d)
    assert err.value.field == missing


def test_from_json_refuses_a_non_mapping() -> None:
    """A list is not a record."""
    with pytest.raises(SchemaError):
        Episode.from_json(["id", "x"])  # type: ignore[arg-type]


# --- episode: the valid space, by property ---------------------------------------------

ids = st.from_regex(r"[A-Za-z0-9_:-][A-Za-z0-9._:-]{0,127}", fullmatch=True)
words = st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != "")
labels = st.text(st.characters(categories=["L", "N", "P", "Zs"]), min_size=1, max_size=30).filter(lambda s: s.strip() != "" and s.strip().isprintable())
units = st.floats(min_value=0.0, max_value=1.0)
offsets = st.timedeltas(min_value=timedelta(hours=-23), max_value=timedelta(hours=23)).map(timezone)
zones: st.SearchStrategy[tzinfo | None] = st.one_of(st.none(), st.just(UTC), offsets)
times = st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1), timezones=cast(Any, zones))  # hypothesis types this argument too narrowly


def enum_input(enum: Any) -> st.SearchStrategy[Any]:
    """A member of ``enum`` or its string value."""
    return st.sampled_from(list(enum)) | st.sampled_from([m.value for m in enum])


@st.composite
def valid_inputs(draw: st.DrawFn) -> dict[str, Any]:
    """Keyword arguments of ``Episode.create`` drawn from the whole valid space."""
    kw: dict[str, Any] = {"narrative": draw(words), "id": draw(ids)}
    recorded = draw(times)
    kw["recorded_at"] = draw(st.sampled_from([recorded, recorded.isoformat()]))
    optional: dict[str, st.SearchStrategy[Any]] = {
        "user_id": ids,
        "type": st.from_regex(r"[a-z0-9_-]{1,64}", fullmatch=True),
        "outcome": st.none() | enum_input(Outcome),
        "actors": st.lists(words, max_size=4),
        "occurred_at": st.dates(min_value=date(1900, 1, 2), max_value=date(2199, 12, 31)) | st.just("2026-02-28"),
        "importance": units,
        "risk": units,
        "confidence": units,
        "subject": st.none() | words,
        "tags": st.tuples(words, words),
        "origin": enum_input(Origin),
        "tier": enum_input(Tier),
        "kind": enum_input(Kind),
        "level": enum_input(Level),
        "sources": st.lists(ids, max_size=3),
        "taint": st.booleans(),
        "reviewed": st.booleans(),
        "thread": st.none() | labels,
        "session": st.none() | labels,
        "source": st.none() | labels,
    }
    for name in draw(st.sets(st.sampled_from(sorted(optional)))):
        kw[name] = draw(optional[name])
    others = [a for a in AXES if a not in ("importance", "risk")]
    salience: dict[str, float] = draw(st.dictionaries(st.sampled_from(others), units))
    if draw(st.booleans()):
        salience["importance"] = kw.get("importance", 0.0)
    kw["salience"] = draw(st.sampled_from([salience, None])) if not salience else salience
    if draw(st.booleans()):
        kw["valid_from"] = draw(times)
    if draw(st.booleans()):
        start = f.to_datetime(kw["valid_from"], "t") if "valid_from" in kw else Episode.create(**kw).valid_from
        kw["valid_to"] = start + draw(st.timedeltas(min_value=timedelta(microseconds=1), max_value=timedelta(days=3650)))
    supersedes = draw(st.none() | ids)
    if supersedes != kw["id"]:
        kw["supersedes"] = supersedes
    return kw


@given(valid_inputs())
def test_every_valid_input_is_accepted_and_round_trips(kw: dict[str, Any]) -> None:
    """Valid input always builds an episode that survives JSON unchanged."""
    e = Episode.create(**kw)
    assert Episode.from_json(json.loads(json.dumps(e.to_json()))) == e
    assert e.salience["importance"] == e.importance and e.salience["risk"] == e.risk
    assert e.recorded_at.tzinfo is UTC and e.valid_from.tzinfo is UTC
    assert e.time_buckets[2] == e.occurred_at.isoformat() and e.importance_band is band_of(e.importance)


Corrupt = Callable[[dict[str, Any]], Any]


def fixed(*values: Any) -> list[Corrupt]:
    """Corruptions that replace the field with a fixed bad value."""

    def const(value: Any) -> Corrupt:
        return lambda kw: value

    return [const(v) for v in values]


def _valid_from(kw: dict[str, Any]) -> datetime:
    """The valid_from ``kw`` resolves to, without any valid_to."""
    return Episode.create(**{k: v for k, v in kw.items() if k != "valid_to"}).valid_from


CORRUPTIONS: dict[str, list[Corrupt]] = {
    "id": fixed(*BAD_IDS),
    "user_id": fixed(*BAD_IDS),
    "type": fixed("", "Note", "a b", "x" * 65, "ノート", 3, None),
    "narrative": fixed("", " \n\t", None, 5, "\ud800"),
    "outcome": fixed("good", "POSITIVE", 1, Kind.POLICY),
    "actors": fixed("kim", ["kim", ""], [1], {"kim"}, None),
    "occurred_at": fixed("2026-13-01", "June", 20260607, "2026-06-07T24:30", "2026/13/01", 3.5),
    "importance": fixed(-0.1, 1.5, math.nan, math.inf, True, "0.5", None),
    "risk": fixed(-0.1, 1.5, math.nan, False, "1"),
    "salience": [
        *fixed({"fun": 0.1}, {"urgency": 2.0}, {"urgency": "x"}, {"novelty": math.nan}, [("urgency", 0.1)], "urgency"),
        lambda kw: {"importance": 0.25 if kw.get("importance", 0.0) > 0.5 else 0.75},
        lambda kw: {"risk": 0.25 if kw.get("risk", 0.0) > 0.5 else 0.75},
    ],
    "confidence": fixed(-0.5, 2, math.nan, True, "high"),
    "subject": fixed("", "   ", 5, ["a"]),
    "thread": fixed("", "   ", 5, ["a"], "x" * 101, "a\x00b"),
    "session": fixed("", "   ", 5, ["a"], "x" * 101, "a\x00b"),
    "source": fixed("", "   ", 5, ["a"], "x" * 2001, "a\nb"),
    "metadata": fixed([1], "x", {"": 1}, {"a=b": 1}, {"x": float("nan")}, {"x": 2**60}, {"x": object()}, {"x": "y" * 20_000}, {1: 2}),
    "tags": fixed("q3", [""], [None], ("ok", 5)),
    "recorded_at": fixed("now", 5, None, "2026-02-30T00:00:00"),
    "valid_from": fixed("soon", 5.0, "2026-02-30"),
    "valid_to": [*fixed("never", 7), _valid_from, lambda kw: _valid_from(kw) - timedelta(days=1)],
    "origin": fixed("robot", 1, None),
    "tier": fixed("medium", "LONG"),
    "kind": fixed("fact", None),
    "level": fixed("top", 0),
    "sources": [*fixed("j1", ["../x"], [""], [5], None), lambda kw: ["ok", "a/b"]],
    "supersedes": [*fixed("../x", "", 5), lambda kw: kw["id"]],
    "taint": fixed(1, 0, "false", None),
    "reviewed": fixed(1, "true", None),
}


@given(valid_inputs(), st.data())
def test_every_single_field_corruption_is_refused_and_named(kw: dict[str, Any], data: st.DataObject) -> None:
    """Corrupting one field of valid input raises a SchemaError naming exactly that field."""
    field = data.draw(st.sampled_from(sorted(CORRUPTIONS)), label="field")
    corrupt = data.draw(st.sampled_from(CORRUPTIONS[field]), label="corruption")
    bad = dict(kw)
    bad[field] = corrupt(kw)
    with pytest.raises(SchemaError) as err:
        Episode.create(**bad)
    assert err.value.field == field, str(err.value)


def test_the_corruptions_cover_every_field() -> None:
    """Each field of Episode has at least one corruption in the property test."""
    assert set(CORRUPTIONS) == {fl.name for fl in dataclasses.fields(Episode)}
