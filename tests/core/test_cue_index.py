"""Examples of the cue index: pruning, counting, postings, files and their damage."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from pyroaring import BitMap

import cuemem
from cuemem import CorruptIndexError, CueIndex, UnsupportedVersionError

#: Header layout of an index file: magic (8 bytes), version (u32), body length (u64).
VERSION_AT = slice(8, 12)


def u32(*rows: int) -> np.ndarray:
    """Rows as the uint32 array the index takes."""
    return np.array(rows, dtype=np.uint32)


@pytest.fixture
def index() -> CueIndex:
    """A small index: three dimensions, a handful of rows.

    actor:   acme {1, 2, 3, 4}   globex {5, 6}    initech {7}
    type:    deal {2, 3, 5, 8}   note {1, 4, 6, 7}
    outcome: neg {3, 6}          pos {2, 5}
    """
    idx = CueIndex(["actor", "type", "outcome"])
    idx.insert("actor", "acme", u32(1, 2, 3, 4))
    idx.insert("actor", "globex", u32(5, 6))
    idx.insert("actor", "initech", u32(7))
    idx.insert_column("type", ["deal", "note"], u32(0, 0, 0, 0, 1, 1, 1, 1), u32(2, 3, 5, 8, 1, 4, 6, 7))
    idx.insert("outcome", "neg", u32(3, 6))
    idx.insert("outcome", "pos", u32(2, 5))
    return idx


def test_prune_intersects_dimensions(index: CueIndex) -> None:
    """Rows must carry a cue of every named dimension."""
    res = index.prune({"actor": "acme", "type": "deal"})
    assert res.rows.tolist() == [2, 3]
    assert res.full_scan == 8
    assert res.examined == 4  # the smaller list (acme, 4 rows), probed once
    assert len(res) == 2


def test_prune_unions_values_within_a_dimension(index: CueIndex) -> None:
    """Several values of one dimension are alternatives; the union's lists are examined."""
    res = index.prune({"actor": ["acme", "globex"], "type": "deal"})
    assert res.rows.tolist() == [2, 3, 5]
    assert res.examined >= 4 + 2  # both lists merged by the union


def test_prune_excludes(index: CueIndex) -> None:
    """``exclude`` drops rows carrying any excluded value."""
    assert index.prune({"type": "deal"}, exclude={"outcome": ["neg", "pos"]}).rows.tolist() == [8]
    assert index.prune({"actor": "acme"}, exclude={"outcome": "neg"}).rows.tolist() == [1, 2, 4]


def test_empty_cues_start_from_every_live_row(index: CueIndex) -> None:
    """No include cue is a scan of the live rows; an exclusion still applies."""
    everything = index.prune({})
    assert everything.rows.tolist() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert everything.examined == everything.full_scan == 8
    assert index.prune({}, exclude={"type": "note"}).rows.tolist() == [2, 3, 5, 8]


def test_unknown_value_gives_empty(index: CueIndex) -> None:
    """A value never written has an empty posting list, so the query matches nothing."""
    res = index.prune({"actor": "umbrella", "type": "deal"})
    assert res.rows.tolist() == [] and res.rows.dtype == np.uint32
    assert index.count({"actor": "umbrella"}) == 0
    assert len(index.posting("actor", "umbrella")) == 0
    assert index.prune({"type": "deal"}, exclude={"actor": "umbrella"}).rows.tolist() == [2, 3, 5, 8]


def test_early_exit_on_empty_examines_little() -> None:
    """Once the running result is empty the plan stops: big lists are never walked."""
    idx = CueIndex(["actor", "type", "time"])
    idx.insert("type", "note", np.arange(0, 100_000, dtype=np.uint32))
    idx.insert("time", "2026-06", np.arange(50_000, 150_000, dtype=np.uint32))
    idx.insert("actor", "rare", u32(150_001, 150_002))
    res = idx.prune({"type": "note", "time": "2026-06", "actor": "rare"})
    assert len(res) == 0
    assert res.examined == 2
    assert res.full_scan == 150_002


