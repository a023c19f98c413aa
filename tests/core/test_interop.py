"""Interoperation with pyroaring and numpy: bitmaps in and out, documented dtypes and shapes."""

from __future__ import annotations

import struct
from datetime import date, datetime, timedelta, timezone

import numpy as np
import pytest
from pyroaring import BitMap, FrozenBitMap

import cuemem
from cuemem import AXES, CueIndex, CueTypeError, SalienceTable

T0 = 1.75e9
DAY = 86_400.0
N = 300


@pytest.fixture(scope="module")
def index() -> CueIndex:
    """Rows 0..N-1: actor by row % 3, type by row % 2."""
    idx = CueIndex(["actor", "type"])
    rows = np.arange(N, dtype=np.uint32)
    idx.insert_column("actor", ["acme", "globex", "initech"], rows % 3, rows)
    idx.insert_column("type", ["deal", "note"], rows % 2, rows)
    return idx


@pytest.fixture(scope="module")
def table() -> SalienceTable:
    """Rows 0..N-1 with varied axes, confidences and times."""
    rng = np.random.default_rng(7)
    tab = SalienceTable()
    axes = rng.uniform(0, 0.69, size=(N, len(AXES))).astype(np.float32)
    axes[::10, 2] = 0.8  # some protected rows
    tab.put(np.arange(N, dtype=np.uint32), axes, rng.uniform(0, 1, N).astype(np.float32), T0 + rng.uniform(-30, 0, N) * DAY)
    return tab


def test_bitmap_candidates_rank_like_arrays(index: CueIndex, table: SalienceTable) -> None:
    """top_k takes a BitMap, a FrozenBitMap, a Pruned, an array or a list and ranks them alike."""
    pruned = index.prune({"actor": "acme"})
    rows = pruned.rows
    expected = table.top_k(rows, T0, 10)
    for candidates in (BitMap(rows.tolist()), FrozenBitMap(rows.tolist()), pruned, rows.tolist(), rows[::-1].copy()):
        got = table.top_k(candidates, T0, 10)
        np.testing.assert_array_equal(got.rows, expected.rows)
        np.testing.assert_array_equal(got.scores, expected.scores)


def test_run_optimized_bitmaps_are_read(table: SalienceTable) -> None:
    """A pyroaring bitmap with run containers (portable format) is read correctly."""
    runs = BitMap(range(0, 200))
    runs.run_optimize()
    got = table.top_k(runs, T0, 5)
    np.testing.assert_array_equal(got.rows, table.top_k(np.arange(200, dtype=np.uint32), T0, 5).rows)


def test_bitmaps_out(index: CueIndex) -> None:
    """Pruned.bitmap(), posting() and live() are pyroaring BitMaps equal to the rows."""
    pruned = index.prune({"actor": "acme", "type": "deal"})
    bitmap = pruned.bitmap()
    assert isinstance(bitmap, BitMap)
    assert bitmap == BitMap(range(0, N, 6))
    assert list(bitmap) == pruned.rows.tolist()
    posting = index.posting("actor", "globex")
    assert isinstance(posting, BitMap) and posting == BitMap(range(1, N, 3))
    assert BitMap.deserialize(posting.serialize()) == posting
    assert index.live() == BitMap(range(N))
    # the outputs are independent copies: changing them changes nothing in the index
    posting.add(10_000)
    assert 10_000 not in index.posting("actor", "globex")


def test_file_postings_are_portable_roaring(index: CueIndex) -> None:
    """Posting lists inside the index file are in the portable format pyroaring reads."""
    data = index.to_bytes()
    body = data[20:-4]  # magic, version, length ... crc32
    at = 0

    def take(n: int) -> bytes:
        nonlocal at
        at += n
        return body[at - n : at]

    def u32() -> int:
        return int(struct.unpack("<I", take(4))[0])

    found: dict[tuple[str, str], BitMap] = {}
    for _ in range(u32()):
        dimension = take(u32()).decode()
        for _ in range(u32()):
            value = take(u32()).decode()
            (length,) = struct.unpack("<Q", take(8))
            found[(dimension, value)] = BitMap.deserialize(take(length))
    (length,) = struct.unpack("<Q", take(8))
    assert BitMap.deserialize(take(length)) == index.live()
    assert at == len(body)
    assert found == {(d, v): index.posting(d, v) for d in index.dimensions() for v in index.values(d)}


