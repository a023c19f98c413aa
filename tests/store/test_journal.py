"""The append-only journal: format, positions, rotation, damage, durability policy.

A hypothesis state machine runs appends, reopenings and simulated crashes against a
plain list of records and checks that the journal always reads back exactly that list.
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from cuemem.errors import (
    CorruptRecordError,
    CueTypeError,
    InvalidArgumentError,
    NotFoundError,
    ReadOnlyError,
    SchemaError,
    StorageError,
)
from cuemem.store.fsync import FsyncPolicy
from cuemem.store import journal as journal_module
from cuemem.store.journal import MAX_SEGMENT, Entry, Journal, Position, ProblemKind, segment_name


def line_of(record: dict[str, Any]) -> bytes:
    """The exact journal line the format promises for ``record``."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text.encode("utf-8") + b"\n"


def canonical(record: object) -> str:
    """A form that tells 1, 1.0 and True apart, for exact comparisons."""
    return json.dumps(record, sort_keys=True)


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file in ``directory`` with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


def records_of(journal: Journal, start: Position | None = None) -> list[dict[str, Any]]:
    """The records ``journal.read(start)`` yields."""
    return [e.record for e in journal.read(start)]


@pytest.fixture
def jdir(tmp_path: Path) -> Path:
    """A journal directory path that does not exist yet."""
    return tmp_path / "home" / "journal"


@pytest.fixture
def journal(jdir: Path) -> Iterator[Journal]:
    """A writable journal on a fresh directory, without fsync (tests stay fast)."""
    with Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER) as j:
        yield j


# -- format and round trip ---------------------------------------------------------


def test_round_trip_preserves_records_and_order(journal: Journal) -> None:
    """Records come back equal, in append order, across several calls."""
    batch1: list[dict[str, Any]] = [{"id": "a", "n": 1, "f": 0.5, "ok": True, "none": None}, {"id": "b", "nested": {"x": [1, {"y": "z"}]}}]
    batch2: list[dict[str, Any]] = [{"id": "c", "text": "会議は月曜\nline two", "emoji": "🧠"}]
    journal.append(batch1)
    journal.append(batch2)
    assert [canonical(r) for r in records_of(journal)] == [canonical(r) for r in batch1 + batch2]


def test_lines_are_sorted_compact_utf8_json(journal: Journal, jdir: Path) -> None:
    """Each record is one compact, key-sorted, UTF-8 JSON line ending in a newline."""
    records: list[dict[str, Any]] = [{"b": 1, "a": "é"}, {"z": [1, 2], "k": {"y": 1, "x": 2}}]
    journal.append(records)
    assert (jdir / "000001.jsonl").read_bytes() == b"".join(line_of(r) for r in records)
    assert b'{"a":"\xc3\xa9","b":1}\n' in (jdir / "000001.jsonl").read_bytes()


def test_empty_append_writes_nothing(journal: Journal, jdir: Path) -> None:
    """Appending no records returns no positions and creates no segment."""
    assert journal.append([]) == []
    assert list(jdir.iterdir()) == []


def test_writable_open_creates_directory(jdir: Path) -> None:
    """A writable journal creates its directory and parents."""
    Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER).close()
    assert jdir.is_dir()


def test_read_only_open_of_missing_directory_fails(jdir: Path) -> None:
    """A reader on a directory that does not exist gets a StorageError."""
    with pytest.raises(StorageError):
        Journal(jdir)


# -- positions, read_at, reading from the middle ----------------------------------


def test_append_positions_match_read_positions_and_read_at(journal: Journal) -> None:
    """Returned positions are where read() finds each record and what read_at takes."""
    records = [{"i": i, "pad": "x" * i} for i in range(10)]
    positions = journal.append(records[:4]) + journal.append(records[4:])
    entries = list(journal.read())
    assert [e.position for e in entries] == positions
    assert positions == sorted(positions)
    assert [journal.read_at(p) for p in positions] == records


def test_entry_end_is_next_entry_position(journal: Journal) -> None:
    """Each entry's end is the next entry's start; the last one's end is head()."""
    journal.append([{"i": i} for i in range(5)])
    entries = list(journal.read())
    assert [e.end for e in entries[:-1]] == [e.position for e in entries[1:]]
    assert entries[-1].end == journal.head()


def test_read_from_middle_position_yields_the_suffix(journal: Journal) -> None:
    """Reading from an entry's position or end yields exactly the records after it."""
    records = [{"i": i} for i in range(8)]
    positions = journal.append(records)
    assert records_of(journal, positions[3]) == records[3:]
    entries = list(journal.read())
    assert records_of(journal, entries[3].end) == records[4:]
    assert records_of(journal, journal.head()) == []


