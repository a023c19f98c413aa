"""Bad input at every public entry point: the typed error, and nothing changed.

Each case runs against a populated index and table and compares their file images
before and after, so a call that fails half-way through a batch is caught.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cuemem
from cuemem import (
    CorruptIndexError,
    CueIndex,
    CuememError,
    CueTypeError,
    InvalidArgumentError,
    InvalidDimensionError,
    InvalidValueError,
    SalienceTable,
    SchemaError,
    ShapeError,
    StorageError,
    UnknownDimensionError,
    UnsupportedVersionError,
)

T0 = 1.75e9
NAN, INF = float("nan"), float("inf")
DIMS = ["actor", "type"]


def u32(*rows: int) -> np.ndarray:
    """Rows as the uint32 array the core takes."""
    return np.array(rows, dtype=np.uint32)


def f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def f64(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def axes(*rows: list[float]) -> np.ndarray:
    """An ``n x 7`` float32 axes array."""
    return np.array(rows, dtype=np.float32).reshape(len(rows), -1)


GOOD = [0.5] * 7


def make_index() -> CueIndex:
    """Rows 0..5 over two dimensions."""
    idx = CueIndex(DIMS)
    idx.insert_column("actor", ["acme", "globex"], u32(0, 0, 0, 1, 1, 1), u32(0, 1, 2, 3, 4, 5))
    idx.insert("type", "deal", u32(0, 2, 4))
    return idx


def make_table() -> SalienceTable:
    """Rows 0..5, half of them protected."""
    tab = SalienceTable()
    rows = np.full((6, 7), 0.4, dtype=np.float32)
    rows[::2, 0] = 0.9
    tab.put(np.arange(6, dtype=np.uint32), rows, np.ones(6, dtype=np.float32), np.full(6, T0))
    return tab


@pytest.fixture
def index() -> CueIndex:
    """A small populated index."""
    return make_index()


@pytest.fixture
def table() -> SalienceTable:
    """A small populated table."""
    return make_table()


@contextmanager
def unchanged(*structures: CueIndex | SalienceTable) -> Iterator[None]:
    """Asserts that the file image of every structure is the same after the block."""
    before = [s.to_bytes() for s in structures]
    yield
    assert [s.to_bytes() for s in structures] == before


Case = tuple[str, Callable[[Any], object], type[BaseException]]


# --------------------------------------------------------------------------- salience table

PUT_CASES: list[Case] = [
    ("nan axis", lambda t: t.put(u32(0, 9), axes(GOOD, [NAN] + GOOD[1:]), f32(1, 1), f64(T0, T0)), InvalidValueError),
    ("axis above 1", lambda t: t.put(u32(0, 9), axes(GOOD, GOOD[:6] + [1.5]), f32(1, 1), f64(T0, T0)), InvalidValueError),
    ("negative axis", lambda t: t.put(u32(9), axes([-0.1] + GOOD[1:]), f32(1), f64(T0)), InvalidValueError),
    ("infinite axis", lambda t: t.put(u32(9), axes([INF] + GOOD[1:]), f32(1), f64(T0)), InvalidValueError),
    ("nan confidence", lambda t: t.put(u32(0, 9), axes(GOOD, GOOD), f32(1, NAN), f64(T0, T0)), InvalidValueError),
    ("confidence above 1", lambda t: t.put(u32(9), axes(GOOD), f32(1.01), f64(T0)), InvalidValueError),
    ("infinite time", lambda t: t.put(u32(0, 9), axes(GOOD, GOOD), f32(1, 1), f64(T0, INF)), InvalidValueError),
    ("negative infinite time", lambda t: t.put(u32(9), axes(GOOD), f32(1), f64(-INF)), InvalidValueError),
    ("nan time", lambda t: t.put(u32(9), axes(GOOD), f32(1), f64(NAN)), InvalidValueError),
    ("rows longer than axes", lambda t: t.put(u32(0, 9), axes(GOOD), f32(1, 1), f64(T0, T0)), ShapeError),
    ("confidence too short", lambda t: t.put(u32(0, 9), axes(GOOD, GOOD), f32(1), f64(T0, T0)), ShapeError),
    ("times too long", lambda t: t.put(u32(9), axes(GOOD), f32(1), f64(T0, T0)), ShapeError),
    ("six axis columns", lambda t: t.put(u32(9), np.zeros((1, 6), dtype=np.float32), f32(1), f64(T0)), ShapeError),
    ("eight axis columns", lambda t: t.put(u32(9), np.zeros((1, 8), dtype=np.float32), f32(1), f64(T0)), ShapeError),
    ("six axis columns as lists", lambda t: t.put([9], [[0.5] * 6], [1.0], [T0]), ShapeError),
    ("float64 axes", lambda t: t.put(u32(9), np.zeros((1, 7)), f32(1), f64(T0)), CueTypeError),
    ("int64 axes", lambda t: t.put(u32(9), np.zeros((1, 7), dtype=np.int64), f32(1), f64(T0)), CueTypeError),
    ("1-D axes", lambda t: t.put(u32(9), np.zeros(7, dtype=np.float32), f32(1), f64(T0)), CueTypeError),
    ("float64 rows", lambda t: t.put(np.array([9.0]), axes(GOOD), f32(1), f64(T0)), CueTypeError),
    ("int64 rows", lambda t: t.put(np.array([9], dtype=np.int64), axes(GOOD), f32(1), f64(T0)), CueTypeError),
    ("float64 confidence", lambda t: t.put(u32(9), axes(GOOD), f64(1), f64(T0)), CueTypeError),
    ("float32 times", lambda t: t.put(u32(9), axes(GOOD), f32(1), f32(T0)), CueTypeError),
    ("negative row", lambda t: t.put([-1], [GOOD], [1.0], [T0]), InvalidValueError),
    ("row past uint32", lambda t: t.put([2**32], [GOOD], [1.0], [T0]), InvalidValueError),
    ("string axes", lambda t: t.put([9], [["high"] * 7], [1.0], [T0]), CueTypeError),
    ("ragged axes", lambda t: t.put([9, 10], [GOOD, GOOD[:3]], [1.0, 1.0], [T0, T0]), CueTypeError),
    ("rows as a string", lambda t: t.put("09", [GOOD], [1.0], [T0]), CueTypeError),
]

QUERY_CASES: list[Case] = [
    ("composite past the table", lambda t: t.composite(u32(0, 6), T0), InvalidValueError),
    ("composite nan now", lambda t: t.composite(u32(0), NAN), InvalidArgumentError),
    ("composite infinite now", lambda t: t.composite(u32(0), -INF), InvalidArgumentError),
    ("composite text now", lambda t: t.composite(u32(0), "the first of January"), SchemaError),  # a string: only an instant form
    ("composite bool now", lambda t: t.composite(u32(0), True), CueTypeError),
    ("composite int64 rows", lambda t: t.composite(np.array([0], dtype=np.int64), T0), CueTypeError),
    ("top_k k zero", lambda t: t.top_k(u32(0, 1), T0, 0), InvalidArgumentError),
    ("top_k k negative", lambda t: t.top_k(u32(0, 1), T0, -3), InvalidArgumentError),
    ("top_k k float", lambda t: t.top_k(u32(0, 1), T0, 1.5), TypeError),
    ("top_k nan now", lambda t: t.top_k(u32(0, 1), NAN, 2), InvalidArgumentError),
    ("top_k candidate past the table", lambda t: t.top_k(u32(0, 60), T0, 2), InvalidValueError),
    ("top_k int64 candidates", lambda t: t.top_k(np.array([0], dtype=np.int64), T0, 2), CueTypeError),
    ("top_k float64 candidates", lambda t: t.top_k(np.array([0.0]), T0, 2), CueTypeError),
    ("top_k set of candidates", lambda t: t.top_k({0, 1}, T0, 2), CueTypeError),
    ("decay_pass nan now", lambda t: t.decay_pass(NAN), InvalidArgumentError),
    ("decay_pass nan floor", lambda t: t.decay_pass(T0, NAN), InvalidArgumentError),
    ("decay_pass infinite floor", lambda t: t.decay_pass(T0, INF), InvalidArgumentError),
    ("decay_pass float64 out", lambda t: t.decay_pass(T0, 0.3, np.zeros((6, 7))), CueTypeError),
    ("decay_pass short out", lambda t: t.decay_pass(T0, 0.3, np.zeros((5, 7), dtype=np.float32)), ShapeError),
    ("remove float64 rows", lambda t: t.remove(np.array([1.0])), CueTypeError),
    ("remove negative row", lambda t: t.remove([-1]), InvalidValueError),
    ("get a string", lambda t: t.get("0"), TypeError),
    ("get a negative row", lambda t: t.get(-1), InvalidArgumentError),
    ("get a row past uint32", lambda t: t.get(10**30), InvalidArgumentError),
    ("get a numpy row past uint32", lambda t: t.get(np.uint64(2**64 - 1)), InvalidArgumentError),
    ("save to a missing directory", lambda t: t.save("/nonexistent-cuemem-dir/table.sal"), StorageError),
]


@pytest.mark.parametrize(("name", "call", "error"), PUT_CASES + QUERY_CASES, ids=[c[0] for c in PUT_CASES + QUERY_CASES])
def test_salience_table_rejects(table: SalienceTable, name: str, call: Callable[[SalienceTable], object], error: type[BaseException]) -> None:
    """Each bad call raises its typed error and leaves the table as it was."""
    with unchanged(table), pytest.raises(error):
        call(table)
    assert table.live == 6


def _refuses_impossible_allocations() -> bool:
    """Whether this kernel refuses an allocation larger than the machine's memory (its
    default heuristic overcommit, or none): the table's growth past it is then refused."""
    try:
        return Path("/proc/sys/vm/overcommit_memory").read_text().strip() in ("0", "2")
    except OSError:
        return False


