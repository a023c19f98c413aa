"""Case-insensitive cues (home/cues.py): actor, subject and tag values match whatever their case and spacing."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from cuemem import CuememError, Memory
from cuemem.home.cues import DIMENSIONS, normalize


def test_actor_subject_and_tag_cues_match_without_regard_to_case(tmp_path: Path) -> None:
    """A value written "Acme  Corp" is found as "acme corp" and "ACME CORP"; the record keeps it as written."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        a = mem.remember("Renewal", actors=["Acme  Corp"], subject="Q3 Renewal", tags=["Pricing"], now=date(2026, 1, 1))
        b = mem.remember("Another", actors=["acme corp"], tags=["pricing"], now=date(2026, 1, 1))
        day = date(2026, 1, 2)
        for cues in ({"actor": "acme corp"}, {"actor": "ACME CORP"}, {"tag": "PRICING"}):
            assert {h.id for h in mem.recall(cues, now=day).hits} == {a, b}, cues
        assert [h.id for h in mem.recall({"subject": "q3 renewal"}, now=day).hits] == [a]
        assert mem.get(a).actors == ("Acme  Corp",) and [v for v, _ in mem.cue_values("actor")] == ["acme corp"]
        assert [h.id for h in mem.recall({"type": "note"}, now=day, k=5).hits] and mem.recall({"type": "NOTE"}, now=day).total == 0


@given(
    dimension=st.sampled_from([d for d in DIMENSIONS if d != "time"]),
    value=st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(["Acme  Corp", " x ", "\t", ""]),
)
def test_a_cue_of_one_string_normalizes_as_a_list_of_it_does(dimension: str, value: str) -> None:
    """A cue of one string means what a list of that one string means (the same values, or the same error)."""

    def outcome(cue: object) -> object:
        try:
            return normalize({dimension: cue}, now=date(2026, 1, 1))
        except CuememError as e:
            return type(e)

    assert outcome(value) == outcome([value])
