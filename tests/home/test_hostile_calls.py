"""Hostile arguments to the facade (memory.py and the modules it checks with): typed errors, nothing written."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone, tzinfo
from pathlib import Path

import pytest

from cuemem import Memory, SalienceTable
from cuemem.errors import CuememError, CueTypeError, ImportFileError, InvalidArgumentError, InvalidValueError, SchemaError, StorageError

NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("now", [date.min, date.max, datetime(1899, 12, 31, tzinfo=timezone.utc),
                                 datetime(8999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-23)))])
def test_a_now_past_the_range_jobs_can_reckon_with_is_refused(tmp_path: Path, now: object) -> None:
    """Every method taking ``now`` refuses one that would overflow its arithmetic; nothing is journaled."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("kept", tier="short", now=NOW)
        before = mem.stats().journal_bytes
        for call in (lambda: mem.distill(now=now), lambda: mem.maintain(now=now), lambda: mem.expire(now=now),  # type: ignore[arg-type]
                     lambda: mem.consolidate(now=now), lambda: mem.recall({}, now=now),  # type: ignore[arg-type]
                     lambda: mem.remember("x", now=now), lambda: mem.observe("I prefer tea.", now=now)):  # type: ignore[arg-type]
            with pytest.raises(InvalidArgumentError, match="now must lie between"):
                call()
        assert mem.stats().journal_bytes == before and len(mem) == 1


def test_a_lone_surrogate_in_a_recall_is_a_schema_error(tmp_path: Path) -> None:
    """Text or a cue value that is not valid Unicode never reaches the core as a UnicodeEncodeError."""
    with Memory.open(tmp_path, fsync="never") as mem:
        mem.remember("a b", now=NOW)
        with pytest.raises(SchemaError):
            mem.recall(text="\ud800 b", now=NOW)
        with pytest.raises(SchemaError):
            mem.recall({"actor": "\ud800"}, now=NOW)
        with pytest.raises(SchemaError):
            mem.recall({"actor": ["ok", "caf\udce9"]}, now=NOW)
        assert mem.recall({"actor": "café"}, now=NOW).total == 0


@pytest.mark.parametrize("half_life", [1e-300, 1e-9, 0.0, -1.0, float("nan"), float("inf"), 1e12])
def test_a_degenerate_half_life_is_refused_at_open(tmp_path: Path, half_life: float) -> None:
    """A half-life that would break the epoch arithmetic is an InvalidValueError, never a panic in recall."""
    with pytest.raises(InvalidValueError, match="half_lives"):
        SalienceTable(half_lives_days={"urgency": half_life})
    with pytest.raises(InvalidValueError):
        Memory.open(tmp_path, half_lives_days={"urgency": half_life})
    assert not (tmp_path / "journal").exists()


def test_the_shortest_half_life_still_recalls(tmp_path: Path) -> None:
    """One minute is allowed, and recall over rows past and future of now works."""
    with Memory.open(tmp_path, fsync="never", half_lives_days={"urgency": 1 / 1440}) as mem:
        a = mem.remember("past", salience={"urgency": 0.9}, occurred_at=date(2026, 5, 1), now=NOW)
        b = mem.remember("future", salience={"urgency": 0.9}, occurred_at=date(2026, 7, 1), now=NOW)
        assert {h.id for h in mem.recall({}, now=NOW).hits} == {a, b}


def test_an_import_line_past_the_bound_ends_the_import_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line longer than MAX_LINE (a device such as /dev/zero has no newline at all) is read only up to the
    bound, then the import stops with ImportFileError and nothing is imported (the bound is lowered here)."""
    import cuemem.home.imports as imports

    monkeypatch.setattr(imports, "MAX_LINE", 1024)
    source = tmp_path / "huge.jsonl"
    source.write_bytes(b'{"narrative": "fine"}\n' + b"0" * 10_000)  # no newline, ever
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        with pytest.raises(ImportFileError, match="line 2 is longer than 1024 bytes"):
            mem.import_jsonl(source, now=NOW)
        assert len(mem) == 0


@pytest.mark.parametrize("path", ["", "home\0name"])
def test_an_empty_or_nul_path_is_not_a_home(path: str) -> None:
    """An empty path would make the current directory a home; a NUL byte is a bare ValueError in os."""
    with pytest.raises(InvalidArgumentError):
        Memory.open(path)


def test_every_refusal_above_is_a_cuemem_error() -> None:
    """The classes these tests expect are all CuememError subclasses (callers catch one base)."""
    assert all(issubclass(c, CuememError) for c in (InvalidArgumentError, InvalidValueError, SchemaError, ImportFileError))


@pytest.mark.parametrize("jobs", [["consolidate"], (1, 2), 5, "jobs", [], None])
def test_a_bad_job_registry_is_refused_by_maintain_and_next_due_alike(tmp_path: Path, jobs: object) -> None:
    """One check of the registry: both methods raise InvalidArgumentError (an empty one for next_due)."""
    with Memory.open(tmp_path, fsync="never") as mem:
        if jobs is None:
            assert mem.next_due(now=NOW) >= NOW  # the default registry
            return
        if jobs != []:
            with pytest.raises(InvalidArgumentError):
                mem.maintain(now=NOW, jobs=jobs)  # type: ignore[arg-type]
        with pytest.raises(InvalidArgumentError):
            mem.next_due(now=NOW, jobs=jobs)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["\ud800", "dir\udfff/home"])
def test_a_path_the_file_system_cannot_encode_is_refused_typed(tmp_path: Path, name: str) -> None:
    """A lone surrogate (other than the ones os.fsencode maps back to bytes) is an InvalidArgumentError
    for a home, a cache and an import alike, never a UnicodeEncodeError from the file system."""
    with pytest.raises(InvalidArgumentError, match="cannot be encoded"):
        Memory.open(f"{tmp_path}/{name}")
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        with pytest.raises(InvalidArgumentError, match="cannot be encoded"):
            mem.import_jsonl(f"{tmp_path}/{name}", now=NOW)
        assert len(mem) == 0


def test_a_path_the_file_system_refuses_to_look_at_is_a_storage_error(tmp_path: Path) -> None:
    """A name longer than the file system allows is a StorageError, read-only or not, never a bare OSError."""
    path = tmp_path / ("x" * 300)
    for read_only in (False, True):
        with pytest.raises(StorageError, match="File name too long"):
            Memory.open(path, read_only=read_only)


@pytest.mark.parametrize("progress", [1, "every line", [print]])
def test_a_progress_that_is_not_callable_is_refused_before_anything_is_imported(tmp_path: Path, progress: object) -> None:
    """``progress`` is checked with the other arguments: a CueTypeError, nothing imported (it used to be a bare
    TypeError when the first report was due)."""
    source = tmp_path / "items.jsonl"
    source.write_text('{"narrative": "one"}\n')
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        with pytest.raises(CueTypeError, match="progress"):
            mem.import_records([{"narrative": "one"}], progress=progress, now=NOW)  # type: ignore[arg-type]
        with pytest.raises(CueTypeError, match="progress"):
            mem.import_jsonl(source, progress=progress, now=NOW)  # type: ignore[arg-type]
        assert len(mem) == 0 and mem.stats().journal_bytes == 0


def test_a_progress_that_raises_leaves_the_home_unchanged(tmp_path: Path) -> None:
    """The caller's own exception from ``progress`` ends the import: all or nothing still holds."""

    def stop(done: int, total: int) -> None:
        raise RuntimeError("stop here")

    with Memory.open(tmp_path / "home", fsync="never") as mem:
        with pytest.raises(RuntimeError, match="stop here"):
            mem.import_records([{"narrative": f"item {i}"} for i in range(3)], progress=stop, now=NOW)
        assert len(mem) == 0 and mem.stats().journal_bytes == 0
        assert mem.recall(text="item", now=NOW).total == 0