@pytest.mark.skipif(not _refuses_impossible_allocations(), reason="this kernel grants any allocation, to kill the process later")
def test_a_row_the_table_cannot_grow_to_is_refused_not_fatal(table: SalienceTable) -> None:
    """The table is dense: a row number within uint32 but past any memory (room for every row
    before it, about 170 GB) is an InvalidValueError and leaves the table as it was, not an
    allocation failure that aborts the process."""
    with unchanged(table), pytest.raises(InvalidValueError, match="not enough memory"):
        table.put([2**32 - 1], [GOOD], [1.0], [T0])
    assert table.live == 6
    table.put([7], [GOOD], [1.0], [T0])  # the table still grows as asked
    assert table.live == 7


@pytest.mark.parametrize(
    ("weights", "half_lives"),
    [
        ({"relevance": 0.3}, None),
        ({"risk": -0.1}, None),
        ({"risk": NAN}, None),
        ({"risk": INF}, None),
        (None, {"urgency": 0.0}),
        (None, {"urgency": -7.0}),
        (None, {"urgency": INF}),
        (None, {"urgency": NAN}),
        (None, {"speed": 1.0}),
    ],
)
def test_salience_table_rejects_bad_parameters(weights: dict[str, float] | None, half_lives: dict[str, float] | None) -> None:
    """Unknown axes, negative or non-finite weights and non-positive half-lives are InvalidValueError."""
    with pytest.raises(InvalidValueError):
        SalienceTable(weights=weights, half_lives_days=half_lives)