def test_read_with_stop_is_half_open(journal: Journal) -> None:
    """read(start, stop) yields the records starting in [start, stop)."""
    records = [{"i": i} for i in range(6)]
    positions = journal.append(records)
    assert [e.record for e in journal.read(positions[1], positions[4])] == records[1:4]
    assert list(journal.read(positions[2], positions[2])) == []


def test_read_rejects_positions_inside_a_line(journal: Journal) -> None:
    """A start that is not a line boundary is refused at call time."""
    journal.append([{"i": 1}, {"i": 2}])
    with pytest.raises(InvalidArgumentError):
        journal.read(Position(1, 3))
    with pytest.raises(InvalidArgumentError):
        journal.read(Position(1, 10_000))
    with pytest.raises(InvalidArgumentError):
        journal.read(Position(9, 5))
    with pytest.raises(CueTypeError):
        journal.read((1, 0))  # type: ignore[arg-type]


def test_read_at_refuses_positions_without_a_record(journal: Journal) -> None:
    """read_at raises NotFoundError inside a line, past the end or in a missing segment."""
    (p,) = journal.append([{"i": 1}])
    for bad in (Position(1, 2), Position(1, 10_000), Position(2, 0), Position(p.segment, journal.head().offset)):
        with pytest.raises(NotFoundError):
            journal.read_at(bad)


def test_position_validates_and_orders() -> None:
    """Positions refuse nonsense and sort in journal order."""
    assert Position.start() == Position(1, 0)
    assert sorted([Position(2, 0), Position(1, 50), Position(1, 3)]) == [Position(1, 3), Position(1, 50), Position(2, 0)]
    bad: tuple[Any, Any]
    for bad in ((0, 0), (1, -1), (True, 0), (1, 1.5)):
        with pytest.raises(InvalidArgumentError):
            Position(*bad)


# -- rotation -----------------------------------------------------------------------


def test_rotation_starts_a_new_segment_before_exceeding_the_size(jdir: Path) -> None:
    """With a tiny segment size, segments stay within it and hold whole lines."""
    records = [{"i": i, "pad": "p" * (i % 7)} for i in range(40)]
    with Journal(jdir, segment_bytes=64, writable=True, fsync=FsyncPolicy.NEVER) as j:
        positions = j.append(records[:15]) + j.append(records[15:])
        assert records_of(j) == records
        assert [j.read_at(p) for p in positions] == records
    names = sorted(p.name for p in jdir.iterdir())
    assert names == [segment_name(n) for n in range(1, len(names) + 1)]
    assert len(names) > 5
    for name in names:
        data = (jdir / name).read_bytes()
        assert data.endswith(b"\n")
        assert len(data) <= 64
        assert all(isinstance(json.loads(line), dict) for line in data.splitlines())


@pytest.mark.parametrize("number", [2**32, 10**21])
def test_a_segment_number_past_what_a_position_holds_is_not_a_segment(jdir: Path, number: int) -> None:
    """A stray ``<digits>.jsonl`` numbered past :data:`MAX_SEGMENT` is ignored as a foreign name is (it
    was an OverflowError when the index stored its positions): the journal reads and appends as before."""
    with Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER) as j:
        j.append([{"i": 1}])
    (jdir / f"{number}.jsonl").write_bytes(line_of({"i": 2}))
    for writable in (False, True):
        with Journal(jdir, writable=writable, fsync=FsyncPolicy.NEVER) as j:
            assert j.segments() == [1] and records_of(j) == [{"i": 1}]
    assert MAX_SEGMENT < 2**64


@pytest.mark.parametrize("make", ["device", "fifo", "directory", "dangling"])
def test_a_segment_that_is_not_a_regular_file_is_refused_never_read(jdir: Path, make: str) -> None:
    """A segment that is a link to /dev/zero (read for ever, into memory), a FIFO, a directory or a dangling
    link is a StorageError naming it, for a reader and a writer alike, before any byte of it is read."""
    with Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER) as j:
        j.append([{"i": 1}])
    bad = jdir / segment_name(2)
    if make == "device":
        bad.symlink_to(os.devnull.replace("null", "zero"))
    elif make == "fifo":
        os.mkfifo(bad)
    elif make == "directory":
        bad.mkdir()
    else:
        bad.symlink_to(jdir / "nowhere")
    with Journal(jdir, fsync=FsyncPolicy.NEVER) as reader:
        with pytest.raises(StorageError, match=f"{segment_name(2)} is not a regular file"):
            records_of(reader)
    with pytest.raises(StorageError, match=f"{segment_name(2)} is not a regular file"):
        Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER)


def test_oversized_record_gets_its_own_segment(jdir: Path) -> None:
    """A record larger than segment_bytes sits alone in a segment; the next one moves on."""
    with Journal(jdir, segment_bytes=50, writable=True, fsync=FsyncPolicy.NEVER) as j:
        positions = j.append([{"i": 0}, {"big": "x" * 200}, {"i": 2}])
    assert [p.segment for p in positions] == [1, 2, 3]
    assert all(p.offset == 0 for p in positions)
    assert (jdir / "000002.jsonl").read_bytes() == line_of({"big": "x" * 200})