def test_examined_counts_smallest_list_then_survivors() -> None:
    """Three lists: the smallest is streamed, then the survivors of the first probe are charged."""
    idx = CueIndex(["a", "b", "c"])
    idx.insert("a", "x", np.arange(0, 10, dtype=np.uint32))
    idx.insert("b", "y", np.arange(5, 25, dtype=np.uint32))
    idx.insert("c", "z", np.arange(8, 40, dtype=np.uint32))
    res = idx.prune({"c": "z", "b": "y", "a": "x"})
    assert res.rows.tolist() == [8, 9]
    assert res.examined == 10 + 5  # |a| + |a & b|


@pytest.mark.parametrize(
    ("cues", "exclude"),
    [
        ({"actor": "acme"}, None),
        ({"actor": ["acme", "globex"], "type": "note"}, None),
        ({"type": "deal", "outcome": "pos", "actor": "globex"}, None),
        ({"type": "deal"}, {"outcome": "neg"}),
        ({}, {"actor": "initech"}),
        ({}, None),
        ({"actor": "nobody"}, None),
    ],
)
def test_count_equals_len_of_prune(index: CueIndex, cues: dict[str, str | list[str]], exclude: dict[str, str] | None) -> None:
    """``count`` is the size of what ``prune`` returns."""
    assert index.count(cues, exclude) == len(index.prune(cues, exclude))


def test_postings_deserialize_to_the_model(index: CueIndex) -> None:
    """Posting lists come out as pyroaring bitmaps equal to the rows written."""
    expected = {
        ("actor", "acme"): {1, 2, 3, 4},
        ("actor", "globex"): {5, 6},
        ("actor", "initech"): {7},
        ("type", "deal"): {2, 3, 5, 8},
        ("type", "note"): {1, 4, 6, 7},
        ("outcome", "neg"): {3, 6},
        ("outcome", "pos"): {2, 5},
    }
    for (dim, value), rows in expected.items():
        posting = index.posting(dim, value)
        assert isinstance(posting, BitMap)
        assert posting == BitMap(rows)
    assert index.live() == BitMap(range(1, 9))
    assert index.values("actor") == ["acme", "globex", "initech"]


def test_remove_drops_rows_everywhere(index: CueIndex) -> None:
    """Removed rows leave every posting list and the live set; emptied values disappear."""
    index.remove(u32(7, 3))
    assert index.live() == BitMap({1, 2, 4, 5, 6, 8})
    assert index.posting("outcome", "neg") == BitMap({6})
    assert index.values("actor") == ["acme", "globex"]
    assert index.prune({"actor": "acme"}).rows.tolist() == [1, 2, 4]
    assert len(index) == 6


@pytest.mark.parametrize("start", ["", "a", "acme", "acmf", "globex", "h", "z", "\U0010ffff"])
def test_values_from_a_start_are_the_values_at_or_after_it(index: CueIndex, start: str) -> None:
    """``values(d, start)`` is the sorted tail of ``values(d)`` from ``start`` on; a value whose
    rows were all removed is in neither."""
    index.remove(u32(7))
    assert index.values("actor", start) == [v for v in index.values("actor") if v >= start]
    with pytest.raises(cuemem.CueTypeError):
        index.values("actor", 3)  # type: ignore[arg-type]


def test_insert_accepts_lists_and_duplicates() -> None:
    """Plain lists of ints are converted; repeated rows count once."""
    idx = CueIndex(["actor"])
    idx.insert("actor", "acme", [3, 1, 3, 2])
    assert idx.posting("actor", "acme") == BitMap({1, 2, 3})
    assert idx.stats().postings == 3


def test_save_and_load_a_real_file(index: CueIndex, tmp_path: Path) -> None:
    """An index saved to disk loads back with the same content and bytes."""
    path = tmp_path / "cues.idx"
    index.save(path)
    assert path.read_bytes() == index.to_bytes()
    loaded = CueIndex.load(path)
    assert loaded.to_bytes() == index.to_bytes()
    assert loaded.dimensions() == ["actor", "type", "outcome"]
    assert loaded.prune({"actor": "acme", "type": "deal"}).rows.tolist() == [2, 3]
    index.insert("actor", "acme", u32(99))
    index.save(str(path))  # overwrite, through a str path this time
    assert CueIndex.load(str(path)).posting("actor", "acme") == BitMap({1, 2, 3, 4, 99})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cues.idx"]  # no temporary left behind