def test_decay_pass_read_only_out_is_a_type_error(table: SalienceTable) -> None:
    """A read-only ``out`` is refused before anything is written."""
    out = np.full((6, 7), 7.0, dtype=np.float32)
    out.flags.writeable = False
    with unchanged(table), pytest.raises(TypeError):
        table.decay_pass(T0, 0.3, out)
    assert (out == 7.0).all()


# --------------------------------------------------------------------------- cue index

INDEX_CASES: list[Case] = [
    ("insert unknown dimension", lambda i: i.insert("colour", "red", u32(1)), UnknownDimensionError),
    ("insert empty value", lambda i: i.insert("actor", "", u32(1)), InvalidValueError),
    ("insert float64 rows", lambda i: i.insert("actor", "acme", np.array([1.0])), CueTypeError),
    ("insert int64 rows", lambda i: i.insert("actor", "acme", np.array([1], dtype=np.int64)), CueTypeError),
    ("insert 2-D rows", lambda i: i.insert("actor", "acme", np.zeros((2, 2), dtype=np.uint32)), CueTypeError),
    ("insert negative row", lambda i: i.insert("actor", "acme", [3, -1]), InvalidValueError),
    ("insert row past uint32", lambda i: i.insert("actor", "acme", [2**32]), InvalidValueError),
    ("insert float rows", lambda i: i.insert("actor", "acme", [1.5]), CueTypeError),
    ("insert rows as a string", lambda i: i.insert("actor", "acme", "12"), CueTypeError),
    ("insert rows None", lambda i: i.insert("actor", "acme", None), CueTypeError),
    ("insert value not a string", lambda i: i.insert("actor", 7, u32(1)), TypeError),
    ("insert_column code out of range", lambda i: i.insert_column("actor", ["x", "y"], u32(0, 1, 2), u32(7, 8, 9)), InvalidValueError),
    ("insert_column lengths differ", lambda i: i.insert_column("actor", ["x"], u32(0, 0), u32(7)), ShapeError),
    ("insert_column empty value", lambda i: i.insert_column("actor", ["x", ""], u32(0, 1), u32(7, 8)), InvalidValueError),
    ("insert_column unknown dimension", lambda i: i.insert_column("colour", ["x"], u32(0), u32(7)), UnknownDimensionError),
    ("insert_column values as one string", lambda i: i.insert_column("actor", "xy", u32(0, 1), u32(7, 8)), CueTypeError),
    ("insert_column int64 codes", lambda i: i.insert_column("actor", ["x"], np.array([0]), u32(7)), CueTypeError),
    ("remove float64 rows", lambda i: i.remove(np.array([1.0])), CueTypeError),
    ("remove negative row", lambda i: i.remove([-1]), InvalidValueError),
    ("posting unknown dimension", lambda i: i.posting("colour", "red"), UnknownDimensionError),
    ("values unknown dimension", lambda i: i.values("colour"), UnknownDimensionError),
    ("insert a lone surrogate", lambda i: i.insert("actor", "ac\ud800", u32(1)), InvalidArgumentError),
    ("insert into a lone surrogate", lambda i: i.insert("\udc00", "acme", u32(1)), InvalidArgumentError),
    ("insert_values a lone surrogate", lambda i: i.insert_values("actor", ["x", "\ud800"], u32(7, 8)), InvalidArgumentError),
    ("insert_column a lone surrogate", lambda i: i.insert_column("actor", ["\ud800"], u32(0), u32(7)), InvalidArgumentError),
    ("withdraw a lone surrogate", lambda i: i.withdraw("actor", "\ud800", u32(1)), InvalidArgumentError),
    ("posting a lone surrogate", lambda i: i.posting("actor", "\ud800"), InvalidArgumentError),
    ("values of a lone surrogate", lambda i: i.values("\ud800"), InvalidArgumentError),
    ("dimensions with a lone surrogate", lambda i: CueIndex(["actor", "\ud800"]), InvalidArgumentError),
]

