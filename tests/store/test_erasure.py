"""The intent of an erasure (store/erasure.py) and the journal's in-place overwrite and byte search."""

from __future__ import annotations

import json
import logging
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.errors import CorruptRecordError, InvalidArgumentError, ReadOnlyError
from cuemem.store import records as rec
from cuemem.store.erasure import Intent
from cuemem.store.journal import Journal, Position


def test_an_intent_round_trips_and_refuses_what_is_not_one(tmp_path: Path) -> None:
    """An intent reads back as written; edits that are not tombstones, or no receipt first, are refused."""
    receipt = rec.forget("fg-1", retention="erase", target={"kind": "id", "sha256": "0" * 64}, ids=["ep-1"], notes=["n1"],
                         approvals=[], hashes=["b" * 64], at=datetime(2026, 1, 2, tzinfo=timezone.utc))
    line = rec.erased("ep-1", "remember", "a" * 64, 300)
    Intent("fg-1", ((Position(1, 0), line),), ("n1",), (receipt,)).write(tmp_path / "i.json")
    back = Intent.load(tmp_path / "i.json")
    assert back is not None and back.edits == ((Position(1, 0), line),) and back.notes == ("n1",) and back.records == (receipt,)
    body = json.loads((tmp_path / "i.json").read_text())
    for bad in (
        {**body, "edits": [[1, 0, '{"op":"remember","episode":{}}\n']]},
        {**body, "records": [{"op": "note", "id": "x"}]},
        {**body, "edits": [[0, 0, line.decode()]]},
        [1, 2],
    ):
        (tmp_path / "i.json").write_text(json.dumps(bad))
        with pytest.raises(CorruptRecordError):
            Intent.load(tmp_path / "i.json")
    assert Intent.load(tmp_path / "missing.json") is None


def test_overwrite_replaces_whole_lines_of_the_same_length_only(tmp_path: Path) -> None:
    """A tombstone replaces a line in place; a wrong length, a mid-line position or a read-only journal is refused."""
    with Journal(tmp_path / "j", writable=True) as journal:
        first, second = journal.append([{"op": "remember", "episode": {"id": "a", "narrative": "x" * 200}}, {"op": "job", "job": "j"}])
        size = len(journal.lines([first])[0])
        stone = rec.erased("a", "remember", "b" * 64, size)
        journal.overwrite([(first, stone)])
        journal.overwrite([(first, stone)])  # idempotent
        assert [e.record["op"] for e in journal.read()] == ["erased", "job"] and journal.lines([second])[0].startswith(b'{"job"')
        with pytest.raises(InvalidArgumentError):
            journal.overwrite([(second, stone)])
        with pytest.raises(InvalidArgumentError):
            journal.overwrite([(Position(1, 3), b"x" * (size - 1) + b"\n")])
    with pytest.raises(ReadOnlyError):
        Journal(tmp_path / "j").overwrite([(first, stone)])


def test_grep_finds_the_lines_holding_a_value_and_no_torn_tail(tmp_path: Path) -> None:
    """grep returns each committed line holding a needle once, in order; a torn last line is not committed."""
    with Journal(tmp_path / "j", writable=True) as journal:
        journal.append([{"v": "needle needle"}, {"v": "hay"}, {"v": "needle"}])
    with open(tmp_path / "j" / "000001.jsonl", "ab") as f:
        f.write(b'{"v": "needle torn')
    found = Journal(tmp_path / "j").grep([b"needle", b"absent"])
    assert [json.loads(line)["v"] for _, line in found] == ["needle needle", "needle"]


def test_a_home_with_a_hostile_intent_opens_and_does_nothing_of_it(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """An intent file cuemem did not write is reported and left alone; the journal keeps its bytes."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        mem.remember("a plain memory", now=date(2026, 1, 1))
    journal = (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes()
    (tmp_path / "h" / ".forget.json").write_text(json.dumps({"receipt": "x", "edits": [[1, 0, "garbage\n"]], "notes": [], "records": []}))
    with caplog.at_level(logging.WARNING, logger="cuemem.home"), Memory.open(tmp_path / "h", fsync="never") as mem:
        assert len(mem) == 1
    assert "not a forget intent" in caplog.text
    assert (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes() == journal


def test_an_intent_that_would_write_or_erase_what_its_receipt_does_not_name_is_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Records cuemem did not write, tombstones of ids the receipt does not forget, or of lines not about them: nothing is done."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        keep = mem.remember("a memory nobody forgets", now=date(2026, 1, 1))
        mem.remember("another memory", now=date(2026, 1, 1))
    journal = (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes()
    first = journal.split(b"\n", 1)[0] + b"\n"
    receipt = rec.forget("fg-x", retention="erase", target={"kind": "id", "sha256": "0" * 64}, ids=["ep-other"], notes=[],
                         approvals=[], hashes=["0" * 64], at=datetime(2026, 1, 2, tzinfo=timezone.utc))
    stone_of = lambda eid: rec.erased(eid, "remember", "a" * 64, len(first)).decode()  # noqa: E731
    hostile = [
        {"receipt": "fg-x", "edits": [], "notes": [], "records": [receipt, {"op": "remember", "episode": {"id": 5}}]},
        {"receipt": "fg-x", "edits": [[1, 0, stone_of(keep)]], "notes": [], "records": [receipt]},
        {"receipt": "fg-x", "edits": [[1, 0, stone_of("ep-other")]], "notes": [], "records": [receipt]},
    ]
    for body in hostile:
        (tmp_path / "h" / ".forget.json").write_text(json.dumps(body))
        with caplog.at_level(logging.WARNING, logger="cuemem.home"), Memory.open(tmp_path / "h", fsync="never") as mem:
            assert mem.get(keep).narrative == "a memory nobody forgets" and len(mem) == 2
        assert (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes().startswith(journal)
    assert "nothing of it is done" in caplog.text
