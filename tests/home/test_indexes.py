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

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6)


def _last_row(ids: list[str], id: str) -> int | None:
    """The row the id -> row map gives ``id`` (the last, for a repeated one), or None."""
    return max((row for row, held in enumerate(ids) if held == id), default=None)


@settings(max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(["a", "b", "ep-1", "ep-2"]) | texts, max_size=60), st.lists(texts, max_size=20), st.integers(0, 60))
def test_row_for_answers_as_the_map_does_for_held_absent_and_repeated_ids(held: list[str], asked: list[str], cut: int) -> None:
    """Rows taken in two steps (some before the first ask, the rest after), ids repeated
    among them (as a copied journal line would; their hash is shared, and the map answers):
    each answer is the map's at that moment, before and after the map is made."""
    indexes = Indexes(SalienceTable())
    queries = [*held, *asked, "a", "ep-1"]
    indexes.ids.extend(held[:cut])
    first = {i: indexes.row_for(i) for i in queries}
    indexes.ids.extend(held[cut:])
    later = {i: indexes.row_for(i) for i in queries}
    for i in queries:
        assert first[i] == _last_row(held[:cut], i), i
        assert later[i] == _last_row(held, i), i
        assert indexes.row_for(i) == indexes.row_of.get(i)


class _Colliding:
    """Rows by id hash as if every id's hash were row 0's, and ``b``'s shared by two rows:
    what a 64-bit collision would give, which no real test can draw."""

    def extend(self, ids: list[str], first: int) -> None:
        pass

    def find(self, id: str) -> int:
        return -2 if id == "b" else 0


def test_row_for_compares_the_row_s_id_and_asks_the_map_of_a_shared_hash() -> None:
    indexes = Indexes(SalienceTable())
    indexes.ids.extend(["a", "b", "c", "b"])
    assert indexes.row_for("a") == 0  # the rows by id hash made
    indexes._id_rows = _Colliding()  # type: ignore[assignment]
    assert [indexes.row_for(i) for i in ("a", "c", "zz")] == [0, None, None]  # row 0's id is no other's
    assert indexes._mapped == 0
    assert indexes.row_for("b") == 3  # the map's answer, made for it
    assert indexes._mapped == 4 and indexes._id_rows is None  # which answers from now on


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