BAD_CUES: list[tuple[str, Any, type[BaseException]]] = [
    ("unknown dimension", {"colour": "red"}, UnknownDimensionError),
    ("empty value list", {"actor": []}, InvalidArgumentError),
    ("int value", {"actor": 3}, CueTypeError),
    ("None value", {"actor": None}, CueTypeError),
    ("bytes value", {"actor": b"acme"}, CueTypeError),
    ("dict value", {"actor": {"acme": 1}}, CueTypeError),
    ("list with an int", {"actor": ["acme", 3]}, CueTypeError),
    ("int key", {1: "acme"}, CueTypeError),
    ("a string", "actor", CueTypeError),
    ("a list of pairs", [("actor", "acme")], CueTypeError),
    ("a lone surrogate", {"actor": "\ud800"}, InvalidArgumentError),
    ("a lone surrogate in a list", {"actor": ["acme", "\udfff"]}, InvalidArgumentError),
    ("a lone surrogate as the dimension", {"\ud800": "acme"}, InvalidArgumentError),
]


@pytest.mark.parametrize(("name", "call", "error"), INDEX_CASES, ids=[c[0] for c in INDEX_CASES])
def test_cue_index_rejects(index: CueIndex, name: str, call: Callable[[CueIndex], object], error: type[BaseException]) -> None:
    """Each bad call raises its typed error and leaves the index as it was."""
    with unchanged(index), pytest.raises(error):
        call(index)