def test_reopening_continues_the_last_segment(jdir: Path) -> None:
    """A reopened writer appends to the last segment until it is full."""
    with Journal(jdir, segment_bytes=1000, writable=True, fsync=FsyncPolicy.NEVER) as j:
        j.append([{"i": 0}])
    with Journal(jdir, segment_bytes=1000, writable=True, fsync=FsyncPolicy.NEVER) as j:
        (p,) = j.append([{"i": 1}])
        assert p == Position(1, len(line_of({"i": 0})))
        assert records_of(j) == [{"i": 0}, {"i": 1}]


# -- damage: invalid lines, torn tails, sealing -------------------------------------


def test_invalid_lines_in_the_middle_are_skipped_and_reported(journal: Journal, jdir: Path) -> None:
    """Non-JSON, non-object and non-UTF-8 lines are skipped; each is one problem."""
    journal.append([{"i": 0}])
    journal.close()
    seg = jdir / "000001.jsonl"
    bad = [b"not json\n", b"[1,2]\n", b"\xff\xfe{}\n", b"\n", b'{"x":NaN}\n']
    with open(seg, "ab") as f:
        f.write(b"".join(bad))
    with Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER) as j:
        j.append([{"i": 1}])
        assert records_of(j) == [{"i": 0}, {"i": 1}]
        kinds = [(p.position.offset, p.kind) for p in j.problems]
        offsets, at = [], len(line_of({"i": 0}))
        for b in bad:
            offsets.append(at)
            at += len(b)
        assert kinds == [(o, ProblemKind.INVALID) for o in offsets]
        assert all(p.detail for p in j.problems)
        with pytest.raises(CorruptRecordError):
            j.read_at(Position(1, offsets[0]))


def test_problems_are_not_duplicated_by_rereading(journal: Journal, jdir: Path) -> None:
    """Reading the same damaged range twice reports each bad line once."""
    journal.append([{"i": 0}])
    with open(jdir / "000001.jsonl", "ab") as f:
        f.write(b"junk\n")
    journal.close()
    reader = Journal(jdir)
    list(reader.read())
    list(reader.read())
    assert len(reader.problems) == 1


def test_torn_tail_is_skipped_and_reported_and_not_committed(journal: Journal, jdir: Path) -> None:
    """A last line with no newline is reported torn; head and digest ignore it."""
    journal.append([{"i": 0}])
    head, digest = journal.head(), journal.digest()
    with open(jdir / "000001.jsonl", "ab") as f:
        f.write(line_of({"i": 1})[:-3])
    reader = Journal(jdir)
    assert records_of(reader) == [{"i": 0}]
    assert [(p.position, p.kind) for p in reader.problems] == [(head, ProblemKind.TORN)]
    assert reader.head() == head
    assert reader.digest() == digest
    with pytest.raises(NotFoundError):
        reader.read_at(head)


def test_torn_report_is_withdrawn_once_the_line_completes(journal: Journal, jdir: Path) -> None:
    """A line seen torn while being written is no problem once it is committed."""
    journal.append([{"i": 0}])
    line = line_of({"i": 1})
    reader = Journal(jdir)
    with open(jdir / "000001.jsonl", "ab") as f:
        f.write(line[:4])
        f.flush()
        assert records_of(reader) == [{"i": 0}]
        assert [p.kind for p in reader.problems] == [ProblemKind.TORN]
        f.write(line[4:])
    assert records_of(reader) == [{"i": 0}, {"i": 1}]
    assert reader.problems == []


def test_writable_open_seals_a_torn_tail_and_appends_after_it(journal: Journal, jdir: Path) -> None:
    """Reopening writable adds one newline after the fragment; committed bytes stay as they were."""
    journal.append([{"i": 0}])
    journal.close()
    seg = jdir / "000001.jsonl"
    fragment = line_of({"i": 1, "pad": "zzzz"})[:-5]
    with open(seg, "ab") as f:
        f.write(fragment)
    before = seg.read_bytes()
    with Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER) as j:
        assert seg.read_bytes() == before + b"\n"
        (p,) = j.append([{"i": 2}])
        assert p == Position(1, len(before) + 1)
        assert records_of(j) == [{"i": 0}, {"i": 2}]
        assert [(q.position.offset, q.kind) for q in j.problems] == [(len(line_of({"i": 0})), ProblemKind.INVALID)]
    assert seg.read_bytes().startswith(before)


def test_reopening_a_clean_journal_changes_no_bytes(journal: Journal, jdir: Path) -> None:
    """Opening writable without damage writes nothing."""
    journal.append([{"i": 0}, {"i": 1}])
    journal.close()
    before = snapshot(jdir)
    Journal(jdir, writable=True).close()
    assert snapshot(jdir) == before


