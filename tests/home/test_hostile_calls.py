"""Hostile arguments to the facade (memory.py and the modules it checks with): typed errors, nothing written."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from cuemem import Memory, SalienceTable
from cuemem.errors import CuememError, ImportFileError, InvalidArgumentError, InvalidValueError, SchemaError

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