@pytest.mark.parametrize(("name", "cues", "error"), BAD_CUES, ids=[c[0] for c in BAD_CUES])
def test_bad_cues_are_rejected_everywhere(index: CueIndex, table: SalienceTable, name: str, cues: Any, error: type[BaseException]) -> None:
    """prune, count and recall reject the same bad cues, as include and as exclude."""
    with unchanged(index, table):
        with pytest.raises(error):
            index.prune(cues)
        with pytest.raises(error):
            index.count(cues)
        with pytest.raises(error):
            cuemem.recall(index, table, cues, now=T0, k=2)
        if isinstance(cues, dict):
            with pytest.raises(error):
                index.prune({"type": "deal"}, exclude=cues)
            with pytest.raises(error):
                index.count({}, exclude=cues)


def test_mapping_like_cues_with_malformed_items_are_cue_type_errors(index: CueIndex) -> None:
    """An object whose ``items()`` does not yield pairs is a CueTypeError, not a bare ValueError."""

    class Pairs:
        def items(self) -> list[tuple[str, ...]]:
            return [("actor", "acme", "globex")]

    with unchanged(index), pytest.raises(CueTypeError):
        index.prune(Pairs())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dimensions", "error"),
    [
        (["actor", "actor"], InvalidDimensionError),
        (["actor", ""], InvalidDimensionError),
        ("actor", CueTypeError),
        ([1, 2], TypeError),
        (None, TypeError),
    ],
)
def test_cue_index_rejects_bad_dimensions(dimensions: Any, error: type[BaseException]) -> None:
    """Duplicate or empty dimension names and non-lists are refused at construction."""
    with pytest.raises(error):
        CueIndex(dimensions)


def test_corrupt_bytes_and_files(index: CueIndex, tmp_path: Path) -> None:
    """Junk bytes are CorruptIndexError; a missing file or directory is a StorageError (an OSError)."""
    for junk in (b"", b"CUEMIDX\0", b"\0" * 64):
        with pytest.raises(CorruptIndexError):
            CueIndex.from_bytes(junk)
        with pytest.raises(CorruptIndexError):
            SalienceTable.from_bytes(junk)
    with pytest.raises(StorageError) as missing:
        CueIndex.load(tmp_path / "nope.idx")
    assert isinstance(missing.value, OSError) and missing.value.errno == errno.ENOENT
    with pytest.raises(OSError):
        SalienceTable.load(tmp_path / "nope.sal")
    with pytest.raises(StorageError):
        CueIndex.load(tmp_path)  # a directory
    with unchanged(index), pytest.raises(StorageError):
        index.save(tmp_path / "no" / "such" / "dir.idx")
    assert list(tmp_path.iterdir()) == []