def test_a_failed_write_is_sealed_before_the_next_append(journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that dies half-way leaves a fragment the next append seals instead of extending."""
    journal.append([{"i": 0}])
    real_write = os.write

    def half_then_full_disk(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full_disk)
    with pytest.raises(StorageError):
        journal.append([{"i": 1, "pad": "x" * 30}])
    monkeypatch.undo()
    (p,) = journal.append([{"i": 2}])
    assert journal.read_at(p) == {"i": 2}
    assert records_of(journal) == [{"i": 0}, {"i": 2}]
    assert [q.kind for q in journal.problems] == [ProblemKind.INVALID]


# -- bad input changes nothing ------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        {"s": {1, 2}},
        {"f": math.nan},
        {"f": math.inf},
        {"nested": {1: "int key"}},
        {"deep": [{"ok": 1}, {None: 2}]},
        {"text": "\ud800"},
        {"obj": object()},
        "not a mapping",
        ["not", "a", "mapping"],
    ],
)
def test_bad_record_writes_nothing(journal: Journal, jdir: Path, bad: Any) -> None:
    """A batch with one bad record raises SchemaError naming it and leaves the files alone."""
    journal.append([{"i": 0}])
    before = snapshot(jdir)
    with pytest.raises(SchemaError) as info:
        journal.append([{"i": 1}, bad])
    assert info.value.field == "records[1]"
    assert snapshot(jdir) == before
    assert journal.append([{"i": 2}]) == [Position(1, len(line_of({"i": 0})))]


def test_cyclic_record_is_refused(journal: Journal) -> None:
    """A record that contains itself is a SchemaError, not a crash."""
    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    with pytest.raises(SchemaError):
        journal.append([cyclic])


def test_shared_subobjects_are_fine(journal: Journal) -> None:
    """The same list referenced twice is not a cycle."""
    shared = [1, 2]
    journal.append([{"a": shared, "b": shared}])
    assert records_of(journal) == [{"a": [1, 2], "b": [1, 2]}]


def test_records_must_be_a_sequence(journal: Journal) -> None:
    """Passing one mapping instead of a list of them is a type error."""
    with pytest.raises(CueTypeError):
        journal.append({"i": 1})  # type: ignore[arg-type]


def test_readers_and_closed_journals_refuse_appends(journal: Journal, jdir: Path) -> None:
    """append raises ReadOnlyError on a read-only or closed journal."""
    journal.append([{"i": 0}])
    with pytest.raises(ReadOnlyError):
        Journal(jdir).append([{"i": 1}])
    journal.close()
    assert not journal.writable
    with pytest.raises(ReadOnlyError):
        journal.append([{"i": 1}])
    assert records_of(journal) == [{"i": 0}]


@pytest.mark.parametrize("kwargs", [{"segment_bytes": 0}, {"segment_bytes": True}, {"fsync": "sometimes"}])
def test_bad_options_are_refused(jdir: Path, kwargs: dict[str, Any]) -> None:
    """A zero segment size or an unknown fsync policy is an InvalidArgumentError."""
    with pytest.raises(InvalidArgumentError):
        Journal(jdir, writable=True, **kwargs)
    assert not jdir.exists()


# -- durability policy -------------------------------------------------------------


@pytest.mark.parametrize("policy", [FsyncPolicy.ALWAYS, FsyncPolicy.NEVER, "never"])
def test_both_policies_are_durable_across_close_and_reopen(jdir: Path, policy: FsyncPolicy) -> None:
    """What was appended under either policy reads back after reopening."""
    with Journal(jdir, segment_bytes=100, fsync=policy, writable=True) as j:
        j.append([{"i": i} for i in range(20)])
        j.append([{"i": 20}])
    with Journal(jdir, fsync=policy, writable=True) as j:
        j.append([{"i": 21}])
    assert records_of(Journal(jdir)) == [{"i": i} for i in range(22)]


def test_always_fsyncs_once_per_append_and_never_not_at_all(jdir: Path) -> None:
    """ALWAYS is one grouped fsync per append (plus the directory on a new segment); NEVER none."""
    from cuemem.store.fsync import sync_counts

    with Journal(jdir, fsync=FsyncPolicy.ALWAYS, writable=True) as j:
        before = sync_counts()[0]
        j.append([{"i": i} for i in range(50)])
        assert sync_counts()[0] - before == 2  # the new segment's directory entry, then the batch
        before = sync_counts()[0]
        j.append([{"i": i} for i in range(50)])
        assert sync_counts()[0] - before == 1
    before = sync_counts()[0]
    with Journal(jdir, fsync=FsyncPolicy.NEVER, writable=True) as j:
        j.append([{"i": 0}])
    assert sync_counts()[0] == before


# -- head and digest --------------------------------------------------------------


def test_head_and_digest_of_an_empty_journal(jdir: Path) -> None:
    """An empty journal's head is the start; its digest is stable."""
    with Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER) as j:
        assert j.head() == Position.start()
        assert j.digest() == Journal(jdir).digest()
        assert j.digest().startswith("1:0:")


