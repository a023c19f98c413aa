"""What the home's operations return (home/results.py): a page of hits built when read."""

from __future__ import annotations

import pytest

from cuemem.home.results import Hit, Hits
from cuemem.schema import Episode


def _never() -> Episode:
    raise AssertionError("a record was read")


def _page(n: int, made: list[int]) -> Hits[Hit]:
    def make(i: int) -> Hit:
        made.append(i)
        return Hit(f"id{i}", 1.0 - i / 10, [0.0] * 7, _never)

    return Hits(list(range(n)), [f"id{row}" for row in range(n)], make)


def test_hits_read_like_a_list_and_build_each_hit_once() -> None:
    """Length, indexes (negative too), slices, iteration and equality behave as a list's; each hit is built once."""
    made: list[int] = []
    hits = _page(4, made)
    assert len(hits) == 4 and made == []
    last = hits[-1]
    assert last.id == "id3" and made == [3] and hits[3] is last
    assert [h.id for h in hits[1:3]] == ["id1", "id2"]
    assert hits == list(hits) and hits == tuple(hits) and list(hits) == [hits[i] for i in range(4)]
    assert sorted(made) == [0, 1, 2, 3]
    assert hits != ["id0"] and _page(0, []) == []
    assert [h.id for h in hits + [last]] == ["id0", "id1", "id2", "id3", "id3"] and [last] + hits == [last, *hits]
    with pytest.raises(IndexError):
        hits[4]
    with pytest.raises(IndexError):
        hits[-5]
    with pytest.raises(TypeError):
        hash(hits)


def test_reading_a_hits_score_never_reads_its_record() -> None:
    """Ids, scores and breakdowns come from the recall's columns; the record stays unread."""
    hits = _page(2, [])
    assert hits.ids == ["id0", "id1"] and hits[1].score == pytest.approx(0.9) and sum(hits[0].breakdown.values()) == 0
    assert "Hit(id='id0'" in repr(hits)