def test_recall_rejects(index: CueIndex, table: SalienceTable) -> None:
    """recall checks k, now and that every matching row has a salience entry."""
    with unchanged(index, table):
        with pytest.raises(InvalidArgumentError):
            cuemem.recall(index, table, {"actor": "acme"}, now=T0, k=0)
        with pytest.raises(InvalidArgumentError):
            cuemem.recall(index, table, {"actor": "acme"}, now=NAN)
        with pytest.raises(SchemaError):  # a written time must be one of the instant forms every time argument takes
            cuemem.recall(index, table, {"actor": "acme"}, now="today")
        index_beyond = make_index()
        index_beyond.insert("actor", "acme", u32(60))
        with pytest.raises(InvalidValueError):
            cuemem.recall(index_beyond, table, {"actor": "acme"}, now=T0)


# --------------------------------------------------------------------------- hierarchy


@pytest.mark.parametrize(
    ("error", "standard"),
    [
        (CueTypeError, TypeError),
        (InvalidValueError, ValueError),
        (InvalidArgumentError, ValueError),
        (InvalidDimensionError, ValueError),
        (ShapeError, ValueError),
        (UnknownDimensionError, KeyError),
        (CorruptIndexError, ValueError),
        (UnsupportedVersionError, CorruptIndexError),
        (StorageError, OSError),
    ],
)
def test_each_error_inherits_its_standard_class(error: type[Exception], standard: type[Exception]) -> None:
    """Every error is a CuememError and also the standard exception errors.py documents."""
    assert issubclass(error, CuememError)
    assert issubclass(error, standard)


def test_unknown_dimension_is_caught_as_key_error_with_a_readable_message(index: CueIndex) -> None:
    """``except KeyError`` catches an unknown dimension; its message is not a quoted repr."""
    try:
        index.prune({"colour": "red"})
    except KeyError as caught:
        assert str(caught) == 'unknown dimension "colour"'
    else:
        pytest.fail("no KeyError")


# --------------------------------------------------------------------------- junk


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=4), st.binary(max_size=4), st.sampled_from(["acme", "deal", "actor"]))
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.frozensets(st.text(max_size=3), max_size=3),
        st.dictionaries(st.one_of(st.sampled_from(DIMS), scalars), inner, max_size=3),
    ),
    max_leaves=10,
)
JUNK_INDEX, JUNK_TABLE = make_index(), make_table()


@given(cues=junk, exclude=junk)
def test_junk_cues_never_crash(cues: Any, exclude: Any) -> None:
    """Arbitrary junk as cues gives a result or a CuememError / TypeError, never anything else."""
    before = JUNK_INDEX.to_bytes()
    calls: list[Callable[[], object]] = [
        lambda: JUNK_INDEX.prune(cues, exclude),
        lambda: JUNK_INDEX.count(cues, exclude),
        lambda: cuemem.recall(JUNK_INDEX, JUNK_TABLE, cues, now=T0, k=3, exclude=exclude),
    ]
    for call in calls:
        try:
            call()
        except (CuememError, TypeError):
            pass
    assert JUNK_INDEX.to_bytes() == before


@pytest.mark.parametrize("bad", [3, None, b"bytes/path"])
def test_paths_must_be_paths_not_descriptors(tmp_path: Path, bad: object) -> None:
    """An int (a descriptor to ``open``), None or bytes where a path goes is a CueTypeError, and nothing is read or made."""
    from cuemem import Memory

    with pytest.raises(CueTypeError):
        CueIndex.load(bad)  # type: ignore[arg-type]
    with pytest.raises(CueTypeError):
        SalienceTable.load(bad)  # type: ignore[arg-type]
    with pytest.raises(CueTypeError):
        Memory.open(bad)  # type: ignore[arg-type]
    with Memory.open(tmp_path / "home") as mem, pytest.raises(CueTypeError):
        mem.import_jsonl(bad)  # type: ignore[arg-type]
