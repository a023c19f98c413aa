"""The indexes' rows by id (home/indexes.py): ``row_for`` answers as the id -> row map does,
without making that map for a write's fresh id or a read by id."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cuemem import Memory
from cuemem.home.indexes import Indexes
from cuemem.salience import SalienceTable

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)

ids = st.lists(st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6), unique=True, max_size=60)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(ids, ids, st.integers(0, 60))
def test_row_for_answers_as_the_map_does_for_held_and_absent_ids(held: list[str], asked: list[str], cut: int) -> None:
    """Rows taken in two steps (some before the first ask, the rest after), every id of
    them found at its row and every other one at none, before and after the map is made."""
    indexes = Indexes(SalienceTable())
    indexes.ids.extend(held[:cut])
    first = {i: indexes.row_for(i) for i in [*held, *asked]}
    indexes.ids.extend(held[cut:])
    later = {i: indexes.row_for(i) for i in [*held, *asked]}
    row_of = indexes.row_of  # the exact map, made now
    for i in [*held, *asked]:
        assert later[i] == row_of.get(i)
        assert first[i] == (row_of[i] if row_of.get(i, len(held)) < min(cut, len(held)) else None)
        assert indexes.row_for(i) == row_of.get(i)  # the map's answer, once it maps every row


def test_a_write_and_a_read_by_id_after_an_open_make_no_id_map(tmp_path: Path) -> None:
    """The first write into a reopened home proves its id fresh, and a read finds a record by
    its id, without the id -> row map every row would fill; what they answer is the same."""
    path = tmp_path / "home"
    with Memory.open(path, fsync="never") as mem:
        written = [mem.remember(f"memory {i}", actors=[f"a{i % 3}"], now=NOW) for i in range(40)]
        given = mem.remember("one with an id of its own", id="mine-1", now=NOW)
    with Memory.open(path, fsync="never") as mem:
        indexes = mem._home.indexes
        fresh = mem.remember("written after the open", now=NOW)
        assert mem.get(written[7]).narrative == "memory 7"
        assert given in mem and "nobody" not in mem
        assert indexes._mapped == 0, "the id map was made"
        assert fresh not in written and fresh != given
        assert len({*written, given, fresh}) == len(mem) == 42
        for i, eid in enumerate([*written, given, fresh]):
            assert indexes.row_for(eid) == indexes.row_of[eid] == i
