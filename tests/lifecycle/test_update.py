"""Memory.update (lifecycle/service.py): a successor that supersedes, never an edit in place."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from cuemem import InvalidArgumentError, Memory, NotFoundError


def test_an_update_writes_a_successor_and_retires_the_old_record(tmp_path: Path) -> None:
    """The old record keeps its bytes in the journal, leaves recall; the new one names it and carries the changes."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        old = mem.remember("Call Acme on Monday", actors=["acme"], importance=0.6, metadata={"crm": "sf-1"}, now=date(2026, 1, 1))
        line = (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes()
        new = mem.update(old, "Call Acme on Tuesday", importance=0.9, now=date(2026, 1, 2))
        assert new != old and mem.get(new).supersedes == old and mem.get(new).importance == 0.9
        assert mem.get(new).metadata == {"crm": "sf-1"} and mem.get(new).actors == ("acme",)
        assert [h.id for h in mem.recall({"actor": "acme"}, now=date(2026, 1, 3)).hits] == [new]
        assert mem.get(old).narrative == "Call Acme on Monday"
        assert (tmp_path / "h" / "journal" / "000001.jsonl").read_bytes().startswith(line)
        with pytest.raises(InvalidArgumentError):
            mem.update(old, "again", now=date(2026, 1, 3))  # retired: update the successor
        assert mem.get(mem.update(new, metadata=None, now=date(2026, 1, 3))).metadata == {}


def test_updating_a_fact_is_its_next_version(tmp_path: Path) -> None:
    """A versioned record's update goes through the gate as the subject's next version; history shows both."""
    with Memory.open(tmp_path / "h", fsync="never") as mem:
        first = mem.remember("The office is in Lyon", subject="office", kind="semantic", now=date(2026, 1, 1))
        second = mem.update(first, "The office is in Paris", now=date(2026, 2, 1))
        assert [v.id for v in mem.history("office")] == [first, second]
        with pytest.raises(InvalidArgumentError):
            mem.update(first, "The office is in Nice", now=date(2026, 2, 2))  # a superseded version
        with pytest.raises(NotFoundError):
            mem.update("ep-missing", "x", now=date(2026, 2, 2))
        with pytest.raises(NotFoundError):
            mem.user("someone-else").update(second, "x", now=date(2026, 2, 2))
