"""The salience table's file image: round trips, write-order independence and damage."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cuemem import AXES, CorruptIndexError, SalienceTable, UnsupportedVersionError

T0 = 1.75e9
DAY = 86_400.0
VERSION_AT = slice(8, 12)


def sample(n: int = 50, seed: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows, axes (some protected), confidences and times spread over two years."""
    rng = np.random.default_rng(seed)
    axes = rng.uniform(0, 1, size=(n, len(AXES))).astype(np.float32)
    return np.arange(n, dtype=np.uint32), axes, rng.uniform(0, 1, n).astype(np.float32), T0 + rng.uniform(0, 730, n) * DAY


@pytest.fixture
def table() -> SalienceTable:
    """A table of 50 rows with custom parameters, two of them removed."""
    tab = SalienceTable(weights={"risk": 0.5}, half_lives_days={"urgency": 0.5})
    tab.put(*sample())
    tab.remove(np.array([3, 17], dtype=np.uint32))
    return tab


def test_round_trip_keeps_everything(table: SalienceTable, tmp_path: Path) -> None:
    """Bytes and files read back to a table with the same parameters, rows and scores."""
    data = table.to_bytes()
    table.save(tmp_path / "s.sal")
    rows = np.arange(50, dtype=np.uint32)
    for back in (SalienceTable.from_bytes(data), SalienceTable.load(tmp_path / "s.sal")):
        assert back.to_bytes() == data
        assert back.weights == table.weights and back.half_lives_days == table.half_lives_days
        assert (len(back), back.live) == (50, 48)
        assert back.get(3) is None and back.get(4) == table.get(4)
        for now in (T0 - DAY, T0 + 100 * DAY, T0 + 2_000 * DAY):
            np.testing.assert_array_equal(back.composite(rows, now), table.composite(rows, now))
            np.testing.assert_array_equal(back.top_k(rows, now, 5).rows, table.top_k(rows, now, 5).rows)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sal"]


@given(st.permutations(range(50)), st.integers(1, 50))
def test_same_rows_in_any_write_order_give_the_same_bytes(order: list[int], batch: int) -> None:
    """Rows written in another order and other batches serialize to identical bytes."""
    rows, axes, confidence, t = sample()
    reference = SalienceTable()
    reference.put(rows, axes, confidence, t)
    shuffled = SalienceTable()
    perm = np.array(order)
    for start in range(0, 50, batch):
        part = perm[start : start + batch]
        shuffled.put(rows[part], axes[part], confidence[part], t[part])
    assert shuffled.to_bytes() == reference.to_bytes()


def test_every_truncation_is_corrupt(table: SalienceTable) -> None:
    """Every proper prefix of a table file is rejected as corrupt."""
    data = table.to_bytes()
    for cut in range(0, len(data), 7):
        with pytest.raises(CorruptIndexError):
            SalienceTable.from_bytes(data[:cut])


def test_flipped_bytes_are_corrupt(table: SalienceTable) -> None:
    """Flipping a byte anywhere in the file is detected."""
    data = table.to_bytes()
    for at in list(range(0, 24)) + list(range(24, len(data), 97)) + [len(data) - 1]:
        damaged = bytearray(data)
        damaged[at] ^= 0x01
        with pytest.raises(CorruptIndexError):
            SalienceTable.from_bytes(bytes(damaged))


def test_wrong_version_is_unsupported(table: SalienceTable) -> None:
    """A table file stamped with another format version raises UnsupportedVersionError."""
    data = bytearray(table.to_bytes())
    (version,) = struct.unpack("<I", data[VERSION_AT])
    data[VERSION_AT] = struct.pack("<I", version + 7)
    with pytest.raises(UnsupportedVersionError):
        SalienceTable.from_bytes(bytes(data))