def test_same_content_built_in_different_orders_gives_same_bytes() -> None:
    """The file image is canonical: the order of writes does not show."""
    a = CueIndex(["actor", "type"])
    a.insert("actor", "acme", u32(1, 2, 3))
    a.insert("actor", "globex", u32(4))
    a.insert("type", "deal", u32(1, 4))
    b = CueIndex(["actor", "type"])
    b.insert("type", "deal", u32(4))
    b.insert_column("actor", ["globex", "acme"], u32(0, 1, 1), u32(4, 3, 2))
    b.insert("type", "deal", u32(1))
    b.insert("actor", "acme", u32(1))
    b.insert("type", "gone", u32(9))
    b.remove(u32(9))  # a value that was interned and then emptied leaves no trace
    assert a.to_bytes() == b.to_bytes()


def test_round_trip_through_bytes(index: CueIndex) -> None:
    """``from_bytes(to_bytes())`` holds the same postings and gives the same bytes again."""
    data = index.to_bytes()
    back = CueIndex.from_bytes(data)
    assert back.to_bytes() == data
    assert back.stats() == index.stats()
    assert back.live() == index.live()


def test_every_truncation_is_corrupt(index: CueIndex) -> None:
    """Every proper prefix of a file is rejected as corrupt, also as a ValueError."""
    data = index.to_bytes()
    for cut in range(len(data)):
        with pytest.raises(CorruptIndexError):
            CueIndex.from_bytes(data[:cut])
    with pytest.raises(ValueError):
        CueIndex.from_bytes(data[: len(data) // 2])


def test_every_flipped_byte_is_corrupt() -> None:
    """Flipping any byte of a small file is detected (magic, header, body or checksum)."""
    idx = CueIndex(["actor"])
    idx.insert("actor", "acme", u32(1, 2))
    data = idx.to_bytes()
    for at in range(len(data)):
        damaged = bytearray(data)
        damaged[at] ^= 0x5A
        with pytest.raises(CorruptIndexError):
            CueIndex.from_bytes(bytes(damaged))


def test_padding_and_foreign_bytes_are_corrupt(index: CueIndex) -> None:
    """Trailing bytes and other files are not index files."""
    data = index.to_bytes()
    for bad in (data + b"\0", b"x" * len(data), cuemem.SalienceTable().to_bytes()):
        with pytest.raises(CorruptIndexError):
            CueIndex.from_bytes(bad)


def test_wrong_version_is_unsupported(index: CueIndex) -> None:
    """A file stamped with another format version raises UnsupportedVersionError."""
    data = bytearray(index.to_bytes())
    (version,) = struct.unpack("<I", data[VERSION_AT])
    data[VERSION_AT] = struct.pack("<I", version + 1)
    with pytest.raises(UnsupportedVersionError) as caught:
        CueIndex.from_bytes(bytes(data))
    assert isinstance(caught.value, CorruptIndexError)
    assert str(version + 1) in str(caught.value)


def test_stats_values(index: CueIndex) -> None:
    """Stats count live rows, dimensions, non-empty values and postings."""
    stats = index.stats()
    assert (stats.rows, stats.dimensions, stats.values, stats.postings) == (8, 3, 7, 4 + 2 + 1 + 8 + 4)
    assert stats.bytes > 0
    index.insert("actor", "hooli", np.arange(1_000, 2_000, dtype=np.uint32))
    bigger = index.stats()
    assert (bigger.rows, bigger.values, bigger.postings) == (1_008, 8, 1_019)
    assert bigger.bytes > stats.bytes
    assert CueIndex(["a"]).stats().rows == 0


def test_dimensions_and_repr() -> None:
    """Dimensions keep declaration order; the repr names them."""
    idx = CueIndex(["time", "actor"])
    assert idx.dimensions() == ["time", "actor"]
    assert "time" in repr(idx) and "actor" in repr(idx)
    assert len(idx) == 0
