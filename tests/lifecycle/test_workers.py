"""Workers: their own working memory, reads of the supervisor's home, and refused lasting writes."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from cuemem import Memory, WorkerPermissionError
from cuemem.errors import CuememError, InvalidArgumentError, InvalidIdError, SchemaError

NOW = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)


def test_a_worker_cannot_write_short_or_long_term(tmp_path: Path) -> None:
    """remember (any lasting tier) and write_note raise WorkerPermissionError, a PermissionError; nothing is written."""
    with Memory.open(tmp_path, fsync="never") as mem:
        w = mem.worker("researcher")
        for tier in ("long", "short"):
            with pytest.raises(WorkerPermissionError, match=f"{tier}-term"):
                w.remember("Acme churned", tier=tier, now=NOW)
        with pytest.raises(PermissionError):
            w.write_note("n1", "body")
        assert issubclass(WorkerPermissionError, CuememError) and len(mem) == 0 and mem.notes() == []
        with pytest.raises(InvalidArgumentError):
            w.remember("x", tier="working")
        with pytest.raises(SchemaError):
            w.remember("x", tier="forever")


def test_workers_hold_their_own_working_memory(tmp_path: Path) -> None:
    """A worker's observations stay in its working memory, apart from the supervisor's and other workers'."""
    with Memory.open(tmp_path, fsync="never") as mem:
        a, b = mem.worker("a"), mem.worker("b")
        assert mem.worker("a") is a
        ids = a.observe("I prefer tea. The build is red.", now=NOW)
        assert ids == ["wm-1", "wm-2"] and [w.text for w in a.working()] == ["I prefer tea.", "The build is red."]
        assert b.working() == [] and mem.working() == [] and len(mem) == 0
        mem.observe("The deploy is blocked.", now=NOW)
        assert len(a.working()) == 2 and len(mem.working()) == 1
        assert a.end_turn() == 2 and a.working() == [] and len(mem.working()) == 1


def test_a_worker_reads_what_the_supervisor_wrote(tmp_path: Path) -> None:
    """Recall through a worker sees the supervisor's long-term memory."""
    with Memory.open(tmp_path, fsync="never") as mem:
        (eid,) = mem.observe("My favorite editor is vim.", now=NOW)
        hits = mem.worker("reader").recall({"subject": "favorite editor"}, now=NOW).hits
        assert [h.id for h in hits] == [eid]


def test_worker_names_are_ids(tmp_path: Path) -> None:
    """A name with a path separator or blank is refused."""
    with Memory.open(tmp_path, fsync="never") as mem:
        for bad in ("", "a/b", "../x"):
            with pytest.raises(InvalidIdError):
                mem.worker(bad)
