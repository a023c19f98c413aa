"""Applying records (home/apply.py): the one function live writes, imports and replay share."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from cuemem.home.apply import Applier
from cuemem.home.indexes import Indexes
from cuemem.salience import SalienceTable
from cuemem.schema import Episode
from cuemem.store import records as rec
from cuemem.store.journal import Position

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def _episode(eid: str, **fields: Any) -> dict[str, Any]:
    return Episode.create(f"narrative of {eid}", id=eid, recorded_at=NOW, actors=["acme"], **fields).to_json()


def test_rows_and_records_apply_in_journal_order() -> None:
    """A retire after a remember in the same batch retires the row just gathered."""
    indexes = Indexes(SalienceTable())
    applier = Applier(indexes, trusted=True)
    applier.add(rec.remember(_episode("ep-a", tier="short")), 1, 0)
    applier.add(rec.remember(_episode("ep-b")), 1, 100)
    applier.add(rec.retire(["ep-a"], "ttl", NOW), 1, 200)
    applier.flush()
    assert indexes.ids == ["ep-a", "ep-b"] and indexes.lifecycle.retired == {"ep-a": "ttl"}
    assert len(indexes.cues.prune({"actor": ["acme"]}).rows) == 1 and "ep-a" not in indexes.lifecycle.short


def test_a_deferred_applier_touches_nothing_until_flush_and_takes_its_segment_late() -> None:
    """Staged records change the indexes only at flush, at the segment given by place()."""
    indexes = Indexes(SalienceTable())
    applier = Applier(indexes, trusted=True, deferred=True)
    for i in range(3):
        applier.add(rec.remember(_episode(f"ep-{i}", tier="short")), 1, i * 10)
    applier.add(rec.job("import", NOW, {}), 1, 30)
    assert len(indexes) == 0 and indexes.lifecycle.short == {} and indexes.jobs == {}
    applier.place(7)
    applier.flush()
    assert [indexes.position(r).segment for r in range(3)] == [7, 7, 7] and indexes.position(2).offset == 20
    assert list(indexes.lifecycle.short) == ["ep-0", "ep-1", "ep-2"] and "import" in indexes.jobs


@pytest.mark.parametrize(
    "record",
    [
        {"op": "remember", "episode": "not an episode"},
        {"op": "remember", "episode": {"id": "ep-x"}},
        {"op": "note", "id": "n", "version": "two", "sha256": "x"},
        {"op": "note", "id": "n"},
        {"op": "nope"},
        {"op": 3},
        {"id": "ep-b", "narrative": "no op at all"},
        {"op": "job", "job": 3, "ran_at": NOW.isoformat()},
        {"op": "version", "subject": "u/s"},
        {"op": "retire", "ids": "ep-a", "reason": "ttl", "at": NOW.isoformat()},
        {"op": "decision"},
        {"op": "approval", "id": "a"},
        {**rec.approval("a", reason="conflict", subject="u/s", supersedes=None, episode={"id": "broken"}, requested_at=NOW,
                        expires_at=NOW)},
        {**rec.version("u/s", "ep-a", None, NOW, NOW), "at": "2026-06-01T00:00:00"},
        {**rec.decision("a", "approved", NOW), "verdict": "maybe"},
        {**rec.retire(["ep-a"], "ttl", NOW), "at": "yesterday"},
        rec.version("u/s", "ep-nowhere", None, NOW, NOW),
        {**rec.job("expire", NOW, {}), "ran_at": "garbage"},
        {**rec.job("expire", NOW, {}), "ran_at": "2026-06-01T00:00:00"},
        rec.approval("a", reason="conflict", subject="u/s", supersedes=None, episode=_episode("ep-other"), requested_at=NOW,
                     expires_at=NOW),
    ],
)
def test_a_record_cuemem_did_not_write_is_skipped_and_reported(record: dict[str, Any]) -> None:
    """An untrusted applier skips a malformed record with the reason, and applies the rest."""
    indexes = Indexes(SalienceTable())
    applier = Applier(indexes, trusted=False)
    applier.add(record, 1, 0)
    applier.add(rec.remember(_episode("ep-a")), 1, 50)
    applier.flush()
    assert indexes.ids == ["ep-a"] and [str(p) for p, _ in indexes.skipped] == ["1:0"]


def test_a_duplicate_id_in_the_journal_is_skipped() -> None:
    """The second record of one id is reported, the first stays."""
    indexes = Indexes(SalienceTable())
    applier = Applier(indexes, trusted=False)
    applier.add(rec.remember(_episode("ep-a")), 1, 0)
    applier.add(rec.remember(_episode("ep-a")), 1, 50)
    applier.flush()
    assert indexes.ids == ["ep-a"] and "twice" in indexes.skipped[0][1]


def test_a_trusted_applier_raises_on_what_it_cannot_apply() -> None:
    """A live write that builds a broken record is a bug, not a line to skip."""
    applier = Applier(Indexes(SalienceTable()), trusted=True)
    with pytest.raises(KeyError):
        applier.add({"op": "note", "id": "n"}, 1, 0)
        applier.flush()


@pytest.mark.parametrize(
    "change",
    [{"actors": [1, 2]}, {"actors": [""]}, {"actors": "abc"}, {"tags": [None]}, {"id": 5}, {"id": None}, {"type": ["deal"]},
     {"sources": [["x"]]}, {"sources": "ep-a"}, {"narrative": 7}, {"confidence": True}, {"user_id": 3}, {"tier": 1},
     {"importance_band": None}, {"subject": 4}, {"kind": {}}, {"tags": [["x"]]}, {"recorded_at": None}],
)
def test_a_remember_record_with_cue_values_the_core_refuses_is_skipped(change: dict[str, Any]) -> None:
    """Hand-edited cue values (not strings, empty) are validated in full and skipped, never passed to the core."""
    indexes = Indexes(SalienceTable())
    applier = Applier(indexes, trusted=False)
    applier.add(rec.remember({**_episode("ep-bad"), **change}), 1, 0)
    applier.add(rec.remember(_episode("ep-a")), 1, 50)
    applier.flush()
    assert indexes.ids == ["ep-a"] and len(indexes.skipped) == 1


@pytest.mark.parametrize(
    "change",
    [
        {"importance": 5.0},
        {"risk": -0.5},
        {"confidence": 1.5},
        {"confidence": float("nan")},
        {"salience": {"importance": 0.5, "risk": 0.2, "novelty": float("inf")}},
        {"importance": 0.9},  # the importance band disagrees
        {"recorded_at": "yesterday"},
        {"valid_to": "2026-13-40T00:00:00+00:00"},
        {"occurred_at": "0000-01-01"},
        {"tier": "forever"},
    ],
)
def test_a_remember_record_with_values_out_of_range_is_skipped_on_replay(change: dict[str, Any], tmp_path: Any) -> None:
    """A hand-forged record whose values break the schema is a bad record: skipped on reopen and rebuild,
    listed in the report, and recall and get agree that it is not there."""
    import json
    from datetime import date

    from cuemem import Memory, NotFoundError

    root = tmp_path / "h"
    with Memory.open(root, fsync="never") as mem:
        kept = mem.remember("a plain memory", now=date(2026, 1, 1))
    segment = root / "journal" / "000001.jsonl"
    first = segment.read_bytes()
    stored = json.loads(first.splitlines()[0])["episode"]
    forged = {**stored, "id": "ep-forged", **change}
    with open(segment, "ab") as f:
        f.write((json.dumps({"op": "remember", "episode": forged}, sort_keys=True) + "\n").encode())
    at = Position(1, len(first))
    with Memory.open(root, fsync="never") as mem:
        report = mem.open_report
        assert at in [p for p, _ in report.skipped_records] + [p.position for p in report.journal_problems]
        for rebuilt in (False, True):  # the reopen's replay, then a rebuild from the start
            if rebuilt:
                mem.rebuild()
                assert at in [p for p, _ in mem._home.indexes.skipped] or at in [p.position for p in report.journal_problems]
            assert [h.id for h in mem.recall({}, k=5, now=date(2026, 1, 2)).hits] == [kept]
            assert "ep-forged" not in mem and len(mem) == 1
            with pytest.raises(NotFoundError):
                mem.get("ep-forged")


def _written(records: list[dict[str, Any]], segment: int = 1, offset: int = 0) -> tuple[list[bytes], list[Position]]:
    """The journal lines of ``records`` and where each starts when appended end to end at ``(segment, offset)``."""
    from cuemem.store.journal import encode

    lines = encode(records, trusted=True)
    positions = []
    for line in lines:
        positions.append(Position(segment, offset))
        offset += len(line)
    return lines, positions


def test_a_live_write_indexes_through_the_decoder_what_it_proves_and_the_rest_record_by_record() -> None:
    """add_written: a run of remember lines goes to the core's decoder (one decoded run per run of
    proven rows, for the text index), a record with metadata (which the decoder leaves to Python)
    and a record of another kind go through add(); the indexes equal those add() alone builds."""
    records = [
        rec.remember(_episode("ep-a", tier="short")),
        rec.remember(_episode("ep-b", type="deal")),
        rec.remember(_episode("ep-c", metadata={"ticket": 7})),
        rec.remember(_episode("ep-d", thread="t-1")),
        rec.retire(["ep-b"], "ttl", NOW),
        rec.remember(_episode("ep-e", sources=["ep-d"], level="summary")),
    ]
    lines, positions = _written(records)
    live = Indexes(SalienceTable())
    applier = Applier(live, trusted=True, texts=True)
    fed = applier.add_written(records, lines, positions)
    applier.flush()
    assert [(lo, hi, first) for _, lo, hi, first in fed] == [(0, 2, 0), (2, 3, 3), (0, 1, 4)]  # rows of the decoded runs
    assert applier.texts == [(2, "narrative of ep-c")]  # the one row the decoder left to Python
    by_record = Indexes(SalienceTable())
    one_by_one = Applier(by_record, trusted=True)
    for record, position in zip(records, positions):
        one_by_one.add(record, position.segment, position.offset)
    one_by_one.flush()
    assert live.ids == by_record.ids and list(live.offsets) == list(by_record.offsets)
    assert list(live.citers) == list(by_record.citers) and live.cited and live.lifecycle.retired == {"ep-b": "ttl"}
    assert list(live.lifecycle.short) == list(by_record.lifecycle.short) == ["ep-a"]
    for cues in ({"actor": ["acme"]}, {"type": ["deal"]}, {"thread": ["t-1"]}, {"meta": ["ticket=7"]}):
        assert live.cues.prune(cues).rows.tolist() == by_record.cues.prune(cues).rows.tolist(), cues
    assert live.salience.to_bytes() == by_record.salience.to_bytes()


def test_add_run_gives_each_deferred_line_its_own_record_and_offset() -> None:
    """A line in the middle of a run that the decoder does not prove is applied from its own record
    (read back from its bytes), at its own offset, between the rows before and after it."""
    records = [rec.remember(_episode(f"ep-{i}", **({"metadata": {"n": i}} if i == 1 else {}))) for i in range(3)]
    lines, _ = _written(records, offset=500)
    indexes = Indexes(SalienceTable())
    applier = Applier(indexes, trusted=True)
    applier.add_run(b"".join(lines), 4, 500)
    applier.flush()
    assert indexes.ids == ["ep-0", "ep-1", "ep-2"]
    assert [indexes.position(r) for r in range(3)] == [Position(4, 500), Position(4, 500 + len(lines[0])), Position(4, 500 + len(lines[0]) + len(lines[1]))]