@pytest.mark.parametrize("option", ["weights", "half_lives_days"])
@pytest.mark.parametrize("value", [5, ["urgency"], "urgency"])
def test_salience_overrides_that_are_not_a_mapping_are_refused_at_open(tmp_path: Path, option: str, value: object) -> None:
    """A number, list or string where a mapping of axis to number goes is a CueTypeError (a number was a
    bare TypeError; a list was read as its items' names)."""
    with pytest.raises(CueTypeError, match=f"{option} must be a mapping"):
        Memory.open(tmp_path, **{option: value})  # type: ignore[arg-type]
    assert not (tmp_path / "journal").exists()


@pytest.mark.parametrize("read_only", ["yes", 1, None])
def test_read_only_must_be_a_bool(tmp_path: Path, read_only: object) -> None:
    """``read_only`` is checked as ``follow`` is: a truthy string never silently opens a reader."""
    Memory.open(tmp_path, fsync="never").close()
    with pytest.raises(CueTypeError, match="read_only must be a bool"):
        Memory.open(tmp_path, read_only=read_only)  # type: ignore[arg-type]


def test_skip_bad_must_be_a_bool(tmp_path: Path) -> None:
    """A truthy string never turns an all-or-nothing import into one that drops bad items."""
    source = tmp_path / "items.jsonl"
    source.write_text('{"narrative": "one"}\n{"narrative": 5}\n')
    with Memory.open(tmp_path / "home", fsync="never") as mem:
        with pytest.raises(CueTypeError, match="skip_bad must be a bool"):
            mem.import_records([{"narrative": "one"}, {"narrative": 5}], skip_bad="no", now=NOW)  # type: ignore[arg-type]
        with pytest.raises(CueTypeError, match="skip_bad_lines must be a bool"):
            mem.import_jsonl(source, skip_bad_lines="no", now=NOW)  # type: ignore[arg-type]
        assert len(mem) == 0


class _NoOffset(tzinfo):
    """A time zone that answers no offset: Python reads such a datetime as naive."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None


class _Lying(tzinfo):
    """A time zone whose offset is no offset (30 hours), or that fails outright."""

    def __init__(self, fails: bool) -> None:
        self.fails = fails

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        if self.fails:
            raise KeyError("no such zone")
        return timedelta(hours=30)

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None


@pytest.mark.parametrize("fails", [False, True])
def test_a_time_zone_that_gives_no_valid_offset_is_a_schema_error(tmp_path: Path, fails: bool) -> None:
    """A datetime whose tzinfo raises or gives 24 hours or more, as ``now`` or as a field, is a
    SchemaError naming the argument (a bare TypeError or ValueError before); nothing is written.
    One that answers no offset is naive, and naive is UTC."""
    bad = datetime(2026, 6, 1, 12, tzinfo=_Lying(fails))
    with Memory.open(tmp_path, fsync="never") as mem:
        for name, call in [("now", lambda: mem.remember("x", now=bad)), ("now", lambda: mem.recall({"time": "yesterday"}, now=bad)),
                           ("now", lambda: mem.import_records([{"narrative": "z"}], now=bad)),
                           ("occurred_at", lambda: mem.remember("y", occurred_at=bad, now=NOW))]:
            with pytest.raises(SchemaError, match="no valid offset") as caught:
                call()
            assert caught.value.field == name
        assert len(mem) == 0
        eid = mem.remember("naive", now=datetime(2026, 6, 1, 12, tzinfo=_NoOffset()))
        assert mem.get(eid).recorded_at == datetime(2026, 6, 1, 12, tzinfo=timezone.utc)