def test_head_is_where_the_next_append_goes(jdir: Path) -> None:
    """Without rotation, the next append starts at head(); with it, at the next segment."""
    with Journal(jdir, segment_bytes=30, writable=True, fsync=FsyncPolicy.NEVER) as j:
        (p,) = j.append([{"i": 0}])
        head = j.head()
        (q,) = j.append([{"i": 1}])
        assert q == head
        (r,) = j.append([{"pad": "x" * 40}])
        assert r == Position(q.segment + 1, 0)
        assert j.head() == Position(r.segment, len(line_of({"pad": "x" * 40})))


def test_digest_changes_with_every_append_and_survives_reopening(jdir: Path) -> None:
    """Each append gives a new digest; a reader and a reopened writer agree with it."""
    seen = set()
    with Journal(jdir, segment_bytes=40, writable=True, fsync=FsyncPolicy.NEVER) as j:
        seen.add(j.digest())
        for i in range(10):
            j.append([{"i": 1}])  # same content each time: the position still moves
            seen.add(j.digest())
        final = j.digest()
    assert len(seen) == 11
    assert Journal(jdir).digest() == final
    with Journal(jdir, writable=True, fsync=FsyncPolicy.NEVER) as j:
        assert j.digest() == final


def test_digest_covers_the_last_line_content(tmp_path: Path) -> None:
    """Two journals with equal heads but different last lines have different digests."""
    a, b = tmp_path / "a", tmp_path / "b"
    for d, v in ((a, "x"), (b, "y")):
        with Journal(d, writable=True, fsync=FsyncPolicy.NEVER) as j:
            j.append([{"v": v}])
    assert Journal(a).head() == Journal(b).head()
    assert Journal(a).digest() != Journal(b).digest()


def test_stray_files_are_ignored(journal: Journal, jdir: Path) -> None:
    """Files that are not segments do not disturb reading or appending."""
    (jdir / "notes.txt").write_text("hello\n")
    (jdir / "1.jsonl").write_text("{}\n")
    (jdir / "0000001.jsonl").write_text("{}\n")
    journal.append([{"i": 0}])
    assert records_of(journal) == [{"i": 0}]
    assert journal.segments() == [1]


# -- the state machine ---------------------------------------------------------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=6,
)
json_records = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


