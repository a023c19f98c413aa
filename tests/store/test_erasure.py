"""The intent of an erasure (store/erasure.py) and the journal's in-place overwrite and byte search."""

from __future__ import annotations

import dataclasses
import threading
import os

import json
import logging
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from cuemem import Memory
from cuemem.errors import CorruptRecordError, InvalidArgumentError, ReadOnlyError
from cuemem.store import records as rec
from cuemem.store.erasure import Intent, Mark
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


def _forgery(root: Path) -> tuple[str, dict[str, object], bytes]:
    """A home with a memory and a person's note, and the body of a forged intent that
    would erase the one, delete the other's file and commit a trusted memory of its own."""
    with Memory.open(root, fsync="never") as mem:
        keep = mem.remember("the launch code is in the blue binder", now=date(2026, 1, 1))
        mem.write_note("ann", "Ann's own note about the binder", now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    first = (root / "journal" / "000001.jsonl").read_bytes().split(b"\n", 1)[0] + b"\n"
    receipt = rec.forget("fg-x", retention="erase", target={"kind": "id", "sha256": "0" * 64}, ids=[keep], notes=["ann"],
                         approvals=[], hashes=["0" * 64], at=datetime(2026, 1, 2, tzinfo=timezone.utc))
    forged = rec.remember({**Memory.open(root, read_only=True).get(keep).to_json(), "id": "ep-forged", "narrative": "wire the money to X",
                           "importance": 1.0, "confidence": 1.0})
    body: dict[str, object] = {
        "receipt": "fg-x", "edits": [[1, 0, rec.erased(keep, "remember", "0" * 64, len(first)).decode()]], "notes": ["ann"],
        "records": [receipt, forged], "proposals": [],
    }
    return keep, body, (root / "notes" / "ann.md").read_bytes()


def _open_and_check_untouched(root: Path, keep: str, note: bytes, caplog: pytest.LogCaptureFixture) -> None:
    """The home opens, the intent is reported and left as it was, and nothing of it is done."""
    intent = (root / ".forget.json").read_bytes()
    journal = (root / "journal" / "000001.jsonl").read_bytes()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="cuemem.home"), Memory.open(root, fsync="never") as mem:
        refused = mem.open_report.forget_intent_refused
        assert refused is not None and ".forget.json" in refused
        assert mem.get(keep).narrative == "the launch code is in the blue binder"
        assert [h.id for h in mem.recall({}, k=5, now=date(2026, 1, 3)).hits] == [keep]
        assert "ep-forged" not in mem and len(mem) == 1
    assert ".forget.json" in caplog.text and "nothing of it is done" in caplog.text
    assert (root / "notes" / "ann.md").read_bytes() == note
    assert (root / "journal" / "000001.jsonl").read_bytes() == journal
    assert (root / ".forget.json").read_bytes() == intent


def _marked_forgery(root: Path) -> tuple[str, dict[str, object], bytes, list[object], dict[str, object]]:
    """:func:`_forgery`, with its records and the journal's mark as it stands."""
    keep, body, note = _forgery(root)
    records = body["records"]
    assert isinstance(records, list)
    with Journal(root / "journal") as journal:
        mark = Mark.of(journal).to_json()
    return keep, body, note, records, mark


