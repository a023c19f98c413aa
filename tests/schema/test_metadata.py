"""metadata (schema/metadata.py): a caller's JSON object, kept, returned, filterable by its scalar values."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import Memory, SchemaError
from cuemem.schema.metadata import MAX_BYTES, meta_cues, metadata

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("abc", min_size=1, max_size=3), inner, max_size=3),
    max_leaves=10,
)


@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=4), json_values, max_size=5))
def test_metadata_round_trips_through_json_whatever_the_key_order(value: dict[str, object]) -> None:
    """Equal objects are equal metadata (and hash alike), and to_json gives the object back."""
    made = metadata(value)
    assert made.to_json() == value and bool(made) == bool(value)
    again = metadata(dict(reversed(list(value.items()))))
    assert again == made and hash(again) == hash(made)


def test_bad_metadata_is_a_schema_error_naming_the_field() -> None:
    """Not an object, a bad key, a non-JSON value, too deep or too large: SchemaError on field metadata."""
    deep: dict[str, object] = {"a": 1}
    for _ in range(10):
        deep = {"a": deep}
    for bad in ([1], "x", {"": 1}, {"k=v": 1}, {"x": float("inf")}, {"x": 2**60}, {"x": {1, 2}}, deep, {"x": "y" * MAX_BYTES},
                {"x": Fraction(1, 3)}, {"x": Decimal("0.1")}):
        with pytest.raises(SchemaError) as info:
            metadata(bad)
        assert info.value.field == "metadata"


def test_scalar_values_are_meta_cues() -> None:
    """Each scalar top-level value is key=value (booleans lower-case); objects and lists are not cues."""
    assert meta_cues({"b": True, "a": 2, "c": "x", "d": [1], "e": {"f": 1}, "g": None, "h": 0.5}) == ["a=2", "b=true", "c=x", "h=0.5"]


def test_a_memory_keeps_its_metadata_and_is_found_by_it(tmp_path: Path) -> None:
    """remember(metadata=...) is returned on hits and after a reopen; recall by a meta cue, as a string or a mapping."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        a = mem.remember("Renewal call booked", metadata={"crm": "sf-1", "stage": 3, "extra": {"notes": ["x"]}}, now=date(2026, 1, 1))
        mem.remember("Other call booked", metadata={"crm": "sf-2"}, now=date(2026, 1, 1))
        mem.import_records([{"narrative": "Imported call", "metadata": {"crm": "sf-1"}}], now=date(2026, 1, 1))
        hits = mem.recall({"meta": "crm=sf-1"}, now=date(2026, 1, 2)).hits
        assert len(hits) == 2 and {h.record.metadata["crm"] for h in hits} == {"sf-1"}
        assert [h.id for h in mem.recall({"meta": {"stage": 3}}, now=date(2026, 1, 2)).hits] == [a]
        with pytest.raises(SchemaError):
            mem.remember("bad", metadata={"x": float("nan")}, now=date(2026, 1, 1))
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        assert mem.get(a).metadata == {"crm": "sf-1", "stage": 3, "extra": {"notes": ["x"]}}
        assert mem.open_report.index == "loaded"


class _Key(str):
    """A str subclass whose own ``__str__`` and ``__eq__`` lie: only its text counts."""

    def __str__(self) -> str:
        return "lie"

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = str.__hash__


def test_a_key_of_a_str_subclass_is_read_as_its_text(tmp_path: Path) -> None:
    """A metadata key that is a str subclass (a StrEnum member) is kept as its plain text on
    every path that takes metadata — remember, update, a meta cue — not a bare TypeError from
    the encoder; two keys of one text are a SchemaError."""
    import enum

    class Field(enum.StrEnum):
        PROJECT = "project"

    assert metadata({Field.PROJECT: "apollo", _Key("stage"): 3}).to_json() == {"project": "apollo", "stage": 3}
    assert [type(v) for v in metadata({"k": _Key("v"), "list": [_Key("w")]}).values()] == [str, tuple]
    assert meta_cues(metadata({"k": _Key("v")})) == ["k=v"]
    with pytest.raises(SchemaError, match="repeats the key 'a'"):
        metadata({"a": 1, _Key("a"): 2})
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        eid = mem.remember("Apollo kickoff", metadata={Field.PROJECT: "apollo"}, now=date(2026, 1, 1))
        assert [h.id for h in mem.recall({"meta": {Field.PROJECT: "apollo"}}, now=date(2026, 1, 2)).hits] == [eid]
        assert [type(k) for k in mem.get(eid).metadata] == [str]
        updated = mem.update(eid, metadata={"nested": {_Key("b"): 1}}, now=date(2026, 1, 2))
        assert mem.get(updated).metadata == {"nested": {"b": 1}}