class JournalMachine(RuleBasedStateMachine):
    """Appends, reopenings and torn crashes against a list of the records appended."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="cuemem-journal-"))
        self.dir = self.root / "journal"
        self.segment_bytes = 120
        self.policy = FsyncPolicy.NEVER
        self.journal = Journal(self.dir, segment_bytes=self.segment_bytes, fsync=self.policy, writable=True)
        self.model: list[tuple[Position, str]] = []
        self.fragments: list[Position] = []

    def teardown(self) -> None:
        self.journal.close()
        shutil.rmtree(self.root, ignore_errors=True)

    @rule(batch=st.lists(json_records, max_size=4))
    def append(self, batch: list[dict[str, Any]]) -> None:
        positions = self.journal.append(batch)
        assert len(positions) == len(batch)
        chain = [p for p, _ in self.model[-1:]] + positions
        assert all(a < b for a, b in zip(chain, chain[1:]))
        self.model.extend(zip(positions, (canonical(r) for r in batch)))

    @rule(segment_bytes=st.sampled_from([1, 64, 120, 4096]))
    def reopen(self, segment_bytes: int) -> None:
        self.journal.close()
        self.segment_bytes = segment_bytes
        self.journal = Journal(self.dir, segment_bytes=segment_bytes, fsync=self.policy, writable=True)

    @precondition(lambda self: bool(self.model))
    @rule(record=json_records, cut=st.integers(1, 1_000))
    def crash_mid_write(self, record: dict[str, Any], cut: int) -> None:
        """A writer died after writing part of a line; the next writable open seals it."""
        self.journal.close()
        line = line_of(record)
        fragment = line[: 1 + cut % (len(line) - 2)]  # never the whole object
        last = self.dir / segment_name(self.journal.segments()[-1])
        self.fragments.append(Position(self.journal.segments()[-1], last.stat().st_size))
        with open(last, "ab") as f:
            f.write(fragment)
        self.journal = Journal(self.dir, segment_bytes=self.segment_bytes, fsync=self.policy, writable=True)

    @invariant()
    def reads_back_exactly(self) -> None:
        entries: list[Entry] = list(self.journal.read())
        assert [(e.position, canonical(e.record)) for e in entries] == self.model
        assert [p.position for p in self.journal.problems] == self.fragments
        assert all(p.kind is ProblemKind.INVALID for p in self.journal.problems)
        if entries:
            assert self.journal.head() >= entries[-1].end

    @invariant()
    def random_access_and_suffixes_agree(self) -> None:
        if not self.model:
            return
        middle = len(self.model) // 2
        position, text = self.model[middle]
        assert canonical(self.journal.read_at(position)) == text
        suffix = [canonical(e.record) for e in self.journal.read(position)]
        assert suffix == [t for _, t in self.model[middle:]]


#: The default run: a quick pass (the hypothesis profile scales it).
TestJournalMachine = JournalMachine.TestCase
TestJournalMachine.settings = settings(max_examples=max(20, settings().max_examples // 3), stateful_step_count=12)


class JournalMachineLong(JournalMachine):
    """The same machine with longer runs; excluded from the default test run."""


TestJournalMachineLong = pytest.mark.slow(JournalMachineLong.TestCase)
TestJournalMachineLong.settings = settings(stateful_step_count=60)


@settings(max_examples=60, deadline=None)
@given(
    segments=st.lists(st.lists(st.integers(1, 300), max_size=12), min_size=1, max_size=3),
    torn=st.integers(0, 200),
    buffer=st.sampled_from([1, 7, 64, 257]),
    skip=st.integers(0, 3),
)
def test_runs_are_the_committed_lines_in_whole_lines_whatever_their_length(
    segments: list[list[int]], torn: int, buffer: int, skip: int,
) -> None:
    """Runs hand over every committed line from a line's start, in order, each run whole lines
    of one segment at its offset, whatever the lines' lengths against the read buffer (a line
    longer than it, many times over, and the runs after it no longer than the buffer's usual size
    allows); a torn tail is left out and reported with its size."""
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        mp.setattr(journal_module, "RUN_BYTES", buffer)
        directory = Path(tmp) / "journal"
        directory.mkdir()
        lines = [[b"x" * (n - 1) + b"\n" for n in lengths] for lengths in segments]
        for i, seg in enumerate(lines):
            tail = b"y" * torn if i == len(lines) - 1 else b""
            (directory / segment_name(i + 1)).write_bytes(b"".join(seg) + tail)
        start = Position(1, sum(map(len, lines[0][:skip])))
        journal = Journal(directory)
        runs = list(journal.runs(start))
        for i, seg in enumerate(lines):
            got = [r for r in runs if r.segment == i + 1]
            begin = start.offset if i == 0 else 0
            assert b"".join(r.data for r in got) == b"".join(seg)[begin:]
            offset = begin
            for r in got:
                assert r.offset == offset and r.data.endswith(b"\n")
                # The buffer grows for a long line and shrinks once it is read.
                assert len(r.data) <= 2 * (buffer + max(map(len, r.data.splitlines(keepends=True))))
                offset += len(r.data)
        assert [r.segment for r in runs] == sorted(r.segment for r in runs)
        problems = journal.problems
        if torn:
            at = Position(len(lines), sum(map(len, lines[-1])))
            assert [(p.position, p.kind, p.detail) for p in problems] == [(at, ProblemKind.TORN, f"{torn} bytes with no line end")]
        else:
            assert problems == []


def test_placing_writes_whole_runs_at_the_head_and_at_later_segments(tmp_path: Path) -> None:
    """A mirror's bulk catch-up: runs of lines land at the head or at a later segment's start, and read back as records."""
    journal = Journal(tmp_path / "journal", fsync=FsyncPolicy.NEVER, writable=True)
    first = b'{"id":"a","op":"x"}\n{"id":"b","op":"x"}\n'
    second = b'{"id":"c","op":"x"}\n'
    with journal.placing() as place:
        for position, data in [(Position(1, 0), first), (Position(1, len(first)), second), (Position(2, 0), second)]:
            place(position, data)
    assert journal.head() == Position(2, len(second))
    assert (tmp_path / "journal" / segment_name(1)).read_bytes() == first + second
    assert [e.record["id"] for e in journal.read()] == ["a", "b", "c", "c"]
    journal.close()


@pytest.mark.parametrize(
    "runs",
    [[(Position(1, 5), b'{"id":"a"}\n')], [(Position(3, 0), b'{"id":"a"}\n')], [(Position(1, 0), b'{"id":"a"}')], [(Position(1, 0), "{}\n")]],
    ids=["not-at-the-head", "skips-a-segment", "no-newline", "not-bytes"],
)
def test_placing_refuses_a_run_that_does_not_follow_or_end_a_line(tmp_path: Path, runs: list[tuple[Position, Any]]) -> None:
    """A run that does not start where the journal ends, or does not end a line, is refused and nothing is written."""
    journal = Journal(tmp_path / "journal", fsync=FsyncPolicy.NEVER, writable=True)
    with pytest.raises(InvalidArgumentError), journal.placing() as place:
        for position, data in runs:
            place(position, data)
    assert journal.head() == Position(1, 0)
    journal.close()


def test_placing_writes_on_a_thread_of_its_own_while_the_caller_takes_the_next_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run handed over returns at once: its write (on the writer thread) overlaps the caller's next fetch, and the runs land in order."""
    journal = Journal(tmp_path / "journal", fsync=FsyncPolicy.NEVER, writable=True)
    release = threading.Event()
    on_caller: list[bool] = []
    real = journal_module._write_all

    def held(fd: int, data: bytes | bytearray) -> None:
        on_caller.append(threading.current_thread() is threading.main_thread())
        assert release.wait(10), "the caller never handed the second run over while the first was being written"
        real(fd, data)

    monkeypatch.setattr(journal_module, "_write_all", held)
    first, second = b'{"id":"a","op":"x"}\n', b'{"id":"b","op":"x"}\n'
    with journal.placing() as place:
        place(Position(1, 0), first)
        place(Position(1, len(first)), second)  # the first write still waits
        release.set()
    assert on_caller == [False, False]
    assert journal.head() == Position(1, len(first + second))
    assert (tmp_path / "journal" / segment_name(1)).read_bytes() == first + second
    journal.close()