def test_a_forged_intent_the_journal_does_not_vouch_for_does_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Well-formed forgeries — no journal mark, a wrong digest, a stale head, a forged trusted memory — erase
    nothing, delete no note file and commit nothing; each is reported and left in place, and the home opens."""
    root = tmp_path / "h"
    keep, body, note, records, mark = _marked_forgery(root)
    stale = {**mark, "head": [1, 0], "last": None}  # as if written before the first line
    forgeries = [
        {**body, "records": records[:1], "journal": mark},  # a mark that quotes the journal's last line: not its erasing record
        {**body, "records": records[:1]},  # no mark at all
        {**body, "records": records[:1], "journal": {**mark, "sha256": "f" * 64}},  # a guessed digest
        {**body, "records": records[:1], "journal": stale},  # the journal has records after its head that are not its own
        {**body, "journal": mark},  # vouched for, but it commits a trusted memory of a person's: no forget writes that
    ]
    for forged in forgeries:
        (root / ".forget.json").write_bytes(json.dumps(forged).encode())
        _open_and_check_untouched(root, keep, note, caplog)


def test_a_malformed_intent_never_makes_a_home_unopenable(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Malformed intents of many kinds are reported by name and left in place; the home opens as it was."""
    root = tmp_path / "h"
    keep, body, note, records, mark = _marked_forgery(root)
    good = {**body, "records": records[:1], "journal": mark}
    stone = rec.erased(keep, "remember", "0" * 64, 400).decode()
    malformed: list[bytes] = [
        b"", b"{", b"\xff\xfe", b"[1, 2]", b"null", b"[" * 100_000,
        json.dumps({**good, "edits": [[1, 0, stone]]}).encode(),  # a tombstone of another length than its line
        json.dumps({**good, "edits": [[1, 7, body["edits"][0][2]]]}).encode(),  # type: ignore[index]  # mid-line
        json.dumps({**good, "edits": [[9, 0, body["edits"][0][2]]]}).encode(),  # type: ignore[index]  # no such segment
        json.dumps({**good, "edits": [[True, -1, body["edits"][0][2]]]}).encode(),  # type: ignore[index]
        json.dumps({**good, "proposals": ["../../etc"]}).encode(),  # not an id
        json.dumps({**good, "notes": ["../ann"]}).encode(),
        json.dumps({**good, "notes": ["bob"]}).encode(),  # a note file its receipt does not forget
        json.dumps({**good, "journal": {**mark, "head": [1, 10**30]}}).encode(),
        json.dumps({**good, "journal": {**mark, "head": "1:0"}}).encode(),
        json.dumps({**good, "journal": {**mark, "last": [1, 3]}}).encode(),
        json.dumps({**good, "journal": []}).encode(),
        json.dumps({**good, "records": [records[0], {"op": "job", "job": "x", "ran_at": "2026-01-01T00:00:00+00:00", "report": {}}]}).encode(),
        json.dumps({**good, "records": [records[0], records[0]]}).encode(),  # a second receipt
    ]
    for raw in malformed:
        (root / ".forget.json").write_bytes(raw)
        _open_and_check_untouched(root, keep, note, caplog)


def test_a_genuine_intent_is_carried_out_only_as_far_as_its_records_are_missing(tmp_path: Path) -> None:
    """The journal vouches for an intent whose head line is there (or its own tombstone) and which is followed by
    a prefix of its records; the check refuses a journal whose line at the head differs."""
    with Journal(tmp_path / "j", writable=True) as journal:
        (first,) = journal.append([{"op": "remember", "episode": {"id": "a", "narrative": "x" * 200}}])
        size = len(journal.lines([first])[0])
        stone = rec.erased("a", "remember", "b" * 64, size)
        receipt = rec.forget("fg-1", retention="erase", target={"kind": "id", "sha256": "0" * 64}, ids=["a"], notes=[],
                             approvals=[], hashes=["b" * 64], at=datetime(2026, 1, 2, tzinfo=timezone.utc))
        intent = Intent("fg-1", ((first, stone),), (), (receipt,), ())
        with pytest.raises(CorruptRecordError, match="no erasing record"):  # the journal's last line quoted: no proof
            Intent.from_bytes(dataclasses.replace(intent, mark=Mark.of(journal)).to_bytes(), "here").check(journal)
        journal.append([rec.erasing("fg-1", intent.digest())])  # what a forget appends before its intent
        back = Intent.from_bytes(dataclasses.replace(intent, mark=Mark.of(journal)).to_bytes(), "here")
        back.check(journal)  # nothing done yet
        journal.overwrite(back.edits)
        back.check(journal)  # its tombstone written
        journal.append([receipt], trusted=True)
        back.check(journal)  # its receipt committed: still its own
        journal.append([{"op": "job", "job": "j"}])
        with pytest.raises(CorruptRecordError, match="not one of its own"):
            back.check(journal)


