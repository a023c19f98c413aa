"""Recall's cost follows the most selective cue, not the number of memories (DESIGN invariant 1)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from cuemem import Memory

NOW = date(2026, 7, 1)


def _home(path: Path, fillers: int) -> Memory:
    """A home with 12 'needle' episodes among ``fillers`` others sharing their type and month."""
    mem = Memory.open(path, fsync="never", user="*")
    records = [
        {"narrative": f"needle {i}", "actors": ["needle"], "type": "deal", "occurred_at": f"2026-06-{1 + i % 28:02d}"}
        for i in range(12)
    ]
    records += [
        {"narrative": f"filler {i}", "actors": [f"actor-{i % 97}"], "type": "deal", "occurred_at": f"2026-06-{1 + i % 28:02d}"}
        for i in range(fillers)
    ]
    mem.import_records(records, now=NOW)
    return mem


@pytest.mark.parametrize(
    ("cues", "examined"),
    [
        ({"actor": "needle"}, 12),
        # the 12 needle postings probe the next list, and their 12 survivors the last
        ({"actor": "needle", "type": "deal", "time": "2026-06"}, 24),
    ],
)
def test_examined_does_not_grow_with_the_home(tmp_path: Path, cues: dict[str, str], examined: int) -> None:
    """The same selective cue examines the same postings in a home 10x larger, while full_scan grows."""
    small = _home(tmp_path / "small", 500)
    large = _home(tmp_path / "large", 5_000)
    with small, large:
        a = small.recall(cues, k=5, now=NOW)
        b = large.recall(cues, k=5, now=NOW)
    assert a.total == b.total == 12
    assert a.examined == b.examined == examined
    assert (a.full_scan, b.full_scan) == (512, 5_012)
    assert [h.record.narrative for h in a.hits] == [h.record.narrative for h in b.hits]


def test_a_cue_without_matches_examines_nothing(tmp_path: Path) -> None:
    """A value no memory carries empties the plan at once: nothing examined, however large the home."""
    with _home(tmp_path / "h", 2_000) as mem:
        res = mem.recall({"actor": "nobody", "type": "deal"}, now=NOW)
    assert (res.total, res.examined, res.full_scan) == (0, 0, 2_012)