def test_placing_stops_at_a_failed_write_with_the_runs_before_it_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails is a StorageError; the runs before it are written, none after it, and the head says so."""
    journal = Journal(tmp_path / "journal", fsync=FsyncPolicy.NEVER, writable=True)
    real = journal_module._write_all
    written: list[bytes] = []

    def failing(fd: int, data: bytes | bytearray) -> None:
        if len(written) == 1:
            written.append(bytes(data))
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(bytes(data))
        real(fd, data)

    monkeypatch.setattr(journal_module, "_write_all", failing)
    runs = [b'{"id":"a","op":"x"}\n', b'{"id":"b","op":"x"}\n', b'{"id":"c","op":"x"}\n']
    with pytest.raises(StorageError), journal.placing() as place:
        offset = 0
        for data in runs:
            place(Position(1, offset), data)  # raises once the failure is known
            offset += len(data)
    assert written == runs[:2]
    assert journal.head() == Position(1, len(runs[0]))
    assert (tmp_path / "journal" / segment_name(1)).read_bytes() == runs[0]


def test_placing_needs_a_writable_journal(tmp_path: Path) -> None:
    """A read-only journal refuses a run."""
    Journal(tmp_path / "journal", fsync=FsyncPolicy.NEVER, writable=True).close()
    journal = Journal(tmp_path / "journal", writable=False)
    with pytest.raises(ReadOnlyError), journal.placing() as place:
        place(Position(1, 0), b"{}\n")


def test_placing_after_a_torn_write_never_writes_past_the_torn_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that failed midway leaves bytes the next placing seals: a run for the head before them is refused, as :meth:`Journal.place` refuses a line, never written after them (which would shift every later position)."""
    journal = Journal(tmp_path / "journal", fsync=FsyncPolicy.NEVER, writable=True)
    first, second = b'{"id":"a","op":"x"}\n', b'{"id":"b","op":"x"}\n'
    with journal.placing() as place:
        place(Position(1, 0), first)
    real = journal_module._write_all

    def torn(fd: int, data: bytes | bytearray) -> None:
        real(fd, data[:5])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal_module, "_write_all", torn)
    with pytest.raises(StorageError), journal.placing() as place:
        place(Position(1, len(first)), second)
    monkeypatch.setattr(journal_module, "_write_all", real)
    with pytest.raises(InvalidArgumentError), journal.placing() as place:
        place(journal.head(), second)
    with pytest.raises(InvalidArgumentError):
        journal.place([(journal.head(), second)])
    assert (tmp_path / "journal" / segment_name(1)).read_bytes() == first + second[:5] + b"\n"
    journal.close()


def test_placing_syncs_the_runs_it_wrote_however_the_block_ends(tmp_path: Path) -> None:
    """A catch-up stopped midway (a row that does not follow, a failed read) keeps the runs written before it: they are
    on disk when the block ends, as when it ends normally, with nothing left for a later wait to sync."""
    from cuemem.store.fsync import sync_counts

    journal = Journal(tmp_path / "journal", fsync=FsyncPolicy.ALWAYS, writable=True)
    with pytest.raises(RuntimeError), journal.placing() as place:
        place(Position(1, 0), b'{"id":"a","op":"x"}\n')
        raise RuntimeError("the next run does not follow")
    before = sync_counts()[0]
    journal.wait_synced(journal.owed)
    assert sync_counts()[0] == before  # nothing was left to sync
    journal.close()