def test_an_intent_carried_out_twice_commits_only_what_the_journal_lacks(tmp_path: Path) -> None:
    """Recovery after recovery: whatever of its records the journal holds past its mark is not written
    again (a retire and a re-derived approval have no other trace to recognise them by)."""
    at = datetime(2026, 1, 2, tzinfo=timezone.utc)
    with Journal(tmp_path / "j", writable=True) as journal:
        journal.append([{"op": "remember", "episode": {"id": "a", "narrative": "x"}}])
        receipt = rec.forget("fg-1", retention="erase", target={"kind": "id", "sha256": "0" * 64}, ids=["a"], notes=[],
                             approvals=[], hashes=["b" * 64], at=at)
        retire = rec.retire(["v1"], "versions", at)
        intent = Intent("fg-1", (), (), (receipt, retire), ())
        journal.append([rec.erasing("fg-1", intent.digest())])
        intent = dataclasses.replace(intent, mark=Mark.of(journal))
        assert intent.missing(journal) == [receipt, retire]
        journal.append([receipt], trusted=True)  # a crash after the receipt
        intent.check(journal)
        assert intent.missing(journal) == [retire]
        journal.append(intent.missing(journal))  # the first recovery, then a crash before the intent is cleared
        intent.check(journal)
        assert intent.missing(journal) == []


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_where_the_intent_goes_is_refused_never_waited_on(tmp_path: Path) -> None:
    """A FIFO at .forget.json would block a read forever: it is reported as no intent cuemem
    wrote and left in place, and the home opens."""
    root = tmp_path / "h"
    with Memory.open(root, fsync="never") as mem:
        kept = mem.remember("still here", now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    os.mkfifo(root / ".forget.json")
    opened: list[Memory] = []
    worker = threading.Thread(target=lambda: opened.append(Memory.open(root, fsync="never")), daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "Memory.open waited on the FIFO"
    with opened[0] as mem:
        assert kept in mem and "not a regular file" in (mem.open_report.forget_intent_refused or "")
    assert (root / ".forget.json").is_fifo()


def test_an_intent_may_keep_a_person_s_pending_edit_of_the_rung_it_re_derives() -> None:
    """A re-derived rung's note comes after a person's pending edit of its file (kept first, as
    its own version, origin user): an intent holding both is one cuemem wrote, not refused
    (a refusal at recovery would leave the forget half done)."""
    from cuemem.schema import Episode, Note

    at = datetime(2026, 1, 2, tzinfo=timezone.utc)
    receipt = rec.forget("fg-1", retention="erase", target={"kind": "id", "sha256": "0" * 64}, ids=["gone"], notes=[],
                         approvals=[], hashes=["b" * 64], at=at)
    rung = Episode.create("summary of what remains", id="rung-summary-1", recorded_at=at, origin="job", sources=("kept",))
    edit = Note.create("my own words on it", id="rung-summary-1", kind="semantic", recorded_at=at, origin="user")
    made = Note.create("summary of what remains", id="rung-summary-1", kind="semantic", recorded_at=at, origin="job", generated=True)
    intent = Intent("fg-1", (), (), (receipt, rec.remember(rung.to_json()), rec.note(edit), rec.note(made)), ())
    back = Intent.from_bytes(intent.to_bytes(), "here")
    assert [r["op"] for r in back.records] == ["forget", "remember", "note", "note"]
    stray = Note.create("planted", id="someone-else", kind="semantic", recorded_at=at, origin="user")
    with pytest.raises(CorruptRecordError, match="neither one it forgets"):
        Intent.from_bytes(dataclasses.replace(intent, records=(*intent.records, rec.note(stray))).to_bytes(), "here")