def test_numpy_outputs_have_documented_dtypes_and_shapes(index: CueIndex, table: SalienceTable) -> None:
    """Rows are uint32, scores and axes float32, breakdowns len x 7, all C-contiguous."""
    pruned = index.prune({"type": "note"})
    assert pruned.rows.dtype == np.uint32 and pruned.rows.shape == (N // 2,)
    composite = table.composite(pruned.rows, T0)
    assert composite.dtype == np.float32 and composite.shape == (N // 2,)
    top = table.top_k(pruned, T0, 7)
    assert top.rows.dtype == np.uint32 and top.rows.shape == (7,)
    assert top.scores.dtype == np.float32 and top.scores.shape == (7,)
    assert top.breakdown.dtype == np.float32 and top.breakdown.shape == (7, len(AXES))
    assert top.breakdown.flags.c_contiguous
    res = cuemem.recall(index, table, {"type": "note"}, now=T0, k=7)
    assert res.rows.dtype == np.uint32 and res.scores.dtype == np.float32 and res.breakdown.dtype == np.float32
    assert res.breakdown.shape == (7, len(AXES))
    passed = table.decay_pass(T0)
    assert passed.axes.dtype == np.float32 and passed.axes.shape == (N, len(AXES))
    assert passed.axes.flags.c_contiguous
    assert passed.below.dtype == np.uint32 and passed.below.ndim == 1


def test_empty_results_keep_their_shapes(index: CueIndex, table: SalienceTable) -> None:
    """Nothing found is still a 1-D uint32 array and a 0 x 7 breakdown."""
    pruned = index.prune({"actor": "nobody"})
    assert pruned.rows.shape == (0,) and pruned.rows.dtype == np.uint32
    top = table.top_k(pruned, T0, 3)
    assert top.rows.shape == (0,) and top.scores.shape == (0,) and top.breakdown.shape == (0, len(AXES))
    assert len(top) == 0
    res = cuemem.recall(index, table, {"actor": "nobody"}, now=T0, k=3)
    assert res.rows.shape == (0,) and res.breakdown.shape == (0, len(AXES)) and res.total == 0
    empty = SalienceTable().decay_pass(T0)
    assert empty.axes.shape == (0, len(AXES)) and empty.below.shape == (0,)


def test_decay_pass_writes_out_in_place(table: SalienceTable) -> None:
    """``out=`` is overwritten with the decayed axes and returned as ``.axes``."""
    now = T0 + 40 * DAY
    out = np.full((len(table), len(AXES)), -1.0, dtype=np.float32)
    res = table.decay_pass(now, 0.3, out=out)
    assert res.axes is out
    fresh = table.decay_pass(now, 0.3)
    np.testing.assert_array_equal(out, fresh.axes)
    np.testing.assert_array_equal(res.below, fresh.below)
    again = table.decay_pass(now + 100 * DAY, 0.3, out=out)  # reuse the buffer
    assert again.axes is out
    np.testing.assert_array_equal(out, table.decay_pass(now + 100 * DAY, 0.3).axes)


def test_decay_pass_refuses_a_strided_out(table: SalienceTable) -> None:
    """A view that is not C-contiguous cannot be written in place."""
    wide = np.zeros((len(table), len(AXES) + 1), dtype=np.float32)
    with pytest.raises(CueTypeError):
        table.decay_pass(T0, 0.3, out=wide[:, : len(AXES)])


def test_decay_pass_refuses_a_fortran_ordered_out(table: SalienceTable) -> None:
    """An ``out`` of the right shape in Fortran order is refused, never filled in the wrong memory order."""
    now = T0 + 40 * DAY
    out = np.zeros((len(AXES), len(table)), dtype=np.float32).T
    try:
        res = table.decay_pass(now, 0.3, out=out)
    except CueTypeError:
        return
    np.testing.assert_array_equal(res.axes, table.decay_pass(now, 0.3).axes)


def test_strided_inputs_are_read_in_logical_order() -> None:
    """Non-contiguous numpy views are accepted and read as their logical elements."""
    dense, strided = SalienceTable(), SalienceTable()
    rng = np.random.default_rng(3)
    axes = rng.uniform(0, 0.6, size=(10, len(AXES))).astype(np.float32)
    rows = np.arange(10, dtype=np.uint32)
    conf = np.linspace(0, 1, 10).astype(np.float32)
    t = T0 - np.arange(10) * DAY
    dense.put(rows, axes, conf, t)
    wide = np.zeros((10, 2 * len(AXES)), dtype=np.float32)
    wide[:, ::2] = axes
    strided.put(rows.repeat(2)[::2], wide[:, ::2], np.repeat(conf, 2)[::2], np.repeat(t, 2)[::2])
    assert dense.to_bytes() == strided.to_bytes()
    np.testing.assert_array_equal(dense.composite(rows[::-2], T0), dense.composite(rows[::-2].copy(), T0))
    idx = CueIndex(["actor"])
    idx.insert("actor", "acme", np.arange(20, dtype=np.uint32)[::4])
    assert idx.posting("actor", "acme") == BitMap(range(0, 20, 4))


def test_times_may_be_datetimes_or_dates(table: SalienceTable) -> None:
    """``now`` as an aware or naive (UTC) datetime or a date equals the epoch seconds."""
    rows = np.arange(20, dtype=np.uint32)
    at = datetime.fromtimestamp(T0, tz=timezone.utc)
    seconds = table.composite(rows, T0)
    np.testing.assert_array_equal(table.composite(rows, at), seconds)
    np.testing.assert_array_equal(table.composite(rows, at.replace(tzinfo=None)), seconds)
    np.testing.assert_array_equal(table.composite(rows, at.astimezone(timezone(timedelta(hours=-5)))), seconds)
    midnight = datetime(at.year, at.month, at.day, tzinfo=timezone.utc).timestamp()
    np.testing.assert_array_equal(table.composite(rows, date(at.year, at.month, at.day)), table.composite(rows, midnight))