def test_placing_interrupted_while_it_waits_for_its_writer_writes_nothing_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C while the block's end waits for the writer thread: the run under way is still waited for, the runs
    not begun are never written, so nothing writes to the journal once the interrupt reaches the caller (who may go on
    using the handle)."""
    from concurrent.futures import ThreadPoolExecutor

    journal = Journal(tmp_path / "journal", fsync=FsyncPolicy.NEVER, writable=True)
    first, second = b'{"id":"a","op":"x"}\n', b'{"id":"b","op":"x"}\n'
    real_write, real_shutdown = journal_module._write_all, ThreadPoolExecutor.shutdown
    release, later = threading.Event(), threading.Event()
    calls: list[int] = []

    def held(fd: int, data: bytes | bytearray) -> None:
        assert (release if data == first else later).wait(10)
        real_write(fd, data)

    def interrupted(self: ThreadPoolExecutor, wait: bool = True, *, cancel_futures: bool = False) -> None:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        release.set()
        real_shutdown(self, wait=wait, cancel_futures=cancel_futures)

    monkeypatch.setattr(journal_module, "_write_all", held)
    monkeypatch.setattr(ThreadPoolExecutor, "shutdown", interrupted)
    with pytest.raises(KeyboardInterrupt), journal.placing() as place:
        place(Position(1, 0), first)
        place(Position(1, len(first)), second)
    path = tmp_path / "journal" / segment_name(1)
    seen = path.read_bytes()
    release.set()
    later.set()
    for thread in threading.enumerate():
        if thread.name.startswith("cuemem-journal"):
            thread.join(10)
    assert path.read_bytes() == seen == first
    assert journal.head() == Position(1, len(first))


def test_size_is_the_bytes_of_every_segment_a_torn_tail_included(jdir: Path) -> None:
    """``size()`` sums the segments present (what a cache of the journal can never exceed)."""
    with Journal(jdir, segment_bytes=64, writable=True, fsync=FsyncPolicy.NEVER) as j:
        assert j.size() == 0
        for i in range(6):
            j.append([{"op": "note", "i": i, "pad": "x" * 20}])
        assert len(j.segments()) > 1
        assert j.size() == sum(p.stat().st_size for p in jdir.iterdir())
    last = jdir / segment_name(max(int(p.name[:6]) for p in jdir.iterdir()))
    with open(last, "ab") as f:
        f.write(b'{"op":"no')
    with Journal(jdir, fsync=FsyncPolicy.NEVER) as j:
        assert j.size() == sum(p.stat().st_size for p in jdir.iterdir())


def test_the_lines_holding_a_needle_are_found_whole_as_the_journal_splits_them() -> None:
    """The lines holding any needle (bytes or a pattern), in order, each once, whole, with where
    each starts: split at ``\\n`` alone (a raw ``\\r`` inside a line a person wrote does not
    make two records of it); a last line with no newline is found too, and ``end`` bounds the search."""
    import re

    from cuemem.store.journal import lines_holding

    note, other = b'{"id":"a","op":"note"}\n', b'{"op":"remember"}\n'
    twice = b'{"id":"b","op":"note","x":"\\"op\\":\\"note\\""}\r{"op":"note"}\n'
    last = b'{"id":"c","op":"note"}'
    data = note + other + other + twice + other + last
    for marker in (b'"op":"note"', re.compile(re.escape(b'"op":"note"'))):
        found = lines_holding(data, [marker])
        assert [line for _, line in found] == [note, twice, last]
        assert [data[at : at + len(line)] for at, line in found] == [note, twice, last]
        assert lines_holding(other * 3, [marker]) == []
        assert [line for _, line in lines_holding(data, [marker], len(data) - len(last))] == [note, twice]
    assert [line for _, line in lines_holding(data, [b'"id":"a"', b'"id":"c"'])] == [note, last]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 90), min_size=1, max_size=6), max_size=20))
def test_a_stage_holds_its_lines_end_to_end_whatever_their_sizes(runs: list[list[int]]) -> None:
    """Lines staged one by one or as runs end to end, smaller and larger than what the stage
    buffers before it writes (a run as large is written as it is), become one segment of them
    all in order, each at the offset its add returned."""
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp), writable=True, fsync=FsyncPolicy.NEVER)
        stage_class = journal_module.Stage
        original = stage_class._FLUSH
        stage_class._FLUSH = 64  # (a few lines' worth: every path of add_line is taken)
        try:
            expected, offsets, at = [], [], 0
            with journal.stage() as stage:
                for run in runs:
                    lines = [json.dumps({"n": n, "pad": "x" * n}).encode() + b"\n" for n in run]
                    data = b"".join(lines)
                    assert stage.add_line(data) == at
                    offsets += [at + sum(map(len, lines[:k])) for k in range(len(lines))]
                    expected += [json.loads(line) for line in lines]
                    at += len(data)
                segment = stage.commit()
        finally:
            stage_class._FLUSH = original
        read = list(journal.read())
        assert [e.record for e in read] == expected
        assert [(e.position.segment, e.position.offset) for e in read] == [(segment, o) for o in offsets]
